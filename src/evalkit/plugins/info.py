"""What discovery learned about one plugin, and where a distribution comes from."""

from __future__ import annotations

from typing import Any

from evalkit.core.pyproject_config import (
    canonical_name,
)

KERNEL_DISTRIBUTION = "paired-evalkit"
#: The plugin distributions developed in the paired-evalkit repository.
IN_REPO_DISTRIBUTIONS = frozenset({"evalkit-retrieval", "evalkit-http", "evalkit-judge"})


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

    _FIELDS = ("name", "distribution", "version", "module", "status", "error", "hooks",
               "names", "origin", "location", "editable", "enabled")
    __slots__ = _FIELDS

    def __init__(self, name: str, distribution: str | None, version: str | None, module: str,
                 status: str = "loaded", error: str | None = None,
                 hooks: list[str] | None = None, names: list[str] | None = None,
                 origin: str = "third-party", location: str | None = None,
                 editable: bool = False, enabled: bool = True) -> None:
        self.name, self.distribution, self.version, self.module = (
            name, distribution, version, module)
        self.status = status  # loaded | failed | disabled
        self.error = error
        self.hooks: list[str] = [] if hooks is None else hooks
        self.names: list[str] = [] if names is None else names
        self.origin, self.location, self.editable, self.enabled = (
            origin, location, editable, enabled)

    def __repr__(self) -> str:
        return f"PluginInfo({', '.join(f'{k}={getattr(self, k)!r}' for k in self._FIELDS)})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PluginInfo):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable

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
