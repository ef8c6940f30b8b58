"""Which namespace of the registry a record lives in, and under which key.

A record of :class:`evalkit.core.registry.Registry` lives in one namespace under one key
(:func:`namespace_of`):

* per-case metrics and whole-run aggregates under their name, and a metric family under
  ``prefix@k``, all in ``"metric"``;
* a loader under its name in ``"loader:<kind>"`` (goldens, run, qrels, queries, corpus);
* targets, reporters, executors, measure syntaxes, run formats and run evaluators under
  their names in ``"target"``, ``"reporter"``, ``"executor"``, ``"measure_syntax"``,
  ``"run_format"`` and ``"run_evaluator"``;
* ``evalkit`` subcommands under their names in ``"command"``, and sections of the eval
  config under their keys in ``"config section"``.
"""

from __future__ import annotations

from evalkit.core.metric_aliases import family_key
from evalkit.core.providers import RegistryError
from evalkit.core.specs import (
    LOADER_KINDS,
    AggregateSpec,
    AnySpec,
    CommandSpec,
    ConfigSectionSpec,
    ExecutorSpec,
    LoaderSpec,
    MeasureSyntaxSpec,
    MetricFamily,
    MetricSpec,
    ReporterSpec,
    RunEvaluatorSpec,
    RunFormatSpec,
    TargetSpec,
)


def namespace_of(spec: AnySpec) -> tuple[str, str]:
    """``(namespace, key)`` of a record (the module docstring lists them).

    Raises:
        RegistryError: a loader of an unknown kind, or an object that is not one of the
            :mod:`evalkit.core.specs` records.
    """
    if isinstance(spec, MetricFamily):
        return "metric", family_key(spec.name)
    if isinstance(spec, MetricSpec | AggregateSpec):
        return "metric", spec.name
    if isinstance(spec, LoaderSpec):
        if spec.kind not in LOADER_KINDS:
            raise RegistryError(
                f"loader {spec.name!r} has kind {spec.kind!r}; use one of {LOADER_KINDS}"
            )
        return f"loader:{spec.kind}", spec.name
    if isinstance(spec, TargetSpec):
        return "target", spec.name
    if isinstance(spec, ReporterSpec):
        return "reporter", spec.name
    if isinstance(spec, ExecutorSpec):
        return "executor", spec.name
    if isinstance(spec, MeasureSyntaxSpec):
        return "measure_syntax", spec.name
    if isinstance(spec, RunFormatSpec):
        return "run_format", spec.name
    if isinstance(spec, RunEvaluatorSpec):
        return "run_evaluator", spec.name
    if isinstance(spec, CommandSpec):
        return "command", spec.name
    if isinstance(spec, ConfigSectionSpec):
        return "config section", spec.name
    raise RegistryError(f"cannot register {spec!r}: not an evalkit.core.specs record")
