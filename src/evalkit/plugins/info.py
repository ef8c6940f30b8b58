"""What discovery learned about one plugin, and where a distribution comes from.

Which plugins are first-party, and which extra of ``paired-evalkit`` installs each, is
read from the installed distributions' metadata (:func:`user_extras`), never from a list
kept here: a plugin the distribution users install requires, by default or through an
extra, is ``in-repo``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from typing import Any

from evalkit._version import __version__
from evalkit.core.pyproject_config import canonical_name

#: The distribution of the kernel (the ``evalkit`` module and command): the provider of the
#: built-ins, and what ``evalkit --version`` names.
KERNEL_DISTRIBUTION = "paired-evalkit-core"
#: The distribution users install: no code, it depends on the kernel and the default
#: plugins at its own version, and its extras add the others (:func:`user_extras`).
USER_DISTRIBUTION = "paired-evalkit"
#: Names that stand for the kernel in a ``[tool.evalkit] plugins`` entry (which then
#: checks the running kernel's version) and in the provider of a stored run or baseline:
#: artifacts written before the kernel became a distribution of its own name it
#: ``paired-evalkit``.
KERNEL_NAMES = frozenset({KERNEL_DISTRIBUTION, USER_DISTRIBUTION})
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")
_PIN = re.compile(r"\s*==\s*([^\s;,]+)\s*(?:;|$)")


@cache
def user_extras() -> dict[str, str]:
    """``{distribution: how paired-evalkit installs it}`` from the installed
    ``paired-evalkit``'s requirements: ``""`` for what ``pip install paired-evalkit``
    brings, else the smallest extra that brings it (``"html"``, not ``"all"``). Keys are
    canonical names (:func:`~evalkit.core.pyproject_config.canonical_name`); empty when
    ``paired-evalkit`` is not installed (only the kernel is). Read once per process."""
    try:
        requires = metadata.requires(USER_DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return {}
    by_extra: dict[str, list[str]] = {}
    for text in requires:
        name = _NAME.match(text)
        if name is None:
            continue
        marker = _EXTRA.search(text.partition(";")[2])
        by_extra.setdefault(marker[1] if marker else "", []).append(canonical_name(name[1]))
    out: dict[str, str] = {}
    for extra, names in sorted(by_extra.items(), key=lambda e: (e[0] != "", len(e[1]), e[0])):
        for dist in names:
            out.setdefault(dist, extra)
    for kernel in KERNEL_NAMES:
        out.pop(kernel, None)
    return out


def _pins_this_kernel(distribution: str) -> bool:
    """Whether ``distribution`` requires the kernel at exactly this version, as each
    distribution of the paired-evalkit repository does (they are released together)."""
    try:
        requires = metadata.requires(distribution) or []
    except metadata.PackageNotFoundError:
        return False
    for text in requires:
        name = _NAME.match(text)
        if name is not None and canonical_name(name[1]) == KERNEL_DISTRIBUTION:
            pin = _PIN.match(text[name.end():])
            if pin is not None and pin[1] == __version__:
                return True
    return False


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
    """``"local"`` (no distribution: a module of the project), ``"kernel"``,
    ``"in-repo"`` (a plugin ``paired-evalkit`` installs, by default or through an extra;
    where ``paired-evalkit`` itself is not installed, a plugin that requires the kernel
    at exactly its version, as the repository's plugins do) or ``"third-party"``."""
    if distribution is None:
        return "local"
    key = canonical_name(distribution)
    if key in KERNEL_NAMES:
        return "kernel"
    extras = user_extras()
    first_party = key in extras if extras else _pins_this_kernel(distribution)
    return "in-repo" if first_party else "third-party"


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
    ``"install it with `pip install 'paired-evalkit[html]'` (...)"``, the extra that
    installed ``paired-evalkit`` names for it (:func:`user_extras`); ``pip install
    DISTRIBUTION`` when ``paired-evalkit`` is not installed or does not bring it."""
    extra = user_extras().get(canonical_name(distribution))
    clone = (f"from a clone of paired-evalkit: `pip install -e plugins/{distribution}`, or "
             "`pip install -r requirements.txt` for every in-repo plugin")
    if extra is None:
        return f"install it with `pip install {distribution}` ({clone})"
    command = (f"pip install '{USER_DISTRIBUTION}[{extra}]'" if extra
               else f"pip install {USER_DISTRIBUTION}")
    return f"install it with `{command}` (or `pip install {distribution}`; {clone})"
