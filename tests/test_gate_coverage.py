"""Gate coverage ``k/n cases``: k counts the covered cases with a usable value of the
check's metric (for an aggregate, the rows it is computed over), not merely rows."""

from __future__ import annotations

import math
from typing import Any

from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec

N = 40


def row(i: int, metrics: dict[str, float] | None = None, *, error: str | None = None,
        latency: float | None = 10.0) -> CaseResult:
    if error is not None:
        return CaseResult(f"c{i:02d}", None, {}, error, latency)
    # a row without latency has no response to read one from (like a retrieval row)
    response = None if latency is None else TargetResponse(text="x", latency_ms=latency)
    return CaseResult(f"c{i:02d}", response, {"score": 1.0} if metrics is None else metrics,
                      None, latency)


def run_of(rows: list[CaseResult]) -> RunResult:
    return RunResult("cand", rows, header={})


def verdict_line(rows: list[CaseResult], check: CheckSpec) -> tuple[str, dict[str, int]]:
    result = evaluate_gate([check], run_of(rows)).results[0]
    cov = result.to_dict()["coverage"]
    return result.line(), {"evaluated": cov["evaluated"], "covered": cov["covered"]}


def at_least(metric: str, **kw: Any) -> CheckSpec:
    return CheckSpec(id="c", metric=metric, op=">=", threshold=0.5, **kw)


def test_a_metric_missing_from_every_row_covers_no_case() -> None:
    rows = [row(i, {"other": 1.0}) for i in range(N)]
    line, cov = verdict_line(rows, at_least("score"))
    assert line == "c: error (0/40 cases)"
    assert cov == {"evaluated": 0, "covered": 40}


def test_missing_and_non_finite_values_are_not_counted() -> None:
    rows = [row(i) for i in range(N)]
    for i in (3, 17, 29):  # the metric is missing here
        rows[i] = row(i, {"other": 1.0})
    rows[5] = row(5, {"score": math.nan})
    rows[6] = row(6, {"score": math.inf})
    line, _ = verdict_line(rows, at_least("score"))
    assert line == "c: error (35/40 cases)"


def test_a_complete_metric_covers_every_case() -> None:
    line, _ = verdict_line([row(i) for i in range(N)], at_least("score"))
    assert line == "c: pass (40/40 cases)"


def test_scoped_checks_count_only_their_cases() -> None:
    rows = [row(i) for i in range(N)]
    rows[1] = row(1, {"other": 1.0})
    scope = ("c00", "c01", "c02")
    line, _ = verdict_line(rows, at_least("score", scope=scope))
    assert line == "c: error (2/3 cases)"
    rows[2] = row(2, error="target failed")
    line, _ = verdict_line(rows, at_least("score", scope=scope))
    assert line == "c: error (1/3 cases)"


def test_errored_rows_have_no_usable_value() -> None:
    rows = [row(i) for i in range(N)]
    rows[7] = row(7, error="boom")
    rows[8] = row(8, error="boom")
    line, _ = verdict_line(rows, at_least("score"))
    assert line == "c: error (38/40 cases)"  # an incomplete run is never judged


def test_an_aggregate_covers_the_rows_it_is_computed_over() -> None:
    check = CheckSpec(id="c", metric="latency_p95", op="<=", threshold=100.0)
    line, _ = verdict_line([row(i, latency=float(i)) for i in range(N)], check)
    assert line == "c: pass (40/40 cases)"
    # no latency on any row: the aggregate cannot be computed over any of them
    line, _ = verdict_line([row(i, latency=None) for i in range(N)], check)
    assert line == "c: error (0/40 cases)"
    # two errored rows: computed over the other 38 (the incomplete run is still an error)
    rows = [row(i, latency=float(i)) for i in range(N)]
    rows[0] = row(0, error="boom")
    rows[1] = row(1, error="boom")
    line, _ = verdict_line(rows, check)
    assert line == "c: error (38/40 cases)"
