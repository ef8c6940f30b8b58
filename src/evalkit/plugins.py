"""Plugin discovery through the ``evalkit.plugins`` entry-point group.

Every plugin is imported on its own: one that fails to import (or whose hooks fail, or
that implements a hook name evalkit does not define) is recorded as failed with its
distribution, version and error, and the others still load. The kernel's own built-ins
(:mod:`evalkit.builtins`) register through the same hooks.
"""

from __future__ import annotations

import importlib
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from evalkit import hookspecs
from evalkit._version import __version__
from evalkit.registry import Provider, Registry, RegistryError
from evalkit.specs import (
    AggregateSpec,
    LoaderSpec,
    MetricFamily,
    MetricSpec,
    ReporterSpec,
    TargetSpec,
)

ENTRY_POINT_GROUP = "evalkit.plugins"
KERNEL_DISTRIBUTION = "paired-evalkit"

HOOKS: dict[str, tuple[type, ...]] = {
    "evalkit_register_metrics": (MetricSpec, MetricFamily),
    "evalkit_register_aggregates": (AggregateSpec,),
    "evalkit_register_loaders": (LoaderSpec,),
    "evalkit_register_targets": (TargetSpec,),
    "evalkit_register_reporters": (ReporterSpec,),
}


@dataclass
class PluginInfo:
    """What discovery learned about one plugin."""

    name: str
    distribution: str | None
    version: str | None
    module: str
    status: str = "loaded"  # loaded | failed | disabled
    error: str | None = None
    hooks: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "distribution": self.distribution, "version": self.version,
            "module": self.module, "status": self.status, "error": self.error,
            "hooks": self.hooks, "names": self.names,
        }


def new_plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _short_error(exc: BaseException) -> str:
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return last


def register_plugin_object(
    registry: Registry,
    plugin: object,
    provider: Provider,
    *,
    name: str | None = None,
    from_plugin: bool = True,
) -> PluginInfo:
    """Register one plugin object (module or instance) into ``registry``.

    Each hook implementation is called on its own; its records are checked for type and
    added with ``provider``. Failures are caught and recorded on the returned info.
    """
    info = PluginInfo(
        name=name or provider.plugin or provider.module,
        distribution=provider.distribution,
        version=provider.version,
        module=provider.module,
    )
    pm = new_plugin_manager()
    try:
        pm.register(plugin, name=info.name)
        pm.check_pending()
    except Exception as exc:  # noqa: BLE001 - reported, not raised
        info.status = "failed"
        info.error = _short_error(exc)
        registry.plugins.append(info)
        return info
    for hook_name, allowed in HOOKS.items():
        caller = getattr(pm.hook, hook_name)
        impls = caller.get_hookimpls()
        if not impls:
            continue
        info.hooks.append(hook_name)
        for impl in impls:
            try:
                records = impl.function()
                records = list(records or [])
                for rec in records:
                    if not isinstance(rec, allowed):
                        raise TypeError(
                            f"{hook_name} returned {type(rec).__name__}; expected "
                            + " or ".join(t.__name__ for t in allowed)
                        )
                for rec in records:
                    registry.add(rec, provider, from_plugin=from_plugin)
                    info.names.append(rec.name)
            except Exception as exc:  # noqa: BLE001 - reported, not raised
                info.status = "failed"
                info.error = f"{hook_name}: {_short_error(exc)}"
                if not from_plugin and isinstance(exc, RegistryError):
                    registry.plugins.append(info)
                    raise
    registry.plugins.append(info)
    return info


def _entry_points() -> list[metadata.EntryPoint]:
    return list(metadata.entry_points(group=ENTRY_POINT_GROUP))


def load_plugins(
    registry: Registry,
    *,
    enabled: Callable[[str | None, str], bool] | None = None,
    entry_points: Iterable[metadata.EntryPoint] | None = None,
) -> list[PluginInfo]:
    """Discover and register the kernel built-ins and every installed plugin.

    Args:
        registry: the registry to fill.
        enabled: optional filter ``(distribution, entry_point_name) -> bool`` applied
            *before* import; a plugin it rejects is listed as disabled.
        entry_points: override discovery (tests).

    Returns:
        One :class:`PluginInfo` per plugin, also kept on ``registry.plugins``.
    """
    from evalkit import builtins

    register_plugin_object(
        registry,
        builtins,
        Provider(module=builtins.__name__, distribution=KERNEL_DISTRIBUTION,
                 version=__version__, plugin="builtins"),
        name="builtins",
    )
    seen: dict[tuple[str | None, str], str] = {}
    names: dict[str, str] = {}
    eps = list(entry_points) if entry_points is not None else _entry_points()
    for ep in eps:
        dist = ep.dist.name if ep.dist is not None else None
        version = ep.dist.version if ep.dist is not None else None
        key = (dist, ep.name)
        if key in seen:
            continue  # the same distribution found twice on the path
        seen[key] = ep.value
        if ep.name in names and names[ep.name] != (dist or "?"):
            registry.entry_point_conflicts.append(
                f"entry point {ep.name!r} is declared by {names[ep.name]} and {dist} {version}"
            )
        names.setdefault(ep.name, dist or "?")
        provider = Provider(module=ep.value, distribution=dist, version=version, plugin=ep.name)
        if enabled is not None and not enabled(dist, ep.name):
            registry.plugins.append(
                PluginInfo(ep.name, dist, version, ep.value, status="disabled")
            )
            continue
        try:
            plugin = ep.load()
        except Exception as exc:  # noqa: BLE001 - one broken plugin must not break all
            registry.plugins.append(
                PluginInfo(ep.name, dist, version, ep.value, status="failed",
                           error=_short_error(exc))
            )
            continue
        register_plugin_object(registry, plugin, provider, name=ep.name)
    return list(registry.plugins)


def import_optional(module: str, distribution: str, what: str) -> Any:
    """Import ``module`` from an optional plugin, or raise ImportError saying what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{what} is provided by the {distribution!r} plugin, which is not installed "
            f"({exc}). Install it with: pip install {distribution}"
        ) from exc
