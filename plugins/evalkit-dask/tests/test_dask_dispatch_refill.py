"""A backend that says when its items settle (``listen``) gets its next batch from its own
thread, while the thread consuming the rows is busy, and the calls running never exceed
the driver's window."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence

import pytest
from evalkit_dask.dispatch import Dispatch, Outcome
from evalkit_dask.remote_work import run_item

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import CallableTarget
from evalkit.execute.executor import Job
from evalkit.execute.executor_api import Work
from evalkit.execute.pacing import Pacing


class ThreadedBackend:
    """Each task runs on a thread of its own for ``call_s``, then settles and wakes the
    driver from that thread. ``running`` counts the calls in progress, ``most`` the most
    at once; ``submitted_on`` records the thread of every submit."""

    def __init__(self, work: Work, call_s: float) -> None:
        self.work, self.call_s = work, call_s
        self.lock = threading.Lock()
        self.running = self.most = self.settled_items = 0
        self.ready: queue.SimpleQueue[tuple[list[Job], list[Outcome]]] = queue.SimpleQueue()
        self.wake: Callable[[], None] | None = None
        self.submitted_on: list[str] = []

    def listen(self, wake: Callable[[], None]) -> None:
        self.wake = wake

    def submit(self, jobs: Sequence[Job]) -> None:
        with self.lock:
            self.submitted_on.append(threading.current_thread().name)
            self.running += len(jobs)
            self.most = max(self.most, self.running)
        threading.Thread(target=self._run, args=(list(jobs),), name="backend-task").start()

    def _run(self, jobs: list[Job]) -> None:
        time.sleep(self.call_s)
        out = [Outcome(job, row=run_item(self.work.target, "rank", job,  # type: ignore[arg-type]
                                         [], False)) for job in jobs]
        with self.lock:
            self.running -= len(jobs)
            self.settled_items += len(jobs)
        self.ready.put((jobs, out))
        if self.wake is not None:
            self.wake()

    def settled(self) -> int:
        with self.lock:
            return self.settled_items

    def poll(self, timeout_s: float) -> list[Outcome]:
        try:
            got = [self.ready.get(timeout=timeout_s)]
        except queue.Empty:
            return []
        while True:
            try:
                got.append(self.ready.get_nowait())
            except queue.Empty:
                break
        with self.lock:
            self.settled_items -= sum(len(jobs) for jobs, _ in got)
        return [o for _, outs in got for o in outs]

    def cancel(self) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.mark.parametrize("paced", [False, True])
def test_a_listening_backend_is_refilled_from_its_own_thread_within_the_window(
        paced: bool) -> None:
    # paced: the run's Pacing (as evaluate() always has) must free a settled call's slot
    # before its row arrives, or the backend's thread could never refill
    cases = [GoldenCase(f"c{i:02d}", f"query {i}") for i in range(60)]
    work = Work(CallableTarget(lambda c: [c.id], name="rank"), "rank",
                [Job(c) for c in cases], [], 6, pacing=Pacing(6) if paced else None)
    backend = ThreadedBackend(work, call_s=0.005)
    dispatch = Dispatch(backend, work, batch_size=2).start()
    got: list[str] = []
    for batch in dispatch.batches():
        got += [r.case_id for r in batch]
        time.sleep(0.03)  # the consumer is slow: the backend's thread keeps the window full
    assert sorted(got) == [c.id for c in cases]  # every row once
    assert backend.most <= 6 and backend.running == 0  # never more calls than the window
    # the first window went out from this thread; most refills from the backend's own
    assert backend.submitted_on[:3] == ["MainThread"] * 3
    assert backend.submitted_on.count("backend-task") > len(backend.submitted_on) // 2
    assert len(backend.submitted_on) == 30 and dispatch.in_flight == 0
    if paced:
        assert work.pacing is not None and work.pacing.in_flight == 0
