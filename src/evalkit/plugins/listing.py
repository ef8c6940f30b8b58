"""What ``evalkit plugins list`` shows: every plugin and every name it registered.

:func:`plugin_report` discovers the plugins into a fresh registry (a broken or missing
plugin is listed as failed, never raised), lets the caller register more into it (the
command applies the eval config's plugin sections there, so the judges declared in
``judges:`` are listed as metrics) and describes each registry entry (:class:`NameInfo`);
the text layout is :mod:`evalkit.report.plugin_listing`.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from typing import Any, NamedTuple

from evalkit.core.import_strings import command_problem
from evalkit.core.pyproject_config import (
    ToolConfig,
    plugin_selection,
)
from evalkit.core.record_checks import record_problem
from evalkit.core.registry import Conflict, Provider, Registry, RegistryError
from evalkit.core.specs import (
    SPEC_TYPES,
    AggregateSpec,
    AnySpec,
    CommandSpec,
    ConfigSectionSpec,
    LoaderSpec,
    MetricFamily,
    MetricSpec,
)
from evalkit.plugins.discovery import location_of
from evalkit.plugins.filling import filling
from evalkit.plugins.info import KERNEL_DISTRIBUTION, PluginInfo
from evalkit.plugins.loading import load_plugins


# ---------------------------------------------------------------------- the listing
class NameInfo(NamedTuple):
    """One registered name, as listed by ``evalkit plugins list``.

    ``kind`` is ``metric``, ``count``, ``aggregate``, ``loader`` (with ``loader_kind``),
    ``target``, ``reporter``, ``executor``, ``measure_syntax``, ``run_format``,
    ``run_evaluator``, ``command`` (an ``evalkit`` subcommand; its ``description`` is its help) or
    ``config section`` (a key of the eval config); a
    ``name@k`` family is one entry named ``name@k``.
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
    if isinstance(spec, CommandSpec):
        common["description"] = spec.help
        return NameInfo(key, "command", None, definition_version=None, **common)
    if isinstance(spec, ConfigSectionSpec):
        return NameInfo(key, "config section", None, definition_version=None, **common)
    return NameInfo(key, namespace, None, definition_version=None, **common)


_KIND_ORDER = ("metric", "count", "aggregate", "loader", "target", "reporter", "executor",
               "measure_syntax", "run_format", "run_evaluator", "command", "config section")


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
    #: the eval config whose plugin sections were applied (``None``: none was read)
    eval_config: str | None = None
    #: why the eval config could not be read or applied (``None``: it was, or none given)
    eval_config_error: str | None = None
    #: the plugins' commands whose ``load`` cannot run, one line each naming the command,
    #: its provider and the import string (filled only with ``import_commands``)
    command_errors: tuple[str, ...] = ()
    #: why a key of ``[tool.evalkit]`` is no loaded plugin's config section (its plugin is
    #: disabled, failed or not installed): the listing is still made
    config_errors: tuple[str, ...] = ()
    #: the plugins' config sections whose model cannot be imported or is no pydantic
    #: model, one line each naming the section and its plugin (filled with
    #: ``import_commands``, which imports the models too)
    section_errors: tuple[str, ...] = ()

    @property
    def failed(self) -> list[PluginInfo]:
        return [p for p in self.plugins if p.status == "failed"]

    @property
    def ok(self) -> bool:
        """No failed plugin, no conflict, an eval config that was read, no key of
        ``[tool.evalkit]`` that no loaded plugin declares and (when they were imported)
        commands that can run and config sections whose models import: what ``--check``
        requires."""
        return not (self.failed or self.conflicts or self.entry_point_conflicts
                    or self.eval_config_error or self.command_errors or self.config_errors
                    or self.section_errors)

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
                    "suffix": c.suffix, "kernel_keeps": c.kernel_keeps,
                    "providers": [
                        {"distribution": e.provider.distribution,
                         "version": e.provider.version, "module": e.provider.module}
                        for e in c.entries
                    ],
                }
                for c in self.conflicts
            ],
            "entry_point_conflicts": list(self.entry_point_conflicts),
            "eval_config": self.eval_config,
            "eval_config_error": self.eval_config_error,
            "command_errors": list(self.command_errors),
            "config_errors": list(self.config_errors),
            "section_errors": list(self.section_errors),
            "ok": self.ok,
        }


class _AuditRegistry(Registry):
    """The listing's registry: while :attr:`auditing`, a name registered (by a section
    of the eval config) that another provider has is kept as a conflict, listed with
    both providers as a clash between two plugins is, instead of being refused."""

    auditing = False

    def add(self, spec: AnySpec, provider: Provider, *, from_plugin: bool = False) -> None:
        if self.auditing and not from_plugin:
            problem = record_problem(spec) if isinstance(spec, SPEC_TYPES) else None
            if problem is not None:
                raise RegistryError(problem)
            from_plugin = True
        super().add(spec, provider, from_plugin=from_plugin)


#: ``configure(registry) -> path or None`` (:func:`plugin_report`)
Configure = Callable[[Registry], str | None]


def plugin_report(
    config: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    entry_points: Iterable[metadata.EntryPoint] | None = None,
    configure: Configure | None = None,
    import_commands: bool = False,
) -> PluginReport:
    """Discover plugins into a fresh registry and describe them (never raises for a
    broken or missing plugin: those are listed as failed).

    Args:
        config: the ``pyproject.toml`` whose ``[tool.evalkit]`` selects the plugins
            (default: the nearest one at or above the working directory).
        environ: the environment (``EVALKIT_PLUGINS``...); default ``os.environ``.
        entry_points: the entry points to discover instead of the installed ones.
        configure: called after discovery with the registry, which the default
            registry's API also answers with meanwhile (in this thread), so that the
            caller registers more names into it: ``evalkit plugins list`` reads the eval
            config and applies its plugin sections. It returns the file it read (or
            ``None``), kept as :attr:`PluginReport.eval_config`. A name it registers
            that another provider has is listed as a conflict. A ``ValueError`` or
            ``LookupError`` it raises is kept as :attr:`PluginReport.eval_config_error`
            (the listing is still made, and it is not :attr:`~PluginReport.ok`).
        import_commands: import what every registered command's ``load`` names and every
            config section's model (``--check``), keeping one line per command that
            cannot run in :attr:`PluginReport.command_errors` and per section whose model
            cannot be imported in :attr:`PluginReport.section_errors` (the plain listing
            imports neither).

    Raises:
        evalkit.core.pyproject_config.ConfigError: the config file is missing or malformed.
    """
    selection = plugin_selection(config, environ=environ)
    registry = _AuditRegistry()
    load_plugins(registry, selection=selection, entry_points=entry_points, strict=False,
                 warn=False)
    eval_config: str | None = None
    eval_config_error: str | None = None
    if configure is not None:
        registry.auditing = True
        try:
            with filling(registry):
                eval_config = configure(registry)
        except (ValueError, LookupError) as exc:
            eval_config_error = str(exc)
        finally:
            registry.auditing = False
    for info in registry.plugins:
        if info.origin == "kernel" and info.location is None:
            with contextlib.suppress(metadata.PackageNotFoundError):
                kernel = metadata.distribution(KERNEL_DISTRIBUTION)
                info.location, info.editable = location_of(kernel)
    command_errors = _command_errors(registry) if import_commands else []
    section_errors = _section_errors(registry) if import_commands else []
    names = sorted(
        (describe_entry(ns, key, e.spec, e.provider) for ns, key, e in registry.entries()),
        key=_listing_order,
    )
    return PluginReport(
        config=selection.config, selection=selection.source, plugins=list(registry.plugins),
        names=names, conflicts=registry.conflicts(),
        entry_point_conflicts=list(registry.entry_point_conflicts),
        eval_config=eval_config, eval_config_error=eval_config_error,
        command_errors=tuple(command_errors), config_errors=tuple(registry.config_problems),
        section_errors=tuple(section_errors),
    )


def _command_errors(registry: Registry) -> list[str]:
    """One line per registered command whose ``load`` cannot run, naming the command,
    its provider and the import string (:func:`evalkit.core.import_strings.command_problem`)."""
    out: list[str] = []
    for _, key, entry in registry.entries("command"):
        spec = entry.spec
        if isinstance(spec, CommandSpec):
            problem = command_problem(spec.load)
            if problem is not None:
                out.append(f"command {key!r} of {entry.provider}: {problem}")
    return out


def _section_errors(registry: Registry) -> list[str]:
    """One line per registered config section whose model cannot be imported or is no
    pydantic model, naming the section and its plugin
    (:func:`evalkit.plugins.section_models.model_problem`)."""
    from evalkit.plugins.section_models import model_problem, plugin_bug

    out: list[str] = []
    for _, key, entry in registry.entries("config section"):
        spec = entry.spec
        if isinstance(spec, ConfigSectionSpec):
            why = model_problem(spec)[1]
            if why is not None:
                out.append(f"config section {key!r}: {plugin_bug(spec, why, registry)}")
    return out
