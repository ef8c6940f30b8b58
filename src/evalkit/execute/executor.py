"""Calling a target on many cases at once, scoring each answer, and stopping cleanly.

:class:`Executor` runs ``min(max_concurrency, cases)`` worker threads. Each takes the next
case, calls the target (or, for a case whose stored response only needs its failed
metrics again, reuses that response), scores it with every metric in the same thread (so
a metric that calls a service, an LLM judge, shares the concurrency) and queues the row.
The caller takes every row queued since it last looked, in completion order.

Ctrl-C or SIGTERM (:class:`Interrupts`): the first one stops the workers from taking new cases; the
calls in flight that finish within the grace period are still handed to the caller, so
their rows are written, not thrown away. A second Ctrl-C stops waiting at once. Worker
threads are daemons, so a call that never returns cannot keep the process alive after
that.
"""

from __future__ import annotations

import queue
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Any, NamedTuple

from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.rows import DEFAULT_MAX_RAW_BYTES, CaseResult, bounded_response
from evalkit.data.targets import Target, TargetError, TargetResponse
from evalkit.execute.dispatch_window import DispatchWindow
from evalkit.execute.pacing import Pacing, reported_tokens
from evalkit.execute.samples import scoring_sample
from evalkit.execute.scoring import score_case_until_stop
from evalkit.io.redaction import error_text, install_log_redaction, mask, scrub_exception
from evalkit.plugins.failures import PLUGIN_FAILURES
from evalkit.stats.numeric import finite_real, value_text

#: The longest the grace period lasts unless told otherwise (seconds).
MAX_DEFAULT_GRACE_S = 10.0
#: How often the collecting thread looks at the queue and the interrupt flag (seconds).
POLL_S = 0.1

_WORKER_DONE = object()  # what a worker thread queues when it stops

#: one call's outcome: ``(response, error, latency_ms, (requests, rate_limited))``
Called = tuple[TargetResponse | None, str | None, float, tuple[int | None, int]]


class Job(NamedTuple):
    """One case to run: call the target, or (``stored`` given) score ``stored``'s
    response again without calling it."""

    case: GoldenCase
    stored: CaseResult | None = None
    #: the sample number in a run with repeated samples (:mod:`evalkit.execute.samples`)
    sample: int | None = None


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run; raised by :func:`evalkit.execute.target_runner.evaluate` once the rows
    that arrived are written and the artifact is synced.

    Attributes:
        done: items with a row (kept from before, and completed now): cases, or with
            repeated samples (case, sample) pairs.
        total: items of the run: the golden set's cases times ``epochs``.
        abandoned: calls still running when the runner stopped waiting.
        grace_s: the grace period the calls in flight were given.
        again: a second Ctrl-C ended the wait before the grace period did.
        epochs: K, the samples per case (1: ``done`` and ``total`` count cases).
    """

    def __init__(self, done: int, total: int, abandoned: int, grace_s: float,
                 again: bool, epochs: int = 1) -> None:
        self.done, self.total, self.abandoned = done, total, abandoned
        self.grace_s, self.again, self.epochs = grace_s, again, epochs
        super().__init__(f"interrupted with {self._progress('done')}")

    def _progress(self, done: str) -> str:
        if self.epochs <= 1:
            return f"{self.done} of {self.total} cases {done}"
        return (f"{self.done} of {self.total} samples {done} ({self.total // self.epochs} "
                f"cases x {self.epochs} samples)")

    def line(self, artifact: object = None) -> str:
        """One line for people: what was kept, what was dropped, how to continue (a run
        with repeated samples counts samples: ``8 of 60 samples are done (20 cases x 3
        samples)``)."""
        where = f" in {artifact}" if artifact is not None else ""
        left = (f"; {self.abandoned} call(s) still running were abandoned"
                if self.abandoned else "")
        how = "interrupted again" if self.again else "interrupted"
        return f"{how}: {self._progress('are done')}{where}{left}; continue with --resume"


def default_grace_s(target: Any) -> float:
    """The smaller of the target's bound on one attempt (``attempt_bound_s``, else
    ``timeout_s``, when it has one) and :data:`MAX_DEFAULT_GRACE_S`."""
    for attr in ("attempt_bound_s", "timeout_s"):
        value = getattr(target, attr, None)
        seconds = finite_real(value)
        if seconds is not None and seconds > 0:
            return min(seconds, MAX_DEFAULT_GRACE_S)
    return MAX_DEFAULT_GRACE_S


class Interrupts:
    """Counts Ctrl-C (SIGINT) and SIGTERM instead of raising :class:`KeyboardInterrupt`
    anywhere (or ending the process), while the block runs in the main thread: SIGINT
    when it has Python's default handler, SIGTERM when it has the default action
    (otherwise it leaves that signal alone, and a ``KeyboardInterrupt`` counts as the
    first Ctrl-C). A SIGTERM (``kill``, a container or CI stopping the job) is handled
    like a Ctrl-C, so the rows of the calls in flight are written too."""

    _DEFAULTS = ((signal.SIGINT, signal.default_int_handler),
                 (signal.SIGTERM, signal.SIG_DFL))

    def __init__(self) -> None:
        self.count = 0
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():
            for signum, default in self._DEFAULTS:
                if signal.getsignal(signum) is default:
                    self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1

    def __exit__(self, *exc: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous = {}


class Executor:
    """Worker threads over ``jobs``; see the module docstring. With a ``window``
    (:mod:`evalkit.execute.dispatch_window`), job ``i`` starts only once it allows it.

    A worker whose job raises a :class:`BaseException` that is not an ``Exception`` (an
    LLM judge's spending limit) or an unexpected error (a bug, or the error of a metric's
    :class:`~evalkit.execute.scoring.RunAborted`) stops the run: no worker takes a new job, the
    rows of the jobs already running are still handed over, then :meth:`batches` raises
    the first such exception.
    """

    def __init__(self, target: Target, target_name: str, jobs: Sequence[Job],
                 specs: Sequence[MetricSpec], max_concurrency: int,
                 pacing: Pacing | None = None, window: DispatchWindow | None = None) -> None:
        self._target, self._name, self._specs = target, target_name, specs
        self._pacing = pacing  # adaptive concurrency and rate limits (execute/pacing.py)
        self._window = window  # which jobs may start (execute/dispatch_window.py)
        self._todo = iter(jobs)
        self._taken = 0  # jobs taken from _todo: the next one's index in jobs
        self._todo_lock = threading.Lock()
        self._stop = threading.Event()
        self._done: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._running = 0
        self._busy = 0
        self._busy_lock = threading.Lock()
        self._failure: BaseException | None = None
        self._workers = [threading.Thread(target=self._work, name=f"evalkit-target-{i}",
                                          daemon=True)
                         for i in range(min(max_concurrency, len(jobs)))]

    @property
    def in_flight(self) -> int:
        """Jobs being worked on now."""
        with self._busy_lock:
            return self._busy

    def start(self) -> Executor:
        install_log_redaction()  # well-known secret forms are masked in every log record
        for thread in self._workers:
            thread.start()
        self._running = len(self._workers)
        return self

    def stop(self) -> None:
        """Take no new job; the running ones finish (and their rows are queued)."""
        self._stop.set()

    def join(self, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` seconds in all for the running jobs to end, so that no
        call outlives the run that started it (a worker still calling after the run has
        raised would spend, or log, behind the caller's back)."""
        end = time.monotonic() + timeout_s
        for thread in self._workers:
            if thread.is_alive():
                thread.join(max(0.0, end - time.monotonic()))

    def _work(self) -> None:
        try:
            while not self._stop.is_set():
                # the job first, then the start: an idle worker finds the queue empty
                # and ends, instead of waiting for a request token no call will use
                with self._todo_lock:
                    job = next(self._todo, None)
                    index, self._taken = self._taken, self._taken + 1
                if job is None:
                    return
                if self._window is not None and not self._window.wait(index, self._stop):
                    return  # stopped while the window held it: the job is not run
                started = None if self._pacing is None else self._pacing.admit(self._stop)
                if self._pacing is not None and started is None:
                    return  # stopped while waiting for a start: the job is not run
                with self._busy_lock:
                    self._busy += 1
                try:
                    row = run_job(self._target, self._name, job, self._specs)
                except RowThenStop as exc:  # the case's row, then the run stops
                    self._stop.set()
                    self._done.put(exc.row)
                    self._done.put(exc.stop)
                    return
                except BaseException as exc:  # a stop signal, or a bug: the run stops
                    self._stop.set()
                    self._done.put(exc)
                    return
                finally:
                    with self._busy_lock:
                        self._busy -= 1
                if started is not None and self._pacing is not None:
                    self._pacing.release(started, *pacing_report(row))
                self._done.put(row)
        finally:
            self._done.put(_WORKER_DONE)

    def _collect(self, first: Any) -> list[CaseResult]:
        batch: list[CaseResult] = []
        item = first
        while True:
            if item is _WORKER_DONE:
                self._running -= 1
            elif isinstance(item, BaseException):
                self._failure = self._failure or item
            elif isinstance(item, list):  # the rows of one turn of an event loop
                batch.extend(item)
            else:
                batch.append(item)
            try:
                item = self._done.get_nowait()
            except queue.Empty:
                return batch

    def batches(self, interrupts: Interrupts | None = None, deadline: float | None = None,
                until: int = 1) -> Iterator[list[CaseResult]]:
        """Yield the rows queued since the last batch, until every worker is done, the
        ``deadline`` (``time.monotonic()``) passes, or ``interrupts`` has counted
        ``until`` Ctrl-C. Raises the first failure of a worker once every worker has
        stopped."""
        while self._running:
            if interrupts is not None and interrupts.count >= until:
                return
            wait = POLL_S
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    return
            try:  # in slices of POLL_S: a run lasts as long as its calls (each bounded by
                # its target), Ctrl-C ends the wait, and after it the deadline does
                item = self._done.get(timeout=wait)
            except queue.Empty:
                continue
            batch = self._collect(item)
            if batch:
                yield batch
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure


def run_job(target: Target, target_name: str, job: Job,
            specs: Sequence[MetricSpec]) -> CaseResult:
    """Invoke (or reuse the stored response) and score one case (one sample of it)."""
    if job.stored is not None and job.stored.response is not None:
        return rescored(job, specs)
    with scoring_sample(job.sample):  # a target may read its sample number too
        called = call(target, target_name, job.case)
    return row_of(target, job, called, specs)


def rescored(job: Job, specs: Sequence[MetricSpec]) -> CaseResult:
    """The row of a job whose stored response is scored again (no call)."""
    assert job.stored is not None and job.stored.response is not None
    stop: RowThenStop | None = None
    with scoring_sample(job.sample):
        try:
            row = scored(job.case, job.stored.response, job.stored.latency_ms, specs)
        except RowThenStop as exc:
            row, stop = exc.row, exc
    row.sample = job.sample
    if stop is not None:
        raise stop
    return row


def row_of(target: Target, job: Job, called: Called, specs: Sequence[MetricSpec]
           ) -> CaseResult:
    """The scored row of one call's outcome (what :func:`call` returned), keyed by the
    job's sample; metrics see the sample through :func:`scoring_sample`."""
    response, error, latency, (requests, limited) = called
    stop: RowThenStop | None = None
    if response is None:
        row = CaseResult(job.case.id, None, {}, error, latency, requests=requests,
                         rate_limited=limited)
    else:
        with scoring_sample(job.sample):
            try:  # metrics see the whole raw body
                row = scored(job.case, response, latency, specs)
            except RowThenStop as exc:  # the row is written, then the run stops
                row, stop = exc.row, exc
        row.response = bounded_response(
            response, getattr(target, "max_raw_bytes", DEFAULT_MAX_RAW_BYTES))
        row.requests, row.rate_limited = response.requests, response.rate_limited
    row.sample = job.sample
    if stop is not None:
        raise stop
    return row


def call(target: Target, target_name: str, case: GoldenCase) -> Called:
    """``(response, error, latency_ms, (requests, rate_limited))`` of one call; a failure
    is an error message (and the counts its ``TargetError`` reports)."""
    start = time.perf_counter()
    try:
        response = target.invoke(case)
    except PLUGIN_FAILURES as exc:  # a sys.exit() in the target fails its case too
        return failed_call(exc, target_name, case, start)
    return checked_call(response, target_name, case, start)


def failed_call(exc: BaseException, target_name: str, case: GoldenCase, start: float
                ) -> Called:
    """What :func:`call` returns for a call (started at ``start``, ``perf_counter``)
    that raised ``exc``."""
    elapsed = (time.perf_counter() - start) * 1000.0
    scrub_exception(exc)
    counts = (getattr(exc, "requests", None), int(getattr(exc, "rate_limited", 0) or 0))
    if isinstance(exc, TargetError):
        return None, mask(str(exc)), elapsed, counts
    return None, (
        f"target {target_name!r} failed on case {case.id!r}: {error_text(exc)}"
    ), elapsed, counts


def checked_call(response: Any, target_name: str, case: GoldenCase, start: float
                 ) -> Called:
    """What :func:`call` returns for a call that returned ``response``."""
    elapsed = (time.perf_counter() - start) * 1000.0
    if not isinstance(response, TargetResponse):
        return None, (
            f"target {target_name!r} returned {type(response).__name__} for case "
            f"{case.id!r}; invoke() must return a TargetResponse"
        ), elapsed, (None, 0)
    given = finite_real(response.latency_ms)
    if given is None or given < 0:
        return None, (
            f"target {target_name!r} returned a latency_ms of {value_text(response.latency_ms)} "
            f"for case {case.id!r}; it must be a finite number of milliseconds >= 0 (0: "
            "the runner measures the call)"), elapsed, (response.requests,
                                                         response.rate_limited)
    latency = given if given > 0 else elapsed
    return response, None, latency, (response.requests, response.rate_limited)



def pacing_report(row: CaseResult) -> tuple[int, int]:
    """``(rate_limited, tokens)`` of a row, for :meth:`Pacing.release`."""
    tokens = 0 if row.response is None else reported_tokens(row.response.meta)
    return row.rate_limited, tokens



class RowThenStop(BaseException):
    """A metric stopped the whole run (a judge's spending limit, or its credentials
    refused) while scoring a case whose response is at hand: :attr:`row` is that case's
    row (the stopped metrics as its errors) to write before the run stops with
    :attr:`stop`. A ``BaseException``, so per-case handlers let it through.

    Attributes:
        row: the case's row.
        stop: what stops the run (re-raised once the row is written).
    """

    def __init__(self, row: CaseResult, stop: BaseException) -> None:
        super().__init__(str(stop))
        self.row, self.stop = row, stop


def scored(case: GoldenCase, response: TargetResponse, latency: float | None,
           specs: Sequence[MetricSpec]) -> CaseResult:
    """The row of ``response``: every metric that could be computed, and the message of
    each that failed (:func:`evalkit.execute.scoring.score_case_until_stop`).

    Raises:
        RowThenStop: a metric stopped the run; the row is in it.
    """
    values, errors, stop = score_case_until_stop(response, case, specs)
    row = CaseResult(case.id, response, values, None, latency, details(case, specs),
                     metric_errors={m: mask(e) for m, e in errors.items()})
    if stop is not None:
        raise RowThenStop(row, stop)
    return row


def details(case: GoldenCase, specs: Sequence[MetricSpec]) -> dict[str, Any]:
    """What metrics with a ``details(case_id) -> dict | None`` method (an LLM judge)
    published for ``case``, by metric name."""
    out: dict[str, Any] = {}
    for spec in specs:
        get = getattr(spec.fn, "details", None)
        if callable(get):
            found = get(case.id)
            if found is not None:
                out[spec.name] = found
    return out
