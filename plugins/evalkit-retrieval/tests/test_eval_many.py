"""``evalkit eval RUN... --save-dir OUT`` (evalkit_retrieval.eval_many): every artifact
path checked before any run is scored, each artifact written as soon as its run is
scored, and Ctrl-C keeps (and names) those written."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from evalkit_retrieval import eval_cmd
from evalkit_retrieval.eval_many import eval_many, run_name
from typer.testing import CliRunner

from evalkit.cli.app import app

DATA = Path(__file__).parent / "data"


@pytest.fixture()
def runs(tmp_path: Path) -> Path:
    folder = tmp_path / "runs"
    folder.mkdir()
    for tag in ("one", "two", "three"):
        (folder / f"{tag}.txt").write_text(
            f"301 Q0 FBIS3-10082 1 2.0 x\n# comment\n301 Q0 FR940104-0-00001 2 1.0 {tag}\n\n"
            "# a trailing comment\n", encoding="utf-8")
    return folder


def test_run_names_are_read_without_scoring(runs: Path, tmp_path: Path) -> None:
    assert run_name(runs / "two.txt") == "two"  # the last data line's tag
    packed = tmp_path / "p.txt.gz"
    packed.write_bytes(gzip.compress((runs / "three.txt").read_bytes()))
    assert run_name(packed) == "three"
    (tmp_path / "junk.txt").write_bytes(b"\xff\xfe nothing")
    assert run_name(tmp_path / "junk.txt") == "junk"


def test_outputs_are_checked_before_any_run_is_scored(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = CliRunner().invoke(app, ["eval", str(runs), "--qrels", str(DATA / "qrels.test"),
                                     "-m", "ap", "--save-dir", str(out)])
    assert first.exit_code == 0, first.stderr
    assert sorted(p.name for p in out.iterdir()) == ["one.jsonl", "three.jsonl", "two.jsonl"]
    again = CliRunner().invoke(app, ["eval", str(runs), "--qrels", str(DATA / "qrels.test"),
                                     "-m", "ap", "--save-dir", str(out)])
    assert again.exit_code == 2
    assert "--overwrite" in again.stderr and "one.jsonl" in again.stderr
    assert "queries" not in again.stderr and again.stdout == ""  # nothing was scored
    forced = CliRunner().invoke(app, ["eval", str(runs), "--qrels", str(DATA / "qrels.test"),
                                      "-m", "ap", "--save-dir", str(out), "--overwrite"])
    assert forced.exit_code == 0, forced.stderr


def test_an_interrupt_keeps_the_artifacts_written(runs: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C during the second run: the first run's artifact is on disk, and the note
    names it; the interrupt goes on (the command line exits 130 on it)."""
    out = tmp_path / "out"
    calls: list[Path] = []

    def score(path: Path, *args: Any, **kwargs: Any) -> Any:
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return eval_cmd._score(path, *args, **kwargs)

    with pytest.raises(KeyboardInterrupt):
        eval_many([runs], DATA / "qrels.test", ["ap"], "table", {}, relevance_level=None,
                  missing=None, depth=None, save_dir=out, overwrite=False,
                  allow_incomplete=False, score=score)
    assert [p.name for p in out.iterdir()] == ["one.jsonl"]
    err = capsys.readouterr().err
    assert f"interrupted after 1 of 3 runs: 1 saved in {out} (one.jsonl)" in err


def test_two_runs_on_one_file_are_refused_before_scoring(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "a.txt").write_text("301 Q0 d 1 1.0 x/y\n", encoding="utf-8")
    (folder / "b.txt").write_text("301 Q0 d 1 1.0 x_y\n", encoding="utf-8")
    done = CliRunner().invoke(app, ["eval", str(folder), "--qrels", str(DATA / "qrels.test"),
                                    "-m", "ap", "--save-dir", str(tmp_path / "out")])
    assert done.exit_code == 2
    assert "would both be saved as" in done.stderr and "queries" not in done.stderr


def test_a_save_dir_that_is_a_file_is_named_before_any_run_is_scored(runs: Path,
                                                                     tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("keep")
    for target, said in [(afile, "is a file; --save-dir names a folder"),
                         (afile / "sub", "the folder cannot be made (Not a directory)")]:
        out = CliRunner().invoke(app, ["eval", str(runs), "--qrels", str(DATA / "qrels.test"),
                                       "-m", "ap", "--save-dir", str(target)])
        assert out.exit_code == 2 and f"--save-dir {target}: {said}" in out.stderr
        assert out.stdout == "" and "Traceback" not in out.output
    assert afile.read_text() == "keep"


@pytest.fixture()
def lacking(tmp_path: Path) -> Path:
    """Qrels judging q1 and q2; ``full`` ranks both, ``part`` only q1 (and an unjudged q9)."""
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "full").write_text("q1 Q0 d1 1 1.0 full\nq2 Q0 d2 1 1.0 full\n")
    (tmp_path / "part").write_text("q1 Q0 d1 1 1.0 part\nq9 Q0 x 1 1.0 part\n")
    return tmp_path


def test_several_runs_say_which_judged_queries_each_lacks(lacking: Path) -> None:
    args = ["eval", str(lacking / "full"), str(lacking / "part"), "--qrels",
            str(lacking / "qrels"), "-m", "ap"]
    text = CliRunner().invoke(app, args)
    assert text.exit_code == 0, text.stderr
    told = [ln for ln in text.stdout.splitlines() if "missing from the run" in ln]
    assert told == ["part: 2 queries evaluated; 1 run topic without judgments ignored; "
                    "1 judged query missing from the run (scored 0)"]
    as_json = CliRunner().invoke(app, [*args, "--json", "-m", "num_rel_ret"])
    assert as_json.exit_code == 0, as_json.stderr
    full, part = json.loads(as_json.stdout)
    single = json.loads(CliRunner().invoke(
        app, ["eval", str(lacking / "part"), "--qrels", str(lacking / "qrels"), "-m", "ap",
              "-m", "num_rel_ret", "--json"]).stdout)
    assert set(part) == {*single, "queries"}  # every field of the one-run document
    assert (part["missing_count"], part["missing_ids"]) == (1, ["q2"])
    assert (part["unjudged_ignored"], part["unjudged_ignored_ids"]) == (1, ["q9"])
    assert (full["missing_count"], full["queries"]) == (0, 2)
    assert part["counts"] == {"num_rel_ret": 1} == {
        k: v for k, v in single["counts"].items()}


def test_several_runs_refused_print_no_empty_table(lacking: Path) -> None:
    (lacking / "part2").write_bytes((lacking / "part").read_bytes())
    proc = CliRunner().invoke(app, ["eval", str(lacking / "part"), str(lacking / "part2"),
                                    "--qrels", str(lacking / "qrels"), "-m", "ap",
                                    "--missing", "refuse"])
    assert proc.exit_code == 2
    assert proc.stdout == ""  # no header of an empty table
    assert proc.stderr.count("judged query is missing from the run ('q2')") == 2


def test_the_run_name_of_an_artifact_is_read_to_its_newline(tmp_path: Path) -> None:
    p = tmp_path / "a.jsonl"
    p.write_bytes(b'{"type":\r"header", "name": "sys\xe2\x80\xa8a"}\n')  # CR: JSON space
    assert run_name(p) == json.loads(p.read_bytes().split(b"\n")[0])["name"] == "sys\u2028a"
