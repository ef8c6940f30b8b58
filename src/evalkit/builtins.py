"""The kernel's built-in plugin: records registered through the same hooks as any plugin.

Later releases add the golden-set loaders, latency/diversity aggregates and reporters here.
"""

from __future__ import annotations

from evalkit.hookspecs import hookimpl
from evalkit.specs import AggregateSpec, LoaderSpec, MetricSpec, ReporterSpec, TargetSpec


@hookimpl
def evalkit_register_metrics() -> list[MetricSpec]:
    return []


@hookimpl
def evalkit_register_aggregates() -> list[AggregateSpec]:
    from evalkit.aggregates import builtin_aggregates

    return builtin_aggregates()


@hookimpl
def evalkit_register_loaders() -> list[LoaderSpec]:
    from evalkit import beir, goldens

    return [
        LoaderSpec("jsonl", "goldens", goldens.load_jsonl, (".jsonl",)),
        LoaderSpec("yaml", "goldens", goldens.load_yaml, (".yaml", ".yml")),
        LoaderSpec("csv", "goldens", goldens.load_csv, (".csv",)),
        LoaderSpec("beir", "corpus", beir.load_corpus, (".jsonl", ".jsonl.gz")),
        LoaderSpec("beir", "queries", beir.load_queries, (".jsonl", ".tsv", ".tsv.gz")),
        LoaderSpec("beir", "qrels", beir.load_qrels, (".tsv",)),
    ]


@hookimpl
def evalkit_register_targets() -> list[TargetSpec]:
    return []


@hookimpl
def evalkit_register_reporters() -> list[ReporterSpec]:
    from evalkit.reporters import builtin_reporters

    return builtin_reporters()
