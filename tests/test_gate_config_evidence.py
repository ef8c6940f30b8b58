"""`evalkit gate` trusts a run only as far as its origin holds: a run gated through its eval
config (the config's `output`, or `--config` given) must have been made from that config
as it is now (the comparison `evalkit run --resume` makes, worded the same); a header whose
golden-set record was edited is incomplete evidence (the golden file it names, unchanged,
says which cases are missing); a malformed `goldens` record is refused when read, by the
gate and by `baseline promote` alike. Real subprocesses of the CLI on a small project."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.data.artifact import trailer_line

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]

TARGET = '''\
from evalkit import CallableTarget


def make_target(**kwargs):
    def answer(case):
        return ["d1", "d2"] if "x" in case.query else ["d3", "d1"]
    return CallableTarget(answer, name="t1")
'''

CASES = [
    {"id": "q1", "query": "x one", "expected": ["d1"], "tags": ["a"]},
    {"id": "q2", "query": "y two", "expected": ["d1"], "tags": ["b"]},
    {"id": "q3", "query": "x three", "expected": ["d2"], "tags": ["a"]},
    {"id": "q4", "query": "z four", "expected": ["d3"], "tags": ["b"]},
]

CHECKS = "checks:\n  - id: r1\n    metric: recall@1\n    op: '>='\n    threshold: 0.5\n"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def config(folder: Path, name: str, goldens: str, kwargs: str = "") -> Path:
    path = folder / name
    path.write_text(
        f"name: t1\ngoldens: {goldens}\ntarget:\n  factory: tgt:make_target\n"
        + (f"  kwargs: {kwargs}\n" if kwargs else "")
        + "metrics: [recall@1, ndcg@10]\noutput: out/run.jsonl\nchecks: checks.yaml\n",
        encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tgt.py").write_text(TARGET, encoding="utf-8")
    (tmp_path / "checks.yaml").write_text(CHECKS, encoding="utf-8")
    for name, cases in (("goldens.jsonl", CASES), ("small.jsonl", CASES[:2])):
        (tmp_path / name).write_text("".join(json.dumps(c) + "\n" for c in cases),
                                     encoding="utf-8")
    return tmp_path


def test_a_leftover_output_from_another_golden_set_and_target_is_not_gated(
        project: Path) -> None:
    small = config(project, "small.yaml", "small.jsonl")
    big = config(project, "big.yaml", "goldens.jsonl", "{version: v2}")
    assert cli("run", str(small), "--no-progress", cwd=project).returncode == 0
    run = project / "out" / "run.jsonl"
    changes = ("config target_kwargs.version: '<absent>' -> 'v2'; golden set: added 2 "
               "case(s) ('q3', 'q4')")
    expected = (f"incomplete: run 't1' ({run}) was not made from {big} as it is now: "
                f"{changes}; make it again: evalkit run {big} --overwrite")
    # the run is the config's output, or the run is named and --config given
    for args in (["--config", str(big)], ["--config", str(big), "-r", str(run)]):
        gate = cli("gate", *args, "--json", cwd=project)
        assert gate.returncode == 2, gate.stdout + gate.stderr
        assert expected in gate.stderr.splitlines()
        report = json.loads(gate.stdout)
        assert report["exit_code"] == 2
        assert [c["status"] for c in report["rows"]] == ["error"]
    # resume refuses the same artifact for the same reasons, worded the same
    resume = cli("run", str(big), "--resume", "--no-progress", cwd=project)
    assert resume.returncode == 2
    for change in changes.split("; "):
        assert f"  - {change}\n" in resume.stderr
    # the config found from the working directory (`evalkit run && evalkit gate`)
    (project / "evalkit.yaml").write_text(big.read_text(), encoding="utf-8")
    assert cli("gate", cwd=project).returncode == 2
    # the fix it names works: the run made again from the config is gated
    assert cli("run", str(big), "--overwrite", "--no-progress", cwd=project).returncode == 0
    gate = cli("gate", "--config", str(big), cwd=project)
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert gate.stdout.startswith("r1: pass (4/4 cases)")
    # a run named without --config is gated as before (nothing says which config made it)
    assert cli("run", str(small), "--overwrite", "--no-progress",
               cwd=project).returncode == 0
    assert cli("gate", "-c", "checks.yaml", "-r", str(run), cwd=project).returncode == 0


def test_a_case_added_to_the_golden_file_after_the_run(project: Path) -> None:
    cfg = config(project, "g.yaml", "goldens.jsonl")
    assert cli("run", str(cfg), "--no-progress", cwd=project).returncode == 0
    gate = cli("gate", "--config", str(cfg), cwd=project)
    assert gate.returncode == 0 and gate.stdout.startswith("r1: pass (4/4 cases)")
    with (project / "goldens.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "q5", "query": "x five", "expected": ["d9"]}) + "\n")
    gate = cli("gate", "--config", str(cfg), cwd=project)
    assert gate.returncode == 2
    assert gate.stdout.splitlines()[:2] == [
        "r1: error (4/4 cases)", "    not judged: the run is incomplete (see below)"]
    assert (f"incomplete: run 't1' ({project / 'out' / 'run.jsonl'}) was not made from "
            f"{cfg} as it is now: golden set: added 1 case(s) ('q5'); make it again: "
            f"evalkit run {cfg} --overwrite") in gate.stdout.splitlines()
    # with the golden set gone, the gate cannot tell: an error naming it and the config
    (project / "goldens.jsonl").unlink()
    gate = cli("gate", "--config", str(cfg), cwd=project)
    assert (gate.returncode, gate.stdout) == (2, "")
    assert gate.stderr == (f"error: {project / 'goldens.jsonl'}: no such golden file; the "
                           f"gate reads the golden set {cfg} names to check that the run "
                           "was made from it\n")


def _rewrite(path: Path, edit_header: object, keep: set[str]) -> None:
    """Drop the rows whose id is not in ``keep``, edit the header, and write the file
    with a trailer that covers the edit (as saving it again would)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header = edit_header(header)  # type: ignore[operator]
    rows = [ln for ln in lines[1:] if json.loads(ln).get("type") == "row"
            and json.loads(ln)["id"] in keep]
    body = "".join(ln + "\n" for ln in [json.dumps(header), *rows])
    path.write_text(body + trailer_line(body.encode("utf-8"), len(rows)), encoding="utf-8")


def test_a_header_whose_golden_record_was_edited_is_incomplete_evidence(
        project: Path) -> None:
    cfg = config(project, "g.yaml", "goldens.jsonl")
    assert cli("run", str(cfg), "--no-progress", cwd=project).returncode == 0
    run = project / "out" / "run.jsonl"

    def drop_q2(header: dict[str, object]) -> dict[str, object]:
        goldens = dict(header["goldens"])  # type: ignore[call-overload]
        goldens["n_cases"] = 3
        goldens["case_digests"] = {c: d for c, d in goldens["case_digests"].items()
                                   if c != "q2"}
        return {**header, "goldens": goldens}

    _rewrite(run, drop_q2, {"q1", "q3", "q4"})
    # saved again through the library as well: the trailer vouches for the edit
    saved = subprocess.run([sys.executable, "-c", "from evalkit import RunResult as R; "
                            f"R.load({str(run)!r}).save({str(run)!r})"],
                           capture_output=True, text=True, timeout=120)
    assert saved.returncode == 0, saved.stderr
    edited = ("its header's golden-set record was edited: its 3 case digests do not hash "
              "to the sha256 it records")
    gate = cli("gate", "-c", "checks.yaml", "-r", str(run), cwd=project)
    assert gate.returncode == 2
    assert gate.stdout.splitlines()[0] == "r1: error (3/3 cases)"
    assert (f"incomplete: run 't1' ({run}) is incomplete: {edited}, and the golden set "
            f"{project / 'goldens.jsonl'} it names (unchanged since the run: its sha256 "
            "matches) holds 4 cases, 1 of them without a row ('q2')"
            ) in gate.stdout.splitlines()
    promote = cli("baseline", "promote", str(run), "--to", "b.jsonl", cwd=project)
    assert promote.returncode == 2 and edited in promote.stderr
    assert not (project / "b.jsonl").exists()
    # with the golden file gone, the record alone cannot say which cases are missing
    (project / "goldens.jsonl").unlink()
    gate = cli("gate", "-c", "checks.yaml", "-r", str(run), cwd=project)
    assert gate.returncode == 2
    assert (f"incomplete: run 't1' ({run}) is incomplete: {edited}, so the cases the run "
            "should hold are unknown; write the run again (evalkit run --overwrite)"
            ) in gate.stdout.splitlines()


@pytest.mark.parametrize(("record", "said"), [
    ("x", "goldens is 'x', not a record of the golden set (path, sha256, n_cases, "
          "case_digests)"),
    ({"n_cases": -1}, "goldens.n_cases is -1, not a count of cases"),
    ({"n_cases": True}, "goldens.n_cases is True, not a count of cases"),
    ({"case_digests": ["q1"]}, "goldens.case_digests is ['q1'], not a mapping of case id "
                               "to digest"),
    ({"sha256": 7}, "goldens.sha256 is 7, not text"),
    ({"path": ["g.jsonl"]}, "goldens.path is ['g.jsonl'], not text"),
])
def test_a_malformed_goldens_record_is_refused_by_gate_and_promote(
        project: Path, record: object, said: str) -> None:
    cfg = config(project, "g.yaml", "goldens.jsonl")
    assert cli("run", str(cfg), "--no-progress", cwd=project).returncode == 0
    run = project / "out" / "run.jsonl"

    def replace_record(header: dict[str, object]) -> dict[str, object]:
        return {**header, "goldens": record if not isinstance(record, dict)
                else {**header["goldens"], **record}}  # type: ignore[dict-item]

    _rewrite(run, replace_record, {"q1", "q3"})
    message = (f"error: {run}:1: the header's {said}: the header was edited or damaged, "
               "so the cases the run should hold are unknown; write the run again "
               "(evalkit run --overwrite)\n")
    gate = cli("gate", "-c", "checks.yaml", "-r", str(run), cwd=project)
    assert (gate.returncode, gate.stdout, gate.stderr) == (2, "", message)
    promote = cli("baseline", "promote", str(run), "--to", "b.jsonl", cwd=project)
    assert (promote.returncode, promote.stderr) == (2, message)
    assert not (project / "b.jsonl").exists()
