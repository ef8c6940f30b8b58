"""``evalkit history add/show/diff/report`` and ``--report history:PATH`` of ``evalkit gate``
and ``evalkit run``: what they print, write and exit with."""

from __future__ import annotations

import importlib.util
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evalkit_history.store import History
from typer.testing import CliRunner

import evalkit
from evalkit.cli.app import app

DATA = Path(__file__).parent / "data"
runner = CliRunner()
_modules = itertools.count()


def _fixture_script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "make_history_schema1_cli", DATA / "make_history_schema1.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIX = _fixture_script()
RR_A = np.array([1 / r for r in FIX.RANKS_A])
RR_B = np.array([1 / r for r in FIX.RANKS_B])


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return runner.invoke(app, list(args), env=env)


@pytest.fixture
def artifacts(tmp_path: Path) -> tuple[Path, Path]:
    a = evalkit.evaluate_run(FIX.ranked(FIX.RANKS_A), FIX.QRELS, ["rr"], name="sys-a")
    b = evalkit.evaluate_run(FIX.ranked(FIX.RANKS_B), FIX.QRELS, ["rr"], name="sys-b")
    return a.save(tmp_path / "a.jsonl"), b.save(tmp_path / "b.jsonl")


def test_add_then_show_prints_the_means_and_the_significant_step(
        tmp_path: Path, artifacts: tuple[Path, Path]) -> None:
    db = str(tmp_path / "h.sqlite")
    first = invoke("history", "add", str(artifacts[0]), "--label", "v1", "--db", db)
    assert first.exit_code == 0, first.output
    assert first.output == "added run 'sys-a' as #1 (label v1); the first run of the history\n"
    second = invoke("history", "add", str(artifacts[1]), "--label", "v2", "--commit",
                    "0123456789abcdef", "--db", db)
    assert second.exit_code == 0, second.output
    diff = (RR_B - RR_A).mean()
    assert second.output == (f"added run 'sys-b' as #2 (label v2, commit 0123456789); "
                             f"against #1: rr {diff:+.4f} (better, significant)\n")
    shown = invoke("history", "show", "--db", db)
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0].split() == ["#", "added", "label", "commit", "run", "cases", "rr"]
    assert lines[1].split()[2:] == ["v1", "sys-a", "12", f"{RR_A.mean():.4f}"]
    assert lines[2].split()[2:] == ["v2", "0123456789", "sys-b", "12",
                                    f"{RR_B.mean():.4f}", f"({diff:+.4f}*)"]
    assert lines[3].startswith("(+d): the paired difference from the run before")


def test_add_json_prints_the_run_as_show_json_lists_it(
        tmp_path: Path, artifacts: tuple[Path, Path]) -> None:
    db = str(tmp_path / "h.sqlite")
    assert invoke("history", "add", str(artifacts[0]), "--db", db).exit_code == 0
    added = invoke("history", "add", str(artifacts[1]), "--db", db, "--label", "v2", "--json")
    assert added.exit_code == 0, added.output
    doc = json.loads(added.stdout)
    assert doc["database"] == db and doc["run"]["id"] == 2
    assert doc["run"]["means"]["rr"] == pytest.approx(RR_B.mean())
    shown = json.loads(invoke("history", "show", "--db", db, "--json").stdout)
    assert shown["runs"][1] == doc["run"]


def test_show_json_and_last_and_a_metric_no_run_holds(
        tmp_path: Path, artifacts: tuple[Path, Path]) -> None:
    db = str(tmp_path / "h.sqlite")
    for path in artifacts:
        assert invoke("history", "add", str(path), "--db", db).exit_code == 0
    out = invoke("history", "show", "--db", db, "--json", "--last", "1", "-m", "rr")
    assert out.exit_code == 0, out.output
    (run,) = json.loads(out.output)["runs"]
    assert run["id"] == 2 and run["means"] == {"rr": pytest.approx(RR_B.mean())}
    assert run["step"]["metrics"]["rr"]["diff"] == pytest.approx((RR_B - RR_A).mean())
    bad = invoke("history", "show", "--db", db, "-m", "ndcg@10")
    assert bad.exit_code == 2
    assert "-m ndcg@10: no run of the history holds it (they hold: rr)" in bad.output
    assert "Traceback" not in bad.output


def test_an_incomplete_artifact_is_refused_with_the_fix(tmp_path: Path,
                                                        artifacts: tuple[Path, Path]) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(artifacts[0].read_text().splitlines(keepends=True)[:-1]))
    out = invoke("history", "add", str(cut), "--db", str(tmp_path / "h.sqlite"))
    assert out.exit_code == 2
    assert "cut.jsonl ends without its trailer" in out.output
    assert "then add it" in out.output and "Traceback" not in out.output
    with History(tmp_path / "h.sqlite") as history:
        assert history.runs() == []


def test_a_run_a_sequential_rule_stopped_is_refused_as_partial(tmp_path: Path) -> None:
    # its rows are the cases the rule drew (right there, wrong on the rest of the golden
    # set): recorded, its means would read as the golden set's
    from evalkit.data.cases import GoldenCase
    from evalkit.data.goldens import GoldenSet
    from evalkit.data.targets import CallableTarget
    from evalkit.execute.sequential_run import UntilDecided
    from evalkit.stats.sequential import random_order

    n = 200
    good = {f"c{i:03d}" for i in random_order(n, 0)[:40]}
    cases = GoldenSet(GoldenCase(f"c{i:03d}", "q", relevant=frozenset({"d1"}))
                      for i in range(n))
    base = evalkit.evaluate(CallableTarget(lambda c: ["zz"], name="base"), cases,
                            ["recall@1"], progress=False).save(tmp_path / "base.jsonl")
    stopped = tmp_path / "stopped.jsonl"
    evalkit.evaluate(CallableTarget(lambda c: ["d1"] if c.id in good else ["zz"],
                                    name="cand"), cases, ["recall@1"], progress=False,
                     artifact=stopped, until_decided=UntilDecided(base, "recall@1", seed=0))
    out = invoke("history", "add", str(stopped), "--db", str(tmp_path / "h.sqlite"))
    assert out.exit_code == 2, out.output
    assert "stopped.jsonl) was stopped early by a sequential rule" in out.output
    assert f"of its {n} cases" in out.output and "without --until-decided" in out.output
    assert "Traceback" not in out.output
    with History(tmp_path / "h.sqlite") as history:
        assert history.runs() == []


def test_diff_compares_two_stored_runs_without_their_files(
        tmp_path: Path, artifacts: tuple[Path, Path]) -> None:
    db = str(tmp_path / "h.sqlite")
    for path, label in zip(artifacts, ("v1", "v2"), strict=True):
        assert invoke("history", "add", str(path), "--label", label, "--db", db).exit_code == 0
    for path in artifacts:
        path.unlink()
    out = invoke("history", "diff", "v1", "latest", "--db", db, "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    (row,) = data["comparisons"]
    assert row["metric"] == "rr" and row["candidate"] == "#2 sys-b"
    assert row["diff"] == pytest.approx((RR_B - RR_A).mean())
    table = invoke("history", "diff", "1", "2", "--db", db)
    assert table.exit_code == 0 and "baseline #1 sys-a" in table.output
    # runs named as `history show` lists them: number and name, in messages too
    other = evalkit.evaluate_run(FIX.ranked(FIX.RANKS_B), FIX.QRELS_C, ["rr"], name="sys-b")
    assert invoke("history", "add", str(other.save(tmp_path / "c.jsonl")), "--db",
                  db).exit_code == 0
    unlike = invoke("history", "diff", "2", "3", "--db", db)
    assert unlike.exit_code == 2
    assert "run '#2 sys-b' and run '#3 sys-b' were not evaluated alike" in unlike.output
    missing = invoke("history", "diff", "1", "v9", "--db", db)
    assert missing.exit_code == 2 and "no run has the label, name or commit 'v9'" in (
        missing.output)


def test_report_writes_the_trend_page_and_its_data(tmp_path: Path,
                                                    artifacts: tuple[Path, Path]) -> None:
    pytest.importorskip("vl_convert", reason="the trend page draws with vl-convert-python")
    db = str(tmp_path / "h.sqlite")
    for path in artifacts:
        assert invoke("history", "add", str(path), "--db", db).exit_code == 0
    page, data = tmp_path / "trend.html", tmp_path / "trend.json"
    out = invoke("history", "report", "--db", db, "--report", f"html:{page}",
                 "--report", f"json:{data}")
    assert out.exit_code == 0, out.output
    text = page.read_text()
    assert text.count("<svg") == 1 and "<script" not in text and "<h2>rr</h2>" in text
    assert f"<td>{(RR_B - RR_A).mean():+.4f}</td><td>better</td>" in text
    assert [r["id"] for r in json.loads(data.read_text())["runs"]] == [1, 2]
    wrong = invoke("history", "report", "--db", db, "--report", "markdown:x.md")
    assert wrong.exit_code == 2 and "'markdown' is not a format of the trend" in wrong.output


CHECKS = "checks:\n  - id: rr_floor\n    metric: rr\n    op: '>='\n    threshold: {t}\n"


def test_gate_records_the_gated_run_with_the_label_of_the_environment(
        tmp_path: Path, artifacts: tuple[Path, Path]) -> None:
    db = tmp_path / "h.sqlite"
    checks = tmp_path / "checks.yaml"
    checks.write_text(CHECKS.format(t=0.9))  # sys-a's rr is 0.475: the gate fails
    env = {"EVALKIT_HISTORY_LABEL": "main@7", "GITHUB_SHA": "feedfacecafe",
           "EVALKIT_HISTORY_COMMIT": ""}
    out = invoke("gate", "--checks", str(checks), "--run", str(artifacts[0]),
                 "--report", f"history:{db}", env=env)
    assert out.exit_code == 1, out.output  # a failed check; the run is recorded all the same
    assert f"history: {db}: added run 'sys-a' as #1 (label main@7, commit feedfaceca)" in (
        out.output)
    with History(db) as history:
        (run,) = history.runs()
    assert (run.label, run.commit) == ("main@7", "feedfacecafe")
    assert run.means["rr"] == pytest.approx(RR_A.mean())


def test_history_flag_records_into_the_default_file(
        tmp_path: Path, artifacts: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """``evalkit gate --history`` is ``--report history:.evalkit/history.sqlite``, in the
    working directory."""
    monkeypatch.chdir(tmp_path)
    checks = tmp_path / "checks.yaml"
    checks.write_text(CHECKS.format(t=0.1))  # sys-b's rr passes the floor
    out = invoke("gate", "--checks", str(checks), "--run", str(artifacts[1]), "--history")
    assert out.exit_code == 0, out.output
    assert "history: .evalkit/history.sqlite: added run 'sys-b' as #1" in out.output
    with History(tmp_path / ".evalkit" / "history.sqlite") as history:
        (run,) = history.runs()
    assert run.means["rr"] == pytest.approx(RR_B.mean())


def test_reading_commands_refuse_a_missing_history_and_create_nothing(tmp_path: Path) -> None:
    db = tmp_path / "typo.sqlite"
    report = f"json:{tmp_path / 'r.json'}"
    for args in (("show",), ("diff", "1", "2"), ("report", "--report", report)):
        out = invoke("history", *args, "--db", str(db))
        assert out.exit_code == 2, out.output
        assert f"{db}: no run history there" in out.output and "Traceback" not in out.output
    assert not db.exists()


def test_a_db_under_a_file_names_the_file_and_the_fix(tmp_path: Path,
                                                      artifacts: tuple[Path, Path]) -> None:
    (tmp_path / "afile").write_text("")
    db = tmp_path / "afile" / "h.sqlite"
    out = invoke("history", "add", str(artifacts[0]), "--db", str(db))
    assert out.exit_code == 2, out.output
    assert f"{db}: the history database cannot be created: {tmp_path / 'afile'} is a " \
        "file, not a folder; name a file in a folder with --db" in out.output
    assert "Errno" not in out.output and "Traceback" not in out.output


def test_the_history_reporter_refuses_a_comparison(tmp_path: Path,
                                                    artifacts: tuple[Path, Path]) -> None:
    out = invoke("compare", str(artifacts[0]), str(artifacts[1]), "--report",
                 f"history:{tmp_path / 'h.sqlite'}")
    assert out.exit_code == 2
    assert "history: records the run of evalkit gate or evalkit run, not a Report" in out.output


GOLDENS = "".join(json.dumps({"id": q, "query": q, "expected": ["rel"]}) + "\n"
                  for q in FIX.QIDS)


def test_run_records_the_run_it_wrote_and_refuses_a_rendering_reporter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = f"evalkit_history_targets_{next(_modules)}"
    (tmp_path / "goldens.jsonl").write_text(GOLDENS)
    (tmp_path / f"{module}.py").write_text(
        "from evalkit.data.targets import CallableTarget\n"
        "RANKS = dict(zip(" + repr(FIX.QIDS) + ", " + repr(FIX.RANKS_A) + "))\n"
        "def make():\n"
        "    return CallableTarget(lambda case: [f'n{j}' for j in range(1, RANKS[case.id])]"
        " + ['rel'], name='mine')\n")
    (tmp_path / "evalkit.yaml").write_text(
        f"goldens: goldens.jsonl\ntarget:\n  factory: {module}:make\nmetrics: [rr]\n"
        "aggregates: [latency_p50]\noutput: runs/mine.jsonl\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    refused = invoke("run", "--report", "markdown:x.md")
    assert refused.exit_code == 2 and not (tmp_path / "runs").exists()
    assert "evalkit run only records its result with a reporter that stores runs" in (
        refused.output)
    out = invoke("run", "--report", "history:sqlite:///hist/h.sqlite")
    assert out.exit_code == 0, out.output
    assert "history: sqlite:///hist/h.sqlite: added run 'mine' as #1" in out.output
    with History(tmp_path / "hist" / "h.sqlite") as history:
        (run,) = history.runs()
    assert run.means["rr"] == pytest.approx(RR_A.mean())
    assert set(run.aggregates) == {"latency_p50"}
