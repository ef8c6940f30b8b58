"""A run scored with ``--missing skip`` that lacks judged queries is incomplete evidence:
its means are over the queries it has, so a run holding only its easy queries scored
higher than the whole run would. The gate errors its checks (exit 2) and promote refuses
it, each naming ``--missing zero``; coverage counts the judged queries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from evalkit.gate.baseline import BaselineError, promote

QRELS = "".join(f"q{i} 0 d1 1\n" for i in range(1, 5))
# q1 ranks its relevant document first (AP 1); q2-q4 are absent from the run
RUN = "q1 Q0 d1 1 2.0 part\nq1 Q0 d2 2 1.0 part\n"
CHECKS = "checks:\n  - id: ap_floor\n    metric: ap\n    op: \">=\"\n    threshold: 0.5\n"


def invoke(*args: str) -> Any:
    from evalkit.cli.app import app

    return CliRunner().invoke(app, list(args))


def _scored(tmp_path: Path, missing: str) -> Path:
    (tmp_path / "q.qrels").write_text(QRELS)
    (tmp_path / "part.run").write_text(RUN)
    out = tmp_path / f"{missing}.jsonl"
    res = invoke("eval", str(tmp_path / "part.run"), "--qrels", str(tmp_path / "q.qrels"),
                 "-m", "ap", "--missing", missing, "--save", str(out))
    assert res.exit_code == 0, res.output
    return out


def test_gate_errors_a_run_that_skipped_judged_queries(tmp_path: Path) -> None:
    checks = tmp_path / "c.yaml"
    checks.write_text(CHECKS)
    zero = invoke("gate", "-c", str(checks), "-r", str(_scored(tmp_path, "zero")))
    assert zero.exit_code == 1, zero.output  # mean AP 1/4 = 0.25 < 0.5
    skip = invoke("gate", "-c", str(checks), "-r", str(_scored(tmp_path, "skip")))
    assert skip.exit_code == 2, skip.output  # mean AP 1/1 = 1.0 would pass
    text = " ".join(skip.output.split())
    assert "without 3 of the 4 judged queries" in text
    assert "--missing zero" in text and "gate passed" not in text
    assert "1/4" in text


def test_promote_refuses_it(tmp_path: Path) -> None:
    skipped = _scored(tmp_path, "skip")
    try:
        promote(skipped, tmp_path / "b.jsonl")
    except BaselineError as exc:
        assert "--missing zero" in str(exc)
    else:
        raise AssertionError("promoted a run scored without 3 of its 4 judged queries")
    res = invoke("baseline", "promote", str(skipped), "--to", str(tmp_path / "b2.jsonl"))
    assert res.exit_code == 2, res.output
    assert not (tmp_path / "b2.jsonl").exists()
    promote(_scored(tmp_path, "zero"), tmp_path / "b3.jsonl")  # the fix named works


def test_gate_errors_a_baseline_that_skipped(tmp_path: Path) -> None:
    checks = tmp_path / "c.yaml"
    checks.write_text("checks:\n  - id: no_drop\n    metric: ap\n    vs_baseline: "
                      "no_significant_regression\n")
    run = _scored(tmp_path, "zero")
    # a skip-scored file used as a plain baseline (not promoted)
    res = invoke("gate", "-c", str(checks), "-r", str(run), "-b", str(_scored(tmp_path, "skip")))
    assert res.exit_code == 2, res.output
    assert "--missing zero" in " ".join(res.output.split())
