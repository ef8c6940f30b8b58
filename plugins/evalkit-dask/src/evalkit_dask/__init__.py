"""A Dask executor for paired-evalkit: ``evalkit run --executor dask``.

Discovering the plugin (``evalkit plugins list``) imports :mod:`evalkit_dask.plugin`
only, which imports no part of Dask; :class:`DaskExecutor` is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.3.0"
__all__ = ["DaskExecutor", "__version__"]

if TYPE_CHECKING:
    from evalkit_dask.executor import DaskExecutor as DaskExecutor


def __getattr__(name: str) -> Any:
    if name == "DaskExecutor":
        from evalkit_dask.executor import DaskExecutor

        return DaskExecutor
    raise AttributeError(f"module 'evalkit_dask' has no attribute {name!r}")
