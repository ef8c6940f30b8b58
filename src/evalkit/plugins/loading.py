"""Plugin discovery through the ``evalkit.plugins`` entry-point group.

Discovery runs in two phases. First only distribution metadata is read: every entry
point of the group, its distribution, version and location, and which ones the
``[tool.evalkit]`` selection enables (:mod:`evalkit.core.pyproject_config`). Then each
enabled plugin is imported on its own: one that fails to import (or whose hooks fail, or
that implements a hook name evalkit does not define) is recorded as failed with its
distribution, version and error, and the others still load. The kernel's own built-ins
(:mod:`evalkit.builtins`) and the project's ``local_plugins`` register through the same
hooks and the same conflict rules.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from contextlib import redirect_stdout
from functools import partial
from importlib import metadata
from typing import Any

from evalkit._version import __version__
from evalkit.core.pyproject_config import (
    ENV_PLUGINS,
    ConfigError,
    PluginSelection,
    canonical_name,
    plugin_selection,
    refuse_unknown_keys,
)
from evalkit.core.registry import Provider, Registry, RegistryError
from evalkit.core.specs import (
    MetricFamily,
)
from evalkit.plugins.discovery import (
    ENTRY_POINT_GROUP,
    Candidate,
    PluginSelectionError,
    discover,
    selection_problems,
)
from evalkit.plugins.failures import PLUGIN_FAILURES
from evalkit.plugins.filling import filling, import_plugin
from evalkit.plugins.hooks import PluginError, collect_records, short_error
from evalkit.plugins.info import KERNEL_DISTRIBUTION, PluginInfo, install_hint, origin_of


class PluginLoadWarning(UserWarning):
    """A plugin failed to load (import, hooks or records); evalkit carries on without it.

    :func:`load_plugins` issues one per failed plugin, naming it and the error; the command
    line prints each as one ``warning:`` line on stderr.
    """




def register_plugin_object(
    registry: Registry,
    plugin: object,
    provider: Provider,
    *,
    name: str | None = None,
    from_plugin: bool = True,
    info: PluginInfo | None = None,
) -> PluginInfo:
    """Register one plugin object (module or instance) into ``registry``.

    All of the plugin's hooks are called and checked first; if any fails, the plugin is
    recorded as failed and none of its records is registered. Records are then added
    with ``provider``; with ``from_plugin`` a name someone else provides is blocked
    (a conflict), otherwise :class:`~evalkit.core.registry.RegistryError` is raised.

    Returns:
        The :class:`PluginInfo`, also appended to ``registry.plugins``.
    """
    if info is None:
        info = PluginInfo(
            name=name or provider.plugin or provider.module,
            distribution=provider.distribution,
            version=provider.version,
            module=provider.module,
            origin=origin_of(provider.distribution),
        )
    registry.plugins.append(info)
    try:
        collected = collect_records(plugin, info.name)
    except PluginError as exc:
        info.status = "failed"
        info.error = str(exc)
        return info
    info.hooks = list(collected)
    for records in collected.values():
        for rec in records:
            try:
                registry.add(rec, provider, from_plugin=from_plugin)
            except RegistryError as exc:
                info.status = "failed"
                info.error = str(exc)
                if not from_plugin:
                    raise
                continue
            info.names.append(f"{rec.name}@k" if isinstance(rec, MetricFamily) else rec.name)
    return info




# -------------------------------------------------------------------- loading
#: The kernel's own plugin. It registers loaders, aggregates and reporters from the floors
#: above this one, so it is imported by name, as an entry point is, never by an import.
KERNEL_PLUGIN = "evalkit.builtins"


def load_builtins(registry: Registry) -> PluginInfo:
    """Register the kernel's built-in plugin (:mod:`evalkit.builtins`)."""
    builtins = importlib.import_module(KERNEL_PLUGIN)
    provider = Provider(module=builtins.__name__, distribution=KERNEL_DISTRIBUTION,
                        version=__version__, plugin="builtins")
    return register_plugin_object(registry, builtins, provider, name="builtins")




def load_plugins(
    registry: Registry,
    *,
    enabled: Callable[[str | None, str], bool] | None = None,
    entry_points: Iterable[metadata.EntryPoint] | None = None,
    selection: PluginSelection | None = None,
    strict: bool = True,
    warn: bool = True,
) -> list[PluginInfo]:
    """Discover and register the kernel built-ins, the enabled plugins and local plugins.

    Args:
        registry: the registry to fill.
        enabled: an extra filter ``(distribution, entry_point_name) -> bool`` applied
            *before* import; a plugin it rejects is listed as disabled.
        entry_points: override discovery (tests).
        selection: which plugins to load; by default read from ``[tool.evalkit]`` and
            ``EVALKIT_PLUGINS`` (see :func:`evalkit.core.pyproject_config.plugin_selection`).
        strict: raise on a listed plugin that is missing or at the wrong version, and on
            an unknown key of ``[tool.evalkit]``; otherwise record the plugin as a failed
            one and the key's error in ``registry.config_problems`` (the listing does this).
        warn: issue a :class:`PluginLoadWarning` per failed plugin (the listing, which
            shows them, passes False).

    Returns:
        One :class:`PluginInfo` per plugin, also kept on ``registry.plugins``.

    Raises:
        PluginSelectionError: with ``strict``, a listed plugin is missing or at a version
            its specifiers refuse. Nothing has been imported or registered.
        evalkit.core.pyproject_config.ConfigError: a malformed ``[tool.evalkit]`` table,
            or (with ``strict``) a key of it that is neither evalkit's nor a table (a
            table no loaded plugin declares as its section, its plugin uninstalled or
            disabled, is a :class:`PluginLoadWarning` naming the plugins installed but
            not loaded: only the commands that read the eval config refuse it).
    """
    if selection is None:
        selection = plugin_selection()
    candidates = discover(entry_points)
    problems = selection_problems(selection, candidates)
    if problems and strict:
        raise PluginSelectionError("; ".join(msg for _, msg in problems))

    # the default registry's API works on `registry` meanwhile; what a plugin prints while
    # it is imported or its hooks run goes to stderr, so that it never corrupts a command's
    # output on stdout (a --json object)
    with filling(registry), redirect_stdout(sys.stderr):
        _load_all(registry, selection, candidates, problems, enabled)
    if warn:
        for info in registry.plugins:
            if info.status == "failed":
                # stacklevel 1: the warning is issued by this module, which is how the
                # command line recognises it without importing this module (and pluggy)
                warnings.warn(failure_message(info), PluginLoadWarning, stacklevel=1)
    table = selection.config.table
    if table:  # its tables may be plugins' config sections: known now
        where = f"{selection.config.path} [tool.evalkit]"
        sections = section_names(registry)
        plain = {k: v for k, v in table.items() if not isinstance(v, Mapping)}
        tables = {k: v for k, v in table.items() if isinstance(v, Mapping)}
        try:
            refuse_unknown_keys(plain, where, sections=sections, path=selection.config.path)
        except ConfigError as exc:
            if strict:
                raise
            registry.config_problems.append(str(exc))  # the listing shows it
        try:
            refuse_unknown_keys(tables, where, sections=sections, path=selection.config.path,
                                not_loaded=registry.not_loaded())
        except ConfigError as exc:
            # a table no loaded plugin declares (its plugin uninstalled or disabled) stops
            # only the commands that read the eval config, which refuse it themselves
            registry.config_problems.append(str(exc))
            if strict and warn:
                warnings.warn(str(exc), PluginLoadWarning, stacklevel=1)
    return list(registry.plugins)


def _load_all(
    registry: Registry,
    selection: PluginSelection,
    candidates: list[Candidate],
    problems: list[tuple[PluginInfo, str]],
    enabled: Callable[[str | None, str], bool] | None,
) -> None:
    load_builtins(registry)
    registry.selection_source = selection.source
    plan: list[tuple[Candidate, bool]] = []
    for cand in candidates:
        req = selection.requirement_for(cand.distribution)
        if req is not None and not req.accepts(cand.version):
            continue  # listed among the selection problems
        on = selection.allows(cand.distribution) and (
            enabled is None or enabled(cand.distribution, cand.name)
        )
        plan.append((cand, on))
    _note_entry_point_conflicts(registry, [c for c, on in plan if on])

    for cand, on in plan:
        if not on:
            registry.plugins.append(cand.info(status="disabled", enabled=False))
            continue
        info = cand.info()
        try:
            plugin, info.names = import_plugin(registry, cand.value.partition(":")[0],
                                               cand.entry_point.load)
        except PLUGIN_FAILURES as exc:  # one broken plugin must not break the others
            info.status, info.error = "failed", short_error(exc)
            registry.plugins.append(info)
            continue
        provider = Provider(module=cand.value, distribution=cand.distribution,
                            version=cand.version, plugin=cand.name)
        register_plugin_object(registry, plugin, provider, info=info)
    registry.plugins.extend(info for info, _ in problems)
    _load_local_plugins(registry, selection)


def section_names(registry: Registry) -> list[str]:
    """The keys of the eval config that the plugins in ``registry`` declare as sections,
    blocked ones (two plugins declare them) included."""
    live = [key for _, key, _ in registry.entries("config section")]
    return live + [c.name for c in registry.conflicts() if c.namespace == "config section"]


def failure_message(info: PluginInfo) -> str:
    """One line saying which plugin failed and why (the text of its warning)."""
    if info.origin == "local":
        who = f"local plugin module {info.module!r}"
    else:
        version = f" {info.version}" if info.version else ""
        who = f"plugin {info.name!r} ({info.distribution or info.module}{version})"
    return (f"{who} failed to load: {info.error}; commands run without it "
            "(see `evalkit plugins list`)")


def _note_entry_point_conflicts(registry: Registry, enabled: list[Candidate]) -> None:
    by_name: dict[str, list[Candidate]] = {}
    for cand in enabled:
        by_name.setdefault(cand.name, []).append(cand)
    for ep_name, cands in by_name.items():
        if len({c.distribution for c in cands}) > 1:
            who = " and ".join(f"{c.distribution} {c.version}" for c in cands)
            registry.entry_point_conflicts.append(
                f"entry point {ep_name!r} of group {ENTRY_POINT_GROUP!r} is declared by {who}"
            )


def _load_local_plugins(registry: Registry, selection: PluginSelection) -> None:
    path = selection.config.path
    listed = (selection.config.table or {}).get("local_plugins") or []
    for module_name in listed:  # listed in the table, left out by EVALKIT_PLUGINS
        if isinstance(module_name, str) and module_name not in selection.local_plugins:
            registry.plugins.append(PluginInfo(
                module_name, None, None, module_name, status="disabled", origin="local",
                enabled=False, location=str(path.parent) if path else None))
    if not selection.local_plugins:
        return
    if path is not None and str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    for module_name in selection.local_plugins:
        info = PluginInfo(module_name, None, None, module_name, origin="local",
                          location=str(path.parent) if path else None)
        try:
            module, info.names = import_plugin(
                registry, module_name, partial(importlib.import_module, module_name))
        except PLUGIN_FAILURES as exc:  # a sys.exit() at its top level too
            info.status, info.error = "failed", short_error(exc)
            registry.plugins.append(info)
            continue
        info.location = getattr(module, "__file__", None) or info.location
        provider = Provider(module=module_name, plugin=module_name)
        register_plugin_object(registry, module, provider, info=info)


def missing_plugin(distribution: str, what: str, exc: ImportError | None) -> ImportError:
    """The error for ``what`` when the optional plugin ``distribution`` that provides it
    failed to import with ``exc`` (``None``: it is not among the installed plugins): it
    says what to install."""
    why = f" ({exc})" if exc is not None else ""
    return ImportError(
        f"{what} is provided by the {distribution!r} plugin, which is not installed"
        f"{why}: {install_hint(distribution)}"
    )


def unavailable_plugin(registry: Registry, distribution: str, what: str) -> str | None:
    """Why ``what``, which the plugin ``distribution`` provides, is not in ``registry``:
    the plugin is installed but the plugin selection disables it (naming the selection
    and how to enable it), it failed to load (and why), or it is not installed (and what
    to install); ``None`` when it is loaded."""
    key = canonical_name(distribution)
    info = next((p for p in registry.plugins if p.distribution is not None
                 and canonical_name(p.distribution) == key), None)
    if info is None:
        return str(missing_plugin(distribution, what, None))
    if info.status == "loaded":
        return None
    if info.status == "failed":
        return (f"{what} is provided by the {distribution!r} plugin, which failed to load: "
                f"{info.error} (see `evalkit plugins list`)")
    source = registry.selection_source or "the plugin selection"
    if source.startswith(ENV_PLUGINS):
        how = f"add {distribution} to {ENV_PLUGINS} (or unset it)"
    elif "[tool.evalkit]" in source:
        how = f'add "{distribution}" to that list (or remove the list to load every plugin)'
    else:
        how = "enable it"
    return (f"{what} is provided by the {distribution!r} plugin, which is installed but "
            f"disabled by {source}; {how}")


def import_optional(module: str, distribution: str, what: str) -> Any:
    """Import ``module`` from an optional plugin, or raise ImportError saying what to install
    (:func:`missing_plugin`)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise missing_plugin(distribution, what, exc) from exc
