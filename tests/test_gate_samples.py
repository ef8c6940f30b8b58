"""With repeated samples the gate computes an aggregate over every sample row of the cases
a check covers, as the runner does (docs/runner.md: cost and latency are per call), not
over the reduced row of each case (which keeps only the first sample's response): a
threshold on cost_total sees the whole spend, and a baseline check's values, difference
and bootstrap use the samples of each resampled case."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from evalkit.data.cases import GoldenCase
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.target_runner import evaluate
from evalkit.gate.checks import parse_checks
from evalkit.gate.evaluate import evaluate_gate

CASES = [GoldenCase(c, f"question {c}") for c in ("a", "b", "c", "d", "e", "f")]
EPOCHS = 3


def run_with(costs: dict[str, list[float]], name: str) -> RunResult:
    """Each case's k-th call costs ``costs[case][k]``."""
    calls: Counter[str] = Counter()
    lock = threading.Lock()

    def answer(case: GoldenCase) -> TargetResponse:
        with lock:
            k = calls[case.id]
            calls[case.id] += 1
        return TargetResponse(text="t", meta={"cost_usd": costs[case.id][k]})

    return evaluate(CallableTarget(answer, name=name), CASES, [], ["cost_total",
                    "cost_per_case"], epochs=EPOCHS, max_concurrency=1, progress=False)


BASE = {c.id: [0.01, 0.02, 0.03] for c in CASES}                       # 0.06 per case
CAND = {c.id: [0.02, 0.05, 0.05] if c.id < "d" else [0.01, 0.01, 0.01]  # 0.12 or 0.03
        for c in CASES}


def test_a_threshold_sees_every_sample() -> None:
    run = run_with(CAND, "cand")
    total = 3 * 0.12 + 3 * 0.03
    assert run.header["aggregates"]["cost_total"] == pytest.approx(total)
    checks = parse_checks({"checks": [
        {"id": "spend", "metric": "cost_total", "op": "<=", "threshold": 0.5},
        {"id": "per_case", "metric": "cost_per_case", "op": "<=", "threshold": 0.1},
        {"id": "scoped", "metric": "cost_total", "op": "<=", "threshold": 1.0,
         "scope": ["a", "d"]}]})
    report = evaluate_gate(checks, run)
    spend, per_case, scoped = report.results
    assert spend.observed == pytest.approx(total)  # the first samples alone: 0.09
    # a case's cost is the mean of its samples: (0.04 x 3 + 0.01 x 3) / 6
    assert per_case.observed == pytest.approx(0.025) == run.header["aggregates"]["cost_per_case"]
    assert scoped.observed == pytest.approx(0.12 + 0.03)  # the scope's cases, every sample
    assert spend.verdict == "pass" and per_case.verdict == "pass"


def test_a_baseline_check_compares_every_sample() -> None:
    base, cand = run_with(BASE, "base"), run_with(CAND, "cand")
    checks = parse_checks({"checks": [
        {"id": "spend", "metric": "cost_total", "vs_baseline": "no_significant_regression"}]})
    (result,) = evaluate_gate(checks, cand, base, n_resamples=2000).results
    assert result.comparison is not None
    assert result.observed == pytest.approx(0.45)
    assert result.comparison.baseline_value == pytest.approx(0.36)
    assert result.comparison.difference == pytest.approx(0.09)
    assert result.comparison.ci_low <= 0.09 <= result.comparison.ci_high
