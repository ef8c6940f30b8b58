"""The judge in a run with repeated samples: every sample is graded; identical outputs
reuse a cached grade unless ``judge_resamples`` adds the sample to the cache key."""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any

from evalkit_judge import LLMJudge
from evalkit_judge.testing import FakeAnthropic, tool_reply

from evalkit.data.cases import GoldenCase
from evalkit.data.results import RunResult
from evalkit.data.targets import TargetResponse
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry

CASES = [GoldenCase(id=f"c{i}", query=f"question {i}") for i in range(4)]


class Echo:
    """The same answer to every sample of a case."""

    name = "echo"

    def invoke(self, case: GoldenCase) -> TargetResponse:
        return TargetResponse(text=f"answer to {case.query}")


def counting_fake() -> FakeAnthropic:
    """Scores 1, 2, 3, 4, 5, 1, ... in arrival order: a judge with its own variance."""
    scores = itertools.cycle(range(1, 6))
    lock = threading.Lock()

    def answer(req: dict[str, Any]) -> dict[str, Any]:
        with lock:
            return tool_reply(next(scores), input_tokens=10, output_tokens=2)

    return FakeAnthropic(answer)


def run(tmp_path: Path, fake: FakeAnthropic, **judge_kw: Any) -> RunResult:
    with use_registry(plugins=False) as reg:
        reg.register_metric("judged", higher_is_better=True)(LLMJudge(
            "r", model="m", client=fake, cache_path=tmp_path / "c.sqlite", **judge_kw))
        return evaluate(Echo(), CASES, ["judged"], max_concurrency=4, progress=False,
                        epochs=3, artifact=tmp_path / "run.jsonl")


def test_identical_outputs_reuse_one_cached_grade_by_default(tmp_path: Path) -> None:
    fake = counting_fake()
    out = run(tmp_path, fake)
    assert len(fake.calls) == 4  # one request per distinct output, not per sample
    assert len(out.samples) == 12
    for row in out.samples:  # every sample is graded (from the cache after the first)
        assert row.metrics["judged"] == row.details["judged"]["score"]
    for cid in ("c0", "c1", "c2", "c3"):
        values = {r.metrics["judged"] for r in out.samples if r.case_id == cid}
        assert len(values) == 1


def test_judge_resamples_grades_every_sample_and_keeps_each_grade(tmp_path: Path) -> None:
    fake = counting_fake()
    out = run(tmp_path, fake, judge_resamples=True)
    assert len(fake.calls) == 12  # one request per (case, sample)
    back = RunResult.load(tmp_path / "run.jsonl")
    for row in back.samples:  # each row's details are its own sample's grade
        assert row.metrics["judged"] == row.details["judged"]["score"]
    keys = {row.details["judged"]["key"] for row in back.samples}
    assert len(keys) == 12
    assert sorted(r.metrics["judged"] for r in out.samples) == sorted(
        [float(x) for x in itertools.islice(itertools.cycle(range(1, 6)), 12)])
    # a resumed or repeated run reads the same grades back from the cache
    again = counting_fake()
    (tmp_path / "run.jsonl").unlink()
    second = run(tmp_path, again, judge_resamples=True)
    assert len(again.calls) == 0
    assert [r.metrics for r in second.samples] == [r.metrics for r in out.samples]
