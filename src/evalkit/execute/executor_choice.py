"""Choosing the executor of a run: the one the registry names, made from its spec and
checked against the run before anything is written.

The seam itself (what an executor is given and returns) is
:mod:`evalkit.execute.executor_api`; the kernel's ``local`` executor is
:mod:`evalkit.execute.local_executor`, used here as well when the registry holds no
executor at all (a registry made without the kernel's built-ins).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from evalkit.core.specs import ExecutorSpec
from evalkit.execute.executor_api import (
    DEFAULT_EXECUTOR,
    ExecutorChoice,
    RunningExecutor,
    UnsendableError,
    Work,
)


class ChosenExecutor(NamedTuple):
    """An executor made from its spec, checked against a run before anything is written."""

    choice: ExecutorChoice
    executor: Any

    def open(self, work: Work) -> RunningExecutor:
        """The running executor of ``work`` (the remote ones connect here)."""
        opened: RunningExecutor = self.executor.open(work)
        return opened


def choose_executor(choice: ExecutorChoice, work: Work) -> ChosenExecutor:
    """Make the executor ``choice`` names and let it refuse ``work`` (its ``check``, when
    it has one, sees everything but the items) before any artifact is written.

    Raises:
        RegistryError: no executor has that name, or two plugins provide it (names both).
        UnsendableError: the executor cannot send the target or a metric, or the target
            is asynchronous and the executor is not ``local``.
        ValueError: an option the executor does not take (its factory's ``TypeError``).
    """
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    registry = default_registry()
    try:
        spec = registry.get("executor", choice.name)
    except RegistryError as exc:
        if choice.name != DEFAULT_EXECUTOR or any(registry.entries("executor")):
            if "unknown executor" not in str(exc):
                raise
            raise RegistryError(f"{exc}. Executors come from plugins: 'dask' from "
                                "evalkit-dask (docs/scaling.md)") from None
        # a registry without the kernel's built-ins (use_registry(plugins=False)) still runs
        from evalkit.execute.local_executor import LocalExecutor

        spec = ExecutorSpec(DEFAULT_EXECUTOR, LocalExecutor)
    assert isinstance(spec, ExecutorSpec)
    if choice.name != DEFAULT_EXECUTOR and callable(getattr(work.target, "ainvoke", None)):
        raise UnsendableError(
            f"target {work.target_name!r} is asynchronous (async def / ainvoke): async "
            f"targets run on the local executor's event loop; the {choice.name!r} executor "
            "calls synchronous targets (use the synchronous target, e.g. factory http "
            "without asynchronous: true)")
    try:
        executor = spec.factory(**dict(choice.options))
    except TypeError as exc:  # an option it does not take: a setting, not a crash
        raise ValueError(f"executor {choice.name!r}: {exc}; its options are listed in "
                         "docs/scaling.md (executor: name, address, options)") from None
    check = getattr(executor, "check", None)
    if callable(check):
        check(work)
    return ChosenExecutor(choice, executor)


__all__ = ["ChosenExecutor", "choose_executor"]
