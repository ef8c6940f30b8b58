"""The bounds of one HTTP attempt: a deadline for the whole exchange, a cap on the body.

**Deadline.** httpx's timeouts apply to each socket operation, so a server that sends
one byte every 0.6 s never trips a 1 s read timeout and can hold a call for as long as
it likes. :func:`attempt_deadline` sets a deadline for everything the calling thread
does until it ends: connecting, sending, waiting for the status line and headers, and
reading the complete body. It is enforced where the time is spent, in the network
backend of the connection pool (:class:`DeadlineBackend`, an ``httpcore`` backend that
wraps the default one): every connect, read and write is given at most the time left,
and none starts once the deadline has passed, so a dripping or stalled server is cut at
the deadline. :func:`install_deadline` puts the backend into an
``httpx.HTTPTransport``; on a transport it cannot reach (one passed by the caller) the
deadline is checked between the chunks of the body, which bounds an attempt by the
deadline plus one read.

**Size.** :func:`read_body` reads a streamed response within ``max_bytes`` of *decoded*
body. Content-Length above the cap is refused before reading; a gzip or deflate body is
inflated piece by piece with ``zlib``'s ``max_length``, so a 500 KB "decompression bomb"
that would inflate to 500 MB is stopped after ``max_bytes`` without ever being decoded
whole (httpx's own decoders inflate each network chunk completely, about a thousand
times its size for such a body). Memory stays below ``max_bytes`` plus one chunk.
:func:`aread_body` reads a response of an ``httpx.AsyncClient`` by the same rules
(:class:`BodyReader`); there the deadline is an ``asyncio.timeout`` around the attempt.
"""

from __future__ import annotations

import contextlib
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

import httpcore
import httpx

#: The content codings :func:`read_body` decodes (and the request announces).
ACCEPT_ENCODING = "gzip, deflate"

_local = threading.local()


class ResponseTooLarge(Exception):
    """The response body is larger than the cap (the message names it)."""


class UndecodableBody(Exception):
    """The response body cannot be decoded (an unknown or corrupt content coding)."""


# ------------------------------------------------------------------ deadline
@contextlib.contextmanager
def attempt_deadline(seconds: float) -> Iterator[float]:
    """Bound every network operation of the calling thread inside the block by a
    deadline ``seconds`` from now (yields it, on the ``time.monotonic`` clock)."""
    previous = getattr(_local, "end", None)
    end = time.monotonic() + seconds
    _local.end = end
    try:
        yield end
    finally:
        _local.end = previous


def _left(timeout: float | None, kind: type[Exception]) -> float | None:
    end: float | None = getattr(_local, "end", None)
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise kind("the attempt deadline passed")
    return left if timeout is None else min(timeout, left)


class DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every operation ends by the deadline of the thread using
    it (see :func:`attempt_deadline`)."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return DeadlineStream(self._inner.start_tls(
            ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """An ``httpcore`` network backend whose connections and streams respect the
    calling thread's attempt deadline."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self.inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return DeadlineStream(self.inner.connect_tcp(
            host, port, _left(timeout, httpcore.ConnectTimeout), local_address,
            socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        return DeadlineStream(self.inner.connect_unix_socket(
            path, _left(timeout, httpcore.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def install_deadline(transport: httpx.BaseTransport) -> bool:
    """Give ``transport``'s connection pool a :class:`DeadlineBackend` (before its first
    connection). Returns whether it could: httpx does not expose the pool, so this looks
    for the ``httpcore`` pool of an ``httpx.HTTPTransport`` (a test checks it is found)."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(pool, httpcore.ConnectionPool) or not isinstance(
            backend, httpcore.NetworkBackend):
        return False
    if not isinstance(backend, DeadlineBackend):
        pool._network_backend = DeadlineBackend(backend)
    return True


# ------------------------------------------------------------------ body
def _inflater(encoding: str) -> Any:
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(zlib.MAX_WBITS | 16)
    if encoding == "deflate":
        return zlib.decompressobj()
    raise UndecodableBody(
        f"the body's content-encoding {encoding!r} is not supported (the request accepts "
        f"{ACCEPT_ENCODING})")


class BodyReader:
    """The decoding and the cap of :func:`read_body`, fed one raw chunk at a time (so a
    thread and an event loop read bodies by the same rules)."""

    def __init__(self, response: httpx.Response, max_bytes: int,
                 deadline: float | None = None) -> None:
        self.max_bytes, self.deadline = max_bytes, deadline
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise _too_large(max_bytes, f"declares {int(declared)} bytes")
        #: the whole body when the response was built in memory (httpx.MockTransport)
        self.content: bytes | None = None
        if response.is_stream_consumed:
            if len(response.content) > max_bytes:
                raise _too_large(max_bytes, f"holds {len(response.content)} bytes")
            self.content = response.content
        codings = [c.strip().lower() for c in response.headers.get("content-encoding", "")
                   .split(",") if c.strip() and c.strip().lower() != "identity"]
        if len(codings) > 1:
            raise UndecodableBody(f"the body is encoded {len(codings)} times "
                                  f"({', '.join(codings)}); one content coding is supported")
        self.coding = codings[0] if codings else ""
        self.inflater = _inflater(self.coding) if codings else None
        self.raw_deflate = codings == ["deflate"]
        self.out = bytearray()
        self.received = 0

    def feed(self, chunk: bytes) -> None:
        """Take the next raw chunk (raises as :func:`read_body`)."""
        max_bytes, out = self.max_bytes, self.out
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise httpx.ReadTimeout("the attempt deadline passed while reading the body")
        self.received += len(chunk)
        if self.received > max_bytes:
            raise _too_large(max_bytes, f"sent more than {max_bytes} bytes")
        if self.inflater is None:
            out += chunk
            return
        try:
            # never more than the room left plus one byte: a bomb stops at the cap
            out += self.inflater.decompress(chunk, max_bytes - len(out) + 1)
        except zlib.error as exc:
            if not (self.raw_deflate and not out):
                raise UndecodableBody(f"the {self.coding} body is corrupt ({exc})") from None
            self.inflater, self.raw_deflate = zlib.decompressobj(-zlib.MAX_WBITS), False
            out += self.inflater.decompress(chunk, max_bytes - len(out) + 1)
        if len(out) > max_bytes or self.inflater.unconsumed_tail:
            raise _too_large(max_bytes, f"decodes to more than {max_bytes} bytes")

    def finish(self) -> bytes:
        """The decoded body, once every chunk was fed."""
        if self.inflater is not None:
            self.out += self.inflater.flush()
            if len(self.out) > self.max_bytes:
                raise _too_large(self.max_bytes, f"decodes to more than {self.max_bytes} bytes")
        return bytes(self.out)


def read_body(response: httpx.Response, max_bytes: int, deadline: float | None = None
              ) -> bytes:
    """The decoded body of a streamed ``response``, at most ``max_bytes`` long.

    Args:
        response: opened with ``stream=True``; it is read here (the caller closes it).
        max_bytes: the cap on the decoded body (and on the bytes received).
        deadline: a ``time.monotonic`` time after which reading stops (checked between
            chunks, for transports without a :class:`DeadlineBackend`).

    Raises:
        ResponseTooLarge: the body (declared or received, before or after decoding) is
            larger than ``max_bytes``.
        UndecodableBody: an unknown content coding, or a corrupt gzip/deflate stream.
        httpx.ReadTimeout: the deadline passed while reading.
        httpx.TransportError: the connection failed while reading.
    """
    reader = BodyReader(response, max_bytes, deadline)
    if reader.content is not None:
        return reader.content
    for chunk in response.iter_raw():
        reader.feed(chunk)
    return reader.finish()


async def aread_body(response: httpx.Response, max_bytes: int) -> bytes:
    """:func:`read_body` of a response of an ``httpx.AsyncClient`` (its deadline is the
    caller's ``asyncio.timeout``)."""
    reader = BodyReader(response, max_bytes)
    if reader.content is not None:
        return reader.content
    async for chunk in response.aiter_raw():
        reader.feed(chunk)
    return reader.finish()


def _too_large(cap: int, what: str) -> ResponseTooLarge:
    return ResponseTooLarge(
        f"the response body {what}, over the cap of {cap} bytes (max_response_bytes); "
        "raise max_response_bytes if such bodies are expected")


__all__ = [
    "ACCEPT_ENCODING",
    "BodyReader",
    "DeadlineBackend",
    "DeadlineStream",
    "ResponseTooLarge",
    "UndecodableBody",
    "aread_body",
    "attempt_deadline",
    "install_deadline",
    "read_body",
]
