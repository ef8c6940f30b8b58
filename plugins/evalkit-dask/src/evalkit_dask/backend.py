"""The :class:`~evalkit_dask.dispatch.Backend` of the ``dask`` executor.

Each ``submit`` is one Dask task (:func:`evalkit_dask.worker.run_batch`) with a unique
key. Its done-callback (on Dask's callback thread) counts the task's items as settled
and tells the driver's :class:`~evalkit_dask.dispatch.Dispatch` (``listen``), which
sends the next batch from that thread at once, before the rows travel back and without
waiting for the driver's main thread; the future then goes on a queue, and ``poll``
gathers every finished future at once. A task that errs with ``KilledWorker`` (its
worker died while running it; the run's scheduler allows no silent reschedule when it is
the run's own LocalCluster) hands its items back as lost, and the driver sends them
again; a task cancelled or whose result was lost likewise.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from distributed.scheduler import KilledWorker

from evalkit.data.rows import CaseResult
from evalkit.execute.executor import Job
from evalkit_dask.dispatch import Outcome
from evalkit_dask.worker import WorkerPlan, forget, run_batch


class DaskBackend:
    """Tasks on ``client``'s cluster; ``cluster`` (one the run started) is closed with it.

    Args:
        client: a connected :class:`distributed.Client`.
        plan: the :class:`~evalkit_dask.worker.WorkerPlan` sent with every task, or its
            scattered future (a large pickled target), scattered again from ``value``
            when every worker that held it died.
        cluster: the LocalCluster this run started, or ``None``.
    """

    def __init__(self, client: Any, plan: Any, cluster: Any = None,
                 value: WorkerPlan | None = None) -> None:
        self._client, self._plan, self._cluster = client, plan, cluster
        self._value = value  # the plan itself, to scatter again if its replicas are lost
        self._token = uuid.uuid4().hex[:12]
        self._n = 0
        # submit runs on the driver's and Dask's threads; held for table updates, and around
        # a scatter, which waits at most the client's timeout
        self._lock = threading.Lock()
        self._done: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._tasks: dict[str, tuple[Any, list[Job]]] = {}
        self._settled: dict[str, int] = {}  # finished tasks not handed back: their items
        self._listener: Callable[[], None] | None = None

    def listen(self, wake: Callable[[], None]) -> None:
        """Call ``wake()`` (from Dask's callback thread) whenever a task's items settle."""
        self._listener = wake

    def submit(self, jobs: Sequence[Job]) -> None:
        with self._lock:
            self._n += 1
            key = f"evalkit-batch-{self._token}-{self._n}"
            if self._value is not None and \
                    getattr(self._plan, "status", "finished") != "finished":
                self._plan = self._client.scatter(self._value, broadcast=True, hash=False)
            future = self._client.submit(run_batch, self._plan, list(jobs), key=key,
                                         pure=False)
            self._tasks[key] = (future, list(jobs))
        future.add_done_callback(self._on_done)

    def _on_done(self, future: Any) -> None:
        with self._lock:
            task = self._tasks.get(future.key)
            if task is not None and future.status == "finished":
                self._settled[future.key] = len(task[1])
        self._done.put(future)
        wake = self._listener
        if wake is not None:
            wake()

    def settled(self) -> int:
        """Items of finished tasks whose rows are not handed back yet (their calls are
        over)."""
        with self._lock:
            return sum(self._settled.values())

    def poll(self, timeout_s: float) -> list[Outcome]:
        """The outcomes of the tasks done since the last call (waiting up to
        ``timeout_s`` for the first), gathered at once."""
        done = self._take_done(timeout_s)
        if not done:
            return []
        outcomes: list[Outcome] = []
        finished = [f for f in done if f.status == "finished"]
        results: list[Any] | None = None
        if finished:
            try:
                results = list(self._client.gather(finished))
            except Exception:
                results = None  # one of them was lost since: take them one by one
        if results is not None:
            for future, result in zip(finished, results, strict=True):
                outcomes += self._rows(future, result)
            done = [f for f in done if f.status != "finished"]
        for future in done:
            outcomes += self._one(future)
        return outcomes

    def _take_done(self, timeout_s: float) -> list[Any]:
        try:
            first = self._done.get(timeout=timeout_s) if timeout_s > 0 \
                else self._done.get_nowait()
        except queue.Empty:
            return []
        done = [first]
        while True:
            try:
                done.append(self._done.get_nowait())
            except queue.Empty:
                return done

    def _pop(self, key: str) -> list[Job] | None:
        """The items of task ``key``, no longer counted here; ``None`` for a second
        callback of one future. (Settled items stop counting before the driver forgets
        them, so its window errs on the small side, never over the bound.)"""
        with self._lock:
            self._settled.pop(key, None)
            task = self._tasks.pop(key, None)
        return None if task is None else task[1]

    def _rows(self, future: Any, result: list[CaseResult | BaseException]) -> list[Outcome]:
        jobs = self._pop(future.key)
        if jobs is None:  # a second callback of one future
            return []
        out: list[Outcome] = []
        for job, got in zip(jobs, result, strict=True):
            if isinstance(got, BaseException):
                out.append(Outcome(job, failure=got))
            else:
                out.append(Outcome(job, row=got))
        return out

    def _one(self, future: Any) -> list[Outcome]:
        with self._lock:
            task = self._tasks.get(future.key)
        if task is None:
            return []
        jobs = task[1]
        if future.status == "finished":
            try:
                return self._rows(future, future.result(timeout=30))
            except Exception as lost:
                why = f"result lost ({type(lost).__name__})"
        elif future.status == "error":
            exc = future.exception(timeout=30)
            if not isinstance(exc, KilledWorker):
                self._pop(future.key)
                return [Outcome(job, failure=exc) for job in jobs]
            why = f"worker died: {exc}"
        else:
            why = f"task {future.status}"
        self._pop(future.key)
        return [Outcome(job, lost=why) for job in jobs]

    def cancel(self) -> None:
        self._listener = None
        with self._lock:
            pending = [f for f, _ in self._tasks.values() if not f.done()]
            self._tasks.clear()
            self._settled.clear()
        if pending:
            self._client.cancel(pending)

    def close(self) -> None:
        """Release the run's targets on a cluster that outlives it, then disconnect (and
        stop the run's own LocalCluster)."""
        plan = self._value if self._value is not None else self._plan
        if self._cluster is None and isinstance(plan, WorkerPlan):
            with contextlib.suppress(Exception):  # a worker gone since: its targets too
                self._client.run(forget, plan.key)
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()
