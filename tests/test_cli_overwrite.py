"""An existing artifact is never replaced without a flag: `eval --save`, `rescore -o`
(and, already, `run` and `baseline promote --to`) refuse an existing regular file unless
given --overwrite (baseline promote: --force, or its alias --overwrite). /dev/null and other
devices are written directly and need no flag. Real subprocesses of the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
DATA = Path(__file__).resolve().parents[1] / "plugins" / "evalkit-retrieval" / "tests" / "data"
RUN, QRELS = DATA / "results.test", DATA / "qrels.test"


def cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_eval_save_refuses_an_existing_artifact(tmp_path: Path) -> None:
    save = tmp_path / "paid.jsonl"
    save.write_text("precious\n")
    proc = cli(["eval", str(RUN), "--qrels", str(QRELS), "-m", "ap", "--save", str(save)],
               tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == (f"error: --save {save}: already exists; pass --overwrite to "
                           "replace it, or choose another path\n")
    assert save.read_text() == "precious\n"
    proc = cli(["eval", str(RUN), "--qrels", str(QRELS), "-m", "ap", "--save", str(save),
                "--overwrite"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert save.read_text().startswith('{"type": "header"') or '"header"' in \
        save.read_text().splitlines()[0]
    proc = cli(["eval", str(RUN), "--qrels", str(QRELS), "-m", "ap", "--save", "/dev/null"],
               tmp_path)
    assert proc.returncode == 0, proc.stderr


def _target_run(folder: Path) -> Path:
    (folder / "tgt.py").write_text(
        "from evalkit.data.targets import CallableTarget\n"
        "def make():\n    return CallableTarget(lambda case: ['d1'], name='t')\n")
    (folder / "g.jsonl").write_text('{"id": "q1", "query": "x", "expected": ["d1"]}\n')
    (folder / "evalkit.yaml").write_text(
        "target:\n  factory: tgt:make\ngoldens: g.jsonl\nmetrics: [recall@1]\n"
        "output: out.jsonl\n")
    proc = cli(["run", "--no-progress"], folder)
    assert proc.returncode == 0, proc.stderr
    return folder / "out.jsonl"


def test_rescore_output_refuses_an_existing_file(tmp_path: Path) -> None:
    run = _target_run(tmp_path)
    other = tmp_path / "other.jsonl"
    other.write_text("precious\n")
    proc = cli(["rescore", str(run), "-m", "recall@1", "-o", str(other)], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (f"error: --output {other}: already exists; pass --overwrite to "
                           "replace it, or choose another path\n")
    assert other.read_text() == "precious\n"
    assert cli(["rescore", str(run), "-m", "recall@1", "-o", str(other), "--overwrite"],
               tmp_path).returncode == 0
    assert '"header"' in other.read_text().splitlines()[0]
    # RUN itself (the default destination, or named with -o) needs no flag
    assert cli(["rescore", str(run), "-m", "recall@1", "-o", str(run)], tmp_path
               ).returncode == 0
    assert cli(["rescore", str(run), "-m", "recall@1", "-o", "/dev/null"], tmp_path
               ).returncode == 0


def test_baseline_promote_takes_overwrite_as_force(tmp_path: Path) -> None:
    art = tmp_path / "a.jsonl"
    assert cli(["eval", str(RUN), "--qrels", str(QRELS), "-m", "ap", "--save", str(art)],
               tmp_path).returncode == 0
    to = tmp_path / "b.jsonl"
    assert cli(["baseline", "promote", str(art), "--to", str(to)], tmp_path).returncode == 0
    assert cli(["baseline", "promote", str(art), "--to", str(to)], tmp_path).returncode == 2
    proc = cli(["baseline", "promote", str(art), "--to", str(to), "--overwrite"], tmp_path)
    assert proc.returncode == 0, proc.stderr
