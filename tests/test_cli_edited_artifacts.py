"""A run artifact edited by hand after it was written (its trailer's sha256 no longer
matches) is refused by `evalkit eval` and `evalkit baseline show` as by gate, compare and
promote: exit 2, one line, the same message and advice to write it again; --allow-incomplete
reads it anyway. Real subprocesses of the CLI on a file edited for real."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
DATA = Path(__file__).resolve().parents[1] / "plugins" / "evalkit-retrieval" / "tests" / "data"
ALTERED = "the content differs from what was written (the trailer's sha256 does not match)"


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture
def edited(tmp_path: Path) -> Path:
    art = tmp_path / "a.jsonl"
    proc = cli(["eval", str(DATA / "results.test"), "--qrels", str(DATA / "qrels.test"),
                "-m", "ap", "--save", str(art)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = art.read_text().splitlines(keepends=True)
    assert '"ap": ' in lines[1]
    head, rest = lines[1].split('"ap": ', 1)
    lines[1] = head + '"ap": 0.999' + rest[rest.index(next(c for c in rest if c in ",}")):]
    art.write_text("".join(lines))
    return art


@pytest.mark.parametrize("command", [["eval"], ["baseline", "show"]])
def test_an_edited_artifact_is_refused(edited: Path, command: list[str]) -> None:
    proc = cli([*command, str(edited)], edited.parent)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and ALTERED in proc.stderr
    assert "Saving the edited file again (RunResult.save) would not repair it" in proc.stderr
    assert proc.stderr.rstrip().endswith("Pass --allow-incomplete to read it anyway")
    # gate gives the same problem and advice
    gate = cli(["compare", str(edited), str(edited)], edited.parent)
    assert gate.returncode == 2 and ALTERED in gate.stderr


def test_allow_incomplete_reads_it_with_the_warning(edited: Path) -> None:
    proc = cli(["eval", str(edited), "--allow-incomplete"], edited.parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("ap ")
    assert proc.stderr.startswith("warning: ") and ALTERED in proc.stderr
    assert cli(["baseline", "show", str(edited), "--allow-incomplete"],
               edited.parent).returncode == 0


def test_rescore_of_an_altered_target_run_says_why_it_stays_incomplete(tmp_path: Path) -> None:
    (tmp_path / "tgt.py").write_text(
        "from evalkit.data.targets import CallableTarget\n"
        "def make():\n    return CallableTarget(lambda case: ['d1'], name='t')\n")
    (tmp_path / "g.jsonl").write_text('{"id": "q1", "query": "x", "expected": ["d1"]}\n')
    (tmp_path / "evalkit.yaml").write_text(
        "target:\n  factory: tgt:make\ngoldens: g.jsonl\nmetrics: [recall@1]\n"
        "output: out.jsonl\n")
    assert cli(["run", "--no-progress"], tmp_path).returncode == 0
    out = tmp_path / "out.jsonl"
    lines = out.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('"d1"', '"d2"')
    out.write_text("".join(lines))
    proc = cli(["rescore", "out.jsonl", "-m", "recall@1", "-o", "r.jsonl"], tmp_path)
    assert proc.returncode == 1  # the rescored run stays incomplete (the library's rule)
    assert proc.stderr.startswith("warning: run out.jsonl is incomplete: ")
    assert ALTERED in proc.stderr and "Traceback" not in proc.stderr
