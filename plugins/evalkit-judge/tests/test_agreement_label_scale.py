"""Human labels against the judge's declared scale, in real subprocesses: labels that are
not grades on the scale (``-7``, ``3.5``, ``1e30`` against ``scale: 5``) are warned about
by `evalkit agreement` and noted by `evalkit gate --labels`; a label too large to compute
with (``1e300``) is refused with that cause, never a numpy overflow warning nor "no
variation"; and the "undefined" cause names the side that has one value."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from evalkit_judge.agreement_aggregates import undefined_cause

from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse

EVALKIT = [sys.executable, "-W", "error::RuntimeWarning", "-c",
           "from evalkit.cli import main; main()"]
JUDGE = [1, 2, 3, 4, 5, 3, 2, 4]
CHECKS = ("checks:\n  - id: alpha\n    metric: krippendorff_alpha(correctness)\n"
          "    op: \">=\"\n    threshold: 0.1\n")


def evalkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


def project(root: Path, labels: list[float]) -> Path:
    ids = [f"c{i}" for i in range(len(JUDGE))]
    rows = [CaseResult(c, TargetResponse(text="x"), {"correctness": float(j)})
            for c, j in zip(ids, JUDGE, strict=True)]
    header = {"kind": "target", "details": {"correctness": {"judge": {"scale": 5}}}}
    RunResult("sys", rows, header).save(root / "run.jsonl")
    (root / "labels.jsonl").write_text("".join(
        json.dumps({"id": c, "labels": {"correctness": v}}) + "\n"
        for c, v in zip(ids, labels, strict=True)))
    (root / "checks.yaml").write_text(CHECKS)
    return root


@pytest.mark.parametrize("odd", [-7, 3.5, 1e30, 0])
def test_labels_off_the_scale_are_warned_about(tmp_path: Path, odd: float) -> None:
    root = project(tmp_path, [odd, 2, 3, 4, 5, 3, 2, 4])
    agreement = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl", cwd=root)
    assert agreement.returncode == 0, agreement.stderr
    assert "1 label(s) of 'correctness' are not grades on the judge's scale 1..5 " \
        f"(case 'c0': {odd:g})" in agreement.stdout + agreement.stderr
    gate = evalkit("gate", "--checks", "checks.yaml", "--run", "run.jsonl", "--labels",
                   "labels.jsonl", cwd=root)
    assert "note: labels.jsonl: 1 label(s) of 'correctness' are not grades" in gate.stdout \
        + gate.stderr


def test_labels_on_the_scale_are_not_warned_about(tmp_path: Path) -> None:
    root = project(tmp_path, [1, 2, 3, 4, 5, 3, 2, 4])
    agreement = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl", cwd=root)
    assert agreement.returncode == 0 and "scale" not in agreement.stdout + agreement.stderr


def test_a_label_too_large_is_refused_with_its_cause(tmp_path: Path) -> None:
    root = project(tmp_path, [1e300, 2, 3, 4, 5, 3, 2, 4])
    gate = evalkit("gate", "--checks", "checks.yaml", "--run", "run.jsonl", "--labels",
                   "labels.jsonl", cwd=root)
    out = gate.stdout + gate.stderr
    assert gate.returncode == 2, out
    assert "a value of 1e+300 is too large to compute agreement with" in out
    assert "RuntimeWarning" not in out and "no variation" not in out
    agreement = evalkit("agreement", "run.jsonl", "--labels", "labels.jsonl", cwd=root)
    assert agreement.returncode == 2
    assert "too large to compute agreement" in agreement.stderr
    assert "RuntimeWarning" not in agreement.stderr


def test_the_undefined_cause_names_the_side_with_one_value() -> None:
    assert "every label is the same value" in undefined_cause([1, 2], [3, 3])
    assert "the judge gave every labelled case the same value" in undefined_cause([2, 2],
                                                                                  [1, 3])
    assert "all one value" in undefined_cause([2, 2], [2, 2])
