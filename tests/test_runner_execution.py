"""The runner's execution and artifact writing: worker threads, batches of rows written
at once and flushed before the next wait, the final rewrite, and stop signals."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.scoring import RunAborted, resolve_metrics, score_cases
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry


def cases(n: int) -> GoldenSet:
    return GoldenSet(GoldenCase(f"c{i}", f"query {i}", relevant=frozenset({f"c{i}-a"}))
                     for i in range(n))


def test_the_final_artifact_is_what_run_result_save_writes(tmp_path: Path) -> None:
    def target(case: GoldenCase) -> TargetResponse:
        if case.id == "c3":
            raise ConnectionError("down")
        raw = {"hits": [{"id": f"{case.id}-a", "score": 0.5, "note": "é\u2028"}], "n": 1}
        return TargetResponse(ranked_ids=[f"{case.id}-a", "zz"], raw=raw,
                              meta={"cost_usd": 0.01}, latency_ms=3.0)

    art = tmp_path / "run.jsonl"
    run = evaluate(CallableTarget(target, name="t"), cases(20), ["recall@1"],
                   max_concurrency=4, artifact=art, progress=False)
    assert run.header["status"] == "incomplete"
    written = art.read_bytes()
    again = RunResult.load(art).save(tmp_path / "again.jsonl").read_bytes()
    assert written == again
    assert json.loads(written.splitlines()[-1])["type"] == "trailer"
    assert [json.loads(x)["id"] for x in written.splitlines()[1:-1]] == \
        [f"c{i}" for i in range(20)]  # golden order, whatever the completion order
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.jsonl", "run.jsonl"]


def test_a_completed_row_is_in_the_file_before_the_runner_waits_again(
        tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    seen = threading.Event()

    def watch() -> None:  # c1 is held until c0's row can be read from the file
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if art.exists() and any(json.loads(line).get("id") == "c0"
                                    for line in art.read_text().splitlines()):
                seen.set()
                return
            time.sleep(0.005)

    def target(case: GoldenCase) -> list[str]:
        if case.id == "c1":
            watcher = threading.Thread(target=watch)
            watcher.start()
            watcher.join()
        return [f"{case.id}-a"]

    run = evaluate(CallableTarget(target), cases(2), ["recall@1"], max_concurrency=2,
                   artifact=art, progress=False)
    assert seen.is_set() and run.header["status"] == "complete"


class StopRun(BaseException):
    """A stop signal, like an LLM judge's spending limit."""


def test_a_stop_signal_keeps_running_cases_and_starts_no_new_one(tmp_path: Path) -> None:
    started: list[str] = []
    lock = threading.Lock()

    def target(case: GoldenCase) -> list[str]:
        with lock:
            started.append(case.id)
        if case.id in ("c0", "c1"):
            time.sleep(0.3)  # still running when c2 stops the run
        return [f"{case.id}-a"]

    def metric(response: TargetResponse, case: GoldenCase) -> float:
        if case.id == "c2":
            raise StopRun("limit reached")
        return 1.0

    art = tmp_path / "run.jsonl"
    with use_registry(plugins=False) as reg:
        reg.register_metric("m", higher_is_better=True)(metric)
        with pytest.raises(StopRun, match="limit reached"):
            evaluate(CallableTarget(target), cases(12), ["m"], max_concurrency=3,
                     artifact=art, progress=False)
    assert sorted(started) == ["c0", "c1", "c2"]
    kept = [json.loads(x)["id"] for x in art.read_text().splitlines()[1:]]
    assert sorted(kept) == ["c0", "c1"]


class NoCredentials(ValueError):
    pass


def test_a_run_aborted_by_a_metric_raises_its_error_once_and_stays_resumable(
        tmp_path: Path) -> None:
    # A metric that can score no case (a judge without credentials) raises RunAborted:
    # the per-case handlers let it through, so the run stops at the first case instead
    # of recording the same error on all 12, and evaluate raises the error it carries.
    calls: list[str] = []
    broken = [True]

    def metric(response: TargetResponse, case: GoldenCase) -> float:
        calls.append(case.id)
        if broken[0]:
            raise RunAborted(NoCredentials("set THE_KEY"))
        return 1.0

    art = tmp_path / "run.jsonl"
    with use_registry(plugins=False) as reg:
        reg.register_metric("m", higher_is_better=True)(metric)
        with pytest.raises(NoCredentials, match="set THE_KEY") as info:
            evaluate(CallableTarget(lambda case: ["a"]), cases(12), ["m"],
                     max_concurrency=1, artifact=art, progress=False)
        assert isinstance(info.value.__cause__, RunAborted)
        assert calls == ["c0"]
        # the answered case is kept (not an errored row), its metric not scored, so a
        # resume scores it without calling the target again
        (row,) = [json.loads(x) for x in art.read_text().splitlines()[1:]]
        assert (row["id"], row["error"], row["metrics"]) == ("c0", None, {})
        assert "not graded on case 'c0'" in row["metric_errors"]["m"]
        # score_cases, the path of every runner, raises the error too, not a MetricError
        with pytest.raises(NoCredentials):
            score_cases([TargetResponse(ranked_ids=["a"])], [cases(1).get("c0")],
                        resolve_metrics(["m"]))
        broken[0] = False  # the cause is fixed: resuming scores every case
        run = evaluate(CallableTarget(lambda case: ["a"]), cases(12), ["m"],
                       max_concurrency=1, artifact=art, resume=True, progress=False)
    assert run.header["status"] == "complete"
    assert run.scores("m") == {f"c{i}": 1.0 for i in range(12)}


def test_an_unexpected_error_in_a_worker_propagates() -> None:
    class Exploding:
        def __call__(self, response: TargetResponse, case: GoldenCase) -> float:
            return 1.0

        def details(self, case_id: str) -> dict[str, str]:
            raise LookupError(f"no details for {case_id}")

    with use_registry(plugins=False) as reg:
        reg.register_metric("x", higher_is_better=True)(Exploding())
        with pytest.raises(LookupError, match="no details for"):
            evaluate(CallableTarget(lambda case: ["a"]), cases(5), ["x"],
                     max_concurrency=2, progress=False)


def test_no_call_outlives_a_run_that_failed_to_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the artifact cannot be written (a full disk): the run stops and raises, but only
    # once the call still in flight has ended, so no target call runs behind the caller
    from evalkit.execute import artifact_writer

    ended: list[str] = []

    def target(case: GoldenCase) -> list[str]:
        if case.id == "c1":
            time.sleep(0.4)
        ended.append(case.id)
        return [f"{case.id}-a"]

    def full_disk(self: object, rows: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(artifact_writer.ArtifactWriter, "append_many", full_disk)
    with use_registry(plugins=False) as reg:
        reg.register_metric("m", higher_is_better=True)(lambda response, case: 1.0)
        with pytest.raises(OSError, match="No space left"):
            evaluate(CallableTarget(target), cases(6), ["m"], max_concurrency=2,
                     artifact=tmp_path / "run.jsonl", progress=False)
        assert "c1" in ended  # c1 was in flight when c0's row could not be written
