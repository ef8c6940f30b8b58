"""Budgets: --max-calls, --max-cost and --dry-run on the judge side, with a fake client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import (
    Budget,
    BudgetExhausted,
    GradeNotRequested,
    LLMJudge,
    ModelPrice,
    price_table,
    use_budget,
)
from evalkit_judge.testing import FakeAnthropic, tool_reply

from evalkit.cases import GoldenCase
from evalkit.registry import use_registry
from evalkit.scoring import MetricError, resolve_metrics, score_cases
from evalkit.targets import TargetResponse

# $1 per output token, input free: a request's worst case is exactly max_tokens dollars.
DOLLAR_PER_OUTPUT_TOKEN = {"m": (0.0, 1_000_000.0)}


def case(i: int) -> GoldenCase:
    return GoldenCase(id=f"q{i}", query=f"question {i}")


def answer(i: int) -> TargetResponse:
    return TargetResponse(text=f"answer {i}")


def grade_all(judge: LLMJudge, n: int) -> list[float]:
    return [judge(answer(i), case(i)) for i in range(n)]


def test_budget_exhausted_is_not_an_exception_so_case_handlers_let_it_through() -> None:
    assert not issubclass(BudgetExhausted, Exception)
    assert issubclass(BudgetExhausted, BaseException)
    assert issubclass(GradeNotRequested, Exception)


def test_max_calls_keeps_what_was_graded(tmp_path: Path) -> None:
    fake = FakeAnthropic(lambda req: tool_reply(4))
    budget = Budget(max_calls=3)
    judge = LLMJudge("r", model="m", client=fake, cache_path=tmp_path / "c.sqlite",
                     budget=budget)
    with pytest.raises(BudgetExhausted, match="--max-calls 3 reached"):
        grade_all(judge, 10)
    assert fake.call_count == 3
    assert judge.cache is not None and len(judge.cache) == 3
    with pytest.raises(BudgetExhausted):  # once stopped, it stays stopped
        judge(answer(0), GoldenCase(id="other", query="question 99"))
    # the cached grades are still served under the exhausted budget
    assert judge(answer(1), case(1)) == 4.0
    # a resumed run with no limit pays for the remaining 7 only
    resumed = LLMJudge("r", model="m", client=fake, cache_path=tmp_path / "c.sqlite")
    assert grade_all(resumed, 10) == [4.0] * 10
    assert fake.call_count == 10


def test_max_cost_reserves_the_worst_case_before_each_request(tmp_path: Path) -> None:
    # worst case of a request: max_tokens=10 output tokens = $10; each reply uses 2 = $2.
    fake = FakeAnthropic(lambda req: tool_reply(3, input_tokens=50, output_tokens=2))
    budget = Budget(max_cost=25.0)
    judge = LLMJudge("r", model="m", client=fake, max_tokens=10,
                     prices=DOLLAR_PER_OUTPUT_TOKEN, budget=budget)
    with pytest.raises(BudgetExhausted, match=r"--max-cost \$25"):
        grade_all(judge, 20)
    # request n is sent while 2*(n-1) + 10 <= 25, i.e. n <= 8
    assert fake.call_count == 8
    report = budget.report()
    assert report["spent_usd"] == pytest.approx(16.0)
    assert report["requests"] == 8 and report["stopped"].startswith("--max-cost")
    assert "stopped: --max-cost" in budget.describe()


def test_max_cost_without_a_price_stops_before_any_request() -> None:
    fake = FakeAnthropic()
    judge = LLMJudge("r", model="m", client=fake, budget=Budget(max_cost=1.0))
    with pytest.raises(BudgetExhausted, match="no price for judge model 'm'"):
        judge(answer(0), case(0))
    assert fake.call_count == 0


def test_failed_requests_count_as_calls_but_cost_nothing() -> None:
    outcomes: list[Any] = [TimeoutError("slow"), tool_reply(2, output_tokens=3)]
    fake = FakeAnthropic(lambda req: outcomes.pop(0))
    budget = Budget(max_calls=5, max_cost=100.0)
    judge = LLMJudge("r", model="m", client=fake, max_tokens=10,
                     prices=DOLLAR_PER_OUTPUT_TOKEN, budget=budget)
    with pytest.raises(Exception, match="slow"):
        judge(answer(0), case(0))
    assert judge(answer(0), case(0)) == 2.0
    report = budget.report()
    assert (report["requests"], report["failed_requests"]) == (2, 1)
    assert report["spent_usd"] == pytest.approx(3.0)
    assert budget.reserved_usd == 0.0


def test_dry_run_counts_cached_and_missing_grades_with_estimated_cost(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    fake = FakeAnthropic(lambda req: tool_reply(5))
    grade_all(LLMJudge("r", model="m", client=fake, cache_path=path, max_tokens=200), 4)
    assert fake.call_count == 4
    budget = Budget(dry_run=True)
    judge = LLMJudge("r", model="m", client=fake, cache_path=path, max_tokens=200,
                     prices=DOLLAR_PER_OUTPUT_TOKEN)
    with use_budget(budget):
        outcomes: list[float | None] = []
        for i in [*range(10), 7]:  # case 7 twice: one request would serve both
            try:
                outcomes.append(judge(answer(i), case(i)))
            except GradeNotRequested as exc:
                assert f"case 'q{i}'" in str(exc)
                outcomes.append(None)
    assert outcomes == [5.0] * 4 + [None] * 7
    assert fake.call_count == 4  # nothing was requested
    report = budget.report()
    assert report["cached"] == 5 and report["would_request"] == 6
    # typical grade: 150 output tokens = $150; worst: max_tokens 200 = $200
    assert report["estimated_cost_usd"] == pytest.approx(6 * 150.0)
    assert report["max_estimated_cost_usd"] == pytest.approx(6 * 200.0)
    assert budget.describe().splitlines()[0] == \
        "judge dry run: 5 grade(s) cached, 6 would be requested"


def test_dry_run_without_prices_reports_unknown_cost() -> None:
    budget = Budget(dry_run=True)
    judge = LLMJudge("r", model="m", client=FakeAnthropic(), budget=budget)
    with pytest.raises(GradeNotRequested):
        judge(answer(0), case(0))
    assert budget.report()["estimated_cost_usd"] is None
    assert "estimated cost unknown" in budget.describe()


def test_dry_run_misses_are_metric_errors_and_limits_pass_through_score_cases() -> None:
    fake = FakeAnthropic()
    with use_registry(plugins=False) as reg:
        reg.register_metric("j", higher_is_better=True)(LLMJudge("r", model="m", client=fake))
        specs = resolve_metrics(["j"], reg)
        with use_budget(Budget(dry_run=True)), pytest.raises(MetricError, match="dry run"):
            score_cases([answer(0)], [case(0)], specs)
        with use_budget(Budget(max_calls=0)), pytest.raises(BudgetExhausted):
            score_cases([answer(0)], [case(0)], specs)
    assert fake.call_count == 0


def test_a_judge_budget_wins_over_the_active_one() -> None:
    fake = FakeAnthropic()
    own = Budget(max_calls=10)
    judge = LLMJudge("r", model="m", client=fake, budget=own)
    with use_budget(Budget(max_calls=0)):
        assert judge(answer(0), case(0)) == 3.0
    assert own.report()["requests"] == 1


def test_price_tables_and_limits_are_validated(tmp_path: Path) -> None:
    assert price_table({"a": (1, 2)}) == {"a": ModelPrice(1, 2)}
    assert price_table({"a": {"input": 1, "output": 2, "cache_read": 0.1}})["a"] == \
        ModelPrice(1, 2, None, 0.1)
    path = tmp_path / "prices.json"
    path.write_text('{"claude-x": {"input": 3, "output": 15}}')
    assert price_table(path) == {"claude-x": ModelPrice(3, 15)}
    with pytest.raises(ValueError, match="'a'"):
        price_table({"a": (1, -2)})
    with pytest.raises(ValueError, match="'a'"):
        price_table({"a": {"input": 1}})
    with pytest.raises(ValueError, match="max_calls"):
        Budget(max_calls=-1)
    with pytest.raises(ValueError, match="max_cost"):
        Budget(max_cost=float("nan"))
