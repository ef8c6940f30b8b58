"""The :class:`~evalkit.execute.dispatch.Backend` of the ``dask`` executor.

Each ``submit`` is one Dask task (:func:`evalkit_dask.worker.run_batch`) with a unique
key; its done-callback puts the future on a queue; ``poll`` first notes the newly done
tasks (so the driver refills the window before the rows travel), then gathers every
finished future at once. A task that errs with ``KilledWorker`` (its worker
died while running it; the run's scheduler allows no silent reschedule when it is the
run's own LocalCluster) hands its items back as lost, and the driver sends them again;
a task cancelled or whose result was lost likewise.
"""

from __future__ import annotations

import contextlib
import queue
import uuid
from collections.abc import Sequence
from typing import Any

from distributed.scheduler import KilledWorker

from evalkit.data.rows import CaseResult
from evalkit.execute.dispatch import Outcome
from evalkit.execute.executor import Job
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
        self._done: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._tasks: dict[str, tuple[Any, list[Job]]] = {}
        self._ready: list[Any] = []  # done futures noted, not fetched yet
        self._settled = 0

    def submit(self, jobs: Sequence[Job]) -> None:
        self._n += 1
        key = f"evalkit-batch-{self._token}-{self._n}"
        if self._value is not None and getattr(self._plan, "status", "finished") != "finished":
            self._plan = self._client.scatter(self._value, broadcast=True, hash=False)
        future = self._client.submit(run_batch, self._plan, list(jobs), key=key, pure=False)
        self._tasks[key] = (future, list(jobs))
        future.add_done_callback(self._done.put)

    def settled(self) -> int:
        """Items of finished tasks whose rows are not fetched yet (their calls are over)."""
        return self._settled

    def poll(self, timeout_s: float) -> list[Outcome]:
        """The outcomes of the tasks done since the last call. When tasks are newly
        done, the first call only notes them (:meth:`settled`) and returns nothing, so
        the driver sends the next items before this fetches the rows (one round trip
        hidden); the next call fetches them at once."""
        if not self._ready:
            done = self._take_done(timeout_s)
            if not done:
                return []
            self._ready = done
            self._settled = sum(len(self._tasks.get(f.key, (None, []))[1]) for f in done
                                if f.status == "finished")
            return []
        done, self._ready, self._settled = self._ready + self._take_done(0), [], 0
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

    def _rows(self, future: Any, result: list[CaseResult | BaseException]) -> list[Outcome]:
        if future.key not in self._tasks:  # a second callback of one future
            return []
        _, jobs = self._tasks.pop(future.key)
        out: list[Outcome] = []
        for job, got in zip(jobs, result, strict=True):
            if isinstance(got, BaseException):
                out.append(Outcome(job, failure=got))
            else:
                out.append(Outcome(job, row=got))
        return out

    def _one(self, future: Any) -> list[Outcome]:
        if future.key not in self._tasks:
            return []
        _, jobs = self._tasks[future.key]
        if future.status == "finished":
            try:
                return self._rows(future, future.result(timeout=30))
            except Exception as lost:
                why = f"result lost ({type(lost).__name__})"
        elif future.status == "error":
            exc = future.exception(timeout=30)
            if not isinstance(exc, KilledWorker):
                self._tasks.pop(future.key, None)
                return [Outcome(job, failure=exc) for job in jobs]
            why = f"worker died: {exc}"
        else:
            why = f"task {future.status}"
        self._tasks.pop(future.key, None)
        return [Outcome(job, lost=why) for job in jobs]

    def cancel(self) -> None:
        pending = [f for f, _ in self._tasks.values() if not f.done()]
        if pending:
            self._client.cancel(pending)
        self._tasks.clear()
        self._ready, self._settled = [], 0

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
