"""Runs whose repeated samples are reduced differently (``epochs``, ``reduce``) hold
per-case values of another meaning: the gate's baseline checks are ``error`` on them
(incomparable evidence, both settings named), ``compare`` refuses them, and ``--resume``
refuses a changed ``reduce`` as it refuses a changed ``epochs``.

A flaky target answers right only on its first sample: reduced by ``max`` it scores 1 on
every case, as a steady target reduced by ``mean`` does, while its mean is 1/3.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import evalkit
from evalkit.comparison import ComparisonError
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget
from evalkit.execute.run_header import ResumeError
from evalkit.execute.samples import current_sample
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
N = 30
NOREG = CheckSpec("noreg", "recall@1", vs_baseline="no_significant_regression")
CHECKS = """\
checks:
  - id: noreg
    metric: recall@1
    vs_baseline: no_significant_regression
"""


def _goldens() -> GoldenSet:
    return GoldenSet(GoldenCase(f"q{i:02d}", "q", relevant=frozenset({"d1"}))
                     for i in range(N))


def _target(flaky: bool) -> CallableTarget:
    def rank(case: GoldenCase) -> list[str]:
        return ["zz"] if flaky and (current_sample() or 0) != 0 else ["d1"]

    return CallableTarget(rank, name="flaky" if flaky else "steady")


def _run(path: Path, *, flaky: bool, epochs: int, reduce: str = "mean") -> Path:
    evalkit.evaluate(_target(flaky), _goldens(), ["recall@1"], epochs=epochs,
                     reduce=reduce, progress=False, artifact=path)
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("reduce")
    _run(d / "base.jsonl", flaky=False, epochs=3)
    _run(d / "max3.jsonl", flaky=True, epochs=3, reduce="max")
    _run(d / "mean3.jsonl", flaky=True, epochs=3)
    (d / "checks.yaml").write_text(CHECKS)
    return d


def test_gate_errors_a_baseline_check_across_reductions(folder: Path) -> None:
    proc = subprocess.run([*EVALKIT, "gate", "-c", "checks.yaml", "-r", "max3.jsonl",
                           "-b", "base.jsonl", "--json"], cwd=folder, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (check,) = json.loads(proc.stdout)["data"]["checks"]
    assert check["verdict"] == "error" and check["comparison"] is None
    message = check["message"]
    assert "reduced differently" in message
    assert "epochs: 3, reduce: mean vs epochs: 3, reduce: max" in message
    assert "same epochs and reduce" in message
    # reduced alike, the same flaky target fails: the mismatch was hiding a regression
    report = evaluate_gate([NOREG], RunResult.load(folder / "mean3.jsonl"),
                           RunResult.load(folder / "base.jsonl"))
    assert report.exit_code == 1 and report.results[0].verdict == "fail"


def test_the_number_of_samples_counts_unless_the_reduction_is_a_mean(
        folder: Path, tmp_path: Path) -> None:
    base = RunResult.load(folder / "base.jsonl")
    # a mean over 3 samples estimates what one sample does: compared
    one = RunResult.load(_run(tmp_path / "one.jsonl", flaky=False, epochs=1))
    assert evaluate_gate([NOREG], one, base).results[0].verdict == "pass"
    # the max of 5 is another "best of" than the max of 3
    max3 = RunResult.load(folder / "max3.jsonl")
    max5 = RunResult.load(_run(tmp_path / "max5.jsonl", flaky=True, epochs=5, reduce="max"))
    result = evaluate_gate([NOREG], max5, max3).results[0]
    assert result.verdict == "error"
    assert "epochs: 3, reduce: max vs epochs: 5, reduce: max" in result.message
    # and the max of 3 is never one sample
    result = evaluate_gate([NOREG], one, max3).results[0]
    assert result.verdict == "error" and "one sample per case" in result.message


def test_compare_refuses_runs_reduced_differently(folder: Path) -> None:
    with pytest.raises(ComparisonError, match="reduced differently"):
        evalkit.compare(folder / "base.jsonl", folder / "max3.jsonl", metrics=["recall@1"])
    same = evalkit.compare(folder / "base.jsonl", folder / "mean3.jsonl",
                           metrics=["recall@1"])
    assert same.results[0].diff == pytest.approx(-2 / 3)


def test_resume_refuses_a_changed_reduce(folder: Path, tmp_path: Path) -> None:
    out = _run(tmp_path / "ep.jsonl", flaky=True, epochs=3)
    with pytest.raises(ResumeError, match="reduce: 'mean' -> 'max'"):
        evalkit.evaluate(_target(True), _goldens(), ["recall@1"], epochs=3, reduce="max",
                         progress=False, artifact=out, resume=True)
    assert RunResult.load(out).header["samples"]["reduce"] == "mean"
