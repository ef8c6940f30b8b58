"""Async targets: every call on one event loop, scoring in threads off the loop.

A target is *async* when it has an ``ainvoke(case)`` coroutine method (an
:class:`~evalkit.data.targets.CallableTarget` over an ``async def`` function,
``evalkit_http.AsyncHttpTarget``). :class:`AsyncExecutor` runs them with the interface
and the rules of the threaded :class:`~evalkit.execute.executor.Executor`: at most
``max_concurrency`` calls in flight (``min(max_concurrency, cases)`` tasks, each taking
the next case), the same :class:`~evalkit.execute.pacing.Pacing`, rows queued for the
caller in completion order, no new case after :meth:`stop`, the calls in flight still
handed over within the grace period.

The event loop runs in one daemon thread, so the caller's thread keeps collecting and
writing rows and handling Ctrl-C exactly as for threads. Metrics (an LLM judge included)
stay synchronous and run in a pool of at most ``max_concurrency`` daemon threads
(:class:`~evalkit.execute.calls.DaemonPool`: a grade that never returns cannot hold the
process after Ctrl-C), created as needed, so a slow grade never blocks the loop; only when
every metric of the run is :attr:`~evalkit.core.specs.MetricSpec.nonblocking` (the built-in
retrieval measures, exact_match, f1, contains and json_valid: work linear in the input) and
the row's input is small (:func:`small_input`: at most :data:`ON_LOOP_MAX_CHARS` characters
of response text and reference answers, at most :data:`ON_LOOP_MAX_IDS` ranked and judged
ids) is a row scored on the loop itself, which saves two thread hand-overs a case (most of
the runner's own cost at 256 calls in flight; docs/runner.md, "Async targets and rate
limits"). A larger row is scored in a thread like any other, so that one long response never
holds the loop. The rows finished in one turn of the loop are queued for the caller
together, when the turn ends, so the collecting thread wakes once for them. When the caller
stops waiting (the grace period is over, or a second Ctrl-C), the calls still in flight are
cancelled. At the end the loop awaits the target's ``aclose()`` when it has one (an
``httpx.AsyncClient`` belongs to the loop that opened it).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.rows import CaseResult
from evalkit.data.targets import AsyncTarget, Target
from evalkit.execute.calls import DaemonPool
from evalkit.execute.dispatch_window import DispatchWindow
from evalkit.execute.executor import (
    _WORKER_DONE,
    Called,
    Executor,
    Interrupts,
    Job,
    RowThenStop,
    checked_call,
    failed_call,
    pacing_report,
    rescored,
    row_of,
)
from evalkit.execute.pacing import Pacing
from evalkit.execute.samples import scoring_sample
from evalkit.plugins.failures import PLUGIN_FAILURES

#: The most characters (response text plus reference answers) a row scored on the loop
#: may hold: nonblocking metrics are linear in them (docs/runner.md).
ON_LOOP_MAX_CHARS = 8192
#: The most ids (ranked plus judged) a row scored on the loop may hold.
ON_LOOP_MAX_IDS = 10_000


def small_input(response: Any, case: GoldenCase) -> bool:
    """Whether a row's input is small enough for nonblocking metrics to score it on the
    loop: at most :data:`ON_LOOP_MAX_CHARS` characters of ``response.text`` and the
    case's reference answers, and at most :data:`ON_LOOP_MAX_IDS` ids of
    ``response.ranked_ids`` and ``case.relevance``."""
    text = getattr(response, "text", None)
    chars = (len(text) if isinstance(text, str) else 0) + sum(
        len(a) for a in case.reference_answers())
    ids = len(getattr(response, "ranked_ids", None) or ()) + len(case.relevance)
    return chars <= ON_LOOP_MAX_CHARS and ids <= ON_LOOP_MAX_IDS


def is_async_target(target: object) -> bool:
    """Whether ``target`` is called through an ``ainvoke(case)`` coroutine method."""
    method = getattr(target, "ainvoke", None)
    return method is not None and inspect.iscoroutinefunction(method)


class AsyncExecutor(Executor):
    """The tasks of one event loop over ``jobs``; see the module docstring."""

    def __init__(self, target: Target, target_name: str, jobs: Sequence[Job],
                 specs: Sequence[MetricSpec], max_concurrency: int,
                 pacing: Pacing | None = None, window: DispatchWindow | None = None) -> None:
        super().__init__(target, target_name, jobs, specs, max_concurrency, pacing, window)
        self._tasks_wanted = len(self._workers)
        self._workers = [threading.Thread(target=self._run_loop, name="evalkit-event-loop",
                                          daemon=True)] if self._tasks_wanted else []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._on_loop = bool(specs) and all(spec.nonblocking for spec in specs)
        self._outbox: list[CaseResult] = []  # rows of this turn of the loop (loop thread)

    def batches(self, interrupts: Interrupts | None = None, deadline: float | None = None,
                until: int = 1) -> Iterator[list[CaseResult]]:
        """As :meth:`Executor.batches`; once stopped, the calls still in flight when the
        caller stops waiting are cancelled."""
        yield from super().batches(interrupts, deadline, until)
        if self._stop.is_set() and self._running:
            self.cancel()

    def cancel(self) -> None:
        """Cancel the calls in flight (from any thread)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(lambda: [t.cancel() for t in self._tasks])

    # ------------------------------------------------------------------ the loop
    def _run_loop(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # a bug of the loop itself: the run stops
            self._stop.set()
            self._hand_over()
            self._done.put(exc)
        finally:
            self._hand_over()
            self._done.put(_WORKER_DONE)

    def _deliver(self, row: CaseResult) -> None:
        """Queue ``row`` for the caller when this turn of the loop ends."""
        if not self._outbox:
            asyncio.get_running_loop().call_soon(self._hand_over)
        self._outbox.append(row)

    def _hand_over(self) -> None:
        """Queue the rows of this turn (one item, so the caller wakes once)."""
        rows, self._outbox = self._outbox, []
        if rows:
            self._done.put(rows)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        pool = DaemonPool(self._tasks_wanted, thread_name_prefix="evalkit-score")
        try:
            self._tasks = [asyncio.create_task(self._task(pool))
                           for _ in range(self._tasks_wanted)]
            # each task ends when its jobs run out, the run stops, or cancel() cuts its
            # call (the driver does after the grace period): bounded by the calls
            await asyncio.gather(*self._tasks, return_exceptions=True)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            close = getattr(self._target, "aclose", None)
            if close is not None and inspect.iscoroutinefunction(close):
                with contextlib.suppress(Exception):  # it must not hide the run's outcome
                    await close()

    async def _task(self, pool: DaemonPool) -> None:
        pacing = self._pacing
        while not self._stop.is_set():
            # the job first, then the start (as in Executor._work): an idle task ends
            job = next(self._todo, None)  # one thread takes jobs: no lock needed
            if job is None:
                return
            index, self._taken = self._taken, self._taken + 1
            if self._window is not None and not await self._window.wait_async(
                    index, self._stop.is_set):
                return  # stopped while the window held it: the job is not run
            started = None
            if pacing is not None:
                started = await pacing.admit_async(self._stop.is_set)
                if started is None:
                    return
            with self._busy_lock:
                self._busy += 1
            try:
                row = await self._run(job, pool)
            except asyncio.CancelledError:
                return  # abandoned: the caller stopped waiting
            except RowThenStop as exc:  # the case's row, then the run stops
                self._stop.set()
                self._outbox.append(exc.row)
                self._hand_over()
                self._done.put(exc.stop)
                return
            except BaseException as exc:  # a stop signal, or a bug: the run stops
                self._stop.set()
                self._hand_over()
                self._done.put(exc)
                return
            finally:
                with self._busy_lock:
                    self._busy -= 1
            if pacing is not None and started is not None:
                pacing.release(started, *pacing_report(row))
            self._deliver(row)
            if self._on_loop:  # maybe scored here: let the other tasks and the hand-over run
                await asyncio.sleep(0)

    async def _run(self, job: Job, pool: DaemonPool) -> CaseResult:
        loop = asyncio.get_running_loop()
        stored = job.stored
        if stored is not None and stored.response is not None:
            if self._on_loop and small_input(stored.response, job.case):
                return rescored(job, self._specs)
            return await loop.run_in_executor(pool, rescored, job, self._specs)
        start = time.perf_counter()
        called: Called
        try:
            with scoring_sample(job.sample):  # this worker task's own context
                response: Any = await self._target.ainvoke(job.case)  # type: ignore[attr-defined]
        except PLUGIN_FAILURES as exc:
            called = failed_call(exc, self._name, job.case, start)
        else:
            called = checked_call(response, self._name, job.case, start)
        if called[0] is None or (self._on_loop and small_input(called[0], job.case)):
            return row_of(self._target, job, called, self._specs)
        return await loop.run_in_executor(pool, row_of, self._target, job, called,
                                          self._specs)


def make_executor(target: Target | AsyncTarget, target_name: str, jobs: Sequence[Job],
                  specs: Sequence[MetricSpec], max_concurrency: int,
                  pacing: Pacing | None = None, window: DispatchWindow | None = None
                  ) -> Executor:
    """An :class:`AsyncExecutor` for an async target, else the threaded
    :class:`~evalkit.execute.executor.Executor`; both start item ``i`` of ``jobs`` only
    once ``window`` allows it (:mod:`evalkit.execute.dispatch_window`)."""
    kind = AsyncExecutor if is_async_target(target) else Executor
    return kind(target, target_name, jobs, specs, max_concurrency,  # type: ignore[arg-type]
                pacing, window)


__all__ = ["ON_LOOP_MAX_CHARS", "ON_LOOP_MAX_IDS", "AsyncExecutor", "is_async_target",
           "make_executor", "small_input"]
