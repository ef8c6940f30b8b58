"""HttpTarget for paired-evalkit: a system behind an HTTP JSON API as an evalkit target.

``HttpTarget`` is imported on first use, so discovering the plugin (``evalkit plugins
list``, ``evalkit --help``) does not import httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.3.0"
__all__ = ["HttpTarget", "__version__"]

if TYPE_CHECKING:
    from evalkit_http.target import HttpTarget as HttpTarget


def __getattr__(name: str) -> Any:
    if name == "HttpTarget":
        from evalkit_http.target import HttpTarget

        return HttpTarget
    raise AttributeError(f"module 'evalkit_http' has no attribute {name!r}")
