"""The core ranking functions ``(retrieved, relevant, k) -> float``.

They are implemented by the ``evalkit-retrieval`` plugin (``evalkit_retrieval.core``);
this module re-exports them as ``evalkit.metrics.core``.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    try:  # a facade: the functions are the evalkit-retrieval plugin's
        from evalkit_retrieval import core as mod
    except ImportError as exc:
        from evalkit.plugins.loading import missing_plugin

        raise missing_plugin("evalkit-retrieval", "evalkit.metrics.core", exc) from exc
    try:
        return getattr(mod, name)
    except AttributeError:
        raise AttributeError(f"module 'evalkit.metrics.core' has no attribute {name!r}") from None
