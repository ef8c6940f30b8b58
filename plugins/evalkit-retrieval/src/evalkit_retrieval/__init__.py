"""TREC-compatible retrieval metrics and TREC run/qrels loaders for paired-evalkit.

The plugin registers itself through the ``evalkit.plugins`` entry point; importing this
package is only needed for the functions themselves (:mod:`evalkit_retrieval.core`) or the
loaders (:mod:`evalkit_retrieval.trec`), and :func:`fuse`, run fusion
(:mod:`evalkit_retrieval.fusion`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit_retrieval.fusion import fuse as fuse

__all__ = ["fuse"]

__version__ = "0.3.0"


def __getattr__(name: str) -> Any:
    """``fuse`` imported on first use, so that discovering the plugin stays light."""
    if name == "fuse":
        from evalkit_retrieval.fusion import fuse

        return fuse
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
