"""Hook implementations of the evalkit-http plugin: the ``http`` target factory.

Registering imports nothing heavy; httpx is imported when a target is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import TargetSpec

if TYPE_CHECKING:
    from evalkit_http.async_target import AsyncHttpTarget
    from evalkit_http.target import HttpTarget


def http_target(**kwargs: Any) -> HttpTarget | AsyncHttpTarget:
    """The ``http`` target factory (see :func:`evalkit_http.factory.make_http_target`)."""
    from evalkit_http.factory import make_http_target

    return make_http_target(**kwargs)


@hookimpl
def evalkit_register_targets() -> list[TargetSpec]:
    return [
        TargetSpec(
            "http", http_target,
            "POST each case as JSON to a URL (one retry on 5xx or transport failure; "
            "retry_rate_limited: true retries 429/529)",
        )
    ]
