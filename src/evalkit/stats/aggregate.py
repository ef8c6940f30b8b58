"""Paired bootstrap of a whole-run aggregate (latency p95, cost per query, ...).

A whole-run aggregate is not a mean of per-query values, so the tests of
:func:`evalkit.stats.paired_test` do not apply. Resample case ids with replacement (the
same ids for both runs), recompute the aggregate on each run's resampled rows, and take
the difference (Efron and Tibshirani 1993, ch. 6 and 13): percentile interval and the
centred-null p-value with the ``+1`` rule, as in :func:`evalkit.stats.paired_bootstrap`.

A run with repeated samples (``run.samples``, K rows per case) is resampled by case: a
drawn case brings all its sample rows (a cluster bootstrap; Davison and Hinkley 1997,
sec. 3.8), so the aggregate sees per-call rows and K samples never count as K cases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from evalkit.stats._rng import GENERATOR_NAME, bootstrap_indices, check_seed
from evalkit.stats.bootstrap import TIE_ULPS, check_resamples
from evalkit.stats.numeric import finite_number
from evalkit.stats.pairing import check_same_ids, run_name
from evalkit.stats.results import PairedTestResult

Aggregate = Callable[[list[Any]], float]


def _rows_by_id(run: Any, name: str) -> dict[str, list[Any]]:
    """``{case id: its rows}``: one row, or every sample row of a run with samples."""
    rows = getattr(run, "per_query", None)
    if rows is None:
        raise TypeError(f"{name!r} is not a run with per_query rows")
    if len(rows) == 0:
        raise ValueError(f"run {name!r} is empty (no rows); nothing to compare")
    out: dict[str, list[Any]] = {}
    for r in getattr(run, "samples", None) or rows:
        rid = getattr(r, "query_id", None) or getattr(r, "id", None)
        if rid is None:
            raise ValueError(f"run {name!r}: a row has no id")
        out.setdefault(str(rid), []).append(r)
    return out


def _value(fn: Aggregate, rows: list[Any], label: str) -> float:
    return finite_number(fn(rows), f"aggregate {label!r}")


def aggregate_bootstrap(
    a: Any,
    b: Any,
    aggregate: Aggregate,
    *,
    name: str | None = None,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int | None = 42,
) -> PairedTestResult:
    """Paired bootstrap CI and p for ``aggregate(a rows) - aggregate(b rows)``.

    Args:
        a, b: runs with ``per_query`` rows (ids from ``query_id`` or ``id``) over the
            same case ids.
        aggregate: ``(rows) -> float``, e.g. a registered whole-run aggregate; it is
            called ``2 * (B + 1)`` times, on rows in resampled (id-sorted) order.
        name: label stored as the result's ``metric`` (default: the function's name).
        alpha: interval level ``1 - alpha``; ``significant`` is ``p < alpha``.
        n_resamples: ``B``; seed: generator seed (SplitMix64, as everywhere).

    Returns:
        :class:`PairedTestResult` with method "bootstrap" and ci_method "percentile".

    Raises:
        ValueError: empty runs, different case ids, a non-finite aggregate value.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    B = check_resamples(n_resamples)
    s = check_seed(seed)
    label = str(name or getattr(aggregate, "__name__", "aggregate"))
    name_a, name_b = run_name(a, "a"), run_name(b, "b")
    rows_a, rows_b = _rows_by_id(a, name_a), _rows_by_id(b, name_b)
    check_same_ids(name_a, set(rows_a), name_b, set(rows_b))
    ids = sorted(rows_a)
    n = len(ids)
    ra = [rows_a[i] for i in ids]
    rb = [rows_b[i] for i in ids]

    def flat(groups: list[list[Any]], row: list[int]) -> list[Any]:
        return [r for i in row for r in groups[i]]

    everyone = list(range(n))
    value_a = _value(aggregate, flat(ra, everyone), label)
    value_b = _value(aggregate, flat(rb, everyone), label)
    observed = value_a - value_b
    diffs = np.empty(B)
    chunk = max(1, 1_000_000 // n)
    for c0 in range(0, B, chunk):
        idx = bootstrap_indices(s, n, c0, min(B, c0 + chunk))
        for k, row in enumerate(idx.tolist()):
            diffs[c0 + k] = _value(aggregate, flat(ra, row), label) - _value(
                aggregate, flat(rb, row), label
            )
    lo, hi = np.quantile(diffs, [alpha / 2, 1 - alpha / 2])
    dev = diffs - observed
    # ties up to rounding: an aggregate over n cases is a sum of n terms at most, and
    # their size is not known; so the bound of tie_tolerance (a sum of n terms of the
    # magnitude of the values compared) at the size of the aggregates themselves
    tol = TIE_ULPS * float(np.finfo(np.float64).eps) * n * max(
        float(np.max(np.abs(diffs))), abs(value_a), abs(value_b), 1e-300)
    p = (int(np.count_nonzero(np.abs(dev) >= abs(observed) - tol)) + 1) / (B + 1)
    if abs(observed) <= tol and np.all(np.abs(dev) <= tol):
        p = 1.0
    return PairedTestResult(
        observed=observed,
        ci_low=float(lo),
        ci_high=float(hi),
        p_value=p,
        significant=bool(p < alpha),
        metric=label,
        name_a=name_a,
        name_b=name_b,
        n_queries=n,
        n_resamples=B,
        seed=s,
        generator=GENERATOR_NAME,
        method="bootstrap",
        ci_method="percentile",
        alpha=float(alpha),
        alternative="two-sided",
    )
