"""One writer per artifact, and Ctrl-C, with real `evalkit run` children:
a second writer is refused at once naming the path and the pid; Ctrl-C writes the calls
in flight that finish within the grace period; a second Ctrl-C ends at once with one
line and no traceback."""

from __future__ import annotations

import fcntl
import os
import signal
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import CallableTarget
from evalkit.execute.executor import default_grace_s
from evalkit.execute.rescore import rescore
from evalkit.execute.target_runner import evaluate
from evalkit.io.runlock import ArtifactBusyError, lock_path
from evalkit.testing.child_runs import (
    spawn_run,
    started_ids,
    wait_until,
    write_project,
    written_rows,
)

runner = CliRunner()

TARGET = '''
import os, time
from pathlib import Path
from evalkit.data.targets import CallableTarget

LOG = Path(__file__).with_name("started.log")

def make(delay=0.5):
    def rank(case):
        with LOG.open("a") as fh:
            fh.write(case.id + "\\n")
        time.sleep(delay)
        return [case.id]
    return CallableTarget(rank, name="slow")
'''


def project(root: Path, delay: float, n: int = 20, concurrency: int = 4) -> Path:
    return write_project(root, TARGET, module="lock_target", target_kwargs={"delay": delay},
                         cases=n, max_concurrency=concurrency)


# ----------------------------------------------------------------- one writer
def test_a_second_writer_is_refused_at_once_naming_path_and_pid(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    artifact = project(tmp_path, delay=0.1, n=24, concurrency=2)
    proc = spawn_run(tmp_path)
    lock = lock_path(artifact)
    try:
        wait_until(lambda: lock.exists() and lock.read_text().strip() == str(proc.pid),
                   proc, "the run never took its lock")
        # the library, from another process: refused at once
        cases = GoldenSet(GoldenCase(f"c{i:02d}", "q", expected=[f"c{i:02d}"])
                          for i in range(24))
        t0 = time.monotonic()
        with pytest.raises(ArtifactBusyError) as err:
            evaluate(CallableTarget(lambda c: [c.id]), cases, ["recall@1"],
                     artifact=artifact, resume=True, progress=False)
        assert time.monotonic() - t0 < 1.0
        assert str(artifact) in str(err.value) and f"pid {proc.pid}" in str(err.value)
        assert err.value.pid == proc.pid
        with pytest.raises(ArtifactBusyError, match=f"pid {proc.pid}"):
            rescore(artifact, ["recall@1"])  # rescore replaces the file: refused too
        # and the command line: one error line, exit 2
        monkeypatch.chdir(tmp_path)
        res = runner.invoke(app, ["run", "--no-progress", "--resume"])
        assert res.exit_code == 2
        assert f"is being written by another run (pid {proc.pid} holds {lock})" in res.output
        assert proc.poll() is None  # the first writer was not disturbed
    finally:
        _, err_text = proc.communicate(timeout=30)
    assert proc.returncode == 0, err_text
    assert len(written_rows(artifact)) == 24
    assert sorted(p.name for p in artifact.parent.iterdir()) == ["run.jsonl"]  # lock gone


def test_the_lock_is_the_kernels_flock_not_the_file(tmp_path: Path) -> None:
    """A lock taken independently (fcntl.flock here) refuses the runner; a lock file
    whose holder is gone does not."""
    art = tmp_path / "run.jsonl"
    cases = [GoldenCase("a", "q", expected=["a"])]
    target = CallableTarget(lambda c: [c.id])
    lock = lock_path(art)
    lock.write_text("999999\n")  # a stale file: nobody holds it
    evaluate(target, cases, ["recall@1"], artifact=art, progress=False)
    assert not lock.exists()
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(fd, f"{os.getpid()}\n".encode())
        with pytest.raises(ArtifactBusyError, match=f"pid {os.getpid()}"):
            evaluate(target, cases, ["recall@1"], artifact=art, overwrite=True,
                     progress=False)
    finally:
        os.close(fd)  # releases it
    evaluate(target, cases, ["recall@1"], artifact=art, overwrite=True, progress=False)


# ----------------------------------------------------------------- Ctrl-C
def test_ctrl_c_writes_the_calls_in_flight_that_finish_within_the_grace_period(
        tmp_path: Path) -> None:
    artifact = project(tmp_path, delay=0.5)
    proc = spawn_run(tmp_path)
    # the first four rows are written and the next four calls are running
    wait_until(lambda: len(written_rows(artifact)) >= 4 and len(started_ids(tmp_path)) >= 8, proc,
               "no calls in flight")
    in_flight = set(started_ids(tmp_path)) - {str(r["id"]) for r in written_rows(artifact)}
    assert in_flight
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    kept = {str(r["id"]) for r in written_rows(artifact)}
    calls = set(started_ids(tmp_path))
    assert in_flight <= kept  # the calls running at Ctrl-C were written, not thrown away
    assert kept == calls and len(kept) < 20  # and nothing new was started
    lines = err.strip().splitlines()
    assert "Traceback" not in err
    assert lines[0].startswith("interrupted: waiting up to 10 s for ")
    assert lines[-1] == (f"interrupted: {len(kept)} of 20 cases are done in {artifact}; "
                         "continue with --resume")
    assert artifact.read_bytes().endswith(b"\n")


def test_a_second_ctrl_c_ends_at_once_with_one_line(tmp_path: Path) -> None:
    artifact = project(tmp_path, delay=30.0)  # calls that would hang for the grace period
    proc = spawn_run(tmp_path)
    wait_until(lambda: len(started_ids(tmp_path)) >= 4, proc, "no call started")
    proc.send_signal(signal.SIGINT)
    wait_until(lambda: artifact.exists() and proc.poll() is None, proc, "run ended early")
    time.sleep(0.3)  # the runner is now waiting for the calls in flight
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert time.monotonic() - t0 < 3.0  # not the 10 s grace period, nor the 30 s calls
    assert proc.returncode == 130
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines == [
        "interrupted: waiting up to 10 s for 4 call(s) in flight to finish and be written "
        "(Ctrl-C again to stop now)",
        f"interrupted again: 0 of 20 cases are done in {artifact}; 4 call(s) still running "
        "were abandoned; continue with --resume",
    ]


def test_ctrl_c_of_a_run_with_samples_counts_samples(tmp_path: Path) -> None:
    artifact = project(tmp_path, delay=0.3, n=6, concurrency=2)
    proc = spawn_run(tmp_path, "--epochs", "3")
    wait_until(lambda: len(written_rows(artifact)) >= 2, proc, "no sample written")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    done = len(written_rows(artifact))  # one row per (case, sample)
    assert 2 <= done < 18
    assert err.strip().splitlines()[-1] == (
        f"interrupted: {done} of 18 samples are done (6 cases x 3 samples) in {artifact}; "
        "continue with --resume")


def test_the_grace_period_is_bounded_and_set_by_grace_s(tmp_path: Path) -> None:
    artifact = project(tmp_path, delay=30.0)
    proc = spawn_run(tmp_path, "--grace-s", "0.5")
    wait_until(lambda: len(started_ids(tmp_path)) >= 4, proc, "no call started")
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    waited = time.monotonic() - t0
    assert 0.4 <= waited < 3.0 and proc.returncode == 130
    assert "waiting up to 0.5 s for 4 call(s)" in err
    assert "4 call(s) still running were abandoned" in err and "Traceback" not in err
    assert written_rows(artifact) == []


def test_default_grace_is_the_attempt_bound_capped_at_ten_seconds() -> None:
    class Timed:
        def __init__(self, timeout: float) -> None:
            self.timeout_s = timeout

    class Bounded(Timed):
        attempt_bound_s = 2.5

    assert default_grace_s(Timed(3.0)) == 3.0
    assert default_grace_s(Timed(30.0)) == 10.0
    assert default_grace_s(Bounded(30.0)) == 2.5
    assert default_grace_s(CallableTarget(lambda c: [])) == 10.0
    for bad in (-1, 3600.5, 1e12):  # an hour is the longest an interrupted run waits
        with pytest.raises(ValueError, match="grace_s must be a number of seconds from 0 "
                                             "to 3600"):
            evaluate(CallableTarget(lambda c: []), [GoldenCase("a", "q")], [],
                     ["latency_p50"], grace_s=bad, progress=False)
    bad_intervals: tuple[object, ...] = (-1.0, float("nan"), "1")
    for interval in bad_intervals:  # were taken as 0: an fsync after every row
        with pytest.raises(ValueError, match="fsync_interval_s must be a number of seconds "
                                             ">= 0"):
            evaluate(CallableTarget(lambda c: []), [GoldenCase("a", "q")], [],
                     ["latency_p50"], fsync_interval_s=interval,  # type: ignore[arg-type]
                     progress=False)
