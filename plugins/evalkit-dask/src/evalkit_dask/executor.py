"""The ``dask`` executor: a run's target calls on a Dask cluster, everything else here.

``DaskExecutor(address=None, ...)`` is what ``executor: {name: dask, address: ...}`` in
the eval config, ``evalkit run --executor dask [--scheduler ADDRESS]`` and
``evaluate(..., executor="dask")`` make. :meth:`DaskExecutor.check` (before the artifact
is touched) decides how the workers get the target: the eval config's factory and kwargs
(a :class:`~evalkit.execute.executor_api.TargetRecipe`), else the target object through
cloudpickle; one that cannot be sent is refused, naming it. :meth:`DaskExecutor.open`
connects (or starts a ``LocalCluster`` of worker processes on 127.0.0.1, stopped with
the run), scatters the plan once, builds the target on one worker to refuse a factory
the workers cannot import before any call, and returns a
:class:`~evalkit_dask.dispatch.Dispatch` over a :class:`~evalkit_dask.backend.DaskBackend`:
the in-flight bound, the retries of items lost with a worker and the artifact stay on the
driver (docs/scaling.md).
"""

from __future__ import annotations

import logging
import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from evalkit.execute.executor_api import UnsendableError, Work
from evalkit.io.limits import MAX_WAIT_S
from evalkit.stats.numeric import finite_real
from evalkit_dask.address import RefusedError, check_address, refused_fast
from evalkit_dask.dispatch import DEFAULT_MAX_RETRIES, Dispatch
from evalkit_dask.remote_work import on_driver_only, split_metrics
from evalkit_dask.spawn import local_cluster_start
from evalkit_dask.worker import WorkerPlan, probe

#: Seconds a worker of the run's own LocalCluster waits for a driver that has gone (a
#: SIGKILL) before it exits (Dask's ``death_timeout``).
DEATH_TIMEOUT_S = 10.0
#: A pickled target at least this large is scattered once instead of sent with each task.
SCATTER_BYTES = 1_000_000
#: Seconds to wait for the scheduler, and for the first worker to build the target,
#: unless the ``connect_timeout_s`` option says otherwise.
CONNECT_TIMEOUT_S = 60.0
#: The most worker processes of the run's own LocalCluster (one machine).
MAX_N_WORKERS = 256
#: The most task threads of one worker process, and the most items of one task.
MAX_THREADS_PER_WORKER = MAX_BATCH_SIZE = 1024


def _answers(address: str, timeout_s: float) -> None:
    """Connect to ``address`` and complete distributed's handshake within ``timeout_s``.

    distributed's own ``connect`` bounds the TCP connection but then waits for the
    peer's handshake without a limit, so a port that accepts and never speaks would hang
    the run; this bounds the whole exchange first.

    Raises:
        OSError: no handshake within ``timeout_s`` (or the connection failed).
        ValueError: ``address`` is not one distributed can parse.
    """
    import asyncio

    from distributed.comm import core

    connect: Any = core.connect  # distributed's annotations are partial

    async def shake() -> None:
        comm = await asyncio.wait_for(connect(address, timeout=timeout_s), timeout_s)
        await comm.close()

    # on a thread of its own: the caller may be inside a running event loop (a notebook)
    with ThreadPoolExecutor(1, thread_name_prefix="evalkit-dask-connect") as pool:
        try:
            pool.submit(asyncio.run, shake()).result()
        except TimeoutError:
            raise OSError(f"no handshake within {timeout_s:g} s") from None


def _seconds(name: str, value: Any) -> float:
    if (seconds := finite_real(value)) is None or not 0 < seconds <= MAX_WAIT_S:
        raise ValueError(f"dask executor: {name} must be a number of seconds above 0 and at "
                         f"most {MAX_WAIT_S:g} (one hour), got {value!r}")
    return float(value)


def _positive(name: str, value: Any, most: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
        raise ValueError(f"dask executor: {name} must be an integer from 1 to {most}, "
                         f"got {value!r}")


#: Tasks of one worker in flight at once at the full window (see default_batch_size).
TASKS_PER_WORKER = 2


def default_batch_size(max_concurrency: int, n_workers: int) -> int:
    """Items per task: the window shared out, two tasks per worker at a time, at most 64.

    Dask's guidance is few, larger tasks (its scheduler spends about a millisecond of CPU
    on each, and every task costs a round trip). Items of one task run at once, and the
    task ends with its slowest item: a worker's threads take turns on one interpreter
    lock, so 16 calls of a 50 ms service started together end over 66 ms, 8 over 59 ms, 4
    over 55 ms (one process, no Dask; docs/scaling.md). Two tasks per worker halve that
    tail and let one task's round trip overlap the other's calls."""
    per_task = math.ceil(max_concurrency / (TASKS_PER_WORKER * max(1, n_workers)))
    return max(1, min(64, per_task))


class DaskExecutor:
    """``factory(**options)`` of the ``dask`` executor.

    Args:
        address: the scheduler (``tcp://host:8786``); ``None`` starts a LocalCluster.
        n_workers: worker processes of that LocalCluster (default: the machine's CPUs;
            at most :data:`MAX_N_WORKERS`).
        threads_per_worker: task threads of each (default: enough for the window; at
            most :data:`MAX_THREADS_PER_WORKER`).
        batch_size: items per task (default :func:`default_batch_size`; at most
            :data:`MAX_BATCH_SIZE`).
        max_retries: how often an item lost with its worker is sent again (default 3).
        judge_on_workers: score LLM-judge metrics from installed plugins on the workers
            too; refused for a judge with a spending budget, or with a grade cache when
            the cluster is at ``address`` (docs/scaling.md); default False.
        death_timeout_s: how long the LocalCluster's workers outlive a dead driver, and
            how long each has to start (seconds, above 0, at most
            :data:`~evalkit.io.limits.MAX_WAIT_S`, one hour).
        connect_timeout_s: how long to wait for the scheduler at ``address`` to answer,
            and for the first worker to build the target (default 60, at most one
            hour); a port that refuses is given up after
            :data:`~evalkit_dask.address.REFUSED_RETRY_S`.

    Raises:
        ValueError: an option of the wrong type or range (named); ``address`` with a
            port outside 0-65535 (:func:`~evalkit_dask.address.check_address`).
    """

    def __init__(self, address: str | None = None, *, n_workers: int | None = None,
                 threads_per_worker: int | None = None, batch_size: int | None = None,
                 max_retries: int = DEFAULT_MAX_RETRIES, judge_on_workers: bool = False,
                 death_timeout_s: float = DEATH_TIMEOUT_S,
                 connect_timeout_s: float = CONNECT_TIMEOUT_S) -> None:
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise ValueError(f"dask executor: address must be tcp://host:port, got {address!r}")
        if address is not None:
            address = check_address(address)
        for name, value, most in (("n_workers", n_workers, MAX_N_WORKERS),
                                  ("threads_per_worker", threads_per_worker,
                                   MAX_THREADS_PER_WORKER),
                                  ("batch_size", batch_size, MAX_BATCH_SIZE)):
            _positive(name, value, most)
        if not isinstance(judge_on_workers, bool):
            raise ValueError("dask executor: judge_on_workers must be true or false, got "
                             f"{judge_on_workers!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"dask executor: max_retries must be an integer >= 0, "
                             f"got {max_retries!r}")
        self.address, self.n_workers = address, n_workers
        self.threads_per_worker, self.batch_size = threads_per_worker, batch_size
        self.max_retries, self.judge_on_workers = max_retries, judge_on_workers
        self.death_timeout_s = _seconds("death_timeout_s", death_timeout_s)
        self.connect_timeout_s = _seconds("connect_timeout_s", connect_timeout_s)
        self._plan: WorkerPlan | None = None

    # ------------------------------------------------------------------ the seam
    def check(self, work: Work) -> None:
        """Decide how the workers get the target and metrics; refuse what cannot go.

        Raises:
            UnsendableError: no recipe and the target does not pickle (names it); a
                judge that cannot be scored correctly on the workers (judge_on_workers).
        """
        self._plan = self._make_plan(work)

    def open(self, work: Work) -> Dispatch:
        """Connect (or start the LocalCluster), probe one worker, and return the driver
        loop over the cluster.

        Raises:
            UnsendableError: the workers cannot build the target (the error is theirs).
            OSError: the scheduler does not answer within ``connect_timeout_s``
                (:class:`~evalkit_dask.address.RefusedError` when its port refuses); the
                run's own LocalCluster did not start
                (:class:`~evalkit_dask.spawn.ClusterStartError`, naming a script without
                an ``if __name__ == "__main__":`` guard, or ``death_timeout_s`` when the
                worker processes were too slow to start).
            ValueError: the address is not one distributed can parse.
        """
        plan = self._plan or self._make_plan(work)
        client, cluster, n_workers = self._connect(work.max_concurrency)
        try:
            # a small plan travels with each task (a worker that joins later has it too); a
            # large pickled target is scattered to every worker once
            shared: Any = plan if len(plan.pickled or b"") < SCATTER_BYTES else \
                client.scatter(plan, broadcast=True, hash=False)
            error, scored = client.submit(probe, shared, pure=False).result(
                timeout=self.connect_timeout_s)
            if error is not None:
                raise UnsendableError(
                    f"target {work.target_name!r} cannot be built on the Dask workers: "
                    f"{error}; install the target's package on every worker (or pass its "
                    "folder as the eval config's folder)")
        except BaseException:
            client.close()
            if cluster is not None:
                cluster.close()
            raise
        from evalkit_dask.backend import DaskBackend

        batch = self.batch_size or default_batch_size(work.max_concurrency, n_workers)
        report = {"scheduler": self.address or "LocalCluster", "workers": n_workers,
                  "batch_size": batch, "metrics_on_workers": scored}
        backend = DaskBackend(client, shared, cluster, None if shared is plan else plan)
        return Dispatch(backend, work, batch_size=batch,
                        max_retries=self.max_retries, report=report)

    # ------------------------------------------------------------------ internals
    def _make_plan(self, work: Work) -> WorkerPlan:
        import hashlib

        import cloudpickle

        remote, _driver = split_metrics(work.specs, judge_on_workers=self.judge_on_workers)
        if self.judge_on_workers:
            self._check_judges_on_workers(work, remote)
        pickled: bytes | None = None
        if work.recipe is not None:
            try:
                cloudpickle.dumps(work.recipe)
            except Exception as exc:
                raise UnsendableError(
                    f"the kwargs of target factory {work.recipe.factory!r} cannot be sent to "
                    f"the Dask workers: {type(exc).__name__}: {exc}") from None
            key = work.recipe.key()
        else:
            try:
                pickled = cloudpickle.dumps(work.target)
            except Exception as exc:
                raise UnsendableError(
                    f"target {work.target_name!r} cannot be sent to the Dask workers: "
                    f"{type(exc).__name__}: {exc}; give its factory and kwargs instead "
                    "(evalkit run does, from the eval config; in Python, "
                    "ExecutorChoice('dask', target=TargetRecipe(factory, kwargs)))") from None
            key = hashlib.sha256(pickled).hexdigest()
        key = hashlib.sha256(f"{key}:{sorted(remote.items())}".encode()).hexdigest()
        return WorkerPlan(key, work.target_name, work.recipe, pickled, remote, len(work.specs))

    def _check_judges_on_workers(self, work: Work, remote: dict[str, str]) -> None:
        """Refuse ``judge_on_workers`` for a judge whose limits or cache would be wrong
        there: a spending ``budget`` is held whole by every worker process (n workers
        could spend n times it), and a grade ``cache`` is a SQLite file of this machine,
        shared by the run's own LocalCluster's processes but by nothing on a cluster
        elsewhere (each machine would grade again, and its copy would be lost)."""
        for spec in work.specs:
            if spec.name not in remote or not on_driver_only(spec):
                continue
            if getattr(spec.fn, "budget", None) is not None:
                raise UnsendableError(
                    f"judge_on_workers: metric {spec.name!r} has a spending budget, which "
                    "every worker process would hold whole (each could spend all of it); "
                    "score it on the driver (leave judge_on_workers false) or drop its "
                    "budget")
            if getattr(spec.fn, "cache", None) is not None and self.address is not None:
                raise UnsendableError(
                    f"judge_on_workers: metric {spec.name!r} keeps its grades in a SQLite "
                    "cache on this machine, which the workers of the cluster at "
                    f"{self.address} do not share; score it on the driver (leave "
                    "judge_on_workers false), or run without an address (the run's own "
                    "LocalCluster shares this machine's cache file)")

    def _connect(self, max_concurrency: int) -> tuple[Any, Any, int]:
        import dask
        import distributed

        # distributed's own annotations are partial: its classes are called as Any here
        Client: Any = distributed.Client
        LocalCluster: Any = distributed.LocalCluster

        if self.address is not None:
            try:
                refused_fast(self.address, self.connect_timeout_s)
                _answers(self.address, self.connect_timeout_s)
                client = Client(self.address, timeout=f"{self.connect_timeout_s}s")
            except RefusedError:
                raise  # it says what is wrong already
            except OSError as exc:
                raise OSError(f"dask executor: no scheduler answers at {self.address} within "
                              f"connect_timeout_s {self.connect_timeout_s:g} s ({exc})") from None
            except ValueError as exc:  # distributed's parse of the address
                raise ValueError(f"dask executor: the scheduler address {self.address!r} "
                                 f"is not one ({exc}); write tcp://host:8786") from None
            n = len(client.scheduler_info().get("workers", {})) or 1
            return client, None, n
        n = self.n_workers or max(1, os.cpu_count() or 1)
        batch = self.batch_size or default_batch_size(max_concurrency, n)
        threads = self.threads_per_worker or min(
            MAX_THREADS_PER_WORKER, math.ceil(max_concurrency / batch / n) + 1)
        # the run's own scheduler reschedules nothing silently: a task whose worker died
        # errs with KilledWorker at once, so the driver retries it and counts it
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
                local_cluster_start(self.death_timeout_s):
            cluster = LocalCluster(
                n_workers=n, threads_per_worker=threads, processes=True, host="127.0.0.1",
                # workers' own logs stay quiet: a failed task reaches the driver as its
                # exception, and a worker whose scheduler closed on Ctrl-C would print a
                # heartbeat traceback under the run's last message
                dashboard_address=None, silence_logs=logging.CRITICAL,
                death_timeout=self.death_timeout_s,
                # the scheduler's HTTP server (health, metrics) always starts: on a free
                # port of 127.0.0.1, so a cluster already on 8787 raises no warning
                scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            )
        from evalkit_dask.worker import IgnoreCtrlC

        try:
            client = Client(cluster)
            client.register_plugin(IgnoreCtrlC())
        except BaseException:
            cluster.close()
            raise
        return client, cluster, n
