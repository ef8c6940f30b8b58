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

import contextlib
import difflib
import importlib
import inspect
import os
import re
import sys
import traceback
import warnings
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple, cast

import pluggy

from evalkit._version import __version__
from evalkit.core import hookspecs
from evalkit.core.pyproject_config import (
    PluginRequirement,
    PluginSelection,
    ToolConfig,
    canonical_name,
    plugin_selection,
)
from evalkit.core.registry import Conflict, Provider, Registry, RegistryError, set_default_registry
from evalkit.core.specs import (
    SPEC_TYPES,
    AggregateSpec,
    AnySpec,
    LoaderSpec,
    MetricFamily,
    MetricSpec,
    ReporterSpec,
    TargetSpec,
    record_problem,
)

ENTRY_POINT_GROUP = "evalkit.plugins"
KERNEL_DISTRIBUTION = "paired-evalkit"
#: The plugin distributions developed in the paired-evalkit repository.
IN_REPO_DISTRIBUTIONS = frozenset({"evalkit-retrieval", "evalkit-http", "evalkit-judge"})

HOOKS: dict[str, tuple[type, ...]] = {
    "evalkit_register_metrics": (MetricSpec, MetricFamily),
    "evalkit_register_aggregates": (AggregateSpec,),
    "evalkit_register_loaders": (LoaderSpec,),
    "evalkit_register_targets": (TargetSpec,),
    "evalkit_register_reporters": (ReporterSpec,),
}


class PluginSelectionError(RegistryError):
    """A plugin named by ``[tool.evalkit]`` or ``EVALKIT_PLUGINS`` is missing or at a
    version the specifiers refuse; the message names it and what is installed."""


class PluginError(Exception):
    """A plugin object cannot be registered (raised by :func:`collect_records`)."""


class PluginLoadWarning(UserWarning):
    """A plugin failed to load (import, hooks or records); evalkit carries on without it.

    :func:`load_plugins` issues one per failed plugin, naming it and the error; the command
    line prints each as one ``warning:`` line on stderr.
    """


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


def new_plugin_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _short_error(exc: BaseException) -> str:
    """One line for ``exc``: ``ValueError: ...``; a syntax error names its file and line
    (``/proj/myplug.py:3: invalid syntax``), which its last line alone would lose."""
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f"{exc.filename}:{exc.lineno}" if exc.lineno else exc.filename
        return f"{where}: {exc.msg}"
    if isinstance(exc, pluggy.PluginValidationError):
        text = str(exc)
        hook = re.search(r"unknown hook '(\w+)'", text)
        if hook:  # a misspelt hook: name the plugin's function and the likely hook
            maybe = difflib.get_close_matches(hook.group(1), list(HOOKS), n=1)
            hint = f"; did you mean {maybe[0]}?" if maybe else f"; known hooks: {', '.join(HOOKS)}"
            return f"{hook.group(1)} is not an evalkit hook{hint}"
    else:
        text = traceback.format_exception_only(type(exc), exc)[-1].strip()
    # one line, whatever the message holds (the listing and the warnings are one line each)
    text = text.replace(".__new__()", "()")  # MetricSpec.__new__() missing ... -> MetricSpec()
    return " ".join(text.split())


def collect_records(plugin: object, name: str = "plugin") -> dict[str, list[AnySpec]]:
    """Call every hook ``plugin`` implements and return ``{hook name: records}``.

    Nothing is registered. Raises :class:`PluginError` when the plugin implements a hook
    evalkit does not define (``check_pending``), defines an ``evalkit_register_*``
    function without ``@hookimpl``, or a hook raises or returns something other than a
    list of the hook's records.
    """
    pm = new_plugin_manager()
    try:
        pm.register(plugin, name=name)
        pm.check_pending()
    except Exception as exc:
        raise PluginError(_short_error(exc)) from exc
    for attr in dir(plugin):
        if not attr.startswith("evalkit_register"):
            continue
        if callable(getattr(plugin, attr, None)) and pm.parse_hookimpl_opts(plugin, attr) is None:
            if attr in HOOKS:
                raise PluginError(f"{attr} is not decorated with @evalkit.hookimpl")
            raise PluginError(
                f"{attr} is not an evalkit hook; known hooks: {', '.join(HOOKS)}"
            )
    out: dict[str, list[AnySpec]] = {}
    for hook_name, allowed in HOOKS.items():
        impls = getattr(pm.hook, hook_name).get_hookimpls()
        if not impls:
            continue
        records: list[AnySpec] = []
        for impl in impls:
            try:
                result = impl.function()
            except Exception as exc:
                raise PluginError(f"{hook_name}: {_short_error(exc)}") from exc
            if result is None:
                raise PluginError(
                    f"{hook_name} returned None; return a list of records ([] to register "
                    "nothing)")
            # records are named tuples: a bare record is iterable but is not a list of them
            if (isinstance(result, (str, bytes, Mapping, *SPEC_TYPES))
                    or not isinstance(result, Iterable)):
                raise PluginError(
                    f"{hook_name} returned {type(result).__name__}; expected a list of "
                    + " or ".join(t.__name__ for t in allowed)
                )
            for rec in result:
                if not isinstance(rec, allowed):
                    raise PluginError(
                        f"{hook_name} returned {type(rec).__name__}; expected "
                        + " or ".join(t.__name__ for t in allowed)
                    )
                problem = record_problem(rec)
                if problem is not None:
                    raise PluginError(f"{hook_name}: {problem}")
                if (
                    isinstance(rec, MetricSpec | MetricFamily | AggregateSpec)
                    and getattr(rec, "kind", "metric") == "metric"
                    and not isinstance(rec.higher_is_better, bool)
                ):
                    raise PluginError(
                        f"{hook_name}: {rec.name!r} declares no polarity "
                        f"(higher_is_better={rec.higher_is_better!r}); set True or False"
                    )
                records.append(cast(AnySpec, rec))
        out[hook_name] = records
    return out


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
            origin=_origin(provider.distribution),
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


# ---------------------------------------------------------------- discovery (metadata)
class Candidate(NamedTuple):
    """An entry point of the ``evalkit.plugins`` group, known from metadata only."""

    entry_point: metadata.EntryPoint
    distribution: str | None
    version: str | None
    location: str | None
    editable: bool

    @property
    def name(self) -> str:
        return self.entry_point.name

    @property
    def value(self) -> str:
        return self.entry_point.value

    def info(self, **changes: Any) -> PluginInfo:
        info = PluginInfo(
            name=self.name, distribution=self.distribution, version=self.version,
            module=self.value, origin=_origin(self.distribution), location=self.location,
            editable=self.editable,
        )
        for key, value in changes.items():
            setattr(info, key, value)
        return info


def _origin(distribution: str | None) -> str:
    if distribution is None:
        return "local"
    key = canonical_name(distribution)
    if key == KERNEL_DISTRIBUTION:
        return "kernel"
    return "in-repo" if key in IN_REPO_DISTRIBUTIONS else "third-party"


def _location(dist: metadata.Distribution | None) -> tuple[str | None, bool]:
    """``(editable project folder, True)`` or ``(site folder, False)``."""
    if dist is None:
        return None, False
    try:
        direct = dist.read_text("direct_url.json")
    except OSError:
        direct = None
    if direct:
        try:
            import json  # only for a distribution installed from a path or URL

            data = json.loads(direct)
        except ValueError:
            data = {}
        url = str(data.get("url", ""))
        if data.get("dir_info", {}).get("editable") and url.startswith("file://"):
            from urllib.parse import unquote, urlparse

            return unquote(urlparse(url).path), True
    try:
        return str(dist.locate_file("")), False
    except Exception:
        return None, False


def _name_version(dist: metadata.Distribution | None) -> tuple[str | None, str | None]:
    if dist is None:
        return None, None
    md = dist.metadata
    name, version = md["Name"], md["Version"]
    return (str(name) if name else None), (str(version) if version else None)


def discover(entry_points: Iterable[metadata.EntryPoint] | None = None) -> list[Candidate]:
    """The plugins installed, from distribution metadata only (nothing is imported).

    A distribution found twice on the path (the same name, once per path entry) is
    listed once, the first found, as Python's import system would use it. The result is
    sorted by distribution and entry-point name.
    """
    eps = (
        list(entry_points) if entry_points is not None
        else list(metadata.entry_points(group=ENTRY_POINT_GROUP))
    )
    out: list[Candidate] = []
    seen: set[tuple[str | None, str]] = set()
    for ep in eps:
        dist = getattr(ep, "dist", None)
        dist_name, version = _name_version(dist)
        key = (canonical_name(dist_name) if dist_name else None, ep.name)
        if key in seen:
            continue
        seen.add(key)
        location, editable = _location(dist)
        out.append(Candidate(ep, dist_name, version, location, editable))
    # Load in a fixed order (a folder lists its distributions in no particular order), so
    # that conflict messages and listings are the same on every machine.
    return sorted(out, key=lambda c: (canonical_name(c.distribution or ""), c.name))


def _installed_summary(candidates: list[Candidate]) -> str:
    if not candidates:
        return "no evalkit plugin is installed"
    items = sorted({f"{c.distribution} {c.version}" for c in candidates if c.distribution})
    return "installed plugins: " + ", ".join(items)


def _selection_problem(
    req: PluginRequirement, selection: PluginSelection, candidates: list[Candidate]
) -> tuple[PluginInfo, str] | None:
    """A missing or wrong-version requirement, as a failed info and a message."""
    if req.name == KERNEL_DISTRIBUTION:
        if req.accepts(__version__):
            return None
        msg = (f"{selection.source} lists {req.text!r}, but {KERNEL_DISTRIBUTION} "
               f"{__version__} is running")
        return PluginInfo(req.name, req.name, __version__, "", status="failed", error=msg,
                          origin="kernel"), msg
    matches = [c for c in candidates if c.distribution and canonical_name(c.distribution)
               == req.name]
    if not matches:
        try:
            version: str | None = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            version = None
        if version is not None:
            detail = (f"{req.name} {version} is installed but declares no "
                      f"{ENTRY_POINT_GROUP!r} entry point")
        else:
            detail = f"{req.name} is not installed ({_installed_summary(candidates)})"
        msg = f"{selection.source} lists {req.text!r}, but {detail}"
        return PluginInfo(req.name, req.name, version, "", status="failed", error=msg,
                          origin=_origin(req.name)), msg
    cand = matches[0]
    if req.accepts(cand.version):
        return None
    msg = (f"{selection.source} lists {req.text!r}, but {cand.distribution} {cand.version} "
           f"is installed (at {cand.location})")
    return cand.info(status="failed", error=msg), msg


def selection_problems(
    selection: PluginSelection, candidates: list[Candidate]
) -> list[tuple[PluginInfo, str]]:
    """Every listed plugin that is missing or at a version its specifiers refuse."""
    out: list[tuple[PluginInfo, str]] = []
    for req in selection.requirements or ():
        problem = _selection_problem(req, selection, candidates)
        if problem is not None:
            out.append(problem)
    return out


# -------------------------------------------------------------------- loading
def load_builtins(registry: Registry) -> PluginInfo:
    """Register the kernel's built-in plugin (:mod:`evalkit.builtins`)."""
    from evalkit import builtins

    provider = Provider(module=builtins.__name__, distribution=KERNEL_DISTRIBUTION,
                        version=__version__, plugin="builtins")
    return register_plugin_object(registry, builtins, provider, name="builtins")


_config_override: str | None = None


def set_config(config: str | os.PathLike[str] | None) -> None:
    """Use ``config``'s ``[tool.evalkit]`` for the default registry (the CLI's ``--config``).

    The default registry is rediscovered on its next use; ``None`` returns to the upward
    search from the working directory.
    """
    global _config_override
    _config_override = None if config is None else os.fspath(config)
    set_default_registry(None)


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
        strict: raise on a listed plugin that is missing or at the wrong version;
            otherwise record it as a failed plugin (the listing does this).
        warn: issue a :class:`PluginLoadWarning` per failed plugin (the listing, which
            shows them, passes False).

    Returns:
        One :class:`PluginInfo` per plugin, also kept on ``registry.plugins``.

    Raises:
        PluginSelectionError: with ``strict``, a listed plugin is missing or at a version
            its specifiers refuse. Nothing has been imported or registered.
        evalkit.core.pyproject_config.ConfigError: a malformed ``[tool.evalkit]`` table.
    """
    if selection is None:
        selection = plugin_selection(_config_override)
    candidates = discover(entry_points)
    problems = selection_problems(selection, candidates)
    if problems and strict:
        raise PluginSelectionError("; ".join(msg for _, msg in problems))

    load_builtins(registry)
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
            plugin = cand.entry_point.load()
        except Exception as exc:  # one broken plugin must not break the others
            info.status, info.error = "failed", _short_error(exc)
            registry.plugins.append(info)
            continue
        provider = Provider(module=cand.value, distribution=cand.distribution,
                            version=cand.version, plugin=cand.name)
        register_plugin_object(registry, plugin, provider, info=info)
    registry.plugins.extend(info for info, _ in problems)
    _load_local_plugins(registry, selection)
    if warn:
        for info in registry.plugins:
            if info.status == "failed":
                # stacklevel 1: the warning is issued by this module, which is how the
                # command line recognises it without importing this module (and pluggy)
                warnings.warn(failure_message(info), PluginLoadWarning, stacklevel=1)
    return list(registry.plugins)


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
            module = importlib.import_module(module_name)
        except Exception as exc:
            info.status, info.error = "failed", _short_error(exc)
            registry.plugins.append(info)
            continue
        info.location = getattr(module, "__file__", None) or info.location
        provider = Provider(module=module_name, plugin=module_name)
        register_plugin_object(registry, module, provider, info=info)


def import_optional(module: str, distribution: str, what: str) -> Any:
    """Import ``module`` from an optional plugin, or raise ImportError saying what to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{what} is provided by the {distribution!r} plugin, which is not installed "
            f"({exc}). It ships in the paired-evalkit repository: from a clone, run "
            f"`pip install -e plugins/{distribution}` (or `pip install -r requirements.txt` "
            "for every in-repo plugin)"
        ) from exc


# ---------------------------------------------------------------------- the listing
class NameInfo(NamedTuple):
    """One registered name, as listed by ``evalkit plugins list``.

    ``kind`` is ``metric``, ``count``, ``aggregate``, ``loader`` (with ``loader_kind``),
    ``target`` or ``reporter``; a ``name@k`` family is one entry named ``name@k``.
    ``polarity`` is ``"higher"``, ``"lower"``, ``"undeclared"`` or ``None`` (not a metric).
    """

    name: str
    kind: str
    polarity: str | None
    provider: str
    distribution: str | None
    version: str | None
    definition_version: str | None
    description: str = ""
    aliases: tuple[str, ...] = ()
    loader_kind: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "kind": self.kind, "loader_kind": self.loader_kind,
            "polarity": self.polarity, "provider": self.provider,
            "distribution": self.distribution, "version": self.version,
            "definition_version": self.definition_version, "description": self.description,
            "aliases": list(self.aliases),
        }


def _polarity(value: bool | None) -> str:
    if value is None:
        return "undeclared"
    return "higher" if value else "lower"


def describe_entry(namespace: str, key: str, spec: AnySpec, provider: Provider) -> NameInfo:
    """The listing row of one registry entry."""
    common: dict[str, Any] = {
        "provider": str(provider), "distribution": provider.distribution,
        "version": provider.version, "description": getattr(spec, "description", ""),
        "aliases": tuple(getattr(spec, "aliases", ())),
    }
    if isinstance(spec, MetricFamily | MetricSpec):
        # counts (num_rel, ...) are reported, never compared or gated: no polarity shown
        polarity = None if spec.kind == "count" else _polarity(spec.higher_is_better)
        aliases = tuple(getattr(spec, "aliases", ()))
        if isinstance(spec, MetricFamily):
            common["aliases"] = tuple(f"{a}@k" for a in aliases)
        return NameInfo(key, spec.kind, polarity,
                        definition_version=spec.version, **common)
    if isinstance(spec, AggregateSpec):
        return NameInfo(key, "aggregate", _polarity(spec.higher_is_better),
                        definition_version=spec.version, **common)
    if isinstance(spec, LoaderSpec):
        return NameInfo(key, "loader", None, definition_version=None,
                        loader_kind=spec.kind, **common)
    kind = "target" if isinstance(spec, TargetSpec) else "reporter"
    return NameInfo(key, kind, None, definition_version=None, **common)


_KIND_ORDER = ("metric", "count", "aggregate", "loader", "target", "reporter")


def _listing_order(n: NameInfo) -> tuple[Any, ...]:
    """Kinds in a fixed order, then names with their numbers compared as numbers."""
    kind = _KIND_ORDER.index(n.kind) if n.kind in _KIND_ORDER else len(_KIND_ORDER)
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p.lower())
                  for p in re.split(r"(\d+)", n.name) if p)
    return kind, n.loader_kind or "", parts


class PluginReport(NamedTuple):
    """Everything ``evalkit plugins list`` shows."""

    config: ToolConfig
    selection: str
    plugins: list[PluginInfo]
    names: list[NameInfo]
    conflicts: list[Conflict]
    entry_point_conflicts: list[str]

    @property
    def failed(self) -> list[PluginInfo]:
        return [p for p in self.plugins if p.status == "failed"]

    @property
    def ok(self) -> bool:
        """No failed plugin and no conflict (what ``--check`` requires)."""
        return not (self.failed or self.conflicts or self.entry_point_conflicts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "config": str(self.config.path) if self.config.path else None,
            "config_has_table": self.config.table is not None,
            "selection": self.selection,
            "plugins": [p.as_dict() for p in self.plugins],
            "names": [n.as_dict() for n in self.names],
            "conflicts": [
                {
                    "namespace": c.namespace, "name": c.name, "message": c.message(),
                    "providers": [
                        {"distribution": e.provider.distribution,
                         "version": e.provider.version, "module": e.provider.module}
                        for e in c.entries
                    ],
                }
                for c in self.conflicts
            ],
            "entry_point_conflicts": list(self.entry_point_conflicts),
            "ok": self.ok,
        }


def plugin_report(
    config: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    entry_points: Iterable[metadata.EntryPoint] | None = None,
) -> PluginReport:
    """Discover plugins into a fresh registry and describe them (never raises for a
    broken or missing plugin: those are listed as failed).

    Raises:
        evalkit.core.pyproject_config.ConfigError: the config file is missing or malformed.
    """
    selection = plugin_selection(config, environ=environ)
    registry = Registry()
    load_plugins(registry, selection=selection, entry_points=entry_points, strict=False,
                 warn=False)
    for info in registry.plugins:
        if info.origin == "kernel" and info.location is None:
            with contextlib.suppress(metadata.PackageNotFoundError):
                kernel = metadata.distribution(KERNEL_DISTRIBUTION)
                info.location, info.editable = _location(kernel)
    names = sorted(
        (describe_entry(ns, key, e.spec, e.provider) for ns, key, e in registry.entries()),
        key=_listing_order,
    )
    return PluginReport(
        config=selection.config, selection=selection.source, plugins=list(registry.plugins),
        names=names, conflicts=registry.conflicts(),
        entry_point_conflicts=list(registry.entry_point_conflicts),
    )


# ------------------------------------------------------------- hook reference (docs)
REFERENCE_START = "<!-- hook-reference:start (generated by `python -m evalkit.plugins`) -->"
REFERENCE_END = "<!-- hook-reference:end -->"
_ROLE = r":(?:class|func|meth|data|mod|exc|attr):`(~?)([\w.]+)`"
_SECTIONS = ("Returns", "Errors", "Raises", "Args", "Attributes")


def hookspec_functions(module: Any = hookspecs) -> list[Callable[..., Any]]:
    """The hookspec functions of ``module`` in source order."""
    marker = f"{hookspecs.PROJECT}_spec"
    fns = [obj for _, obj in vars(module).items()
           if inspect.isfunction(obj) and hasattr(obj, marker)]
    return sorted(fns, key=lambda f: f.__code__.co_firstlineno)


def hookspec_doc_problems(module: Any = hookspecs) -> list[str]:
    """Hookspecs without usable documentation: no docstring, or no ``Returns:`` section
    saying what a plugin returns. Also every hook the loader knows must be a hookspec."""
    problems: list[str] = []
    fns = hookspec_functions(module)
    for fn in fns:
        doc = inspect.getdoc(fn) or ""
        if not doc.strip():
            problems.append(f"{fn.__name__}: no docstring")
        elif "Returns:" not in doc:
            problems.append(f"{fn.__name__}: no 'Returns:' section")
    if module is hookspecs:
        names = {fn.__name__ for fn in fns}
        problems += [f"{hook}: not a hookspec" for hook in HOOKS if hook not in names]
        problems += [f"{name}: no record types in plugins.HOOKS" for name in sorted(names)
                     if name not in HOOKS]
    return problems


def _markdown(doc: str) -> str:
    """A Google-style docstring as Markdown: roles and double backticks become code,
    sections become emphasised headings, ``name: text`` entries become list items."""
    def role(m: re.Match[str]) -> str:
        target = m.group(2)
        return f"`{target.rsplit('.', 1)[-1] if m.group(1) else target}`"

    text = re.sub(_ROLE, role, doc).replace("``", "`")
    out: list[str] = []
    section: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if indent == 0 and stripped.endswith(":") and stripped[:-1] in _SECTIONS:
            section = stripped[:-1]
            out += ["", f"*{section}:*", ""]
            continue
        if not stripped:
            out.append("")
            continue
        if indent == 0:
            section = None
        entry = re.match(r"^([\w, ]+):\s+(.*)$", stripped)
        if section in ("Attributes", "Args", "Raises") and indent <= 4 and entry:
            out.append(f"- `{entry.group(1)}`: {entry.group(2)}")
        elif section is not None and indent > 4:
            out.append(f"  {stripped}")
        else:
            out.append(stripped)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _record_types() -> list[type]:
    seen: list[type] = []
    for types_ in HOOKS.values():
        seen += [t for t in types_ if t not in seen]
    return seen


def render_hook_reference(module: Any = hookspecs) -> str:
    """The hook reference in Markdown, generated from the hookspecs' docstrings and
    the docstrings and fields of the records they return."""
    parts = [REFERENCE_START, "", "### Hooks", ""]
    for fn in hookspec_functions(module):
        returns = fn.__annotations__.get("return", "")
        parts += [f"#### `{fn.__name__}() -> {returns}`", "", _markdown(inspect.getdoc(fn) or ""),
                  ""]
    parts += ["### Records (`evalkit.core.specs`)", ""]
    for cls in _record_types():
        fields = []
        defaults: dict[str, Any] = getattr(cls, "_field_defaults", {})
        for name in getattr(cls, "_fields", ()):
            if name in defaults:
                default = defaults[name]
                shown = dict(default) if isinstance(default, Mapping) else default
                fields.append(f"{name}={shown!r}")
            else:
                fields.append(name)
        parts += [f"#### `{cls.__name__}({', '.join(fields)})`", "",
                  _markdown(inspect.getdoc(cls) or ""), ""]
    parts.append(REFERENCE_END)
    return "\n".join(parts)


def sync_hook_reference(path: str | os.PathLike[str], *, write: bool = False) -> bool:
    """Whether ``path`` holds the current hook reference between its markers.

    With ``write``, rewrite that section in place first. Raises ``ValueError`` when the
    file lacks the markers.
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    start, end = text.find(REFERENCE_START), text.find(REFERENCE_END)
    if start < 0 or end < start:
        raise ValueError(f"{p}: no hook reference markers ({REFERENCE_START} ... {REFERENCE_END})")
    current = text[start:end + len(REFERENCE_END)]
    fresh = render_hook_reference()
    if current == fresh:
        return True
    if write:
        from evalkit.io.outputs import writing

        with writing(p):
            p.write_text(text[:start] + fresh + text[end + len(REFERENCE_END):],
                         encoding="utf-8")
        return True
    return False


if __name__ == "__main__":  # python -m evalkit.plugins [docs/plugins.md]
    target = sys.argv[1] if len(sys.argv) > 1 else "docs/plugins.md"
    sync_hook_reference(target, write=True)
    print(f"hook reference written to {target}")
