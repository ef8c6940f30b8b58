"""The core ranking functions ``(retrieved, relevant, k) -> float``.

They are implemented by the ``evalkit-retrieval`` plugin (``evalkit_retrieval.core``);
this module re-exports them under the seed's import path.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from evalkit.plugins.loading import import_optional

    mod = import_optional("evalkit_retrieval.core", "evalkit-retrieval", "evalkit.metrics.core")
    try:
        return getattr(mod, name)
    except AttributeError:
        raise AttributeError(f"module 'evalkit.metrics.core' has no attribute {name!r}") from None
