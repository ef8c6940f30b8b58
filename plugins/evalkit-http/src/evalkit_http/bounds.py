"""The bounds of one HTTP attempt of the HTTP target: a deadline for the whole exchange,
a cap on the body.

The one implementation is the kernel's :mod:`evalkit.io.http_bounds` (shared with the
LLM judge); this module binds it to ``httpx`` and ``httpcore``: :func:`install_deadline`
gives an ``httpx.HTTPTransport``'s pool the :class:`DeadlineBackend` (whose cut reads
raise ``httpcore``'s timeouts, which ``httpx`` turns into its own), and :func:`read_body`
raises ``httpx.ReadTimeout`` when the deadline passes between the chunks of a body read
through a transport without that backend.
"""

from __future__ import annotations

import httpcore
import httpx

from evalkit.io.http_bounds import (
    ACCEPT_ENCODING,
    BodyReader,
    DeadlineBackend,
    DeadlineStream,
    ResponseTooLarge,
    UndecodableBody,
    aread_body,
    attempt_deadline,
)
from evalkit.io.http_bounds import install_client_deadline as _install_client
from evalkit.io.http_bounds import install_deadline as _install
from evalkit.io.http_bounds import read_body as _read_body


def install_deadline(transport: httpx.BaseTransport) -> bool:
    """Give ``transport``'s connection pool a :class:`DeadlineBackend` (before its first
    connection); whether it could (:func:`evalkit.io.http_bounds.install_deadline`)."""
    return _install(transport, httpcore)


def install_client_deadline(client: httpx.Client) -> bool:
    """:func:`evalkit.io.http_bounds.install_client_deadline` with ``httpcore``."""
    return _install_client(client, httpcore)


def read_body(response: httpx.Response, max_bytes: int, deadline: float | None = None
              ) -> bytes:
    """:func:`evalkit.io.http_bounds.read_body` raising ``httpx.ReadTimeout`` when
    ``deadline`` passes between chunks."""
    return _read_body(response, max_bytes, deadline, httpx.ReadTimeout)


__all__ = [
    "ACCEPT_ENCODING",
    "BodyReader",
    "DeadlineBackend",
    "DeadlineStream",
    "ResponseTooLarge",
    "UndecodableBody",
    "aread_body",
    "attempt_deadline",
    "install_client_deadline",
    "install_deadline",
    "read_body",
]
