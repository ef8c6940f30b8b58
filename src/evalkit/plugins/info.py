"""What discovery learned about one plugin, and where a distribution comes from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evalkit.core.pyproject_config import canonical_name

KERNEL_DISTRIBUTION = "paired-evalkit"
#: The plugin distributions developed in the paired-evalkit repository.
IN_REPO_DISTRIBUTIONS = frozenset({"evalkit-retrieval", "evalkit-http", "evalkit-judge",
                                   "evalkit-report-html", "evalkit-text", "evalkit-dask"})


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
    if key == KERNEL_DISTRIBUTION:
        return "kernel"
    return "in-repo" if key in IN_REPO_DISTRIBUTIONS else "third-party"
