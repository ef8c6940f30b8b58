"""The summary of a measure over a run's rows, as its record declares it.

A metric's summary is the mean of its per-query values, a count's is their sum, and a
measure may declare otherwise (:attr:`evalkit.core.specs.MetricSpec.summary`): ``exp_mean``
for trec_eval's geometric means (gm_map, gm_bpref, whose per-query values are
logarithms), ``mean`` for a residual such as rbp_resid. Statistics and gates always work
on the per-query values; this is what a summary line shows.
"""

from __future__ import annotations

import math
from typing import Any


def summary_kind(name: str, *, count: bool) -> str:
    """``"mean"``, ``"sum"`` or ``"exp_mean"`` for measure ``name`` (a count sums unless
    its record says otherwise; an unknown name is summarised by its kind)."""
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    try:
        declared = getattr(default_registry().resolve(name), "summary", None)
    except RegistryError:
        declared = None
    return str(declared or ("sum" if count else "mean"))


def summary_value(result: Any, name: str, *, count: bool = False) -> float:
    """The summary of ``name`` over ``result``'s rows (see :func:`summary_kind`).

    Raises:
        ValueError: the run has no rows. KeyError: a row lacks the value.
    """
    rows = result.per_query
    if not rows:
        raise ValueError(f"run {result.name!r} has no rows; its summary is undefined")
    values = [float(r.counts[name] if count else r.metrics[name]) for r in rows]
    kind = summary_kind(name, count=count)
    if kind == "sum":
        return math.fsum(values)
    mean = math.fsum(values) / len(values)
    return math.exp(mean) if kind == "exp_mean" else mean
