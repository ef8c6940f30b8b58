"""A gate refuses a baseline that is the gated run itself (the same path, a link, the
same inode, a byte copy, or a baseline promoted from it): a regression check comparing a
run with itself can never fail. Through --baseline, the eval config's ``baseline:`` and
the Python API."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.results import RunResult
from evalkit.gate import evaluate_gate
from evalkit.gate.baseline import load_baseline
from evalkit.gate.checks import load_checks
from evalkit.gate.fingerprint import BaselineError

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "gate"
CHECKS = EXAMPLE / "checks.yaml"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return Path(shutil.copy(EXAMPLE / "baseline.jsonl", tmp_path / "run.jsonl"))


def _gate(*args: str | Path, cwd: Path | None = None) -> tuple[int, str]:
    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        res = CliRunner().invoke(app, ["gate", *map(str, args)])
    finally:
        os.chdir(old)
    return res.exit_code, res.output


def test_the_run_itself_by_path_link_or_inode(run: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(run)
    hard = tmp_path / "hard.jsonl"
    os.link(run, hard)
    for baseline in (run, link, hard, Path(os.path.relpath(run))):
        code, out = _gate("-c", CHECKS, "-r", run, "-b", baseline)
        assert code == 2, out
        assert f"error: the baseline {baseline} is the gated run {run} itself: a gate " \
            "comparing a run with itself can never fail" in out
        assert "pass" not in out and "Traceback" not in out


def test_a_copy_or_a_baseline_promoted_from_the_run(run: Path, tmp_path: Path) -> None:
    copy = Path(shutil.copy(run, tmp_path / "copy.jsonl"))
    promoted = tmp_path / "promoted.jsonl"
    assert CliRunner().invoke(app, ["baseline", "promote", str(run), "--to",
                                    str(promoted)]).exit_code == 0
    assert promoted.read_bytes() != run.read_bytes()
    for baseline in (copy, promoted):
        code, out = _gate("-c", CHECKS, "-r", run, "-b", baseline)
        assert code == 2, out
        assert f"the baseline {baseline} is a copy of the gated run {run}" in out


TARGET = """
from evalkit.data.targets import CallableTarget
def make():
    return CallableTarget(lambda case: "Paris", name="t")
"""


def test_the_configs_baseline(tmp_path: Path) -> None:
    (tmp_path / "tgt.py").write_text(TARGET, encoding="utf-8")
    (tmp_path / "g.jsonl").write_text("".join(
        f'{{"id": "c{i}", "query": "q", "answers": ["Paris"]}}\n' for i in range(8)),
        encoding="utf-8")
    (tmp_path / "c.yaml").write_text(
        "checks:\n  - {id: em, metric: exact_match, vs_baseline: no_significant_regression}\n",
        encoding="utf-8")
    (tmp_path / "evalkit.yaml").write_text(
        "goldens: g.jsonl\ntarget: {factory: 'tgt:make'}\nmetrics: [exact_match]\n"
        "output: out/run.jsonl\nchecks: c.yaml\nbaseline: out/run.jsonl\n",
        encoding="utf-8")
    command = [sys.executable, "-c", "from evalkit.cli import main; main()"]
    done = subprocess.run([*command, "run", "--no-progress"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    gated = subprocess.run([*command, "gate"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120)
    assert gated.returncode == 2, gated.stdout + gated.stderr
    assert "is the gated run" in gated.stderr and "'baseline:'" in gated.stderr
    assert gated.stdout == ""


def test_another_run_of_the_same_values_is_compared(run: Path, tmp_path: Path) -> None:
    other = RunResult.load(run)
    other.name = "again"
    again = other.save(tmp_path / "again.jsonl")
    code, out = _gate("-c", CHECKS, "-r", again, "-b", run)
    assert code == 0, out
    assert "gate passed" in out


def test_the_python_api(run: Path) -> None:
    checks = load_checks(CHECKS)
    loaded = RunResult.load(run)
    for baseline in (loaded, load_baseline(run), RunResult.load(run)):
        with pytest.raises(BaselineError, match="a gate comparing a run with itself"):
            evaluate_gate(checks, loaded, baseline)
    # without a baseline check the baseline is not read: nothing to refuse
    floors = [c for c in checks if c.kind != "baseline"]
    assert evaluate_gate(floors, loaded, loaded).exit_code == 0
