"""The kernel's whole-run aggregates over :class:`~evalkit.data.rows.CaseResult` rows.

Each ``fn(rows) -> float`` raises :class:`AggregateError` instead of returning 0 when the
value is undefined: an empty run, an errored row (a run with errors is incomplete), or no
ranked ids at all for the diversity measures.

* ``latency_p50``, ``latency_p95``, ``latency_p99`` (ms, lower is better): nearest-rank
  percentile. The 1-based rank is ``ceil(p * N / 100)`` clamped to ``[1, N]``, computed in
  integer arithmetic as ``(p * N + 99) // 100`` so no float product can push it up by one.
* ``latency_mean`` (ms, lower is better): the arithmetic mean.
* ``max_item_share`` and ``max_item_share@1``/``@3``/``@10`` (lower is better): the
  largest fraction of queries whose response (its first k ids) contains one item. Ids are
  de-duplicated within a response, so a response repeating an id counts once. The ids are
  a target's ranked ids, or the ranking of a retrieval run scored from a run file
  (:class:`~evalkit.data.rows.QueryResult`); ``entropy`` reads the same.
* With repeated samples (``epochs`` K >= 2) every aggregate receives every sample row
  (K x n rows): latency is per call. ``max_item_share`` and ``entropy`` count a case
  once: an item counts for a case if any of its samples returned it.
* ``entropy`` (higher is better): Shannon entropy of how often each item appears across
  responses (once per response), divided by ``log(number of distinct items)`` so it lies
  in [0, 1]; 0 when only one item ever appears.

The built-in plugin registers them. The cost and token aggregates (``cost_total``,
``judge_cost_total``, ...) are the ``evalkit-judge`` plugin's.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from evalkit.core.specs import AggregateSpec


class AggregateError(ValueError):
    """An aggregate that is undefined for the given rows (empty run, errored rows...)."""


def nearest_rank(values: Sequence[float], p: int) -> float:
    """The nearest-rank ``p``-th percentile of ``values`` (``p`` an integer in 0..100).

    Raises:
        AggregateError: ``values`` is empty.
        ValueError: ``p`` is not an integer between 0 and 100.
    """
    if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p <= 100:
        raise ValueError(f"percentile must be an integer from 0 to 100, got {p!r}")
    n = len(values)
    if n == 0:
        raise AggregateError("a percentile of zero values is undefined")
    rank = min(max((p * n + 99) // 100, 1), n)
    return float(sorted(values)[rank - 1])


def checked_rows(rows: Sequence[Any], name: str) -> Sequence[Any]:
    """``rows`` when an aggregate named ``name`` can be computed over them.

    Raises:
        AggregateError: no rows, or a row whose target call failed (named).
    """
    if not rows:
        raise AggregateError(f"{name}: the run has no rows; the aggregate is undefined")
    for r in rows:
        err = getattr(r, "error", None)
        if err is not None:
            raise AggregateError(
                f"{name}: case {r.query_id!r} errored ({err}); an aggregate over an "
                "incomplete run is undefined"
            )
    return rows


def _latencies(rows: Sequence[Any], name: str) -> list[float]:
    from evalkit.data.rows import QueryResult  # read when an aggregate runs, not at start-up

    out: list[float] = []
    for r in checked_rows(rows, name):
        if isinstance(r, QueryResult):
            raise AggregateError(
                f"{name}: run rows scored from rankings (a TREC run file, `evalkit eval`) "
                "have no latency; latency aggregates apply to runs made by `evalkit run`")
        value = getattr(r, "latency_ms", None)
        if value is None and getattr(r, "response", None) is not None:
            value = r.response.latency_ms
        if value is None:
            raise AggregateError(f"{name}: case {r.query_id!r} has no latency")
        out.append(float(value))
    return out


def _percentile(p: int) -> Callable[[Sequence[Any]], float]:
    name = f"latency_p{p}"

    def fn(rows: Sequence[Any]) -> float:
        return nearest_rank(_latencies(rows, name), p)

    fn.__name__ = name
    fn.__doc__ = f"Nearest-rank {p}th percentile of case latency (ms)."
    return fn


latency_p50 = _percentile(50)
latency_p95 = _percentile(95)
latency_p99 = _percentile(99)


def latency_mean(rows: Sequence[Any]) -> float:
    """Mean case latency (ms)."""
    values = _latencies(rows, "latency_mean")
    return math.fsum(values) / len(values)


def _item_sets(rows: Sequence[Any], name: str, k: int | None) -> list[set[str]]:
    """One set of ids per case: with repeated samples, the union over its samples. A row's
    ids are its response's ranked ids (a target's row, :class:`~evalkit.data.rows.CaseResult`;
    none when the call failed), or its ranking (a retrieval run scored from a run file,
    :class:`~evalkit.data.rows.QueryResult`)."""
    from evalkit.data.rows import QueryResult  # read when an aggregate runs, not at start-up

    by_case: dict[str, set[str]] = {}
    for r in checked_rows(rows, name):
        ids = list(r.retrieved) if isinstance(r, QueryResult) else (
            [] if r.response is None else list(r.response.ranked_ids))
        by_case.setdefault(str(r.query_id), set()).update(
            str(x) for x in (ids if k is None else ids[:k]))
    sets = list(by_case.values())
    if not any(sets):
        raise AggregateError(
            f"{name}: no row has ranked ids (a text-only run, or a baseline promoted with "
            "--drop-rankings, which keeps metric values only); the aggregate is undefined")
    return sets


def _max_item_share(k: int | None) -> Callable[[Sequence[Any]], float]:
    name = "max_item_share" if k is None else f"max_item_share@{k}"

    def fn(rows: Sequence[Any]) -> float:
        sets = _item_sets(rows, name, k)
        counts: Counter[str] = Counter()
        for s in sets:
            counts.update(s)
        return max(counts.values()) / len(sets)

    fn.__name__ = name.replace("@", "_at_")
    fn.__doc__ = (
        "Largest fraction of queries whose response contains one item"
        + ("" if k is None else f" among its first {k} ids")
        + "."
    )
    return fn


max_item_share = _max_item_share(None)
max_item_share_at_1 = _max_item_share(1)
max_item_share_at_3 = _max_item_share(3)
max_item_share_at_10 = _max_item_share(10)


def entropy(rows: Sequence[Any]) -> float:
    """Normalised entropy (0..1) of item occurrences across responses."""
    sets = _item_sets(rows, "entropy", None)
    counts: Counter[str] = Counter()
    for s in sets:
        counts.update(s)
    if len(counts) == 1:
        return 0.0
    total = sum(counts.values())
    h = -math.fsum((c / total) * math.log(c / total) for c in counts.values())
    return min(1.0, max(0.0, h / math.log(len(counts))))


def builtin_aggregates() -> list[AggregateSpec]:
    """The records the kernel's built-in plugin registers."""
    lat = "nearest-rank percentile of case latency in ms, rank (p*N+99)//100"
    return [
        AggregateSpec("latency_p50", latency_p50, False, f"p50: {lat}"),
        AggregateSpec("latency_p95", latency_p95, False, f"p95: {lat}"),
        AggregateSpec("latency_p99", latency_p99, False, f"p99: {lat}"),
        AggregateSpec("latency_mean", latency_mean, False, "mean case latency in ms"),
        AggregateSpec("max_item_share", max_item_share, False,
                      "largest fraction of queries returning one item (ids deduped)"),
        AggregateSpec("max_item_share@1", max_item_share_at_1, False,
                      "max_item_share over each response's first id"),
        AggregateSpec("max_item_share@3", max_item_share_at_3, False,
                      "max_item_share over each response's first 3 ids"),
        AggregateSpec("max_item_share@10", max_item_share_at_10, False,
                      "max_item_share over each response's first 10 ids"),
        AggregateSpec("entropy", entropy, True,
                      "Shannon entropy of item occurrences / log(distinct items), in [0, 1]"),
    ]
