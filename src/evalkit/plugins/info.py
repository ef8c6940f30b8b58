"""What discovery learned about one plugin, and where a distribution comes from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalkit.core.pyproject_config import canonical_name

#: The distribution of the kernel (the ``evalkit`` module and command): the provider of the
#: built-ins, and what ``evalkit --version`` names.
KERNEL_DISTRIBUTION = "paired-evalkit-core"
#: The distribution users install: no code, it depends on the kernel and
#: :data:`DEFAULT_PLUGINS` at its own version, and its extras add the others
#: (:data:`PLUGIN_EXTRAS`).
USER_DISTRIBUTION = "paired-evalkit"
#: Names that stand for the kernel in a ``[tool.evalkit] plugins`` entry (which then
#: checks the running kernel's version) and in the provider of a stored run or baseline:
#: artifacts written before the kernel became a distribution of its own name it
#: ``paired-evalkit``.
KERNEL_NAMES = frozenset({KERNEL_DISTRIBUTION, USER_DISTRIBUTION})
#: The plugins ``pip install paired-evalkit`` installs with the kernel.
DEFAULT_PLUGINS = ("evalkit-retrieval", "evalkit-http", "evalkit-judge")
#: ``{plugin distribution: the extra of paired-evalkit that installs it}``.
PLUGIN_EXTRAS = {"evalkit-report-html": "html", "evalkit-text": "text", "evalkit-dask": "dask"}
#: The plugin distributions developed in the paired-evalkit repository.
IN_REPO_DISTRIBUTIONS = frozenset({*DEFAULT_PLUGINS, *PLUGIN_EXTRAS})


@dataclass
class PluginInfo:
    """What discovery learned about one plugin (filled in as loading proceeds).

    Attributes:
        name: the entry-point name (``"retrieval"``), or the module of a local plugin.
        distribution, version: the providing distribution; ``None`` for local plugins.
        module: the entry point's target (``"evalkit_retrieval.plugin"``).
        status: ``"loaded"``, ``"failed"`` (see ``error``) or ``"disabled"``.
        error: one line saying why the plugin failed.
        hooks: the hook names it implements (known only once imported).
        names: the names it registered.
        origin: ``"kernel"``, ``"in-repo"``, ``"third-party"`` or ``"local"``.
        location: the editable project folder, or the site folder it is installed in.
        editable: whether ``location`` is an editable (development) install.
        enabled: whether the plugin selection enables it.
    """

    name: str
    distribution: str | None
    version: str | None
    module: str
    status: str = "loaded"  # loaded | failed | disabled
    error: str | None = None
    hooks: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    origin: str = "third-party"
    location: str | None = None
    editable: bool = False
    enabled: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "distribution": self.distribution, "version": self.version,
            "module": self.module, "origin": self.origin, "location": self.location,
            "editable": self.editable, "enabled": self.enabled, "status": self.status,
            "error": self.error, "hooks": list(self.hooks), "names": list(self.names),
        }


def origin_of(distribution: str | None) -> str:
    if distribution is None:
        return "local"
    key = canonical_name(distribution)
    if key in KERNEL_NAMES:
        return "kernel"
    return "in-repo" if key in IN_REPO_DISTRIBUTIONS else "third-party"


def same_definition(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two recorded definitions of a metric or aggregate (``{"provider": ...,
    "version": ...}`` in a run header or a baseline's fingerprint) are the same: equal, or
    equal but for their providers being two names of the kernel (:data:`KERNEL_NAMES`)."""
    if dict(a) == dict(b):
        return True
    pa, pb = a.get("provider"), b.get("provider")
    kernel = (isinstance(pa, str) and isinstance(pb, str)
              and {canonical_name(pa), canonical_name(pb)} <= KERNEL_NAMES)
    others = {k: v for k, v in a.items() if k != "provider"}
    return kernel and others == {k: v for k, v in b.items() if k != "provider"}


def install_hint(distribution: str) -> str:
    """How to install the in-repo plugin ``distribution``, as the end of a sentence:
    ``"install it with `pip install 'paired-evalkit[html]'` (...)"``."""
    extra = PLUGIN_EXTRAS.get(distribution)
    command = (f"pip install '{USER_DISTRIBUTION}[{extra}]'" if extra
               else f"pip install {USER_DISTRIBUTION}")
    return (f"install it with `{command}` (or `pip install {distribution}`; from a clone of "
            f"paired-evalkit: `pip install -e plugins/{distribution}`, or `pip install -r "
            "requirements.txt` for every in-repo plugin)")
