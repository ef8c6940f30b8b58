"""The ``evalkit.plugins`` entry point of evalkit-judge.

The judge is a metric the client defines (rubric, model, scale) and registers under a
name of its choice with ``register_metric``, so this plugin registers no record; it is
listed by ``evalkit plugins list`` with its distribution and version.
"""

from __future__ import annotations

from evalkit.hookspecs import hookimpl
from evalkit.specs import MetricFamily, MetricSpec


@hookimpl
def evalkit_register_metrics() -> list[MetricSpec | MetricFamily]:
    return []
