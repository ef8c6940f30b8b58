"""``--json`` and ``--format`` agree across commands: ``evalkit gate --json`` prints the
verdict as JSON (the json report) on standard output with the verdict lines on standard
error, whatever the exit code; ``evalkit compare`` and ``evalkit eval`` take ``--format
json`` as ``--json``, and ``--json`` with another ``--format`` is a one-line error (with
its error document on standard output). A failing command with ``--json`` prints
``{"status": "error", ...}`` carrying its ``error:`` line (every command:
tests/test_cli_json_exit.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
DATA = Path(__file__).resolve().parents[1] / "plugins" / "evalkit-retrieval" / "tests" / "data"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("json")
    for run, name in (("results.test", "a"), ("results.trunc", "b")):
        proc = cli("eval", str(DATA / run), "--qrels", str(DATA / "qrels.test"), "-m", "ap",
                   "--save", f"{name}.jsonl", "--name", name, cwd=here)
        assert proc.returncode == 0, proc.stderr
    (here / "checks.yaml").write_text(
        "checks:\n  - id: ap-floor\n    metric: ap\n    op: '>='\n    threshold: 0.1\n"
        "  - id: ap-high\n    metric: ap\n    op: '>='\n    threshold: 0.5\n")
    return here


def test_gate_json_prints_every_check_and_the_exit_code(folder: Path) -> None:
    proc = cli("gate", "-c", "checks.yaml", "-r", "a.jsonl", "--json", cwd=folder)
    assert proc.returncode == 1  # ap-high fails: the mean AP is 0.1785 (out.test: map)
    out = json.loads(proc.stdout)
    assert out["kind"] == "gate" and out["exit_code"] == 1 and out["status"] == "failed"
    rows = {r["name"]: r for r in out["rows"]}
    assert rows["ap-floor"]["status"] == "pass" and rows["ap-high"]["status"] == "fail"
    map_line = next(ln for ln in (DATA / "out.test").read_text().splitlines()
                    if ln.startswith("map "))
    assert round(rows["ap-floor"]["value"], 4) == float(map_line.split("\t")[2])
    assert rows["ap-floor"]["coverage"] == "3/3 cases"
    assert "ap-high: fail" in proc.stderr  # the verdict lines moved to stderr


def test_gate_json_of_an_incomplete_run_is_json_too(folder: Path) -> None:
    lines = (folder / "a.jsonl").read_text().splitlines(keepends=True)
    (folder / "cut.jsonl").write_text("".join(lines[:2]))  # the header and one row
    proc = cli("gate", "-c", "checks.yaml", "-r", "cut.jsonl", "--json", cwd=folder)
    assert proc.returncode == 2
    out = json.loads(proc.stdout)
    assert out["exit_code"] == 2 and out["status"] == "error"


@pytest.mark.parametrize("args", [
    ["eval", "a.jsonl", "--json", "--format", "table"],
    ["eval", "a.jsonl", "--json", "--format", "trec"],
    ["compare", "a.jsonl", "b.jsonl", "--allow-incomplete", "--json", "--format", "table"],
])
def test_json_with_another_format_is_refused(folder: Path, args: list[str]) -> None:
    proc = cli(*args, cwd=folder)
    assert proc.returncode == 2
    assert "--json is --format json; it contradicts --format" in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert json.loads(proc.stdout) == {"status": "error", "exit_code": 2,
                                       "messages": [proc.stderr.strip()]}


@pytest.mark.parametrize("args,says", [
    (["eval", "nofile", "--qrels", str(DATA / "qrels.test")], "run nofile: no such file"),
    (["eval", "nan.run", "--qrels", str(DATA / "qrels.test")], "is not a number (NaN)"),
    (["eval", str(DATA / "results.test"), "--qrels", str(DATA / "qrels.test"),
      "-m", "nosuch"], "unknown metric 'nosuch'"),
    (["compare", "a.jsonl", "nofile.jsonl"], "run nofile.jsonl: no such file"),
    (["compare", "a.jsonl", "b.jsonl", "-m", "nosuchmetric"], "has no nosuchmetric"),
    (["fuse", str(DATA / "results.test"), "nofile", "--method", "rrf"],
     "missing option -o/--output"),
    (["pairwise", "a.jsonl", "--judge", "correctness"], "name at least two runs"),
])
def test_a_failing_json_command_prints_its_error_as_json(
        folder: Path, args: list[str], says: str) -> None:
    (folder / "nan.run").write_text("q1 Q0 d1 1 nan tag\n")
    proc = cli(*args, "--json", cwd=folder)
    assert proc.returncode == 2
    document = json.loads(proc.stdout)
    assert document["status"] == "error" and document["exit_code"] == 2
    assert says in document["messages"][0] and document["messages"][0] in proc.stderr


def test_format_json_is_json(folder: Path) -> None:
    both = [cli("compare", "a.jsonl", "b.jsonl", "--allow-incomplete", "-B", "200", flag,
                *rest, cwd=folder) for flag, *rest in (["--json"], ["--format", "json"],
                                                      ["--json", "--format", "json"])]
    assert all(p.returncode == 0 for p in both)
    assert both[0].stdout == both[1].stdout == both[2].stdout
    assert json.loads(both[0].stdout)["type"] == "comparison"
    table = cli("compare", "a.jsonl", "b.jsonl", "--allow-incomplete", "-B", "200",
                "--format", "table", cwd=folder)
    assert table.returncode == 0 and table.stdout.startswith("baseline a (a.jsonl)")
    assert json.loads(cli("eval", "a.jsonl", "--format", "json", cwd=folder).stdout)[
        "run"] == "a"


def test_compare_json_and_its_json_report_open_alike_and_nest(folder: Path) -> None:
    """``--json`` prints the comparison's document; ``--report json:-`` the report every
    command writes (as ``gate --json``), typed alike and holding that document whole."""
    args = ["compare", "a.jsonl", "b.jsonl", "--allow-incomplete", "-B", "200"]
    doc = json.loads(cli(*args, "--json", cwd=folder).stdout)
    report = json.loads(cli(*args, "--report", "json:-", cwd=folder).stdout)
    gate = json.loads(cli("gate", "-c", "checks.yaml", "-r", "a.jsonl", "--json",
                          cwd=folder).stdout)
    assert (doc["type"], doc["schema_version"]) == ("comparison", 1)
    assert (report["type"], report["schema_version"], report["kind"]) == (
        "report", 1, "compare")
    assert (gate["type"], gate["schema_version"], gate["kind"]) == ("report", 1, "gate")
    assert report["data"] == doc
    help_text = cli("compare", "--help", cwd=folder).stdout
    assert "'type': 'report'" in " ".join(help_text.split())
