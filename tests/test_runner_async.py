"""Async targets: an ``async def`` function is a target; the runner calls it
from one event loop with bounded concurrency, scores in threads off the loop, and keeps
resume, Ctrl-C, SIGTERM and the grace period as for threads (real subprocesses and
signals)."""

from __future__ import annotations

import asyncio
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import CallableTarget, TargetError, TargetResponse
from evalkit.execute.async_executor import is_async_target
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry
from evalkit.testing.child_runs import (
    EVALKIT_COMMAND,
    spawn_run,
    started_ids,
    wait_until,
    write_project,
    written_rows,
)


def cases(n: int) -> GoldenSet:
    return GoldenSet(GoldenCase(f"c{i:03d}", "q", expected=[f"c{i:03d}"]) for i in range(n))


class Probe:
    """An async ranker that counts its calls in flight and the threads it runs on."""

    def __init__(self, delay_s: float = 0.02) -> None:
        self.delay_s = delay_s
        self.in_flight = 0
        self.peak = 0
        self.threads: set[str] = set()
        self.starts: list[float] = []

    async def __call__(self, case: GoldenCase) -> list[str]:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        self.threads.add(threading.current_thread().name)
        self.starts.append(time.monotonic())
        try:
            await asyncio.sleep(self.delay_s)
        finally:
            self.in_flight -= 1
        return [case.id]


def test_an_async_def_target_runs_on_one_loop_with_bounded_concurrency() -> None:
    probe = Probe()
    target = CallableTarget(probe, name="async")
    assert is_async_target(target) and not is_async_target(CallableTarget(lambda c: []))
    run = evaluate(target, cases(60), ["recall@1"], ["latency_p50"], max_concurrency=7,
                   progress=False)
    assert run.header["status"] == "complete" and run.mean("recall@1") == 1.0
    assert [r.case_id for r in run.per_query] == [f"c{i:03d}" for i in range(60)]
    assert probe.peak == 7  # as many in flight as allowed, never more
    assert probe.threads == {"evalkit-event-loop"}  # one loop, in one thread
    assert all(r.latency_ms is not None and r.latency_ms >= 20.0 for r in run.per_query)
    assert run.header["aggregates"]["latency_p50"] >= 20.0


def test_metrics_run_in_threads_off_the_loop_so_a_slow_grade_blocks_no_call() -> None:
    probe = Probe(delay_s=0.01)
    graded_on: set[str] = set()
    calls_during: list[int] = []

    def slow_grade(response: TargetResponse, case: GoldenCase) -> float:
        graded_on.add(threading.current_thread().name)
        if case.id == "c000":
            # a slow judge: it blocks its thread until ten more calls have started, which
            # can happen only if it does not block the event loop (else: the hang guard)
            before = len(probe.starts)
            guard = time.monotonic() + HANG_S
            while len(probe.starts) < before + 10 and time.monotonic() < guard:
                time.sleep(0.001)
            calls_during.append(len(probe.starts) - before)
        return 1.0

    with use_registry() as reg:
        reg.register_metric("slow_grade", higher_is_better=True)(slow_grade)
        run = evaluate(CallableTarget(probe), cases(80), ["slow_grade"], max_concurrency=4,
                       progress=False)
    assert run.header["status"] == "complete"
    assert graded_on and "evalkit-event-loop" not in graded_on
    assert all(name.startswith("evalkit-score") for name in graded_on)
    assert calls_during[0] >= 10  # the other three tasks kept calling the target meanwhile


def test_async_failures_are_rows_with_errors() -> None:
    async def flaky(case: GoldenCase) -> object:
        await asyncio.sleep(0)
        if case.id == "c001":
            raise RuntimeError("backend down")
        if case.id == "c002":
            return 42
        return [case.id]

    run = evaluate(CallableTarget(flaky, name="flaky"), cases(4), ["recall@1"],
                   progress=False)
    errors = {r.case_id: r.error for r in run.per_query if r.error}
    assert run.header["status"] == "incomplete"
    assert errors == {
        "c001": "target 'flaky' failed on case 'c001': backend down",
        "c002": "target 'flaky' returned int for case 'c002'; return a TargetResponse, a "
                "list of ids, or a string",
    }


def test_invoke_of_an_async_target_outside_and_inside_a_loop() -> None:
    async def rank(case: GoldenCase) -> list[str]:
        return [case.id, "x"]

    target = CallableTarget(rank)
    assert list(target.invoke(GoldenCase("a", "q")).ranked_ids) == ["a", "x"]

    async def inside() -> None:
        with pytest.raises(TargetError, match="is async: await its ainvoke"):
            target.invoke(GoldenCase("b", "q"))
        assert target.ainvoke is not None
        assert list((await target.ainvoke(GoldenCase("c", "q"))).ranked_ids) == ["c", "x"]

    asyncio.run(inside())


# ------------------------------------------------------------------ real processes
TARGET = '''
import asyncio, os
from pathlib import Path
from evalkit.data.targets import CallableTarget

LOG = Path(__file__).with_name("started.log")

def make(delay=0.5, gate=None):
    async def rank(case):
        with LOG.open("a") as fh:
            fh.write(case.id + "\\n")
        if gate is None:
            await asyncio.sleep(delay)
        else:  # held until the test creates the gate file: the call's length is the test's
            while not os.path.exists(gate):
                await asyncio.sleep(0.01)
        return [case.id]
    return CallableTarget(rank, name="slow-async")
'''

#: how long a wait may take before the test calls the run hung: a guard against a hang,
#: never a measure of speed (every wait below ends on an event, long before it)
HANG_S = 120.0


def project(root: Path, delay: float, n: int = 20, concurrency: int = 4,
            gate: Path | None = None) -> Path:
    kwargs: dict[str, object] = {"delay": delay}
    if gate is not None:
        kwargs["gate"] = str(gate)
    return write_project(root, TARGET, module="async_target", target_kwargs=kwargs,
                         cases=n, max_concurrency=concurrency)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_writes_the_async_calls_in_flight_then_resume_finishes(
        tmp_path: Path, signum: int) -> None:
    artifact = project(tmp_path, delay=0.5)
    proc = spawn_run(tmp_path)
    wait_until(lambda: len(written_rows(artifact)) >= 4 and len(started_ids(tmp_path)) >= 8, proc,
               "no calls in flight")
    in_flight = set(started_ids(tmp_path)) - {str(r["id"]) for r in written_rows(artifact)}
    assert in_flight
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    kept = {str(r["id"]) for r in written_rows(artifact)}
    assert in_flight <= kept  # the calls running at the signal were written
    assert kept == set(started_ids(tmp_path)) and len(kept) < 20  # nothing new started
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        f"interrupted: {len(kept)} of 20 cases are done in {artifact}; continue with "
        "--resume")
    # resume: only the other cases are called, each once
    before = started_ids(tmp_path)
    done = subprocess.run([*EVALKIT_COMMAND, "run", "--no-progress", "--resume"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    again = started_ids(tmp_path)[len(before):]
    assert set(again).isdisjoint(kept) and len(again) == len(set(again)) == 20 - len(kept)
    rows = written_rows(artifact)
    assert sorted(str(r["id"]) for r in rows) == [f"c{i:02d}" for i in range(20)]


def test_a_second_ctrl_c_cancels_the_async_calls_at_once(tmp_path: Path) -> None:
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
    assert [first.rstrip("\n"), *err.strip().splitlines()] == [
        "interrupted: waiting up to 3600 s for 4 call(s) in flight to finish and be written "
        "(Ctrl-C again to stop now)",
        f"interrupted again: 0 of 20 cases are done in {artifact}; 4 call(s) still running "
        "were abandoned; continue with --resume",
    ]


RESUME_SCRIPT = '''
import asyncio, sys
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import CallableTarget
from evalkit.execute.target_runner import evaluate

log_path, artifact, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])

async def ranker(case):
    with open(log_path, "a") as fh:
        fh.write(case.id + "\\n")
    await asyncio.sleep(delay)
    return [case.id]

cases = GoldenSet(GoldenCase(f"c{i:03d}", "q", expected=[f"c{i:03d}"]) for i in range(60))
run = evaluate(CallableTarget(ranker, name="slow"), cases, ["recall@1"], max_concurrency=4,
               artifact=artifact, resume=True, progress=False)
print(run.header["status"], len(run.per_query))
'''


def test_an_async_run_killed_with_sigkill_resumes_without_calling_done_cases_again(
        tmp_path: Path) -> None:
    script = tmp_path / "run_eval.py"
    script.write_text(RESUME_SCRIPT)
    artifact, log1, log2 = tmp_path / "run.jsonl", tmp_path / "calls1.log", tmp_path / "c2"
    proc = subprocess.Popen([sys.executable, str(script), str(log1), str(artifact), "0.05"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until(lambda: len(written_rows(artifact)) >= 12, proc, "no progress")
    proc.kill()
    proc.wait(timeout=10)
    done_before = {str(r["id"]) for r in written_rows(artifact)}
    assert 12 <= len(done_before) < 60
    out = subprocess.run([sys.executable, str(script), str(log2), str(artifact), "0"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["complete", "60"]
    called_again = log2.read_text().split()
    assert set(called_again).isdisjoint(done_before)
    assert len(called_again) == len(set(called_again)) == 60 - len(done_before)
