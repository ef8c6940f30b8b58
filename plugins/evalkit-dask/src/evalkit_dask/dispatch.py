"""The driver side of a remote executor: the in-flight bound, retries, driver-side scoring.

A remote executor implements a :class:`Backend`: ``submit`` one batch of work items (one
task), ``poll`` what came back (:class:`Outcome`: a finished row, an item lost with its
worker, or a failure that stops the run), ``cancel`` what has not started, ``close``.
:class:`Dispatch` drives it with the interface of the local pool
(:class:`~evalkit.execute.executor_api.RunningExecutor`), so the runner writes the rows,
holds the lock and resumes as for a local run:

* at most ``admission.limit()`` items are in flight at once: submitted, and neither
  handed back nor known to be finished (a backend with ``settled()`` says how many of
  its items finished but are not fetched yet, so the next batch goes out before the
  rows travel back; one with ``listen(wake)`` calls ``wake()`` from its own thread when
  they settle, and the next batch is sent from there, without waiting for the thread
  that consumes the rows). ``max_concurrency`` by default, cluster-wide, since only the
  driver submits. A rate limiter or an adaptive window plugs in as the
  :class:`Admission`;
* items go out in batches of ``batch_size`` (several items per task amortise the
  scheduling cost), never more than the window has room for;
* item ``i`` of ``work.jobs`` goes out only once ``work.window`` allows it (a run that
  stops on a rule checked as rows arrive: :mod:`evalkit.execute.dispatch_window`);
* an item lost with its worker is sent again, at most ``max_retries`` times (then its
  row is an error naming the worker losses), and :meth:`Dispatch.report` counts it:
  each retry may repeat a paid call the dead worker had made;
* Ctrl-C (``stop``) sends nothing new; the items in flight still come back within the
  grace period, and ``close`` cancels what is left;
* an item's row is handed back once: a second outcome for the same key (a recomputed
  task) is dropped;
* metrics the worker did not score are scored here, in ``max_concurrency`` driver
  threads (:func:`evalkit_dask.remote_work.finish_row`).
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from evalkit.data.rows import DEFAULT_MAX_RAW_BYTES, CaseResult
from evalkit.execute.executor import POLL_S, Interrupts, Job, RowThenStop
from evalkit.execute.executor_api import Work, item_key
from evalkit.execute.pacing import reported_tokens
from evalkit_dask.remote_work import finish_row

if TYPE_CHECKING:
    from evalkit.execute.pacing import Pacing

#: How many times an item lost with its worker is sent again, unless told otherwise.
DEFAULT_MAX_RETRIES = 3


class Outcome(NamedTuple):
    """What a backend hands back for one item: its ``row``; or ``lost`` (the worker
    died; the driver sends the item again); or ``failure``, an exception that stops the
    run (a judge's spending limit, an unexpected error)."""

    job: Job
    row: CaseResult | None = None
    lost: str | None = None
    failure: BaseException | None = None


class Backend(Protocol):
    """Where a remote executor's items run (see the module docstring). It may also have
    ``settled() -> int``: items whose task finished and whose rows ``poll`` has yet to
    hand back; and ``listen(wake)``: call ``wake()``, from any thread, when items settle
    (``submit`` must then be safe to call from that thread too)."""

    def submit(self, jobs: Sequence[Job]) -> None: ...

    def poll(self, timeout_s: float) -> list[Outcome]: ...

    def cancel(self) -> None: ...

    def close(self) -> None: ...


class Admission(Protocol):
    """How many items may be in flight now (a fixed bound, or a window that adapts to
    rate limits); told how many calls are still running before each refill, and of every
    row handed back."""

    def limit(self) -> int: ...

    def take(self, wanted: int) -> int:
        """How many of ``wanted`` items (within :meth:`limit`) may start now."""
        ...

    def sync(self, calls_in_flight: int) -> None:
        """Of the items taken and not handed back, only ``calls_in_flight`` are still
        being called (the others' tasks are over; their rows are on their way)."""
        ...

    def on_row(self, row: CaseResult) -> None: ...


class FixedAdmission:
    """``max_concurrency`` items in flight, always."""

    def __init__(self, max_concurrency: int) -> None:
        self._n = max_concurrency

    def limit(self) -> int:
        return self._n

    def take(self, wanted: int) -> int:
        return wanted

    def sync(self, calls_in_flight: int) -> None:
        pass

    def on_row(self, row: CaseResult) -> None:
        pass


class PacedAdmission:
    """The run's :class:`~evalkit.execute.pacing.Pacing` on the driver, so its adaptive
    window, a server's ``Retry-After`` pause seen through the rows and the
    ``requests_per_minute`` / ``tokens_per_minute`` buckets span every worker: an item
    starts only when the pacing admits it. A call's slot is freed as soon as the driver
    knows its task is over (:meth:`sync`), and its row, when it arrives, tells the pacing
    the rate-limit answers and tokens it met."""

    def __init__(self, pacing: Pacing) -> None:
        self._pacing = pacing
        self._starts: deque[float] = deque()  # admitted, still being called
        self._ended: deque[float] = deque()  # their calls over, their rows not seen yet
        self._lock = threading.Lock()  # refills run on the backend's thread too

    def limit(self) -> int:
        return self._pacing.max_concurrency

    def take(self, wanted: int) -> int:
        n = 0
        while n < wanted:
            started = self._pacing.try_admit()
            if started is None:
                break
            with self._lock:
                self._starts.append(started)
            n += 1
        return n

    def sync(self, calls_in_flight: int) -> None:
        with self._lock:
            ended = 0
            while len(self._starts) > max(0, calls_in_flight):
                self._ended.append(self._starts.popleft())
                ended += 1
        self._pacing.finish(ended)

    def on_row(self, row: CaseResult) -> None:
        meta = row.response.meta if row.response is not None else {}
        seen = int(getattr(row, "rate_limited", 0) or 0), reported_tokens(meta or {})
        with self._lock:
            if self._ended:
                self._pacing.observe(self._ended.popleft(), *seen)
            elif self._starts:
                self._pacing.release(self._starts.popleft(), *seen)


class Dispatch:
    """A :class:`Backend` driven as a running executor (see the module docstring).

    Args:
        backend: where the items run.
        work: the run's items, metrics and bound.
        batch_size: items per task (>= 1).
        max_retries: how often one item is sent again after its worker died.
        admission: the in-flight window (default: ``work.max_concurrency``).
        report: extra fields for :meth:`report` (the executor's name, its workers).
    """

    def __init__(self, backend: Backend, work: Work, *, batch_size: int = 1,
                 max_retries: int = DEFAULT_MAX_RETRIES, admission: Admission | None = None,
                 report: dict[str, Any] | None = None) -> None:
        self._backend, self._work = backend, work
        self._batch = max(1, int(batch_size))
        self._max_retries = max_retries
        self._admission = admission or (
            FixedAdmission(work.max_concurrency) if work.pacing is None
            else PacedAdmission(work.pacing))
        self._todo: deque[Job] = deque(work.jobs)
        self._outstanding: dict[tuple[str, int], Job] = {}
        self._attempts: dict[tuple[str, int], int] = {}
        self._scoring: set[tuple[str, int]] = set()  # rows being scored here
        self._finishing: queue.SimpleQueue[tuple[Job, CaseResult | BaseException]] = \
            queue.SimpleQueue()
        self._scorer: ThreadPoolExecutor | None = None
        self._stopped = False
        self._failure: BaseException | None = None
        self._lock = threading.Lock()
        # refills run on this thread and the backend's; held around backend.submit, which
        # never waits for the thread that calls _wake, so the two cannot wait on each other
        self._refilling = threading.Lock()
        self._raw = getattr(work.target, "max_raw_bytes", DEFAULT_MAX_RAW_BYTES)
        self._report: dict[str, Any] = {**(report or {}), "retried": 0, "lost_rows": 0,
                                        "duplicates_dropped": 0}
        self._closed = False

    # ------------------------------------------------------------------ interface
    @property
    def in_flight(self) -> int:
        """Items submitted and not yet handed back (driver-side scoring included)."""
        with self._lock:
            return len(self._outstanding)

    def start(self) -> Dispatch:
        listen = getattr(self._backend, "listen", None)
        if callable(listen):
            listen(self._wake)
        self._refill()
        return self

    def stop(self) -> None:
        """Take no new item; those in flight still come back (``close`` cancels them)."""
        with self._refilling:
            self._stopped = True
            self._todo.clear()

    def join(self, timeout_s: float) -> None:
        end = time.monotonic() + timeout_s
        while self.in_flight and time.monotonic() < end:
            self._take(self._backend.poll(min(POLL_S, max(0.0, end - time.monotonic()))))

    def report(self) -> dict[str, Any]:
        """``{"retried": items sent again after a worker died (each may repeat a paid
        call), "lost_rows": items given up after max_retries losses,
        "duplicates_dropped": second rows of one item, ...}``."""
        return dict(self._report)

    def close(self) -> None:
        with self._refilling:  # a refill on the backend's thread finishes first
            if self._closed:
                return
            self._closed = True
        if self._scorer is not None:
            self._scorer.shutdown(wait=False, cancel_futures=True)
        self._backend.cancel()
        self._backend.close()

    def batches(self, interrupts: Interrupts | None = None, deadline: float | None = None,
                until: int = 1) -> Iterator[list[CaseResult]]:
        """As :meth:`evalkit.execute.executor.Executor.batches`."""
        while self.in_flight or (self._todo and not self._stopped):
            if interrupts is not None and interrupts.count >= until:
                return
            wait = POLL_S
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    return
            if self._scorer is not None:  # rows scored here come back on their own clock
                wait = min(wait, 0.005)
            finished = self._take(self._backend.poll(wait if self._finishing.empty() else 0))
            finished += self._drain_finishing()
            if not self._stopped:
                self._refill()
            if finished:
                yield finished
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    # ------------------------------------------------------------------ internals
    def _calls_in_flight(self) -> int:
        """Items whose call may still be running: the outstanding ones, less those a
        backend knows finished but has not handed back yet (:meth:`Backend.settled`)."""
        settled = getattr(self._backend, "settled", None)
        return self.in_flight - (int(settled()) if callable(settled) else 0)

    def _wake(self) -> None:
        """The backend's items settled (called on its thread): send the next batch now."""
        try:
            self._refill()
        except BaseException as exc:  # a client closing under us: the run's thread reports
            if not self._closed:
                self._fail(exc)

    def _refill(self) -> None:
        with self._refilling:
            if self._closed:
                return
            calls = self._calls_in_flight()
            sync = getattr(self._admission, "sync", None)
            if callable(sync):  # an admission written before sync existed has none
                sync(calls)
            room = self._admission.limit() - calls
            window = getattr(self._work, "window", None)  # a run stopping on a rule
            if window is not None and math.isfinite(limit := window.limit):
                sent = len(self._work.jobs) - len(self._todo)  # _todo: never-sent items
                room = min(room, int(limit) - sent)
            while room > 0 and self._todo and not self._stopped:
                n = self._admission.take(min(room, self._batch, len(self._todo)))
                if n == 0:
                    break  # the pacing holds the rest back: looked at again on the next poll
                take = [self._todo.popleft() for _ in range(n)]
                with self._lock:
                    for job in take:
                        self._outstanding[item_key(job)] = job
                try:
                    self._backend.submit(take)
                except BaseException:
                    for job in take:  # never sent: nothing of theirs can come back
                        self._forget(item_key(job))
                    raise
                room -= len(take)

    def _fail(self, exc: BaseException) -> None:
        self._failure = self._failure or exc
        self.stop()

    def _take(self, outcomes: list[Outcome]) -> list[CaseResult]:
        rows: list[CaseResult] = []
        again: list[Job] = []
        for out in outcomes:
            key = item_key(out.job)
            if key not in self._outstanding or key in self._scoring:
                self._report["duplicates_dropped"] += 1
                continue
            if out.failure is not None:
                self._forget(key)
                self._fail(out.failure)
            elif out.lost is not None:
                self._attempts[key] = self._attempts.get(key, 0) + 1
                if self._attempts[key] > self._max_retries or self._stopped:
                    self._forget(key)
                    if not self._stopped:
                        self._report["lost_rows"] += 1
                        rows.append(CaseResult(out.job.case.id, None, {}, (
                            f"case {out.job.case.id!r}: lost with its worker "
                            f"{self._attempts[key]} time(s) ({out.lost}); not retried again"
                        ), None, sample=getattr(out.job, "sample", None)))
                        self._admission.on_row(rows[-1])
                else:
                    self._report["retried"] += 1
                    again.append(out.job)
            elif out.row is not None:
                if any(s.name not in out.row.metrics and s.name not in out.row.metric_errors
                       for s in self._work.specs) and out.row.response is not None:
                    self._scoring.add(key)
                    self._score_here(out.job, out.row)
                else:
                    self._forget(key)
                    self._admission.on_row(out.row)
                    rows.append(out.row)
        for start in range(0, len(again), self._batch):
            self._backend.submit(again[start:start + self._batch])
        return rows

    def _forget(self, key: tuple[str, int]) -> None:
        with self._lock:
            self._outstanding.pop(key, None)

    def _score_here(self, job: Job, row: CaseResult) -> None:
        if self._scorer is None:
            self._scorer = ThreadPoolExecutor(self._work.max_concurrency,
                                              thread_name_prefix="evalkit-driver-score")

        def finish() -> None:
            try:
                self._finishing.put((job, finish_row(row, job, self._work.specs, self._raw)))
            except RowThenStop as exc:  # the answered case's row, then the run stops
                self._finishing.put((job, exc.row))
                self._finishing.put((job, exc.stop))
            except BaseException as exc:  # a judge's spending limit, a bug: the run stops
                self._finishing.put((job, exc))

        self._scorer.submit(finish)

    def _drain_finishing(self) -> list[CaseResult]:
        rows: list[CaseResult] = []
        while True:
            try:
                job, got = self._finishing.get_nowait()
            except queue.Empty:
                return rows
            self._forget(item_key(job))
            self._scoring.discard(item_key(job))
            if isinstance(got, BaseException):
                self._fail(got)
            else:
                self._admission.on_row(got)
                rows.append(got)
