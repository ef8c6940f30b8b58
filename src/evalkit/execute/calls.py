"""Calls to a service (a judge's verdicts or grades) from worker threads that Ctrl-C and
SIGTERM stop within a bounded time.

Two pieces, both used wherever evalkit calls a service from threads:

* :class:`DaemonPool`, a :class:`concurrent.futures.Executor` whose threads are
  daemons. A call that never returns (a server that accepts the connection and never
  answers, for the judge's whole ``timeout`` x ``retries``) cannot keep the process
  alive once the command has stopped waiting for it: a
  :class:`~concurrent.futures.ThreadPoolExecutor`'s threads are joined when the
  interpreter exits, however the command ended. The async runner scores in one
  (:mod:`evalkit.execute.async_executor`).
* :func:`call_all`, ``fn(0) ... fn(n - 1)`` at most ``max_concurrency`` at a time in a
  :class:`DaemonPool`, the calling thread waiting in slices of
  :data:`~evalkit.execute.executor.POLL_S` under
  :class:`~evalkit.execute.executor.Interrupts` (so SIGTERM counts as Ctrl-C). The
  first Ctrl-C starts no new call and gives the calls in flight the grace period to
  finish (their results are kept); a second one, or the end of the grace period, stops
  waiting: :class:`CallsInterrupted` is raised and the calls still running are
  abandoned. ``evalkit pairwise`` asks its verdicts this way and ``evalkit rescore``
  scores its rows this way (one at a time); ``evalkit run`` has the same rules
  (:mod:`evalkit.execute.executor`, whose workers also take pacing and windows).
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from typing import Any, TypeVar

from evalkit.execute.executor import POLL_S, Interrupts

T = TypeVar("T")

_STOP = object()  # what shutdown() queues for each thread


class DaemonPool(Executor):
    """At most ``max_workers`` daemon threads (started as work arrives) running what is
    submitted, in submission order; see the module docstring.

    Raises:
        ValueError: ``max_workers`` is not an integer >= 1.
    """

    def __init__(self, max_workers: int, thread_name_prefix: str = "evalkit-call") -> None:
        if isinstance(max_workers, bool) or not isinstance(max_workers, int) \
                or max_workers < 1:
            raise ValueError(f"max_workers must be an integer >= 1, got {max_workers!r}")
        self._max, self._prefix = max_workers, thread_name_prefix
        self._work: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()
        self._shut = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._shut:
                raise RuntimeError("cannot submit a call after shutdown")
            self._work.put((future, fn, args, kwargs))
            if self._idle:
                self._idle -= 1
            elif len(self._threads) < self._max:
                thread = threading.Thread(target=self._run, daemon=True,
                                          name=f"{self._prefix}-{len(self._threads)}")
                self._threads.append(thread)
                thread.start()
        return future

    def _run(self) -> None:
        while True:
            item = self._work.get()
            if item is _STOP:
                return
            future, fn, args, kwargs = item
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:  # the caller's to judge (a stop, a bug)
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            del item, future, fn, args, kwargs
            with self._lock:
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Take no more work; with ``cancel_futures`` the calls not started are cancelled;
        with ``wait`` wait for the running ones (without it they are abandoned: daemon
        threads do not hold the process)."""
        with self._lock:
            self._shut = True
            if cancel_futures:
                while True:
                    try:
                        item = self._work.get_nowait()
                    except queue.Empty:
                        break
                    if item is not _STOP:
                        item[0].cancel()
            for _ in self._threads:
                self._work.put(_STOP)
        if wait:
            for thread in self._threads:
                thread.join()


class CallsInterrupted(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) stopped :func:`call_all`.

    Attributes:
        done: calls that finished (their results were handed to ``take``).
        total: calls there were to make.
        abandoned: calls still running when the wait ended.
        grace_s: the grace period the calls in flight were given.
        again: a second Ctrl-C ended the wait before the grace period did.
    """

    def __init__(self, done: int, total: int, abandoned: int, grace_s: float,
                 again: bool) -> None:
        self.done, self.total, self.abandoned = done, total, abandoned
        self.grace_s, self.again = grace_s, again
        super().__init__(f"interrupted with {done} of {total} calls done")

    def line(self, what: str, kept: str) -> str:
        """One line for people: ``interrupted: 12 of 144 WHAT; 4 call(s) still running
        were abandoned; KEPT`` (``what``: ``verdicts received``)."""
        left = (f"; {self.abandoned} call(s) still running were abandoned"
                if self.abandoned else "")
        how = "interrupted again" if self.again else "interrupted"
        return f"{how}: {self.done} of {self.total} {what}{left}; {kept}"


def call_all(fn: Callable[[int], T], n: int, *, max_concurrency: int, grace_s: float,
             take: Callable[[int, T], None] | None = None,
             note: Callable[[str], None] | None = None) -> list[T | None]:
    """``[fn(0), ..., fn(n - 1)]``, at most ``max_concurrency`` calls at a time in daemon
    threads (each in a copy of the caller's :mod:`contextvars` context), each result handed
    to ``take(i, result)`` in the calling thread as it arrives; see the module docstring for
    Ctrl-C and SIGTERM (``note`` gets the line saying how long the calls in flight are
    waited for).

    A call that raises stops the others from starting; the ones running finish (Ctrl-C
    still stops the wait), then its exception is raised (the first one's).

    Raises:
        CallsInterrupted: Ctrl-C or SIGTERM (a ``KeyboardInterrupt``), after the grace
            period or a second one.
        BaseException: what a call raised.
    """
    out: list[T | None] = [None] * n
    pool = DaemonPool(max_concurrency)
    pending: dict[Future[T], int] = {}
    todo = iter(range(n))
    done, failure = 0, None

    def collect(finished: set[Future[T]]) -> None:
        nonlocal done, failure
        for future in finished:
            i = pending.pop(future)
            error = future.exception()
            if error is not None:
                failure = failure or error
                continue
            out[i] = result = future.result()
            done += 1
            if take is not None:
                take(i, result)

    try:
        with Interrupts() as interrupts:
            try:
                while interrupts.count == 0:
                    while failure is None and len(pending) < max_concurrency \
                            and (i := next(todo, None)) is not None:
                        # in the caller's context (a sample number, labels in use)
                        pending[pool.submit(contextvars.copy_context().run, fn, i)] = i
                    if not pending:
                        break
                    # in slices of POLL_S: Ctrl-C is seen within one
                    collect(wait(pending, POLL_S, FIRST_COMPLETED)[0])
            except KeyboardInterrupt:  # no handler of ours: the first Ctrl-C
                interrupts.count += 1
            if interrupts.count:
                again = _grace(pending, interrupts, grace_s, collect, note)
                raise CallsInterrupted(done, n, len(pending), grace_s, again) from None
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    if failure is not None:
        raise failure
    return out


def _grace(pending: dict[Future[T], int], interrupts: Interrupts, grace_s: float,
           collect: Callable[[set[Future[T]]], None],
           note: Callable[[str], None] | None) -> bool:
    """After the first Ctrl-C: wait up to ``grace_s`` for the calls in flight (a second
    Ctrl-C ends the wait); whether it was a second Ctrl-C."""
    if pending and note is not None:
        note(f"interrupted: waiting up to {grace_s:g} s for {len(pending)} call(s) in "
             "flight to finish (Ctrl-C again to stop now)")
    end = time.monotonic() + grace_s
    try:
        while pending and interrupts.count < 2 and (left := end - time.monotonic()) > 0:
            collect(wait(pending, min(POLL_S, left), FIRST_COMPLETED)[0])
    except KeyboardInterrupt:
        return True
    return interrupts.count > 1
