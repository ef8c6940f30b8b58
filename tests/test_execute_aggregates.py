"""Built-in aggregates: nearest-rank latency percentiles (C23), item share, entropy."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from evalkit.core.specs import AggregateSpec
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse
from evalkit.execute.aggregates import AggregateError, nearest_rank
from evalkit.plugins.default import default_registry


def rows_with_latencies(values: list[float]) -> list[CaseResult]:
    return [CaseResult(f"q{i}", TargetResponse(latency_ms=v), {}, None, v)
            for i, v in enumerate(values)]


def rows_with_ids(rankings: list[list[str]]) -> list[CaseResult]:
    return [CaseResult(f"q{i}", TargetResponse(ranked_ids=r), {}, None, 1.0)
            for i, r in enumerate(rankings)]


def agg(name: str) -> Callable[[Sequence[Any]], float]:
    """The function of the aggregate registered as ``name`` (not a per-case metric)."""
    spec = default_registry().resolve(name)
    assert isinstance(spec, AggregateSpec), f"{name} resolves to {spec!r}, not an aggregate"
    return spec.fn


# ------------------------------------------------------------------ C23
ONE_TO_100 = {0: 1, 1: 1, 7: 7, 50: 50, 55: 55, 90: 90, 95: 95, 99: 99, 100: 100}


@pytest.mark.parametrize(("p", "expected"), sorted(ONE_TO_100.items()))
def test_c23_nearest_rank_on_1_to_100_in_any_order(p: int, expected: int) -> None:
    values = list(range(1, 101))
    random.Random(p).shuffle(values)
    assert nearest_rank(values, p) == expected


def test_c23_ten_values_single_and_empty() -> None:
    ten = [70, 10, 100, 40, 90, 20, 60, 30, 80, 50]
    assert [nearest_rank(ten, p) for p in (50, 90, 95, 99)] == [50, 90, 100, 100]
    assert nearest_rank([42], 50) == 42 and nearest_rank([42], 99) == 42
    with pytest.raises(AggregateError, match="zero values"):
        nearest_rank([], 50)
    # the float traps the integer rank avoids: 0.07*100 and 0.55*100 overshoot by one
    assert math.ceil(0.07 * 100) == 8 and math.ceil(0.55 * 100) == 56
    assert nearest_rank(list(range(1, 101)), 7) == 7
    assert nearest_rank(list(range(1, 101)), 55) == 55


def test_c23_registered_latency_aggregates_over_rows() -> None:
    rows = rows_with_latencies([float(v) for v in range(100, 0, -1)])
    reg = default_registry()
    assert agg("latency_p50")(rows) == 50.0
    assert agg("latency_p95")(rows) == 95.0
    assert agg("latency_p99")(rows) == 99.0
    assert agg("latency_mean")(rows) == 50.5
    ten = rows_with_latencies([70, 10, 100, 40, 90, 20, 60, 30, 80, 50])
    assert agg("latency_p95")(ten) == 100.0
    for name in ("latency_p50", "latency_p95", "latency_p99", "latency_mean"):
        assert reg.polarity(name) is False
        with pytest.raises(AggregateError, match="no rows"):
            agg(name)([])


def test_percentile_argument_is_checked() -> None:
    with pytest.raises(ValueError, match="integer from 0 to 100"):
        nearest_rank([1.0], 95.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="integer from 0 to 100"):
        nearest_rank([1.0], 101)


def test_an_errored_row_makes_every_aggregate_undefined() -> None:
    rows = rows_with_latencies([1.0, 2.0])
    rows.append(CaseResult("bad", None, {}, "target 't' failed on case 'bad': boom", 3.0))
    for name in ("latency_p50", "latency_mean", "max_item_share", "entropy"):
        with pytest.raises(AggregateError, match="case 'bad' errored"):
            agg(name)(rows)


# ------------------------------------------------------------------ diversity
def test_max_item_share_counts_queries_not_slots() -> None:
    # 100 queries returning 3 items; "hot" appears in 40 of them -> 0.40, not 40/300
    rankings = [["hot", f"a{i}", f"b{i}"] if i < 40 else [f"c{i}", f"a{i}", f"b{i}"]
                for i in range(100)]
    rows = rows_with_ids(rankings)
    assert agg("max_item_share")(rows) == 0.4


def test_max_item_share_dedupes_within_a_response_and_cuts_at_k() -> None:
    rows = rows_with_ids([["x", "x", "x", "y"], ["y", "z"], ["z", "w"], ["w", "x"]])
    reg = default_registry()
    share = {n: agg(n)(rows)
             for n in ("max_item_share", "max_item_share@1", "max_item_share@3",
                       "max_item_share@10")}
    # all ids: x in q0,q3; y in q0,q1; z in q1,q2; w in q2,q3 -> 2/4
    assert share["max_item_share"] == 0.5
    # first id: x, y, z, w -> each once -> 1/4
    assert share["max_item_share@1"] == 0.25
    # first 3 ids: q0 {x}, q1 {y,z}, q2 {z,w}, q3 {w,x} -> 2/4
    assert share["max_item_share@3"] == 0.5
    assert share["max_item_share@10"] == 0.5
    assert reg.polarity("max_item_share@3") is False


def test_entropy_normalised_to_unit_interval() -> None:
    ent = agg("entropy")
    assert default_registry().polarity("entropy") is True
    # four items, each in exactly one response: uniform -> 1.0
    assert ent(rows_with_ids([["a"], ["b"], ["c"], ["d"]])) == pytest.approx(1.0)
    # one item everywhere -> 0.0
    assert ent(rows_with_ids([["a"], ["a", "a"]])) == 0.0
    # counts a:3, b:1 -> H = -(.75 ln .75 + .25 ln .25) / ln 2 = 0.811278...
    value = ent(rows_with_ids([["a", "b"], ["a"], ["a"]]))
    assert value == pytest.approx(0.8112781244591328, abs=1e-12)
    with pytest.raises(AggregateError, match="no row has ranked ids"):
        ent(rows_with_ids([[], []]))
