"""`evalkit ... > /dev/full`: every way a command writes standard output (click's echo,
rich tables, sys.stdout.write of --report json:-, typer's --help, the last flush) ends with
`error: cannot write to standard output: No space left on device`, exit 2, no traceback;
a closed pipe still exits 141 quietly. Real subprocesses with /dev/full as stdout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
DATA = Path(__file__).resolve().parents[1] / "plugins" / "evalkit-retrieval" / "tests" / "data"
RUN, QRELS = str(DATA / "results.test"), str(DATA / "qrels.test")
FULL = Path("/dev/full")

pytestmark = pytest.mark.skipif(not FULL.exists(), reason="no /dev/full")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("full")
    subprocess.run([*EVALKIT, "eval", RUN, "--qrels", QRELS, "-m", "ap", "--save",
                    "a.jsonl"], cwd=folder, check=True, capture_output=True, timeout=120)
    (folder / "c.yaml").write_text(
        "checks:\n  - id: ap\n    metric: ap\n    op: '>='\n    threshold: 0.1\n")
    return folder


@pytest.mark.parametrize("args", [
    ["eval", RUN, "--qrels", QRELS],
    ["eval", "a.jsonl", "--per-query"],
    ["eval", RUN, "--qrels", QRELS, "--format", "trec"],
    ["eval", "a.jsonl", "--json"],
    ["compare", "a.jsonl", "a.jsonl"],
    ["gate", "-c", "c.yaml", "-r", "a.jsonl", "--report", "json:-"],
    ["plugins", "list"],
    ["schema", "checks"],
    ["--help"],
])
def test_full_stdout_is_named(folder: Path, args: list[str]) -> None:
    with FULL.open("w") as full:
        proc = subprocess.run([*EVALKIT, *args], cwd=folder, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "Errno" not in proc.stderr
    assert proc.stderr.endswith(
        "error: cannot write to standard output: No space left on device\n"), proc.stderr
    assert proc.stderr.count("cannot write to standard output") == 1


def test_closed_pipe_still_exits_141(folder: Path) -> None:
    proc = subprocess.Popen([*EVALKIT, "eval", "a.jsonl", "--per-query"], cwd=folder,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141 and err == ""


def test_normal_output_is_unchanged(folder: Path) -> None:
    proc = subprocess.run([*EVALKIT, "eval", "a.jsonl"], cwd=folder, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("run STANDARD (a.jsonl)\n")


def test_a_lone_surrogate_is_printed_as_its_escape() -> None:
    code = ("from evalkit.cli.stdout import guard_stdout; guard_stdout(); "
            "print('a\\ud800b \\u00e9')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                         env={"PYTHONIOENCODING": "utf-8", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout == "a\\ud800b \u00e9\n".encode()
