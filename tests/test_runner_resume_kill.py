"""Resume after kill -9 and after Ctrl-C of a real subprocess: no completed case is called
again, and none is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.results import RunResult

N_CASES = 60

SCRIPT = f'''
import sys, time
from evalkit.cases import GoldenCase
from evalkit.evaluation import evaluate
from evalkit.goldens import GoldenSet
from evalkit.targets import CallableTarget

log_path, artifact, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])

def ranker(case):
    with open(log_path, "a") as fh:
        fh.write(case.id + "\\n")
    time.sleep(delay)
    return [case.id]

cases = GoldenSet(GoldenCase(f"c{{i:03d}}", "q", relevant=frozenset({{f"c{{i:03d}}"}}))
                  for i in range({N_CASES}))
run = evaluate(CallableTarget(ranker, name="slow"), cases, ["recall@1"], max_concurrency=4,
               artifact=artifact, resume=True, progress=False, fsync_interval_s=1.0)
print(run.header["status"], len(run.per_query))
'''


def start(tmp_path: Path, log: Path, delay: float) -> subprocess.Popen[str]:
    script = tmp_path / "run_eval.py"
    script.write_text(SCRIPT)
    return subprocess.Popen(
        [sys.executable, str(script), str(log), str(tmp_path / "run.jsonl"), str(delay)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def complete_rows(artifact: Path) -> list[dict[str, object]]:
    """Row objects of the complete (newline-terminated) lines."""
    data = artifact.read_bytes()
    lines = data.split(b"\n")[:-1]
    return [json.loads(x) for x in lines[1:] if x.strip()]


def wait_for_rows(proc: subprocess.Popen[str], artifact: Path, n: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if artifact.exists() and len(complete_rows(artifact)) >= n:
            return
        if proc.poll() is not None:
            pytest.fail(f"the run ended early: {proc.communicate()}")
        time.sleep(0.02)
    proc.kill()
    pytest.fail("no progress within 30 s")


def finish_and_check(tmp_path: Path, done_before: set[str]) -> None:
    log2 = tmp_path / "calls2.log"
    proc = start(tmp_path, log2, 0.0)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.split() == ["complete", str(N_CASES)]
    called_again = log2.read_text().split()
    assert set(called_again).isdisjoint(done_before)  # no completed case called again
    assert len(called_again) == len(set(called_again))
    everything = {f"c{i:03d}" for i in range(N_CASES)}
    assert set(called_again) | done_before == everything  # and none lost
    run = RunResult.load(tmp_path / "run.jsonl")
    assert run.ids() == sorted(everything)
    assert set(run.scores("recall@1").values()) == {1.0}
    assert run.header["status"] == "complete" and run.header["resumed"] == 1


def test_resume_after_kill_9(tmp_path: Path) -> None:
    artifact = tmp_path / "run.jsonl"
    log1 = tmp_path / "calls1.log"
    proc = start(tmp_path, log1, 0.05)
    wait_for_rows(proc, artifact, 12)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    done_before = {str(r["id"]) for r in complete_rows(artifact) if r["error"] is None}
    assert 12 <= len(done_before) < N_CASES
    assert json.loads(artifact.read_text().splitlines()[0])["status"] == "running"
    in_flight = set(log1.read_text().split()) - done_before
    assert in_flight  # some calls were running when the process died
    finish_and_check(tmp_path, done_before)


def test_resume_after_ctrl_c(tmp_path: Path) -> None:
    artifact = tmp_path / "run.jsonl"
    proc = start(tmp_path, tmp_path / "calls1.log", 0.05)
    wait_for_rows(proc, artifact, 8)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    # RunInterrupted is the KeyboardInterrupt evaluate raises once the rows are written
    assert proc.returncode != 0 and "RunInterrupted" in err
    rows = complete_rows(artifact)
    assert artifact.read_bytes().endswith(b"\n")  # Ctrl-C leaves whole lines only
    done_before = {str(r["id"]) for r in rows if r["error"] is None}
    assert 8 <= len(done_before) < N_CASES
    finish_and_check(tmp_path, done_before)
