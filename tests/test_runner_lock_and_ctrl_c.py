"""One writer per artifact, and Ctrl-C, with real `evalkit run` children:
a second writer is refused at once naming the path and the pid; Ctrl-C writes the calls
in flight that finish within the grace period; a second Ctrl-C ends at once with one
line and no traceback."""

from __future__ import annotations

import fcntl
import os
import select
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

def make(delay=0.5, gate=None):
    def rank(case):
        with LOG.open("a") as fh:
            fh.write(case.id + "\\n")
        if gate is None:
            time.sleep(delay)
        else:  # held until the test creates the gate file: the call's length is the test's
            while not os.path.exists(gate):
                time.sleep(0.01)
        return [case.id]
    return CallableTarget(rank, name="slow")
'''

#: how long a wait may take before the test calls the run hung: a guard against a hang,
#: never a measure of speed (every wait below ends on an event, long before it)
HANG_S = 120.0


def project(root: Path, delay: float, n: int = 20, concurrency: int = 4,
            gate: Path | None = None) -> Path:
    kwargs: dict[str, object] = {"delay": delay}
    if gate is not None:
        kwargs["gate"] = str(gate)
    return write_project(root, TARGET, module="lock_target", target_kwargs=kwargs,
                         cases=n, max_concurrency=concurrency)


# ----------------------------------------------------------------- one writer
def test_a_second_writer_is_refused_at_once_naming_path_and_pid(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run holds its lock inside calls that cannot end until the test opens the
    gate, so every refusal below happens while the lock is held, and a second writer that
    waited for the lock instead of refusing would wait for ever (the hang guard fails)."""
    gate = tmp_path / "gate"
    artifact = project(tmp_path, delay=0.0, n=24, concurrency=2, gate=gate)
    proc = spawn_run(tmp_path)
    lock = lock_path(artifact)
    try:
        wait_until(lambda: lock.exists() and lock.read_text().strip() == str(proc.pid)
                   and len(started_ids(tmp_path)) >= 1, proc,
                   "the run never took its lock and started a call", limit=HANG_S)
        # a second `evalkit run` process: exits 2 while the first is still held at the gate
        second = spawn_run(tmp_path, "--resume")
        _, second_err = second.communicate(timeout=HANG_S)
        assert proc.poll() is None and not gate.exists()  # the first has not finished
        assert second.returncode == 2, second_err
        assert second_err.strip().splitlines() == [
            f"error: {artifact} is being written by another run (pid {proc.pid} holds "
            f"{lock}); wait for it to finish, or write to another output"]
        # the library, from another process: refused at once
        cases = GoldenSet(GoldenCase(f"c{i:02d}", "q", expected=[f"c{i:02d}"])
                          for i in range(24))
        with pytest.raises(ArtifactBusyError) as err:
            evaluate(CallableTarget(lambda c: [c.id]), cases, ["recall@1"],
                     artifact=artifact, resume=True, progress=False)
        assert str(artifact) in str(err.value) and f"pid {proc.pid}" in str(err.value)
        assert err.value.pid == proc.pid
        with pytest.raises(ArtifactBusyError, match=f"pid {proc.pid}"):
            rescore(artifact, ["recall@1"])  # rescore replaces the file: refused too
        # and the command line in this process: one error line, exit 2
        monkeypatch.chdir(tmp_path)
        res = runner.invoke(app, ["run", "--no-progress", "--resume"])
        assert res.exit_code == 2
        assert f"is being written by another run (pid {proc.pid} holds {lock})" in res.output
        assert proc.poll() is None  # the first writer was not disturbed
        assert lock.read_text().strip() == str(proc.pid)  # and still holds the lock
        assert written_rows(artifact) == []  # nor was its artifact written by the others
    finally:
        gate.touch()
        _, err_text = proc.communicate(timeout=HANG_S)
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
    """The calls never end (their gate stays shut) and the grace period is an hour, so a
    run that ends at all after the second Ctrl-C waited for neither."""
    gate = tmp_path / "gate"
    artifact = project(tmp_path, delay=0.0, gate=gate)
    proc = spawn_run(tmp_path, "--grace-s", "3600")
    try:
        wait_until(lambda: len(started_ids(tmp_path)) >= 4, proc, "no call started",
                   limit=HANG_S)
        proc.send_signal(signal.SIGINT)
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], HANG_S)  # a guard against a hang
        assert ready, "the run never said it was waiting for its calls"
        first = proc.stderr.readline()  # printed once the runner waits for the calls
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=HANG_S)  # a guard: the grace period is 3600 s
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130
    assert not gate.exists()  # no call could have finished
    assert "Traceback" not in first + err
    lines = [first.rstrip("\n"), *err.strip().splitlines()]
    assert lines == [
        "interrupted: waiting up to 3600 s for 4 call(s) in flight to finish and be written "
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
    """The calls never end (their gate stays shut), so a run that ends after one Ctrl-C
    ended because its grace period did, which it waited out."""
    gate = tmp_path / "gate"
    artifact = project(tmp_path, delay=0.0, gate=gate)
    proc = spawn_run(tmp_path, "--grace-s", "0.5")
    try:
        wait_until(lambda: len(started_ids(tmp_path)) >= 4, proc, "no call started",
                   limit=HANG_S)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=HANG_S)  # a guard: the calls never end
        waited = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert waited >= 0.4 and proc.returncode == 130  # a lower bound holds under any load
    assert not gate.exists()  # no call could have finished
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
