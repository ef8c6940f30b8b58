"""Hook implementations of the retrieval plugin."""

from __future__ import annotations

from evalkit.hookspecs import hookimpl
from evalkit.specs import LoaderSpec, MetricFamily, MetricSpec


@hookimpl
def evalkit_register_metrics() -> list[MetricSpec | MetricFamily]:
    return []


@hookimpl
def evalkit_register_loaders() -> list[LoaderSpec]:
    return []
