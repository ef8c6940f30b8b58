"""Budgets: --max-calls, --max-cost and --dry-run on the judge side, with a fake client."""

from __future__ import annotations

import json
import math
import re
from concurrent.futures import ThreadPoolExecutor
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

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit.execute.scoring import MetricError, resolve_metrics, score_cases
from evalkit.plugins.default import use_registry

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


def test_max_cost_admits_a_request_on_its_expected_cost(tmp_path: Path) -> None:
    # input free, $1 per output token; max_tokens=10: a request costs at most $10; each
    # reply uses 2 output tokens = $2. No token counting: the first request is expected to
    # cost its input only ($0), later ones the most output seen so far (2 tokens = $2).
    fake = FakeAnthropic(lambda req: tool_reply(3, input_tokens=50, output_tokens=2))
    budget = Budget(max_cost=25.0)
    judge = LLMJudge("r", model="m", client=fake, max_tokens=10,
                     prices=DOLLAR_PER_OUTPUT_TOKEN, budget=budget)
    with pytest.raises(BudgetExhausted, match=r"--max-cost \$25"):
        grade_all(judge, 20)
    # request n is sent while 2*(n-1) + 2 <= 25, i.e. n <= 12
    assert fake.call_count == 12
    report = budget.report()
    assert report["spent_usd"] == pytest.approx(24.0)
    assert report["requests"] == 12 and report["stopped"].startswith("--max-cost")
    assert "stopped: --max-cost" in budget.describe()


# $1 per input token and $1 per output token: a reply of 100 input and 20 output tokens
# costs exactly $120; its worst case at max_tokens=1024 is 100 + 1024 = $1124.
DOLLAR_PER_TOKEN = {"m": (1_000_000.0, 1_000_000.0)}
GRADE_USD = 120.0


def counting_judge(budget: Budget, **kw: Any) -> tuple[LLMJudge, FakeAnthropic]:
    fake = FakeAnthropic(lambda req: tool_reply(4, input_tokens=100, output_tokens=20),
                         **kw)
    judge = LLMJudge("r", model="m", client=fake, max_tokens=1024, prices=DOLLAR_PER_TOKEN,
                     budget=budget)
    return judge, fake


@pytest.mark.parametrize("n", [1, 2, 5])
def test_a_budget_that_fits_exactly_n_grades_yields_n_grades(n: int) -> None:
    for max_cost in (n * GRADE_USD, n * GRADE_USD + 119.0):
        budget = Budget(max_cost=max_cost)
        judge, fake = counting_judge(budget, count=100)
        with pytest.raises(BudgetExhausted, match="--max-cost"):
            grade_all(judge, n + 5)
        assert fake.call_count == n  # the worst case alone ($1124) would have sent none
        assert budget.report()["spent_usd"] == n * GRADE_USD <= max_cost
        assert len(fake.count_calls) == n + 1  # the refused request was counted too
    # the counted request is the one sent, without max_tokens
    assert set(fake.count_calls[0]) == {"model", "messages", "tools", "tool_choice"}
    assert fake.count_calls[0]["messages"] == fake.calls[0]["messages"]


def test_the_worst_case_is_held_while_a_request_is_in_flight() -> None:
    budget = Budget(max_cost=1_500.0)  # small enough for the input to be counted
    held: list[float] = []

    def answer(req: dict[str, Any]) -> Any:
        held.append(budget.reserved_usd)
        return tool_reply(4, input_tokens=100, output_tokens=20)

    judge = LLMJudge("r", model="m", client=FakeAnthropic(answer, count=100),
                     max_tokens=1024, prices=DOLLAR_PER_TOKEN, budget=budget)
    grade_all(judge, 2)
    assert held == [1124.0, 1124.0]  # 100 counted input + 1024 output tokens, at $1 each
    assert budget.reserved_usd == 0.0 and budget.in_flight == 0


def test_tokens_are_counted_only_once_the_worst_case_might_not_fit() -> None:
    # far from the limit, even the conservative worst case (request length / 3 + 500
    # input tokens, 1024 output tokens) fits: no count is needed to admit the request
    budget = Budget(max_cost=10_000.0)
    judge, fake = counting_judge(budget, count=100)
    def text(i: int) -> TargetResponse:  # requests of one length
        return TargetResponse(text=f"answer {i:03d}")

    body = judge.request(text(0), case(0))
    conservative_worst = math.ceil(len(json.dumps(
        body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))) / 3) + 500 + 1024
    with pytest.raises(BudgetExhausted):
        for i in range(200):
            judge(text(i), case(0))
    assert fake.call_count == 83  # 83 * $120 = $9960; an 84th would pass $10,000
    assert budget.report()["spent_usd"] == 83 * GRADE_USD
    uncounted = len(fake.calls) + 1 - len(fake.count_calls)  # the refused one included
    # requests were counted from the first whose conservative worst case did not fit
    assert uncounted == math.floor((10_000 - conservative_worst) / GRADE_USD) + 1


def test_without_token_counting_input_is_calibrated_from_earlier_replies() -> None:
    # The first request is estimated at len(request)/3 + 500 input tokens (about $800 at
    # these prices), then at the 100 tokens per same-length request its reply reported.
    n = 8
    budget = Budget(max_cost=n * GRADE_USD)
    judge, fake = counting_judge(budget)
    first, _ = judge._plan(judge.request(answer(0), case(0)), budget)()
    assert first is not None and GRADE_USD < first <= n * GRADE_USD
    with pytest.raises(BudgetExhausted, match="--max-cost"):
        grade_all(judge, n + 5)  # ids 0..9 render requests of the same length
    assert fake.call_count == n
    assert budget.report()["spent_usd"] == n * GRADE_USD


def test_a_failing_count_endpoint_falls_back_to_estimates_and_is_not_asked_again(
        caplog: pytest.LogCaptureFixture) -> None:
    budget = Budget(max_cost=8 * GRADE_USD)
    judge, fake = counting_judge(budget, count=lambda req: ConnectionError("no endpoint"))
    with pytest.raises(BudgetExhausted):
        grade_all(judge, 12)
    assert fake.call_count == 8  # as with no counting at all
    assert len(fake.count_calls) == 1
    assert "counting input tokens failed (ConnectionError: no endpoint)" in caplog.text


def test_concurrent_requests_wait_for_the_worst_case_in_flight_and_fit_exactly() -> None:
    n = 6
    budget = Budget(max_cost=n * GRADE_USD)
    judge, fake = counting_judge(budget, count=100)
    stopped = 0

    def one(i: int) -> None:
        nonlocal stopped
        try:
            judge(answer(i), case(i))
        except BudgetExhausted:
            stopped += 1

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(one, range(20)))
    assert fake.call_count == n and stopped == 20 - n
    assert budget.report()["spent_usd"] == n * GRADE_USD


def test_spending_passes_the_limit_by_less_than_the_last_request() -> None:
    # the second reply is far longer than the first: it was expected to cost $120 but
    # costs 100 + 400 = $500, so the run ends $220 over a $300 limit, less than $500
    outputs = [20, 400, 20, 20]
    budget = Budget(max_cost=300.0)
    judge, fake = counting_judge(budget, count=100)
    fake.answer = lambda req: tool_reply(4, input_tokens=100, output_tokens=outputs.pop(0))
    with pytest.raises(BudgetExhausted, match="expected to cost"):
        grade_all(judge, 4)
    assert fake.call_count == 2
    spent = budget.report()["spent_usd"]
    assert spent == 620.0 and spent - 300.0 < 500.0


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
    # bounded reads (evalkit.io.limits): nested 200,000 deep was a RecursionError, and
    # a never-ending file was read until memory ran out
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match=re.escape(
            f"price table {path}: is refused (nested more than 100 levels deep")):
        price_table(path)
    with pytest.raises(ValueError, match="price table /dev/zero: is refused \\(a pipe or "
                                         "device, not a regular file"):
        price_table("/dev/zero")
    with pytest.raises(ValueError, match="'a'"):
        price_table({"a": (1, -2)})
    with pytest.raises(ValueError, match="'a'"):
        price_table({"a": {"input": 1}})
    with pytest.raises(ValueError, match="max_calls"):
        Budget(max_calls=-1)
    with pytest.raises(ValueError, match="max_cost"):
        Budget(max_cost=float("nan"))


def test_tokens_are_counted_only_under_max_cost() -> None:
    for budget in (Budget(max_calls=10), None):
        judge, fake = counting_judge(budget or Budget(), count=100)
        judge.budget = budget
        grade_all(judge, 3)
        assert fake.call_count == 3 and fake.count_calls == []
