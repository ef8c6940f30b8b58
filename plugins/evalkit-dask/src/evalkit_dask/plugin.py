"""Hook implementation of the evalkit-dask plugin: the ``dask`` executor.

Registering imports no part of Dask; it is imported when a run opens the executor.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import ExecutorSpec

if TYPE_CHECKING:
    from evalkit_dask.executor import DaskExecutor


def dask_executor(**options: Any) -> DaskExecutor:
    """The ``dask`` executor factory (:class:`evalkit_dask.executor.DaskExecutor`)."""
    from evalkit_dask.executor import DaskExecutor

    return DaskExecutor(**options)


@hookimpl
def evalkit_register_executors() -> list[ExecutorSpec]:
    return [
        ExecutorSpec(
            "dask", dask_executor,
            "the calls on a Dask cluster (a scheduler address, or a LocalCluster of this "
            "machine); the artifact stays on the driver",
        )
    ]
