"""The kernel's built-in plugin: records registered through the same hooks as any plugin.

The golden-set and BEIR loaders, the latency and diversity aggregates, the
reporters, the ``local`` executor, and the kernel's commands (as records, so that a
plugin's command of the same name is a conflict).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def _beir_qrels_header(path: Path) -> bool:
    """Whether the first non-blank line is BEIR's ``query-id corpus-id score`` header (a
    ``.tsv`` qrels file without it is TREC's four columns, as MS MARCO's are)."""
    import gzip

    opener: Any = gzip.open if str(path).lower().endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig", errors="replace") as fh:
        for line in fh:
            if line.strip():
                return bool(line.lstrip().lower().startswith("query-id"))
    return True  # empty: the BEIR loader says so


#: Built once, so that registering the built-ins twice is recognised as the same loaders
#: (each imported when first called: registering them, for every command, imports none).
_LOADERS = (
    LoaderSpec("jsonl", "goldens", on_call("evalkit.data.goldens:load_jsonl"), (".jsonl",)),
    LoaderSpec("yaml", "goldens", on_call("evalkit.data.goldens_yaml:load_yaml"),
               (".yaml", ".yml")),
    LoaderSpec("csv", "goldens", on_call("evalkit.data.goldens:load_csv"), (".csv",)),
    LoaderSpec("beir", "corpus", on_call("evalkit.data.beir:load_corpus"),
               (".jsonl", ".jsonl.gz")),
    LoaderSpec("beir", "queries", on_call("evalkit.data.beir:load_queries"),
               (".jsonl", ".tsv", ".tsv.gz")),
    LoaderSpec("beir", "qrels", on_call("evalkit.data.beir:load_qrels"), (".tsv", ".tsv.gz"),
               accepts=_beir_qrels_header),
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
