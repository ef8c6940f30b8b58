"""The summary of a measure over a run's rows, as its record declares it.

A metric's summary is the mean of its per-query values, a count's is their sum, and a
measure may declare otherwise (:attr:`evalkit.core.specs.MetricSpec.summary`): ``exp_mean``
for trec_eval's geometric means (gm_map, gm_bpref, whose per-query values are
logarithms), ``mean`` for a residual such as rbp_resid. This is what every mean shown or
gated shows (:meth:`evalkit.RunResult.mean`, a comparison's means, a gate's observed
value): for gm_map it is trec_eval's value, ``exp(mean of the per-query logs)``. Paired
tests, differences and intervals work on the per-query values themselves, so for an
``exp_mean`` measure they are on the log scale: the difference is a difference of mean
logs, ``exp`` of which is the ratio of the geometric means (docs/metrics.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any


def summary_kind(name: str, *, count: bool) -> str:
    """``"mean"``, ``"sum"`` or ``"exp_mean"`` for measure ``name`` (a count sums unless
    its record says otherwise; an unknown name is summarised by its kind)."""
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    try:
        declared = getattr(default_registry().resolve(name), "summary", None)
    except (RegistryError, ValueError, TypeError):
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
    return summarize(values, summary_kind(name, count=count))


def summarize(values: Sequence[float], kind: str) -> float:
    """``values`` combined as ``kind`` says: ``"sum"`` (``math.fsum``), ``"mean"``
    (:func:`evalkit.stats.numeric.exact_mean`) or ``"exp_mean"`` (``exp`` of that mean:
    trec_eval's m_gm_map.c / m_gm_bpref.c summary of per-query logs).

    Raises:
        ValueError: ``values`` is empty.
    """
    from evalkit.stats.numeric import exact_mean

    if kind == "sum":
        return math.fsum(values)
    mean = exact_mean(list(values))
    return math.exp(mean) if kind == "exp_mean" else mean


def is_log_scale(name: str) -> bool:
    """Whether ``name``'s per-query values are logarithms whose summary is ``exp`` of
    their mean (gm_map, gm_bpref): its paired differences are differences of mean logs."""
    return summary_kind(name, count=False) == "exp_mean"


def paired_mean(scores: Mapping[str, float], ids: Sequence[str], name: str) -> float:
    """The summary (:func:`mean_value`) of metric ``name``'s ``scores`` at the query
    ids ``ids`` only: each mean a comparison shows is over the queries it pairs, whatever
    else the run holds (a run a sequential rule stopped, the cases of one tag).

    Raises:
        KeyError: an id of ``ids`` has no score.
        ValueError: ``ids`` is empty.
    """
    return mean_value([scores[q] for q in ids], name)


def mean_value(values: Sequence[float], name: str) -> float:
    """The summary of metric ``name``'s per-query ``values``: their mean, or for an
    ``exp_mean`` measure ``exp`` of it (so gm_map gives trec_eval's value).

    Raises:
        ValueError: ``values`` is empty.
    """
    kind = summary_kind(name, count=False)
    return summarize(values, "exp_mean" if kind == "exp_mean" else "mean")
