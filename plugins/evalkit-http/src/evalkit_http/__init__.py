"""HttpTarget for paired-evalkit: a system behind an HTTP JSON API as an evalkit target.

``HttpTarget`` (threads) and ``AsyncHttpTarget`` (an event loop) are imported on first
use, so discovering the plugin (``evalkit plugins list``, ``evalkit --help``) does not
import httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.3.0"
__all__ = ["AsyncHttpTarget", "HttpTarget", "__version__"]

if TYPE_CHECKING:
    from evalkit_http.async_target import AsyncHttpTarget as AsyncHttpTarget
    from evalkit_http.target import HttpTarget as HttpTarget


def __getattr__(name: str) -> Any:
    if name == "HttpTarget":
        from evalkit_http.target import HttpTarget

        return HttpTarget
    if name == "AsyncHttpTarget":
        from evalkit_http.async_target import AsyncHttpTarget

        return AsyncHttpTarget
    raise AttributeError(f"module 'evalkit_http' has no attribute {name!r}")
