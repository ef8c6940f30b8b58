"""The run's pacing spans a remote executor: the driver's
:class:`~evalkit_dask.dispatch.Dispatch` starts an item only when the run's
:class:`~evalkit.execute.pacing.Pacing` admits it, so ``requests_per_minute`` and the
adaptive window bound the calls of every worker together."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from evalkit_dask.dispatch import Dispatch, Outcome, PacedAdmission
from evalkit_dask.remote_work import run_item

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import ExecutorSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import CallableTarget
from evalkit.execute.executor import Job
from evalkit.execute.executor_api import Work
from evalkit.execute.pacing import Pacing
from evalkit.execute.target_runner import evaluate
from evalkit.testing import registered_plugin


class InstantBackend:
    """Runs every submitted item at the next poll, on this thread; records submit times."""

    last: InstantBackend | None = None

    def __init__(self, work: Work) -> None:
        self.work = work
        self.pending: list[Job] = []
        self.starts: list[float] = []
        self.in_flight = self.most = 0

    def submit(self, jobs: Sequence[Job]) -> None:
        self.pending += jobs
        self.starts += [time.monotonic()] * len(jobs)
        self.in_flight += len(jobs)
        self.most = max(self.most, self.in_flight)

    def poll(self, timeout_s: float) -> list[Outcome]:
        out = [Outcome(job, row=run_item(self.work.target, self.work.target_name,  # type: ignore[arg-type]
                                         job, [], False)) for job in self.pending]
        self.in_flight -= len(self.pending)
        self.pending = []
        if not out:
            time.sleep(min(timeout_s, 0.01))
        return out

    def cancel(self) -> None:
        self.pending.clear()

    def close(self) -> None:
        pass


class Instant:
    def open(self, work: Work) -> Dispatch:
        InstantBackend.last = InstantBackend(work)
        return Dispatch(InstantBackend.last, work, batch_size=8)


class InstantPlugin:
    @staticmethod
    @hookimpl
    def evalkit_register_executors() -> list[ExecutorSpec]:
        return [ExecutorSpec("instant", Instant, "in-process, for tests")]


def test_requests_per_minute_holds_across_a_remote_executor(tmp_path: Path) -> None:
    gset = GoldenSet(GoldenCase(f"c{i}", "q", expected=[f"c{i}"]) for i in range(6))
    target = CallableTarget(lambda case: [case.id], name="echo")
    with registered_plugin(InstantPlugin(), installed=True):
        run = evaluate(target, gset, ["recall@1"], max_concurrency=8, progress=False,
                       artifact=tmp_path / "run.jsonl", executor="instant",
                       requests_per_minute=120)
    backend = InstantBackend.last
    assert backend is not None and len(backend.starts) == 6
    assert run.header["status"] == "complete"
    # 120/min: a bucket of 2 starts, refilled at 2 a second. Without the pacing all six
    # go in the first refill; with it the first two go at once and each later start
    # waits for its token: the sixth no earlier than (6 - 2) / 2 = 2 s after the first
    # (lower bounds only: a slow machine can only make the gaps longer)
    assert backend.starts[1] - backend.starts[0] < 0.5
    assert backend.starts[5] - backend.starts[0] >= 2.0 - 0.05
    for i in range(3, 6):
        assert backend.starts[i] - backend.starts[i - 1] >= 0.5 - 0.05


def test_paced_admission_halves_the_window_at_a_rate_limited_row() -> None:
    pacing = Pacing(8)
    admission = PacedAdmission(pacing)
    assert admission.take(20) == 8  # the window: max_concurrency at first
    assert admission.take(1) == 0
    row = CaseResult("c0", None, {}, "429", 1.0, rate_limited=1)
    admission.on_row(row)  # 8 were in flight, 7 now: half of 8
    assert pacing.current == 4 and pacing.in_flight == 7
    for i in range(7):
        admission.on_row(CaseResult(f"c{i + 1}", None, {}, None, 1.0))
    assert pacing.in_flight == 0
    # each success adds 1/limit: 4 + 1/4 + 1/4.25 + ... stays below 6 after 7 successes
    assert 5 <= pacing.current < 6


def test_paced_admission_frees_slots_when_tasks_settle_and_learns_from_rows_later() -> None:
    # a remote executor knows a task is over before its rows arrive: the slots of its
    # calls are free at once (sync), what the calls met is applied when the rows come
    pacing = Pacing(8)
    admission = PacedAdmission(pacing)
    assert admission.take(8) == 8 and admission.take(1) == 0
    admission.sync(8)  # nothing has ended: nothing changes
    assert pacing.in_flight == 8 and admission.take(1) == 0
    admission.sync(4)  # 4 calls ended, their rows on their way
    assert pacing.in_flight == 4 and admission.take(8) == 4  # 4 slots free again
    admission.on_row(CaseResult("c0", None, {}, "429", 1.0, rate_limited=1))
    # by hand: 8 calls in flight when the 429 is seen: the window is half of 8
    assert pacing.current == 4 and pacing.in_flight == 8
    for i in range(3):  # the other three ended calls: no slot to give back twice
        admission.on_row(CaseResult(f"c{i + 1}", None, {}, None, 1.0))
    assert pacing.in_flight == 8
    for i in range(8):
        admission.on_row(CaseResult(f"d{i}", None, {}, None, 1.0))
    assert pacing.in_flight == 0 and admission.take(1) == 1


def test_a_paced_remote_run_ends_when_its_last_call_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 60 a minute: one start a second, a bucket of one; 3 items start at 0, 1 and 2 s
    # and nothing is left to wait for after the last (tests/test_runner_pacing_end.py
    # holds the same for the local executors); at the floor (one call an hour) a single
    # item must not hold the run for the next token either. The pacing grants exactly
    # one start per item, and the run ends well within the guard (an hour at the floor
    # if it waited for a token), whatever the machine's load.
    granted: list[float] = []
    original = Pacing.try_admit

    def counted(pacing: Pacing) -> float | None:
        started = original(pacing)
        if started is not None:
            granted.append(started)
        return started

    monkeypatch.setattr(Pacing, "try_admit", counted)
    target = CallableTarget(lambda case: [case.id], name="echo")

    def paced_run(gset: GoldenSet, rpm: float, done: list[RunResult]) -> None:
        done.append(evaluate(target, gset, ["recall@1"], max_concurrency=4, progress=False,
                             executor="instant", requests_per_minute=rpm))

    for rpm, n in ((60, 3), (1 / 60, 1)):
        granted.clear()
        gset = GoldenSet(GoldenCase(f"c{i}", "q", expected=[f"c{i}"]) for i in range(n))
        done: list[RunResult] = []
        with registered_plugin(InstantPlugin(), installed=True):
            thread = threading.Thread(target=paced_run, args=(gset, rpm, done), daemon=True)
            thread.start()
            thread.join(60.0)  # a guard against the wait for a token no item uses
        assert done, "the run was still waiting 60 s after its last item started"
        assert done[0].header["status"] == "complete"
        assert InstantBackend.last is not None
        starts = InstantBackend.last.starts
        assert len(starts) == n and len(granted) == n
