"""A judge failure on one case costs that case its judge metric only: recall
keeps its value, the run stays complete, aggregates are computed, the gate judges the
checks the failure does not touch, and resume grades the case again without calling the
target. A reply cut at max_tokens is never a grade and never cached."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import JudgeError, LLMJudge
from evalkit_judge.cache import GradeCache
from evalkit_judge.testing import FakeAnthropic, tool_reply

from evalkit.data.cases import GoldenCase
from evalkit.data.results import MetricFailedError, RunResult
from evalkit.data.targets import TargetResponse
from evalkit.execute.target_runner import evaluate
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec
from evalkit.plugins.default import use_registry

CASES = [GoldenCase(f"c{i}", f"question {i}", expected=[f"d{i}"]) for i in range(6)]


def cut_reply() -> dict[str, Any]:
    """A tool call cut at max_tokens: its reason stops mid-word."""
    reply = tool_reply(2, "The answer misses the ke")
    reply["stop_reason"] = "max_tokens"
    return reply


class Ranker:
    name = "ranker"

    def __init__(self) -> None:
        self.calls: list[str] = []
        self._lock = threading.Lock()

    def invoke(self, case: GoldenCase) -> TargetResponse:
        with self._lock:
            self.calls.append(case.id)
        return TargetResponse(ranked_ids=[f"d{case.id[1:]}", "x"], text=f"answer {case.id}",
                              latency_ms=5.0)


def test_a_judge_failure_on_one_case_leaves_its_recall(tmp_path: Path) -> None:
    broken = {"question 3"}

    def answer(req: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps(req)
        return cut_reply() if any(q in text for q in broken) else tool_reply(4)

    fake = FakeAnthropic(answer)
    art = tmp_path / "run.jsonl"
    ranker = Ranker()
    with use_registry() as reg:
        judge = LLMJudge("r", model="m", client=fake, cache_path=tmp_path / "c.sqlite")
        reg.register_metric("judged", higher_is_better=True)(judge)
        run = evaluate(ranker, CASES, ["recall@1", "judged"], ["latency_p50"],
                       artifact=art, progress=False, max_concurrency=2)
        assert run.header["status"] == "complete"  # every case answered
        assert run.header["aggregates"] == {"latency_p50": 5.0}
        assert run.header["metric_errors"] == {"judged": 1}
        back = RunResult.load(art)
        rows = {r.case_id: r for r in back.per_query}
        assert rows["c3"].metrics == {"recall@1": 1.0}  # recall kept
        assert rows["c3"].error is None
        assert "stop_reason='max_tokens'" in rows["c3"].metric_errors["judged"]
        assert "case 'c3'" in rows["c3"].metric_errors["judged"]
        assert back.mean("recall@1") == 1.0
        with pytest.raises(MetricFailedError, match=r"run 'ranker' has no 'judged' value on "
                                                    r"1 case\(s\): case 'c3' failed"):
            back.mean("judged")
        assert len(GradeCache(tmp_path / "c.sqlite")) == 5  # the cut reply was not cached
        checks = [CheckSpec("recall_floor", "recall@1", op=">=", threshold=0.9),
                  CheckSpec("judge_floor", "judged", op=">=", threshold=3.0),
                  CheckSpec("judge_others", "judged", op=">=", threshold=3.0,
                            scope=("c0", "c1", "c2")),
                  CheckSpec("latency", "latency_p50", op="<=", threshold=10.0)]
        report = evaluate_gate(checks, back)
        verdicts = {r.check.id: r for r in report.results}
        assert verdicts["recall_floor"].verdict == "pass"
        assert verdicts["recall_floor"].coverage == "6/6 cases"
        assert verdicts["judge_others"].verdict == "pass"
        assert verdicts["latency"].verdict == "pass"  # aggregates: every case answered
        judged = verdicts["judge_floor"]
        assert judged.verdict == "error" and judged.coverage == "5/6 cases"
        assert "metric 'judged' failed in run 'ranker' on 1 of 6 case(s)" in judged.message
        assert "c3 (" in judged.message
        assert report.exit_code == 2 and not report.incomplete
        # resume grades c3 again from its stored response: the target is not called
        broken.clear()
        ranker.calls.clear()
        before = fake.call_count
        resumed = evaluate(ranker, CASES, ["recall@1", "judged"], ["latency_p50"],
                           artifact=art, resume=True, progress=False)
    assert ranker.calls == []
    assert fake.call_count == before + 1  # only c3's grade was requested again
    assert resumed.header["resume"] == {"kept": 6, "called": 0, "retried": 0, "rescored": 1}
    assert resumed.scores("judged") == {c.id: 4.0 for c in CASES}
    assert RunResult.load(art).header["metric_errors"] == {}


def test_a_reply_cut_at_max_tokens_is_an_error_and_never_cached(tmp_path: Path) -> None:
    fake = FakeAnthropic(lambda req: cut_reply())
    judge = LLMJudge("r", model="m", client=fake, cache_path=tmp_path / "c.sqlite")
    case = CASES[0]
    for attempt in (1, 2):  # asked again each time: nothing was stored as a grade
        with pytest.raises(JudgeError, match=r"case 'c0'.*stop_reason='max_tokens'.*"
                                             r"raise max_tokens"):
            judge(TargetResponse(text="t"), case)
        assert fake.call_count == attempt
    assert len(GradeCache(tmp_path / "c.sqlite")) == 0
