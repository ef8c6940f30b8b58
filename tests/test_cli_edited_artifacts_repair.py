"""An artifact edited by hand (its trailer's digest or row count no longer matches) gets
a message saying what to do, and the command it gives works: run as printed, it makes the
file whole again and the gate judges it; saving the edited file again is not offered as a
repair (it would vouch for the edit). Files of only white space say so (not "empty")."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
DATA = Path(__file__).resolve().parents[1] / "plugins" / "evalkit-retrieval" / "tests" / "data"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture()
def edited(tmp_path: Path) -> Path:
    proc = cli("eval", str(DATA / "results.test"), "--qrels", str(DATA / "qrels.test"), "-m",
               "ap", "--save", "a.jsonl", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "a.jsonl").read_text()
    assert '"id": "301", "metrics": {"ap": 0.0324' in text
    (tmp_path / "a.jsonl").write_text(text.replace('"ap": 0.0324', '"ap": 0.9324', 1))
    (tmp_path / "checks.yaml").write_text(
        "checks:\n  - id: ap\n    metric: ap\n    op: '>='\n    threshold: 0.1\n")
    return tmp_path


def test_the_message_says_what_to_do_and_its_command_works(edited: Path) -> None:
    gate = cli("gate", "-c", "checks.yaml", "-r", "a.jsonl", cwd=edited)
    assert gate.returncode == 2 and "edited or damaged" in gate.stdout + gate.stderr
    said = gate.stdout + gate.stderr
    assert ("Write it again from its source (evalkit eval RUN --qrels QRELS --save FILE "
            "--overwrite, evalkit run --overwrite") in said
    # saving the edited file again is named for what it does, not offered as the repair
    assert ("Saving the edited file again (RunResult.save) would not repair it: it writes "
            "a new trailer over whatever the file now holds, vouching for the edit") in said
    assert "python -c" not in said
    # the command it gives, run as printed with this run's files, makes the file whole
    made = cli("eval", str(DATA / "results.test"), "--qrels", str(DATA / "qrels.test"),
               "-m", "ap", "--save", "a.jsonl", "--overwrite", cwd=edited)
    assert made.returncode == 0, made.stderr
    again = cli("gate", "-c", "checks.yaml", "-r", "a.jsonl", cwd=edited)
    assert again.returncode == 0, again.stdout + again.stderr
    # the edit is gone: the mean AP is trec_eval's again
    ev = cli("eval", "a.jsonl", "--format", "json", cwd=edited)
    mean = float(re.search(r'"ap": ([0-9.]+)', ev.stdout).group(1))  # type: ignore[union-attr]
    map_line = next(ln for ln in (DATA / "out.test").read_text().splitlines()
                    if ln.startswith("map "))
    assert abs(mean - float(map_line.split("\t")[2])) < 1e-3


def test_a_lost_row_says_what_to_do(edited: Path) -> None:
    lines = (edited / "a.jsonl").read_text().splitlines(keepends=True)
    (edited / "a.jsonl").write_text("".join(lines[:2] + lines[3:]))  # row 2 of 3 dropped
    proc = cli("eval", "a.jsonl", cwd=edited)
    assert "the trailer records 3 row(s) but the file holds 2" in proc.stderr
    assert "Write it again from its source" in proc.stderr


def test_white_space_only_is_named_as_such(tmp_path: Path) -> None:
    (tmp_path / "w.jsonl").write_text("  \n\t\n")
    for args in (["eval", "w.jsonl"], ["baseline", "show", "w.jsonl"]):
        proc = cli(*args, cwd=tmp_path)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1
        assert "a file of only white space" in proc.stderr
