"""How far an executor may start items ahead of a rule the driver checks on their rows.

A run that stops on a rule (``evaluate(..., until_decided=...)``: the anytime-valid
sequence of :mod:`evalkit.execute.sequential_run`) checks it on the driver as rows
arrive. Without a bound, executor workers would start items as fast as the target
answers, so a fast target would be called on every case before the driver had looked
at the first rows, and the number of calls would depend on the target's speed. A
:class:`DispatchWindow` (``Work.window``) is that bound: item ``i`` of ``Work.jobs``
(counted from 0) may start only once ``i < settled + size``, where ``settled`` is the
number of leading items whose rows the driver has taken and checked
(:meth:`DispatchWindow.advance`) and ``size`` is the run's ``max_concurrency``. So when
the rule decides, at most ``size - 1`` items after the ones it rested on have started,
whatever the target's speed; the price is that one slow item holds the start of those
more than ``size`` places after it. :meth:`DispatchWindow.release` lifts the bound (the
rule can no longer decide, so every item runs).

Every executor honours it: the local threads (:meth:`DispatchWindow.wait`), the event
loop of async targets (:meth:`DispatchWindow.wait_async`) and a driver-side dispatcher
such as the ``evalkit-dask`` plugin's (:attr:`DispatchWindow.limit`, looked at before
each submission).
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable

__all__ = ["DispatchWindow"]

#: The longest a waiting worker sleeps before it looks at its stop flag again (seconds).
POLL_S = 0.1


class DispatchWindow:
    """The items of ``Work.jobs`` an executor may start now: those with an index below
    :attr:`limit` (see the module docstring).

    Args:
        size: how many items may run ahead of the settled ones (>= 1: the run's
            ``max_concurrency``).

    Raises:
        ValueError: ``size`` below 1.
    """

    def __init__(self, size: int) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"size must be an integer >= 1, got {size!r}")
        self.size = size
        self._limit: float = float(size)
        self._cond = threading.Condition()
        self._wakers: list[Callable[[], None]] = []

    @property
    def limit(self) -> float:
        """Items with an index below it may start (``inf`` once released)."""
        with self._cond:
            return self._limit

    def allows(self, index: int) -> bool:
        """Whether item ``index`` of ``Work.jobs`` may start now."""
        return index < self.limit

    def advance(self, settled: int) -> None:
        """The first ``settled`` items' rows are taken and checked: items up to
        ``settled + size`` (exclusive) may start. The limit never goes back."""
        self._set(float(settled + self.size))

    def release(self) -> None:
        """Every item may start (the rule can no longer stop the run)."""
        self._set(math.inf)

    def _set(self, limit: float) -> None:
        with self._cond:
            if limit <= self._limit:
                return
            self._limit = limit
            wakers, self._wakers = self._wakers, []
            self._cond.notify_all()
        for wake in wakers:
            wake()

    def wait(self, index: int, stopped: threading.Event) -> bool:
        """Block until item ``index`` may start (``True``) or ``stopped`` is set
        (``False``: the item is not started)."""
        with self._cond:
            while index >= self._limit:
                if stopped.is_set():
                    return False
                self._cond.wait(POLL_S)
        return not stopped.is_set()

    async def wait_async(self, index: int, stopped: Callable[[], bool]) -> bool:
        """:meth:`wait` for a task of an event loop: ``stopped()`` says whether to give
        up; the loop keeps running the other tasks meanwhile."""
        import asyncio

        loop = asyncio.get_running_loop()
        while True:
            if stopped():
                return False
            waiter = loop.create_future()

            def wake(waiter: asyncio.Future[None] = waiter) -> None:
                def done() -> None:
                    if not waiter.done():
                        waiter.set_result(None)

                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                    loop.call_soon_threadsafe(done)

            with self._cond:
                if index < self._limit:
                    return True
                self._wakers.append(wake)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter, POLL_S)
