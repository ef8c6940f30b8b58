"""Resume of a run with repeated samples after kill -9 of a real subprocess: no (case,
sample) pair that was written is called again, and every pair ends up in the artifact
exactly once."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalkit.data.results import RunResult

N_CASES, K = 20, 3

SCRIPT = f'''
import sys, time
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import CallableTarget
from evalkit.execute.samples import current_sample
from evalkit.execute.target_runner import evaluate

log_path, artifact, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])

def ranker(case):
    with open(log_path, "a") as fh:
        fh.write(f"{{case.id}}/{{current_sample()}}\\n")
    time.sleep(delay)
    return [case.id]

cases = GoldenSet(GoldenCase(f"c{{i:02d}}", "q", relevant=frozenset({{f"c{{i:02d}}"}}))
                  for i in range({N_CASES}))
run = evaluate(CallableTarget(ranker, name="slow"), cases, ["recall@1"], max_concurrency=4,
               artifact=artifact, resume=True, progress=False, epochs={K})
print(run.header["status"], len(run.per_query), len(run.samples))
'''


def start(tmp_path: Path, log: Path, delay: float) -> subprocess.Popen[str]:
    script = tmp_path / "run_samples.py"
    script.write_text(SCRIPT)
    return subprocess.Popen(
        [sys.executable, str(script), str(log), str(tmp_path / "run.jsonl"), str(delay)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def written_pairs(artifact: Path) -> set[str]:
    lines = artifact.read_bytes().split(b"\n")[:-1]  # complete lines only
    rows = [json.loads(x) for x in lines[1:] if x.strip()]
    return {f"{r['id']}/{r['sample']}" for r in rows if r.get("type") == "row"}


def test_resume_after_kill_calls_only_the_samples_not_written(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    proc = start(tmp_path, tmp_path / "calls1.log", 0.05)
    deadline = time.monotonic() + 30
    while not (art.exists() and len(written_pairs(art)) >= 20):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no progress: {proc.communicate()}")
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    done = written_pairs(art)
    assert 20 <= len(done) < N_CASES * K
    assert not RunResult.load(art).coverage().complete
    again = start(tmp_path, tmp_path / "calls2.log", 0.0)
    out, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
    assert out.split() == ["complete", str(N_CASES), str(N_CASES * K)]
    called = (tmp_path / "calls2.log").read_text().split()
    assert set(called).isdisjoint(done)  # no written sample is called again
    assert len(called) == len(set(called))
    everything = {f"c{i:02d}/{s}" for i in range(N_CASES) for s in range(K)}
    assert set(called) | done == everything
    run = RunResult.load(art)
    assert run.coverage().complete
    assert sorted(f"{r.case_id}/{r.sample}" for r in run.samples) == sorted(everything)
    assert run.mean("recall@1") == 1.0
