"""What runs inside a Dask worker: the target built once, a batch of items run at once.

A task is :func:`run_batch` on several work items. The worker builds the target and
resolves the metrics once per :class:`WorkerPlan` (a cache keyed by the plan's key: the
factory and its kwargs, or the pickled target, with the metric names), so an
``HttpTarget`` keeps one connection pool per worker process for the whole run. The
items of one task are called concurrently on a thread pool of the worker process, and
the task returns when all of them have their row: each item's row, or the exception
that stops the run (a judge's spending limit, a bug), in the order of the items.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from evalkit.core.specs import MetricSpec
from evalkit.data.rows import CaseResult
from evalkit.data.targets import Target
from evalkit.execute.executor import Job
from evalkit.execute.executor_api import TargetRecipe
from evalkit.execute.scoring import RunAborted
from evalkit_dask.remote_work import build_target, run_item, worker_metrics

#: The most item threads of one worker process (idle ones cost nothing).
MAX_ITEM_THREADS = 512


@dataclass(frozen=True)
class WorkerPlan:
    """What every task of a run shares, scattered to the workers once.

    Attributes:
        key: the worker-side cache key.
        target_name: for messages.
        recipe: how to build the target, or ``None`` when ``pickled`` is the target.
        pickled: the cloudpickle bytes of the target object, or ``None``.
        metrics: ``{name: provider}`` the workers may score.
        n_metrics: how many metrics the run has (the rest are scored on the driver).
    """

    key: str
    target_name: str
    recipe: TargetRecipe | None
    pickled: bytes | None
    metrics: Mapping[str, str]
    n_metrics: int


@dataclass(frozen=True)
class _Built:
    target: Target
    specs: Sequence[MetricSpec]
    complete: bool


# held while a plan's target is built, once per worker process: the worker's other
# tasks, which need that target, wait as long as its factory takes
_lock = threading.Lock()
_built: dict[str, _Built] = {}
_pool: ThreadPoolExecutor | None = None


def prepared(plan: WorkerPlan) -> _Built:
    """The target and metrics of ``plan`` in this process, built on first use."""
    global _pool
    with _lock:
        found = _built.get(plan.key)
        if found is None:
            made = build_target(plan.recipe if plan.recipe is not None else plan.pickled)
            specs = worker_metrics(plan.metrics)
            found = _built[plan.key] = _Built(made, specs, len(specs) == plan.n_metrics)
        if _pool is None:
            _pool = ThreadPoolExecutor(MAX_ITEM_THREADS, thread_name_prefix="evalkit-item")
        return found


def probe(plan: WorkerPlan) -> tuple[str | None, list[str]]:
    """``(None, names of the metrics scored on the workers)``, or ``(the error, [])``
    when the target cannot be built here."""
    try:
        built = prepared(plan)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}", []
    return None, [s.name for s in built.specs]


def sendable(exc: BaseException) -> BaseException:
    """An exception that survives the trip to the driver: a metric's
    :class:`RunAborted` as the error it carries, anything else that does not pickle as a
    ``RuntimeError`` with its text."""
    import cloudpickle

    if isinstance(exc, RunAborted):
        exc = exc.error
    try:
        cloudpickle.loads(cloudpickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


def run_batch(plan: WorkerPlan, jobs: Sequence[Job]) -> list[CaseResult | BaseException]:
    """Every item of ``jobs`` at once: its row, or what stopped it (in the items' order)."""
    try:
        built = prepared(plan)
    except Exception as exc:
        failure = RuntimeError(
            f"target {plan.target_name!r} cannot be built on this Dask worker: "
            f"{type(exc).__name__}: {exc}")
        return [failure for _ in jobs]
    assert _pool is not None
    futures = [_pool.submit(run_item, built.target, plan.target_name, job, built.specs,
                            built.complete) for job in jobs]
    out: list[CaseResult | BaseException] = []
    for future in futures:
        try:  # the item's call and scoring: bounded by the target's own deadlines
            out.append(future.result())
        except BaseException as exc:
            out.append(sendable(exc))
    return out


def forget(key: str) -> bool:
    """Drop plan ``key``'s target from this worker (closing it, when it has ``close``):
    its run is over. Whether it was there."""
    with _lock:
        built = _built.pop(key, None)
    close = getattr(built.target, "close", None) if built is not None else None
    if callable(close):
        with contextlib.suppress(Exception):  # the run it served is over either way
            close()
    return built is not None


def cached_plans() -> int:
    """How many plans this worker has built (tests: one per worker for a whole run)."""
    with _lock:
        return len(_built)




class IgnoreCtrlC(WorkerPlugin):
    """A Dask worker plugin: the worker processes of the run's own LocalCluster ignore
    SIGINT, so a Ctrl-C in the terminal (sent to the whole process group) stops the
    driver only, and the items in flight still finish within its grace period."""

    name = "evalkit-ignore-sigint"
    idempotent = True

    def setup(self, worker: Any) -> None:
        import signal

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
