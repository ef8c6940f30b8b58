"""How a record's name becomes its place in the :class:`~evalkit.core.registry.Registry`.

A record lives in one namespace under one key:

* per-case metrics and whole-run aggregates under their name, and a metric family under
  ``prefix@k``, all in ``"metric"``;
* a loader under its name in ``"loader:<kind>"`` (goldens, run, qrels, queries, corpus);
* targets, reporters and executors under their names in ``"target"``, ``"reporter"`` and
  ``"executor"``;
* ``evalkit`` subcommands under their names in ``"command"``, and sections of the eval
  config under their keys in ``"config section"``.
"""

from __future__ import annotations

import re

from evalkit.core.providers import RegistryError
from evalkit.core.specs import (
    LOADER_KINDS,
    AggregateSpec,
    AnySpec,
    CommandSpec,
    ConfigSectionSpec,
    ExecutorSpec,
    LoaderSpec,
    MetricFamily,
    MetricSpec,
    ReporterSpec,
    TargetSpec,
)

#: ``prefix@k``: a name with one cut-off (``recall@10``), or a family's key (``recall@k``).
FAMILY_RE = re.compile(r"^(?P<prefix>[^@]+)@(?P<k>[^@]+)$")


def family_key(prefix: str) -> str:
    """The key of the ``prefix`` family in the ``"metric"`` namespace: ``prefix@k``."""
    return f"{prefix}@k"


def name_order(name: str) -> tuple[str, int, str]:
    """Sort key: ``prefix@k`` by prefix, then ``k`` as a number (``@k`` itself first)."""
    prefix, at, k = name.partition("@")
    return (prefix, int(k) if k.isdigit() else -1, k) if at else (prefix, -2, "")


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
    if isinstance(spec, CommandSpec):
        return "command", spec.name
    if isinstance(spec, ConfigSectionSpec):
        return "config section", spec.name
    raise RegistryError(f"cannot register {spec!r}: not an evalkit.core.specs record")
