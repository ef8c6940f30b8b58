"""Inputs that are read more than once (runs, qrels, artifacts, baselines, goldens,
topics) refuse ``-``, ``/dev/stdin`` and named pipes with one line saying to save the
data to a file, instead of "no such file", a wrong "empty file" (a pipe read twice), or
blocking on a FIFO. The gate's checks file, read once, still takes ``-`` (see
test_cli_messages)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
DATA = Path(__file__).resolve().parents[1] / "plugins" / "evalkit-retrieval" / "tests" / "data"
RUN, QRELS = DATA / "results.test", DATA / "qrels.test"


def cli(args: list[str], cwd: Path, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*EVALKIT, *args], cwd=cwd, input=stdin, capture_output=True,
                          timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(),
                                       proc.stderr.decode())


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("art")
    proc = cli(["eval", str(RUN), "--qrels", str(QRELS), "-m", "ap", "--save", "a.jsonl"],
               folder)
    assert proc.returncode == 0, proc.stderr
    return folder / "a.jsonl"


def one_line_refusal(proc: subprocess.CompletedProcess[str], says: str) -> None:
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"error: {says}")
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "save it to a file" in proc.stderr or "save the topics to a file" in proc.stderr


@pytest.mark.parametrize(("args", "says"), [
    (["eval", "-", "--qrels", str(QRELS)], "run -: standard input is not read here"),
    (["eval", str(RUN), "--qrels", "-"], "qrels -: standard input is not read here"),
    (["eval", "-"], "run -: standard input is not read here"),
    (["compare", "-", str(RUN), "--qrels", str(QRELS)], "run -: standard input"),
    (["power", "-", str(RUN), "--qrels", str(QRELS)], "run -: standard input"),
    (["rescore", "-", "-m", "ap"], "run -: standard input"),
    (["baseline", "promote", "-", "--to", "b.jsonl"], "run -: standard input"),
    (["baseline", "show", "-"], "baseline -: standard input"),
])
def test_dash_is_refused_clearly(tmp_path: Path, args: list[str], says: str) -> None:
    one_line_refusal(cli(args, tmp_path, stdin=RUN.read_bytes()), says)


def test_dash_for_the_gate_run_and_baseline(tmp_path: Path, artifact: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n  - id: ap\n    metric: ap\n    op: '>='\n    threshold: 0.1\n")
    one_line_refusal(cli(["gate", "-c", str(checks), "-r", "-"], tmp_path,
                         artifact.read_bytes()), "run -: standard input")
    one_line_refusal(cli(["gate", "-c", str(checks), "-r", str(artifact), "-b", "-"],
                         tmp_path, artifact.read_bytes()), "baseline -: standard input")


def test_piped_qrels_on_dev_stdin_are_refused_not_read_as_empty(tmp_path: Path) -> None:
    if not Path("/dev/stdin").exists():
        pytest.skip("no /dev/stdin on this system")
    proc = cli(["eval", str(RUN), "--qrels", "/dev/stdin"], tmp_path, QRELS.read_bytes())
    assert "no data lines" not in proc.stderr  # what reading the pipe twice said
    one_line_refusal(proc, "qrels /dev/stdin: is a pipe or device, not a regular file")


def test_a_named_pipe_is_refused_without_blocking(tmp_path: Path, artifact: Path) -> None:
    fifo = tmp_path / "fifo"
    try:
        os.mkfifo(fifo)
    except (OSError, AttributeError):
        pytest.skip("no named pipes here")
    # nobody writes to the pipe: opening it for reading would block until the timeout
    one_line_refusal(cli(["eval", str(fifo)], tmp_path), f"run {fifo}: is a pipe or device")
    one_line_refusal(cli(["compare", str(artifact), str(artifact), "--topics", str(fifo)],
                         tmp_path), f"topics {fifo}: is a pipe or device")


def test_goldens_and_topics_dash_in_python(tmp_path: Path) -> None:
    from evalkit_retrieval.topics import TopicsError, load_topics

    from evalkit import load_goldens
    from evalkit.data.goldens import GoldenError

    with pytest.raises(GoldenError, match="goldens -: standard input is not read here"):
        load_goldens("-")
    with pytest.raises(TopicsError, match="topics -: standard input is not read here"):
        load_topics("-")
