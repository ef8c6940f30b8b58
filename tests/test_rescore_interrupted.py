"""``evalkit rescore`` stopped mid-way (SIGKILL, Ctrl-C) leaves the artifact it replaces
as it was: the rescored rows go to temporary files, renamed over it only when complete.
A rerun then completes; Ctrl-C exits 130."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from evalkit.data.cases import GoldenCase
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.target_runner import evaluate

N = 12

#: ``evalkit`` with a metric ``slow_len`` that marks each case it scores (a file in
#: the folder given as the first argument) and then waits ``sys.argv[2]`` seconds
CHILD = r"""
import sys, time
from pathlib import Path
from evalkit.plugins.default import use_registry
from evalkit.cli import main

marks, delay = Path(sys.argv[1]), float(sys.argv[2])
with use_registry() as reg:
    @reg.register_metric("slow_len", higher_is_better=True)
    def slow_len(response, case):
        (marks / case.id).touch()
        time.sleep(delay)
        return float(len(response.ranked_ids))

    sys.argv = ["evalkit", *sys.argv[3:]]
    main()
"""


def _artifact(tmp_path: Path) -> Path:
    goldens = tmp_path / "cases.jsonl"
    goldens.write_text("".join(json.dumps({"id": f"q{i}", "query": "x", "expected": ["d1"]})
                               + "\n" for i in range(N)))
    out = tmp_path / "run.jsonl"

    def answer(case: GoldenCase) -> TargetResponse:
        ids = [f"d{i}" for i in range(2000)]
        return TargetResponse(ranked_ids=ids, text="t" * 5000, raw={"n": len(ids)},
                              latency_ms=1.0)

    evaluate(CallableTarget(answer, name="big"), goldens, ["recall@10"], ["latency_p95"],
             artifact=out, progress=False)
    return out


def _spawn(tmp_path: Path, delay: float) -> tuple[subprocess.Popen[str], Path]:
    marks = tmp_path / "marks"
    marks.mkdir(exist_ok=True)
    for mark in marks.iterdir():
        mark.unlink()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(marks), str(delay), "rescore", "run.jsonl",
         "-m", "slow_len", "--no-progress"], cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    return proc, marks


def _wait(done: Callable[[], bool], proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not done():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the rescoring did not start"
        time.sleep(0.02)


def _rescored(path: Path) -> RunResult:
    run = RunResult.load(path)
    assert run.integrity is not None and run.integrity.ok
    return run


def test_sigkill_mid_rescore_keeps_the_artifact_and_a_rerun_completes(
        tmp_path: Path) -> None:
    artifact = _artifact(tmp_path)
    before = artifact.read_bytes()
    proc, marks = _spawn(tmp_path, 0.2)
    _wait(lambda: len(list(marks.iterdir())) >= 4, proc)
    proc.kill()  # SIGKILL: no handler runs, no temporary file is removed
    proc.communicate(timeout=20)
    assert proc.returncode == -signal.SIGKILL
    assert artifact.read_bytes() == before  # the original, whole
    proc, _ = _spawn(tmp_path, 0)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    run = _rescored(artifact)
    assert run.header["rescored"]["metrics"] == ["slow_len"]
    assert [r.metrics for r in run.per_query] == [{"recall@10": 1.0, "slow_len": 2000.0}] * N
    assert [json.loads(x)["response"]["ranked_ids"] for x in before.splitlines()[1:-1]] == \
        [list(r.response.ranked_ids) for r in run.per_query]  # the stored responses, whole


def test_ctrl_c_mid_rescore_exits_130_and_keeps_the_artifact(tmp_path: Path) -> None:
    artifact = _artifact(tmp_path)
    before = artifact.read_bytes()
    proc, marks = _spawn(tmp_path, 0.2)
    _wait(lambda: len(list(marks.iterdir())) >= 4, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert artifact.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cases.jsonl", "marks",
                                                         "run.jsonl"]  # nothing left
