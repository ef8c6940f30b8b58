"""cost_total, cost_per_case, tokens_in_total, tokens_out_total and judge_cost_total: hand
values, with repeated samples (per-case figures average a case's samples, totals sum every
sample), refusals naming the case, a judge's spend through evaluate() with the fake
client (cached grades cost nothing), and the seed's own cost_per_query beside them."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import LLMJudge
from evalkit_judge.testing import FakeAnthropic, tool_reply

from evalkit import register_aggregate
from evalkit.core.specs import AggregateSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.rows import CaseResult
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.aggregates import AggregateError
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import resolve, use_registry


def agg(name: str) -> Any:
    spec = resolve(name)
    assert isinstance(spec, AggregateSpec) and spec.higher_is_better is False
    return spec.fn


def row(cid: str, sample: int | None = None, **meta: Any) -> CaseResult:
    return CaseResult(cid, TargetResponse(text="t", meta=meta), sample=sample)


def test_hand_values_with_repeated_samples() -> None:
    rows = [row("a", 0, cost_usd=0.01, tokens_in=100, tokens_out=7),
            row("a", 1, cost_usd=0.03, tokens_in=120, tokens_out=9),
            row("b", 0, cost_usd=0.04, tokens_in=80, tokens_out=3),
            row("b", 1, cost_usd=0.04, tokens_in=80, tokens_out=3),
            row("b", 2, cost_usd=0.07, tokens_in=80, tokens_out=3)]
    assert agg("cost_total")(rows) == pytest.approx(0.19)
    # a: mean(0.01, 0.03) = 0.02; b: mean(0.04, 0.04, 0.07) = 0.05; mean over cases 0.035
    assert agg("cost_per_case")(rows) == pytest.approx(0.035)
    assert agg("tokens_in_total")(rows) == 460.0
    assert agg("tokens_out_total")(rows) == 25.0
    single = [row("a", cost_usd=0.5), row("b", cost_usd=1.5)]
    assert agg("cost_per_case")(single) == 1.0 and agg("cost_total")(single) == 2.0


@pytest.mark.parametrize(("name", "rows", "message"), [
    ("cost_total", [row("a", cost_usd=1.0), row("b")],
     "the response of case 'b' does not report 'cost_usd' in its meta"),
    ("cost_per_case", [row("a", cost_usd=-0.5)], "case 'a' reports cost_usd=-0.5"),
    ("cost_total", [row("a", cost_usd=True)], "it must be a number >= 0"),
    ("cost_total", [row("a", cost_usd=math.nan)], "it must be a number >= 0"),
    ("cost_total", [row("a", cost_usd="0.1")], "it must be a number >= 0"),
    ("tokens_in_total", [row("a", tokens_in=2.5)], "it must be an integer >= 0"),
    ("tokens_out_total", [row("a", tokens_in=3)], "does not report 'tokens_out'"),
    ("cost_total", [], "the run has no rows"),
    ("cost_total", [CaseResult("a", None, error="target 't' failed on case 'a'")],
     "case 'a' errored"),
    ("judge_cost_total", [row("a", cost_usd=1.0)], "no metric of this run records a cost"),
])
def test_undefined_values_raise_naming_the_case(name: str, rows: list[CaseResult],
                                                message: str) -> None:
    with pytest.raises(AggregateError) as err:
        agg(name)(rows)
    assert message in str(err.value)


def test_judge_cost_counts_requested_grades_only() -> None:
    def graded(cid: str, cost: float | None, cached: bool) -> CaseResult:
        r = row(cid)
        r.details = {"correctness": {"cost_usd": cost, "cached": cached, "score": 4}}
        return r

    rows = [graded("a", 0.002, False), graded("b", 0.003, True), graded("c", 0.004, False)]
    assert agg("judge_cost_total")(rows) == pytest.approx(0.006)
    assert agg("judge_cost_total")([graded("a", 0.002, True)]) == 0.0
    with pytest.raises(AggregateError, match="the correctness grade of case 'a' has no price"):
        agg("judge_cost_total")([graded("a", None, False)])


def test_through_evaluate_with_the_judges_fake_client(tmp_path: Path) -> None:
    client = FakeAnthropic(lambda req: tool_reply(4, model=req["model"], input_tokens=300,
                                                  output_tokens=40))
    judge = LLMJudge("Is it right?", model="judge-model", client=client,
                     cache_path=tmp_path / "grades.sqlite",
                     prices={"judge-model": (1.0, 5.0)})
    spend = {"a": (0.010, 120, 30), "b": (0.020, 200, 45), "c": (0.015, 150, 20)}

    def answer(case: GoldenCase) -> TargetResponse:
        cost, tin, tout = spend[case.id]
        return TargetResponse(text=f"answer {case.id}",
                              meta={"cost_usd": cost, "tokens_in": tin, "tokens_out": tout})

    cases = [GoldenCase(c, f"question {c}", expected="x") for c in spend]
    names = ["cost_total", "cost_per_case", "tokens_in_total", "tokens_out_total",
             "judge_cost_total"]
    with use_registry() as reg:
        reg.register_metric("correctness", higher_is_better=True)(judge)
        run = evaluate(CallableTarget(answer, name="sys"), cases, ["correctness"], names,
                       progress=False)
        per_grade = (300 * 1.0 + 40 * 5.0) / 1e6
        assert run.header["aggregates"] == pytest.approx({
            "cost_total": 0.045, "cost_per_case": 0.015, "tokens_in_total": 470.0,
            "tokens_out_total": 95.0, "judge_cost_total": 3 * per_grade})
        assert client.call_count == 3
        # the same run again: every grade comes from the cache and costs nothing now,
        # while the target's cost is the same
        again = evaluate(CallableTarget(answer, name="sys"), cases, ["correctness"], names,
                         progress=False)
        assert client.call_count == 3
        assert again.header["aggregates"]["judge_cost_total"] == 0.0
        assert again.header["aggregates"]["cost_total"] == pytest.approx(0.045)


def test_the_seeds_cost_per_query_registers_beside_them() -> None:
    with use_registry() as reg:
        @register_aggregate("cost_per_query", higher_is_better=False)
        def cost_per_query(rows: Any) -> float:
            return float(sum(r.response.meta.get("cost_usd", 0.0) for r in rows) / len(rows))

        assert reg.polarity("cost_per_query") is False
        cases = [GoldenCase("a", "qa"), GoldenCase("b", "qb")]
        costs = {"a": 0.5, "b": 1.5}
        run = evaluate(CallableTarget(lambda c: TargetResponse(text="t", meta={
            "cost_usd": costs[c.id]}), name="sys"), cases, [],
            ["cost_per_query", "cost_per_case", "cost_total"], progress=False)
        assert run.header["aggregates"] == {"cost_per_query": 1.0, "cost_per_case": 1.0,
                                            "cost_total": 2.0}


def test_small_costs_keep_four_significant_digits_in_the_summary() -> None:
    from evalkit.report.target_run import aggregate_text, summary_lines

    assert [aggregate_text(v) for v in (0.000206291, 3.103e-05, 0.0121, 12.5, 0.0)] == [
        "0.0002063", "0.00003103", "0.0121", "12.5000", "0.0000"]
    run = evaluate(CallableTarget(lambda c: TargetResponse(text="t", meta={
        "cost_usd": 0.00003103}), name="sys"), [GoldenCase("a", "q")], [], ["cost_total"],
        progress=False)
    assert "cost_total: 0.00003103" in summary_lines(run)
