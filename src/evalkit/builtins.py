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
    return []


@hookimpl
def evalkit_register_loaders() -> list[LoaderSpec]:
    return []


@hookimpl
def evalkit_register_targets() -> list[TargetSpec]:
    return []


@hookimpl
def evalkit_register_reporters() -> list[ReporterSpec]:
    return []
