"""Target runs made from golden sets whose expected values differ are not compared:
`evalkit compare` and `evalkit.compare` refuse them with the sentence the gate and the
history give (one implementation: :func:`evalkit.data.provenance.expected_difference`),
while runs made from the same golden set are compared."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit import compare
from evalkit.cli.app import app
from evalkit.comparison.records import ComparisonError
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec

IDS = [f"c{i}" for i in range(12)]


def _digest(answers: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(answers, sort_keys=True).encode()).hexdigest()


def _run(name: str, answers: dict[str, str], right: int) -> RunResult:
    """A target run over IDS made from a golden set with ``answers``; right on the first
    ``right`` cases."""
    rows = [CaseResult(c, TargetResponse(text="x"), {"exact_match": float(i < right)},
                       latency_ms=1.0 + i)
            for i, c in enumerate(IDS)]
    header = {"kind": "target", "metrics": {"exact_match": {"provider": "evalkit-text",
                                                            "version": "1"}},
              "goldens": {"path": "g.jsonl", "sha256": _digest(answers)}}
    return RunResult(name, rows, header)


OLD = dict.fromkeys(IDS, "Paris")
NEW = OLD | {"c3": "Lyon"}


def test_compare_refuses_runs_made_from_other_golden_answers(tmp_path: Path) -> None:
    base, cand = _run("base", OLD, 12), _run("cand", NEW, 6)
    want = (f"the golden set's expected values changed: the golden file hash "
            f"{_digest(OLD)[:12]} in 'base', {_digest(NEW)[:12]} in 'cand'")
    with pytest.raises(ComparisonError, match="were not evaluated alike") as info:
        compare(base, cand, metrics=["exact_match"])
    assert want in str(info.value) and "the same golden set" in str(info.value)
    a, b = base.save(tmp_path / "base.jsonl"), cand.save(tmp_path / "cand.jsonl")
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "-m", "exact_match"])
    assert res.exit_code == 2, res.output
    assert want in res.output and "Traceback" not in res.output
    # the gate refuses the same pair in the same words, naming baseline and run
    gate = evaluate_gate([CheckSpec("em", "exact_match",
                                    vs_baseline="no_significant_regression")],
                         RunResult.load(b), RunResult.load(a))
    assert (f"the golden set's expected values changed: the golden file hash "
            f"{_digest(OLD)[:12]} in the baseline, {_digest(NEW)[:12]} in the run"
            ) in gate.results[0].message


def test_the_same_golden_set_is_compared(tmp_path: Path) -> None:
    base, cand = _run("base", OLD, 12), _run("cand", OLD, 6)
    result = compare(base, cand, metrics=["exact_match"])
    (row,) = result.results
    assert row.diff == pytest.approx(-0.5)
    a, b = base.save(tmp_path / "base.jsonl"), cand.save(tmp_path / "cand.jsonl")
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "-m", "exact_match"])
    assert res.exit_code == 0, res.output


def test_expected_values_from_the_rows_or_the_qrels() -> None:
    from evalkit.data.provenance import expected_difference, expected_values

    # a run without a recorded source is compared as before
    plain = RunResult("plain", [CaseResult(c, TargetResponse(text="x"),
                                           {"exact_match": 1.0}) for c in IDS])
    assert expected_values(plain) == (None, None)
    compare(_run("base", OLD, 12), plain, metrics=["exact_match"])
    assert expected_difference(("qrels", "a" * 64), ("qrels", "a" * 64)) is None
    assert expected_difference(("goldens", "a" * 64), ("rows", "b" * 64)) == (
        "the expected values come from goldens (hash aaaaaaaaaaaa) in the baseline but "
        "from rows (hash bbbbbbbbbbbb) in the run")
