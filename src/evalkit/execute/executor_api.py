"""The executor seam: where a run's target calls are made, and what never leaves the driver.

An executor is an :class:`~evalkit.core.specs.ExecutorSpec` registered through the
``evalkit_register_executors`` hook; the kernel's ``local`` (threads of this process,
:mod:`evalkit.execute.local_executor`) is registered that way too. ``spec.factory(**options)``
returns an object with ``open(work: Work) -> RunningExecutor`` (and optionally
``check(work)``, which refuses before anything is written what it cannot send;
:mod:`evalkit.execute.executor_choice` makes it and asks); the runner
(:mod:`evalkit.execute.target_runner`) drives the :class:`RunningExecutor` and alone writes
the artifact, holds its lock and decides resume, so the guarantees of docs/runner.md hold
whatever the executor.

A remote executor returns its own running executor from ``open``; the ``evalkit-dask``
plugin's drives the cluster from the driver (the in-flight bound spans every worker, the
run's :class:`~evalkit.execute.pacing.Pacing` admits each call, lost items are retried a
bounded number of times) and hands back rows as the local pool does (docs/scaling.md).

A work item is a :class:`~evalkit.execute.executor.Job`, keyed by :func:`item_key`:
``(case id, sample index)``, the sample index 0 while each case is answered once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from evalkit.core.specs import MetricSpec

if TYPE_CHECKING:
    from evalkit.data.rows import CaseResult
    from evalkit.data.targets import AsyncTarget, Target
    from evalkit.execute.dispatch_window import DispatchWindow
    from evalkit.execute.executor import Interrupts, Job
    from evalkit.execute.pacing import Pacing

#: The executor a run uses unless told otherwise.
DEFAULT_EXECUTOR = "local"


class UnsendableError(ValueError):
    """A target or metric that an executor cannot send to where the calls are made (a
    lambda without cloudpickle, a factory the workers cannot import); raised by
    ``open`` before any call, the message naming the target or metric and the fix."""


@dataclass(frozen=True)
class TargetRecipe:
    """How to build the target elsewhere: ``factory(**kwargs)``, as the eval config says.

    Attributes:
        factory: ``"package.module:callable"`` or a registered target name (``"http"``).
        kwargs: its keyword arguments (sent to the workers, never logged).
        folder: put first on ``sys.path`` while the factory is imported (the config's
            folder), or ``None``.
    """

    factory: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    folder: str | None = None

    def key(self) -> str:
        """The worker-side cache key of the target: the factory and its kwargs."""
        import hashlib
        import json

        text = json.dumps([self.factory, self.kwargs, self.folder], sort_keys=True, default=repr)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ExecutorChoice:
    """Which executor runs the calls, with its options (``address`` for ``dask``).

    ``target`` is how the workers build the target (``evalkit run`` passes the eval
    config's factory and kwargs); ``None`` sends the target object itself with
    cloudpickle where the executor can.
    """

    name: str = DEFAULT_EXECUTOR
    options: Mapping[str, Any] = field(default_factory=dict)
    target: TargetRecipe | None = None


@dataclass(frozen=True)
class Work:
    """One run's calls, as an executor receives them.

    Attributes:
        target: the target object built on the driver (the local pool calls it).
        target_name: its name, for messages.
        jobs: the work items still to do, in golden-set order.
        specs: every per-case metric of the run, in order.
        max_concurrency: the most items in flight at once (driver-side, cluster-wide).
        recipe: how to build the target elsewhere, or ``None``.
        pacing: the run's adaptive window and rate limits (:mod:`evalkit.execute.pacing`),
            shared by every call of the run wherever it is made, or ``None``.
        window: which items of ``jobs`` may start now
            (:class:`~evalkit.execute.dispatch_window.DispatchWindow`: a run that stops
            on a rule checked as rows arrive), or ``None``: every item, as fast as the
            in-flight bound lets them. An executor must honour it.
    """

    target: Target | AsyncTarget
    target_name: str
    jobs: Sequence[Job]
    specs: Sequence[MetricSpec]
    max_concurrency: int
    recipe: TargetRecipe | None = None
    pacing: Pacing | None = None
    window: DispatchWindow | None = None


class RunningExecutor(Protocol):
    """One run's executor, as the runner drives it (the local pool's interface).

    ``batches`` yields the rows finished since the last batch (each item's row exactly
    once), until every item is done, ``deadline`` (``time.monotonic()``) passes or
    ``interrupts`` counted ``until`` Ctrl-C; it raises a failure that stops the run (a
    judge's spending limit) once nothing is in flight. ``stop`` takes no new item;
    ``join`` waits up to ``timeout_s`` s for the items in flight.
    """

    @property
    def in_flight(self) -> int: ...

    def start(self) -> RunningExecutor: ...

    def stop(self) -> None: ...

    def join(self, timeout_s: float) -> None: ...

    def batches(self, interrupts: Interrupts | None = None, deadline: float | None = None,
                until: int = 1) -> Iterator[list[CaseResult]]: ...


def item_key(job: Job) -> tuple[str, int]:
    """``(case id, sample index)`` of a work item: its row's key in the artifact."""
    return job.case.id, int(getattr(job, "sample", 0) or 0)


def as_choice(executor: str | ExecutorChoice | None) -> ExecutorChoice:
    """An :class:`ExecutorChoice` from a name, a choice or ``None`` (``local``)."""
    if executor is None:
        return ExecutorChoice()
    if isinstance(executor, str):
        return ExecutorChoice(executor)
    if not isinstance(executor, ExecutorChoice):
        raise TypeError(f"executor must be a name or an ExecutorChoice, got {executor!r}")
    return executor


def executor_report(running: object) -> dict[str, Any]:
    """What the run header records about the executor that ran it (``{}`` for one that
    reports nothing): ``retried`` items re-sent after a worker died, and so on."""
    report = getattr(running, "report", None)
    return dict(report()) if callable(report) else {}


def close_executor(running: object) -> None:
    """Release what ``running`` holds (a cluster the run started), if it has ``close``."""
    close = getattr(running, "close", None)
    if callable(close):
        close()
