"""Helpers for testing runs on Dask: a target factory that counts how often it is built.

``counting_target(factory="http", **kwargs)`` builds the registered target ``factory``
with ``kwargs`` and counts the build in this process; :func:`builds` returns the count,
so ``client.run(builds)`` tells how many times each worker built the target of a run
(once, however many items it ran).
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_builds = 0


def counting_target(factory: str = "http", **kwargs: Any) -> Any:
    """The registered target ``factory`` built with ``kwargs``, counted."""
    global _builds
    from evalkit.core.specs import TargetSpec
    from evalkit.plugins.default import default_registry

    spec = default_registry().get("target", factory)
    assert isinstance(spec, TargetSpec)
    with _lock:
        _builds += 1
    return spec.factory(**kwargs)


def builds() -> int:
    """How many targets :func:`counting_target` built in this process."""
    with _lock:
        return _builds
