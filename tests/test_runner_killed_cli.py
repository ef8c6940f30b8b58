"""A run killed mid-way: `evalkit run` on 240 cases is killed with SIGKILL after
about 100; gate exits 2 naming the missing cases (never "pass"), promote refuses it,
rescore keeps it incomplete, eval says so in one line, compare refuses it unless
--allow-incomplete, and --resume (not blocked by the dead run's lock) completes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.results import RunResult

N = 240
EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
runner = CliRunner()

TARGET = '''
import time
from evalkit.data.targets import CallableTarget

def make():
    def rank(case):
        time.sleep(0.01)
        return [case.id]  # always right: recall@1 = 1 on every case
    return CallableTarget(rank, name="slow")
'''


def complete_rows(artifact: Path) -> list[dict[str, object]]:
    if not artifact.exists():
        return []
    lines = artifact.read_bytes().split(b"\n")[:-1]
    return [json.loads(x) for x in lines[1:] if x.strip()]


@pytest.fixture
def killed(tmp_path: Path) -> tuple[Path, Path, int]:
    """``(project folder, artifact, rows it holds)`` of a run killed after ~100 rows."""
    (tmp_path / "goldens.jsonl").write_text("".join(
        json.dumps({"id": f"c{i:03d}", "query": "q", "expected": [f"c{i:03d}"]}) + "\n"
        for i in range(N)))
    (tmp_path / "killed_target.py").write_text(TARGET)
    (tmp_path / "evalkit.yaml").write_text(
        "goldens: goldens.jsonl\ntarget: {factory: 'killed_target:make'}\n"
        "metrics: [recall@1]\naggregates: [latency_p50]\noutput: runs/run.jsonl\n"
        "max_concurrency: 4\n")
    (tmp_path / "checks.yaml").write_text(
        'checks:\n  - {id: recall_floor, metric: recall@1, op: ">=", threshold: 0.5}\n')
    artifact = tmp_path / "runs" / "run.jsonl"
    proc = subprocess.Popen([*EVALKIT, "run", "--no-progress"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while len(complete_rows(artifact)) < 100:
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"the run did not reach 100 rows: {proc.communicate()}")
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    rows = len(complete_rows(artifact))
    assert 100 <= rows < N
    return tmp_path, artifact, rows


def test_a_killed_run_is_refused_by_gate_promote_and_compare(
        killed: tuple[Path, Path, int], monkeypatch: pytest.MonkeyPatch) -> None:
    root, artifact, k = killed
    monkeypatch.chdir(root)
    gate = subprocess.run([*EVALKIT, "gate", "-c", "checks.yaml", "-r", str(artifact)],
                          cwd=root, capture_output=True, text=True, timeout=60)
    assert gate.returncode == 2, gate.stdout + gate.stderr
    out = gate.stdout
    assert f"recall_floor: error ({k}/{N} cases)" in out  # not "pass (107/107 cases)"
    assert f"{N - k} of {N} cases have no row ('c" in out
    assert "it never finished (status 'running', no trailer line)" in out
    assert "pass (" not in out and "gate passed" not in out
    # the baseline file is held to the same rule
    complete = root / "complete.jsonl"
    RunResult.load(artifact)  # readable as it stands
    res = runner.invoke(app, ["baseline", "promote", str(artifact), "--to", "base.jsonl"])
    assert res.exit_code == 2 and "is incomplete" in res.output
    assert f"{N - k} of {N} cases have no row" in res.output
    assert not (root / "base.jsonl").exists()
    res = runner.invoke(app, ["eval", str(artifact), "-m", "recall@1"])
    assert res.exit_code == 0
    warnings = [line for line in res.output.splitlines() if "is incomplete" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: run 'slow' is incomplete")
    # rescore keeps the input's missing cases instead of marking the run complete
    res = runner.invoke(app, ["rescore", str(artifact), "-m", "recall@1", "-o",
                              str(root / "rescored.jsonl")])
    assert res.exit_code == 1, res.output
    rescored = RunResult.load(root / "rescored.jsonl")
    assert rescored.header["status"] == "incomplete"
    assert rescored.header["missing_cases"] == N - k
    assert rescored.header["aggregates"] == {}
    assert not rescored.coverage().complete
    res = runner.invoke(app, ["gate", "-c", "checks.yaml", "-r", str(root / "rescored.jsonl")])
    assert res.exit_code == 2 and f"{N - k} of {N} cases have no row" in res.output
    # --resume continues at once: the dead process's lock does not block it
    lock = artifact.with_name("run.jsonl.lock")
    assert lock.exists()  # left behind by SIGKILL, but no longer locked
    resumed = subprocess.run([*EVALKIT, "run", "--no-progress", "--resume", "-o",
                              str(artifact)], cwd=root, capture_output=True, text=True,
                             timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resume: {k} row(s) kept from the earlier run, {N - k} case(s) called now" \
        in resumed.stdout
    assert sorted(p.name for p in artifact.parent.iterdir()) == ["run.jsonl"]
    artifact.replace(complete)
    res = runner.invoke(app, ["gate", "-c", "checks.yaml", "-r", str(complete)])
    assert res.exit_code == 0 and f"recall_floor: pass ({N}/{N} cases)" in res.output


def test_compare_refuses_an_incomplete_run_unless_allowed(
        killed: tuple[Path, Path, int], monkeypatch: pytest.MonkeyPatch) -> None:
    root, artifact, k = killed
    monkeypatch.chdir(root)
    full = root / "full.jsonl"
    res = runner.invoke(app, ["run", "--no-progress", "-o", str(full)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["compare", str(full), str(artifact), "-m", "recall@1"])
    assert res.exit_code == 2
    assert "candidate 'slow'" in res.output and "is incomplete" in res.output
    res = runner.invoke(app, ["compare", str(full), str(artifact), "-m", "recall@1",
                              "--allow-incomplete", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["allow_incomplete"] is True
    assert data["comparisons"][0]["n_queries"] == k
    warnings = data["warnings"]
    assert any(f"candidate 'slow' is incomplete: {N - k} of {N} cases have no row" in w
               for w in warnings)  # said, not hidden
    assert any(f"has {N - k} queries that another run lacks" in w
               and f"left out (incomplete runs allowed), so {k} queries are paired" in w
               for w in warnings)
