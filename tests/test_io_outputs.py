"""Output files that cannot be written: the message names the path asked for (never the
temporary file written beside it), says it cannot be *written* and why, and the command
line refuses such a path before doing any work.

Real failures come from the file system itself: a regular file used as a folder, and on
Linux ``/proc`` (creating a file there fails with "no such file", although the folder
exists) and ``/sys`` (permission denied, even for root). A read-only file system and a
full disk are simulated by making the write raise the error the system would give.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from evalkit.cli.app import app
from evalkit.data.results import QueryResult, RunResult
from evalkit.io.outputs import UnwritableError, check_writable, writing

REPO = Path(__file__).resolve().parents[1]
QRELS = REPO / "examples" / "vaswani" / "data" / "qrels"
RUN = REPO / "examples" / "vaswani" / "data" / "runs" / "run.vaswani.bm25.txt"

runner = CliRunner()


def _refuses_creation(folder: str, code: int) -> bool:
    """Whether creating a file in ``folder`` fails with ``code`` on this machine."""
    probe = Path(folder) / f"evalkit-probe-{os.getpid()}"
    try:
        probe.open("x").close()
    except OSError as exc:
        return exc.errno == code
    probe.unlink()
    return False


needs_proc = pytest.mark.skipif(not _refuses_creation("/proc", errno.ENOENT),
                                reason="needs Linux /proc, where files cannot be created")
needs_sys = pytest.mark.skipif(not _refuses_creation("/sys", errno.EACCES),
                               reason="needs Linux /sys, where creating a file is refused")


def small_run() -> RunResult:
    return RunResult("r", [QueryResult("q1", ["d1"], {"ap": 0.5})])


def one_error(res: Result) -> str:
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


# ------------------------------------------------------------------ the library
@needs_proc
def test_save_names_the_target_not_the_temporary_file() -> None:
    with pytest.raises(OSError) as err:
        small_run().save("/proc/x.jsonl")
    assert isinstance(err.value, UnwritableError)
    assert str(err.value) == ("/proc/x.jsonl: cannot be written: the folder /proc does not "
                              "accept new files")
    assert ".tmp" not in str(err.value) and "no such file" not in str(err.value).lower()


@needs_proc
def test_a_missing_folder_that_cannot_be_created_is_named() -> None:
    with pytest.raises(UnwritableError) as err:
        small_run().save("/proc/evalkit-nope/sub/x.jsonl")
    assert str(err.value) == (
        "/proc/evalkit-nope/sub/x.jsonl: cannot be written: the folder /proc/evalkit-nope "
        "does not exist and cannot be created: the folder /proc does not accept new files")


@needs_sys
def test_permission_denied_names_the_folder() -> None:
    with pytest.raises(UnwritableError) as err:
        small_run().save("/sys/x.jsonl")
    assert str(err.value) == ("/sys/x.jsonl: cannot be written: permission denied: the "
                              "folder /sys is not writable")
    assert err.value.errno == errno.EACCES


def test_a_file_where_a_folder_should_be(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    target = tmp_path / "notes.txt" / "runs" / "x.jsonl"
    with pytest.raises(UnwritableError) as err:
        small_run().save(target)
    assert str(err.value) == (f"{target}: cannot be written: {tmp_path / 'notes.txt'} is a "
                              "file, not a folder")
    with pytest.raises(UnwritableError, match="is a file, not a folder"):
        check_writable(target)


def test_a_broken_link_where_a_folder_should_be(tmp_path: Path) -> None:
    (tmp_path / "runs").symlink_to(tmp_path / "gone")
    target = tmp_path / "runs" / "x.jsonl"
    with pytest.raises(UnwritableError) as err:
        check_writable(target)
    assert str(err.value) == (f"{target}: cannot be written: {tmp_path / 'runs'} is a "
                              "broken symbolic link, not a folder")
    with pytest.raises(UnwritableError, match="broken symbolic link"):
        small_run().save(target)


def test_missing_folders_are_created_and_nothing_is_left_behind(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "x.jsonl"
    check_writable(target)  # accepted: the folders will be created
    assert not (tmp_path / "a").exists()
    small_run().save(target)
    assert RunResult.load(target).scores("ap") == {"q1": 0.5}
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.jsonl"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]  # no probe file remains


@pytest.mark.parametrize(("code", "reason"), [
    (errno.EROFS, "the folder {folder} is on a read-only file system"),
    (errno.ENOSPC, "no space left on the device that holds {folder}"),
    (errno.EACCES, "permission denied: the folder {folder} is not writable"),
])
def test_system_errors_are_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     code: int, reason: str) -> None:
    target = tmp_path / "x.jsonl"
    real_open = Path.open

    def failing_open(self: Path, mode: str = "r", *args: object, **kwargs: object) -> object:
        if "w" in mode:  # the temporary file beside the target
            raise OSError(code, os.strerror(code), str(self))
        return real_open(self, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", failing_open)
    with pytest.raises(UnwritableError) as err:
        small_run().save(target)
    assert str(err.value) == f"{target}: cannot be written: " + reason.format(folder=tmp_path)
    assert not list(tmp_path.iterdir())


def test_writing_translates_only_os_errors(tmp_path: Path) -> None:
    with pytest.raises(UnwritableError, match="is a directory"), writing(tmp_path):
        tmp_path.open("w")
    with pytest.raises(ValueError, match="not an OSError"), writing(tmp_path / "x"):
        raise ValueError("not an OSError")


def test_a_device_is_accepted_as_is() -> None:
    check_writable("/dev/null", in_place=True)


# ------------------------------------------------------------------ the command line
@needs_proc
def test_eval_save_is_refused_before_scoring() -> None:
    res = runner.invoke(app, ["eval", str(RUN), "--qrels", str(QRELS), "--save",
                              "/proc/x.jsonl"])
    assert one_error(res) == ("error: --save /proc/x.jsonl: cannot be written: the folder "
                              "/proc does not accept new files")
    assert res.stdout == ""  # nothing was evaluated


@needs_proc
@pytest.mark.parametrize("verdict", ["pass", "fail"])
def test_gate_refuses_an_unwritable_report_before_any_verdict(
    tmp_path: Path, verdict: str
) -> None:
    run = tmp_path / "run.jsonl"
    assert runner.invoke(app, ["eval", str(RUN), "--qrels", str(QRELS), "-m", "ap",
                               "--save", str(run)]).exit_code == 0
    checks = tmp_path / "checks.yaml"
    threshold = 0.0 if verdict == "pass" else 1.0
    checks.write_text(f"checks:\n  - id: ap\n    metric: ap\n    op: '>='\n"
                      f"    threshold: {threshold}\n")
    res = runner.invoke(app, ["gate", "-c", str(checks), "-r", str(run),
                              "--report", "json:/proc/x.json"])
    assert one_error(res) == ("error: --report json:/proc/x.json: cannot be written: the "
                              "folder /proc does not accept new files")
    assert res.stdout == ""  # no "gate passed ... (exit 0)" that exit 2 contradicts


def test_gate_writes_report_files_before_its_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report that fails after the check (say the disk fills up) is reported as the only
    output: no verdict line is printed that the exit code 2 would contradict."""
    run = tmp_path / "run.jsonl"
    assert runner.invoke(app, ["eval", str(RUN), "--qrels", str(QRELS), "-m", "ap",
                               "--save", str(run)]).exit_code == 0
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n  - id: ap\n    metric: ap\n    op: '>='\n    threshold: 0\n")
    report = tmp_path / "gate.json"

    real_open = Path.open

    def full_disk(self: Path, mode: str = "r", *args: object, **kwargs: object) -> object:
        if "w" in mode:  # the report (written through a temporary file beside it)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
        return real_open(self, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(Path, "open", full_disk)
    res = runner.invoke(app, ["gate", "-c", str(checks), "-r", str(run),
                              "--report", f"json:{report}"])
    assert one_error(res) == (f"error: {report}: cannot be written: no space left on the "
                              f"device that holds {tmp_path}")
    assert res.stdout == ""


@needs_proc
def test_compare_refuses_an_unwritable_report_before_comparing() -> None:
    res = runner.invoke(app, ["compare", str(RUN), str(RUN), "--qrels", str(QRELS),
                              "-m", "ap", "--report", "markdown:/proc/x.md"])
    assert one_error(res) == ("error: --report markdown:/proc/x.md: cannot be written: the "
                              "folder /proc does not accept new files")
    assert res.stdout == ""


def test_report_into_a_folder_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("x")
    res = runner.invoke(app, ["compare", str(RUN), str(RUN), "--qrels", str(QRELS),
                              "-m", "ap", "--report", f"json:{tmp_path / 'out' / 'r.json'}"])
    assert one_error(res) == (f"error: --report json:{tmp_path / 'out' / 'r.json'}: cannot "
                              f"be written: {tmp_path / 'out'} is a file, not a folder")


@needs_proc
def test_baseline_promote_refuses_an_unwritable_destination(tmp_path: Path) -> None:
    run = tmp_path / "run.jsonl"
    assert runner.invoke(app, ["eval", str(RUN), "--qrels", str(QRELS), "-m", "ap",
                               "--save", str(run)]).exit_code == 0
    res = runner.invoke(app, ["baseline", "promote", str(run), "--to",
                              "/proc/evalkit/baseline.jsonl"])
    assert one_error(res) == (
        "error: --to /proc/evalkit/baseline.jsonl: cannot be written: the folder "
        "/proc/evalkit does not exist and cannot be created: the folder /proc does not "
        "accept new files")


@needs_proc
def test_run_refuses_its_output_before_calling_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    called = tmp_path / "called"
    (tmp_path / "goldens.jsonl").write_text('{"id": "q1", "query": "a", "expected": ["d1"]}\n')
    (tmp_path / "evalkit_output_target.py").write_text(
        "from pathlib import Path\n"
        "from evalkit.data.targets import CallableTarget\n"
        "def make():\n"
        f"    def rank(case):\n        Path({str(called)!r}).write_text('yes')\n"
        "        return ['d1']\n"
        "    return CallableTarget(rank, name='t')\n")
    (tmp_path / "evalkit.yaml").write_text(
        "goldens: goldens.jsonl\ntarget:\n  factory: evalkit_output_target:make\n"
        "metrics: [recall@1]\noutput: /proc/runs/t.jsonl\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    res = runner.invoke(app, ["run", "--no-progress"])
    assert one_error(res) == (
        "error: output /proc/runs/t.jsonl: cannot be written: the folder /proc/runs does not "
        "exist and cannot be created: the folder /proc does not accept new files; the output "
        f"is set in {tmp_path / 'evalkit.yaml'} (or pass --output)")
    assert not called.exists()
    res = runner.invoke(app, ["run", "--no-progress", "--output", "/proc/t.jsonl"])
    assert one_error(res) == ("error: --output /proc/t.jsonl: cannot be written: the folder "
                              "/proc does not accept new files")
    assert not called.exists()
    # a writable output: the run goes ahead
    res = runner.invoke(app, ["run", "--no-progress", "--output", str(tmp_path / "t.jsonl")])
    assert res.exit_code == 0, res.output
    assert called.exists()
    assert json.loads((tmp_path / "t.jsonl").read_text().splitlines()[0])["type"] == "header"


@needs_proc
def test_rescore_refuses_an_unwritable_output(tmp_path: Path) -> None:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import CallableTarget
    from evalkit.execute.target_runner import evaluate

    goldens = tmp_path / "goldens.jsonl"
    goldens.write_text('{"id": "q1", "query": "a", "expected": ["d1"]}\n')
    art = tmp_path / "run.jsonl"
    evaluate(CallableTarget(lambda case: ["d1"], name="t"),
             [GoldenCase("q1", "a", ["d1"])], ["recall@1"], artifact=art, progress=False)
    before = art.read_bytes()
    res = runner.invoke(app, ["rescore", str(art), "-m", "recall@1", "--goldens", str(goldens),
                              "--output", "/proc/x.jsonl"])
    assert one_error(res) == ("error: --output /proc/x.jsonl: cannot be written: the folder "
                              "/proc does not accept new files")
    assert art.read_bytes() == before


def test_every_writer_creates_missing_folders(tmp_path: Path) -> None:
    """The rule of docs/runner.md ("Missing folders of any output are created") for each
    writer: run artifacts (evaluate, save, rescore, promote), reports (every built-in
    format, the HTML page, to_latex), the CSV and Parquet tables."""
    from evalkit import CallableTarget, compare, evaluate
    from evalkit.data.run_views import run_columns, write_parquet
    from evalkit.execute.rescore import rescore
    from evalkit.gate import evaluate_gate
    from evalkit.gate.baseline import promote
    from evalkit.gate.checks import CheckSpec
    from evalkit.report.tables import write_csv
    from evalkit.report.writing import write_reports

    goldens = tmp_path / "cases.jsonl"
    goldens.write_text('{"id": "c1", "query": "q1", "expected": ["a"]}\n'
                       '{"id": "c2", "query": "q2", "expected": ["b"]}\n')
    out = tmp_path / "missing"
    run = evaluate(CallableTarget(lambda q: ["a", "b"], name="t"), goldens,
                   metrics=["recall@1"], artifact=out / "run" / "t.jsonl")
    written = [out / "run" / "t.jsonl",
               run.save(out / "save" / "t.jsonl"),
               promote(out / "run" / "t.jsonl", out / "baseline" / "b.jsonl"),
               write_csv(run_columns(run), out / "csv" / "t.csv")]
    rescore(out / "run" / "t.jsonl", ["recall@1"], output=out / "rescore" / "t.jsonl")
    written.append(out / "rescore" / "t.jsonl")
    pytest.importorskip("pyarrow")
    written.append(write_parquet(run, out / "parquet" / "t.parquet"))
    c = compare(run, run.save(tmp_path / "same.jsonl"), metrics=["recall@1"],
                n_resamples=200)
    c.to_latex(out / "latex" / "t.tex")
    written.append(out / "latex" / "t.tex")
    gate = evaluate_gate([CheckSpec("c", "recall@1", op=">=", threshold=0.1)], run)
    targets = [f"{fmt}:{out / fmt / 'r.txt'}" for fmt in
               ("console", "json", "markdown", "junit", "latex")]
    write_reports(gate, targets)
    written += [out / fmt / "r.txt" for fmt in ("console", "json", "markdown", "junit",
                                                 "latex")]
    written.append(c.to_html(out / "html" / "r.html"))
    for path in written:
        assert Path(path).is_file() and Path(path).stat().st_size > 0, path


def test_an_input_reached_through_a_folder_not_made_yet_is_refused(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    from evalkit.io.outputs import DestinationError, require_writable

    monkeypatch.chdir(tmp_path)
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 1.0 t\n")
    sneaky = Path("new") / ".." / "run.txt"  # the writer would make new/ and replace run.txt
    assert not sneaky.exists()
    with pytest.raises(DestinationError, match="is also an input of this command"):
        require_writable(sneaky, "-o", "x.txt", inputs=[run])
    with pytest.raises(DestinationError, match="already exists; pass --overwrite"):
        require_writable(sneaky, "-o", "x.txt", overwrite=False)
    (tmp_path / "sub").mkdir()
    with pytest.raises(DestinationError, match="is a directory"):
        require_writable(Path("new") / ".." / "sub", "-o", "x.txt")
    require_writable(Path("new") / ".." / "fresh.txt", "-o", "x.txt", overwrite=False)
    assert run.read_text() == "q1 Q0 d1 1 1.0 t\n" and not Path("new").exists()


def test_text_utf8_cannot_write_is_written_as_its_escape(tmp_path: Path) -> None:
    from evalkit.io.outputs import write_output

    path = write_output(tmp_path / "r.md", ["| a\ud800b |", " \u00e9\n"])
    assert path.read_bytes() == "| a\\ud800b | \u00e9\n".encode()
