"""The kernel's built-in plugin: records registered through the same hooks as any plugin.

The golden-set loaders, the latency and diversity aggregates, the
reporters, the ``local`` executor, and the kernel's commands (as records, so that a
plugin's command of the same name is a conflict).
"""

from __future__ import annotations

from evalkit.core.hookspecs import hookimpl
from evalkit.core.import_strings import on_call
from evalkit.core.specs import (
    AggregateSpec,
    CommandSpec,
    ExecutorSpec,
    LoaderSpec,
    MetricSpec,
    ReporterSpec,
    TargetSpec,
)


@hookimpl
def evalkit_register_metrics() -> list[MetricSpec]:
    return []


@hookimpl
def evalkit_register_aggregates() -> list[AggregateSpec]:
    from evalkit.execute.aggregates import builtin_aggregates

    return builtin_aggregates()


#: Built once, so that registering the built-ins twice is recognised as the same loaders
#: (each imported when first called: registering them, for every command, imports none).
_LOADERS = (
    LoaderSpec("jsonl", "goldens", on_call("evalkit.data.goldens:load_jsonl"), (".jsonl",)),
    LoaderSpec("yaml", "goldens", on_call("evalkit.data.goldens_yaml:load_yaml"),
               (".yaml", ".yml")),
    LoaderSpec("csv", "goldens", on_call("evalkit.data.goldens:load_csv"), (".csv",)),
)


@hookimpl
def evalkit_register_loaders() -> list[LoaderSpec]:
    return list(_LOADERS)


@hookimpl
def evalkit_register_targets() -> list[TargetSpec]:
    return []


@hookimpl
def evalkit_register_reporters() -> list[ReporterSpec]:
    from evalkit.report.builtin import builtin_reporters

    return builtin_reporters()


#: Built once, so that registering the built-ins twice is recognised as the same executor.
_EXECUTORS = (
    ExecutorSpec("local", on_call("evalkit.execute.local_executor:LocalExecutor"),
                 "threads of this process (max_concurrency of them); the default"),
)


@hookimpl
def evalkit_register_executors() -> list[ExecutorSpec]:
    return list(_EXECUTORS)


@hookimpl
def evalkit_register_commands() -> list[CommandSpec]:
    """The kernel's own commands, from the command line's table (which ``evalkit --help``
    reads without the registry): a plugin's command of the same name is a conflict that
    names both, and never replaces the kernel's."""
    from evalkit.cli.commands import COMMANDS

    return [CommandSpec(c.name, c.summary, c.module) for c in COMMANDS]
