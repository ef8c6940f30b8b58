"""``evalkit.io.interrupts``: Ctrl-C while a command writes its outputs, with real
``evalkit`` children and a real SIGINT. The interrupt's line names the reports written
before it and those not written; a JSON document on standard output is whole (the same
bytes as an uninterrupted command's) or absent, never cut.

Every wait ends on an event the test sees (a report file on disk, the first byte of
standard output), never on a delay: a report that is a named pipe nobody opens holds the
child before it, and a document far larger than a pipe's buffer, of which the test reads
one byte, holds the child in the middle of writing it.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse
from evalkit.io.interrupts import Outputs, OutputsInterrupted, held_interrupt, write_whole
from evalkit.testing.child_runs import EVALKIT_COMMAND, wait_until

runner = CliRunner()
#: queries per run: the comparison's JSON document is about 1.6 MB, far more than a
#: pipe holds (64 KiB on Linux), so its writer blocks until the test reads
QUERIES = 20_000
METRIC = "correctness"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("runs")
    paths = []
    for name, shift in (("a", 0.0), ("b", 0.1)):
        rows = [CaseResult(f"c{i}", TargetResponse(text="x"),
                           {METRIC: (i * 7919 % 101) / 101 + shift}) for i in range(QUERIES)]
        RunResult(name, rows, {"kind": "target"}).save(folder / f"{name}.jsonl")
        paths.append(folder / f"{name}.jsonl")
    return paths[0], paths[1]


def spawn(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([*EVALKIT_COMMAND, *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0)


def blocked_on_fifo(proc: subprocess.Popen[bytes]) -> Callable[[], bool]:
    """Whether the child waits in ``open`` of a FIFO (Linux names that wait
    ``wait_for_partner``). A signal sent any earlier may land between Python's last
    check of its signals and the blocking call, and then waits with it forever; sent
    while the child is blocked, it interrupts the call."""

    def waiting() -> bool:
        try:
            wchan = Path(f"/proc/{proc.pid}/wchan").read_text()
        except OSError:
            return False
        return wchan == "wait_for_partner"

    return waiting


def command_lines(tmp_path: Path, runs: tuple[Path, Path]) -> dict[str, list[str]]:
    a, b = runs
    checks = tmp_path / "checks.yaml"
    checks.write_text(f"checks:\n  - id: floor\n    metric: {METRIC}\n    op: '>='\n"
                      "    threshold: 0\n")
    return {"compare": ["compare", str(a), str(b), "-B", "100"],
            "gate": ["gate", "--checks", str(checks), "--run", str(b)]}


@pytest.mark.parametrize("command", ["compare", "gate"])
def test_an_interrupt_names_the_reports_written_and_those_not(
        tmp_path: Path, runs: tuple[Path, Path], command: str) -> None:
    args = command_lines(tmp_path, runs)[command]
    done, held, later = tmp_path / "done.md", tmp_path / "held.xml", tmp_path / "later.json"
    os.mkfifo(held)  # opened for writing, it waits for a reader that never comes
    proc = spawn([*args, "--report", f"markdown:{done}", "--report", f"junit:{held}",
                  "--report", f"json:{later}"], tmp_path)
    wait_until(done.exists, proc, "the first report was not written", limit=120)
    wait_until(blocked_on_fifo(proc), proc, "the child did not open the FIFO", limit=120)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.decode().splitlines()[-1:] == [
        f"interrupted; written: --report markdown:{done}; not written: --report "
        f"junit:{held}, --report json:{later}"]
    assert not later.exists()
    # the report kept is whole: the one an uninterrupted command writes
    whole = tmp_path / "whole.md"
    res = runner.invoke(app, [*args, "--report", f"markdown:{whole}"])
    assert res.exit_code == 0, res.output
    assert done.read_text() == whole.read_text()


def test_gate_json_is_named_as_the_document_on_standard_output(
        tmp_path: Path, runs: tuple[Path, Path]) -> None:
    done, held = tmp_path / "done.md", tmp_path / "held.xml"
    os.mkfifo(held)
    proc = spawn([*command_lines(tmp_path, runs)["gate"], "--json", "--report",
                  f"markdown:{done}", "--report", f"junit:{held}"], tmp_path)
    wait_until(done.exists, proc, "the first report was not written", limit=120)
    wait_until(blocked_on_fifo(proc), proc, "the child did not open the FIFO", limit=120)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and out == b"", (out, err)
    assert err.decode().splitlines()[-1] == (
        f"interrupted; written: --report markdown:{done}; not written: --report "
        f"junit:{held}, the JSON document on standard output")


@pytest.mark.parametrize("how", [["-f", "json"], ["--report", "json:-"]])
def test_a_json_document_interrupted_on_standard_output_is_whole(
        tmp_path: Path, runs: tuple[Path, Path], how: list[str]) -> None:
    args = [*command_lines(tmp_path, runs)["compare"], *how]
    first, rest, whole, err = interrupted_document(args, tmp_path)
    assert first + rest == whole  # byte for byte: the uninterrupted command's document
    doc = json.loads(whole)
    if how[0] == "-f":  # Comparison.to_json; else the report (kind "compare")
        assert len(doc["query_ids"]) == QUERIES
    else:
        assert doc["kind"] == "compare"
    name = "the JSON document on standard output" if how[0] == "-f" else "--report json:-"
    assert err.splitlines()[-1] == f"interrupted; written: {name}"


def test_eval_json_interrupted_on_standard_output_is_whole(
        tmp_path: Path, runs: tuple[Path, Path]) -> None:
    first, rest, whole, err = interrupted_document(
        ["eval", str(runs[1]), "-f", "json", "--per-query"], tmp_path)
    assert first + rest == whole
    assert len(json.loads(whole)["per_query"]) == QUERIES
    assert err.splitlines()[-1] == "interrupted"


def interrupted_document(args: list[str], cwd: Path) -> tuple[bytes, bytes, bytes, str]:
    """``(the first byte, the rest, the uninterrupted output, stderr)`` of ``args``
    interrupted by SIGINT once its document has begun on standard output."""
    proc = spawn(args, cwd)
    assert proc.stdout is not None
    first = proc.stdout.read(1)  # the document has begun; the pipe then fills up
    assert first == b"{", proc.communicate()
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    whole = subprocess.run([*EVALKIT_COMMAND, *args], cwd=cwd, capture_output=True,
                           check=True).stdout
    return first, rest, whole, err.decode()


# ---------------------------------------------------------------- in this process
def test_a_document_interrupted_before_it_is_whole_writes_nothing() -> None:
    stream = io.StringIO()

    def fill(file: io.StringIO) -> None:
        file.write('{"half": ')
        raise KeyboardInterrupt

    outputs = Outputs(["--report markdown:a.md", "doc"])
    outputs.done("--report markdown:a.md")
    with pytest.raises(OutputsInterrupted) as info, outputs:
        write_whole(stream, fill, "doc", outputs)  # type: ignore[arg-type]
    assert stream.getvalue() == ""
    assert str(info.value) == ("interrupted; written: --report markdown:a.md; "
                               "not written: doc")


def test_a_first_ctrl_c_is_held_until_the_block_ends_and_a_second_is_not() -> None:
    reached = []
    with pytest.raises(KeyboardInterrupt), held_interrupt():
        os.kill(os.getpid(), signal.SIGINT)  # handled before the next line runs
        reached.append("after the first")
    assert reached == ["after the first"]
    with pytest.raises(KeyboardInterrupt), held_interrupt():
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
        reached.append("after the second")
    assert reached == ["after the first"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
