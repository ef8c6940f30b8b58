"""A check's ``scope`` naming a case the run lacks: when the run's header records that it
should hold the case (a target run's golden cases, a scored run's judged queries in its
qrels), the gate reports incomplete evidence naming the run file and the id, never a
typo in the checks file; an id no source knows is still refused as a typo. When the
run lost rows its header only counts (qrels gone), an unknown id may be one of them:
the gate reports the run incomplete rather than blaming the scope."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse
from evalkit.gate import gate_from_files
from evalkit.gate.checks import CheckError

QRELS = "".join(f"{q} 0 d1 1\n" for q in ("1", "2", "12", "13"))
RUN = "".join(f"{q} Q0 d1 1 2.0 bm25\n{q} Q0 d2 2 1.0 bm25\n" for q in ("1", "2", "12", "13"))


def checks(folder: Path, scope: list[str], metric: str = "ap") -> Path:
    path = folder / "checks.yaml"
    ids = ", ".join(f'"{i}"' for i in scope)
    path.write_text(f"checks:\n  - id: controls\n    metric: {metric}\n    scope: [{ids}]\n"
                    "    op: \">=\"\n    threshold: 0.5\n", encoding="utf-8")
    return path


def invoke(*args: str) -> Any:
    from evalkit.cli.app import app

    return CliRunner().invoke(app, list(args))


def scored_without(folder: Path, lost: str) -> Path:
    """A scored run saved whole, then the row of query ``lost`` deleted from the file (as
    ``sed`` would: the header still counts it, the trailer no longer matches)."""
    (folder / "q.qrels").write_text(QRELS)
    (folder / "r.run").write_text(RUN)
    out = folder / "run.jsonl"
    res = invoke("eval", str(folder / "r.run"), "--qrels", str(folder / "q.qrels"),
                 "-m", "ap", "--save", str(out))
    assert res.exit_code == 0, res.output
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if f'"id": "{lost}"' not in line]
    assert len(kept) == len(lines) - 1
    dropped = folder / "droprow.jsonl"
    dropped.write_text("".join(kept), encoding="utf-8")
    return dropped


def test_a_lost_row_is_incomplete_evidence_not_a_scope_typo(tmp_path: Path) -> None:
    run = scored_without(tmp_path, "12")
    res = invoke("gate", "-c", str(checks(tmp_path, ["2", "12"])), "-r", str(run))
    assert res.exit_code == 2, res.output
    assert "not among" not in res.output
    assert (f"not judged: run 'bm25' ({run}) lacks case '12' of the check's scope; the run "
            "is incomplete (see below)") in res.output
    assert "gate error: the evidence is incomplete" in res.output


def test_an_id_no_source_knows_is_still_a_typo(tmp_path: Path) -> None:
    run = scored_without(tmp_path, "12")
    with pytest.raises(CheckError) as caught:
        gate_from_files(checks(tmp_path, ["2", "99"]), run)
    # the 4 judged queries of the qrels the run's header names, the lost one included
    assert "'scope' names 1 case id(s) that are not among the 4 known cases: 99" in str(
        caught.value)


def test_with_the_qrels_gone_an_unknown_id_may_be_a_lost_row(tmp_path: Path) -> None:
    run = scored_without(tmp_path, "12")
    (tmp_path / "q.qrels").unlink()
    gate = gate_from_files(checks(tmp_path, ["2", "12"]), run)
    assert gate.exit_code == 2 and gate.incomplete
    assert "lacks case '12'" in gate.results[0].message


def target_run(folder: Path, rows: list[str], recorded: list[str]) -> Path:
    header = {"kind": "target", "status": "complete",
              "goldens": {"n_cases": len(recorded),
                          "case_digests": {c: "0" * 16 for c in recorded}}}
    run = RunResult("t", [CaseResult(c, TargetResponse(text="x"), {"score": 1.0})
                          for c in rows], header=header)
    path = folder / "t.jsonl"
    run.save(path)
    return path


def test_a_target_runs_golden_cases_are_known(tmp_path: Path) -> None:
    path = target_run(tmp_path, ["a", "c"], ["a", "b", "c"])
    gate = gate_from_files(checks(tmp_path, ["a", "b"], "score"), path)
    assert gate.exit_code == 2
    assert gate.results[0].message.startswith(
        f"not judged: run 't' ({path}) lacks case 'b' of the check's scope;")
    with pytest.raises(CheckError, match="not among the 3 known cases: z"):
        gate_from_files(checks(tmp_path, ["a", "z"], "score"), path)


def test_a_golden_case_a_complete_run_has_no_row_for_is_no_typo(tmp_path: Path) -> None:
    """A golden case the run's header lists without a row, where the header's case count
    says no row is missing (as for a run a sequential rule stopped, which counts the
    cases it evaluated), is the run's lack, not a typo of the scope."""
    path = target_run(tmp_path, ["a", "c"], ["a", "b", "c"])
    text = path.read_text(encoding="utf-8").replace('"n_cases": 3', '"n_cases": 2', 1)
    path.write_text(text, encoding="utf-8")
    gate = gate_from_files(checks(tmp_path, ["a", "b"], "score"), path)
    assert gate.exit_code == 2
    assert "lacks case 'b'" in gate.results[0].message
