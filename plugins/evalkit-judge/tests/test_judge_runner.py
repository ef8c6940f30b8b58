"""The judge inside ``evaluate``: concurrency, details on rows, totals, clean stops."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import Budget, BudgetExhausted, LLMJudge, use_budget
from evalkit_judge.testing import FakeAnthropic, tool_reply

from evalkit.data.cases import GoldenCase
from evalkit.data.results import RunResult
from evalkit.data.targets import TargetResponse
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry

CASES = [GoldenCase(id=f"c{i}", query=f"question {i}") for i in range(8)]


class Echo:
    name = "echo"

    def invoke(self, case: GoldenCase) -> TargetResponse:
        return TargetResponse(text=f"answer to {case.query}")


TARGET = Echo()


def slow_fake(delay: float) -> tuple[FakeAnthropic, list[int]]:
    active = [0, 0]  # now, most at once
    lock = threading.Lock()

    def answer(req: dict[str, Any]) -> dict[str, Any]:
        with lock:
            active[0] += 1
            active[1] = max(active[1], active[0])
        time.sleep(delay)
        with lock:
            active[0] -= 1
        # usage a real prompt can cost (the judge charges the worst case below a floor)
        return tool_reply(4, input_tokens=1000, output_tokens=20)

    return FakeAnthropic(answer), active


def test_grades_run_with_the_runner_concurrency(tmp_path: Path) -> None:
    fake, active = slow_fake(0.2)
    with use_registry(plugins=False) as reg:
        reg.register_metric("judged", higher_is_better=True)(
            LLMJudge("r", model="m", client=fake, prices={"m": (1.0, 5.0)}))
        run = evaluate(TARGET, CASES, ["judged"], max_concurrency=4, progress=False,
                       artifact=tmp_path / "run.jsonl")
    assert active[1] == 4  # four grades in flight at once (serial grading: 1)
    assert run.scores("judged") == {c.id: 4.0 for c in CASES}
    back = RunResult.load(tmp_path / "run.jsonl")
    for row in back.per_query:
        assert row.details["judged"]["score"] == 4
        assert row.details["judged"]["cost_usd"] == pytest.approx((1000 + 20 * 5) / 1e6)
    totals = back.header["details"]["judged"]
    assert (totals["grades"], totals["requested"], totals["input_tokens"]) == (8, 8, 8000)
    assert totals["cost_usd"] == pytest.approx(8 * 1100 / 1e6)


def test_a_spending_limit_stops_evaluate_and_keeps_finished_rows(tmp_path: Path) -> None:
    fake, _ = slow_fake(0.05)
    path = tmp_path / "run.jsonl"
    with use_registry(plugins=False) as reg:
        judge = LLMJudge("r", model="m", client=fake, cache_path=tmp_path / "c.sqlite")
        reg.register_metric("judged", higher_is_better=True)(judge)
        with use_budget(Budget(max_calls=3)), pytest.raises(BudgetExhausted):
            evaluate(TARGET, CASES, ["judged"], max_concurrency=2, progress=False,
                     artifact=path)
        kept = [json.loads(x) for x in path.read_text().splitlines()[1:]]
        graded = [x for x in kept if "judged" in x["metrics"]]
        # the rows graded, and those of the cases in flight, graded by the resume
        assert len(graded) == 3 and fake.call_count == 3 and 3 <= len(kept) <= 3 + 2
        run = evaluate(TARGET, CASES, ["judged"], max_concurrency=2, progress=False,
                       artifact=path, resume=True)
    assert run.header["status"] == "complete"
    assert fake.call_count == 8  # the 3 grades before the stop were not bought again
