"""The bounds of one HTTP attempt, for every HTTP client of evalkit's plugins: a deadline
for the whole exchange and a cap on the body.

The HTTP target (``evalkit-http``, over ``httpx``) and the LLM judge (``evalkit-judge``:
``httpx`` for the ``openai`` provider, the ``anthropic`` SDK's ``httpx2`` for the
``anthropic`` one) bound their attempts with this module. It imports no HTTP library:
the caller passes the ``httpcore`` flavour (``httpcore`` or ``httpcore2``) whose pool it
extends and whose exceptions are raised, and responses are read through the methods both
``httpx`` and ``httpx2`` share.

**Deadline.** An HTTP library's timeouts apply to each socket operation, so a server that
sends one byte every 0.6 s never trips a 1 s read timeout and can hold a call for as long
as it likes. :func:`attempt_deadline` sets a deadline for everything the calling thread
does until it ends: connecting, sending, waiting for the status line and headers, and
reading the complete body. It is enforced where the time is spent, in the network
backend of the connection pool (:class:`DeadlineBackend`, wrapping the pool's own): every
connect, read and write is given at most the time left, and none starts once the deadline
has passed (the flavour's ``ConnectTimeout``, ``ReadTimeout`` or ``WriteTimeout`` is
raised, which the client turns into its own timeout error), so a dripping or stalled
server is cut at the deadline. :func:`install_deadline` puts the backend into a
transport's pool; on a transport it cannot reach (one passed by the caller) the deadline
is checked between the chunks of the body (:func:`read_body`), which bounds an attempt by
the deadline plus one read.

**Size.** :func:`read_body` reads a streamed response within ``max_bytes`` of *decoded*
body. Content-Length above the cap is refused before reading; a gzip or deflate body is
inflated piece by piece with ``zlib``'s ``max_length``, so a 500 KB "decompression bomb"
that would inflate to 500 MB is stopped after ``max_bytes`` without ever being decoded
whole (httpx's own decoders inflate each network chunk completely, about a thousand
times its size for such a body). Memory stays below ``max_bytes`` plus one chunk.
:func:`aread_body` reads a response of an async client by the same rules
(:class:`BodyReader`); there the deadline is an ``asyncio.timeout`` around the attempt.
"""

from __future__ import annotations

import contextlib
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from types import ModuleType
from typing import Any

#: The content codings :func:`read_body` decodes (and a request should announce).
ACCEPT_ENCODING = "gzip, deflate"

_local = threading.local()


class ResponseTooLarge(Exception):
    """The response body is larger than the cap (the message names it)."""


class UndecodableBody(Exception):
    """The response body cannot be decoded (an unknown or corrupt content coding)."""


class DeadlinePassed(TimeoutError):
    """The attempt deadline passed while the body was read (raised by
    :func:`read_body` when the caller gives no timeout error of its client)."""


# ------------------------------------------------------------------ deadline
@contextlib.contextmanager
def attempt_deadline(seconds: float) -> Iterator[float]:
    """Bound every network operation of the calling thread inside the block by a
    deadline ``seconds`` from now (yields it, on the ``time.monotonic`` clock); the
    connections must come from a pool given a :class:`DeadlineBackend`."""
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


class DeadlineStream:
    """A network stream (``httpcore.NetworkStream`` or ``httpcore2``'s) whose every
    operation ends by the deadline of the thread using it (see :func:`attempt_deadline`);
    ``core`` is the flavour whose timeout exceptions are raised."""

    def __init__(self, inner: Any, core: ModuleType) -> None:
        self._inner, self._core = inner, core

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self._inner.read(max_bytes, _left(timeout, self._core.ReadTimeout))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, self._core.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> DeadlineStream:
        return DeadlineStream(self._inner.start_tls(
            ssl_context, server_hostname, _left(timeout, self._core.ConnectTimeout)),
            self._core)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend:
    """A network backend of an ``httpcore`` (or ``httpcore2``) connection pool whose
    connections and streams respect the calling thread's attempt deadline; ``inner`` is
    the pool's own backend, ``core`` the flavour (its timeout exceptions are raised)."""

    def __init__(self, inner: Any, core: ModuleType) -> None:
        self.inner, self.core = inner, core

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> DeadlineStream:
        return DeadlineStream(self.inner.connect_tcp(
            host, port, _left(timeout, self.core.ConnectTimeout), local_address,
            socket_options), self.core)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> DeadlineStream:
        return DeadlineStream(self.inner.connect_unix_socket(
            path, _left(timeout, self.core.ConnectTimeout), socket_options), self.core)

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def install_deadline(transport: Any, core: ModuleType) -> bool:
    """Give the connection pool of ``transport`` (an ``httpx.HTTPTransport`` with
    ``core=httpcore``, or an ``httpx2.HTTPTransport`` with ``core=httpcore2``) a
    :class:`DeadlineBackend`, before its first connection. Returns whether it could: the
    clients do not expose the pool, so this looks for the ``core.ConnectionPool`` of the
    transport (the tests of both plugins check that it is found)."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(pool, core.ConnectionPool):
        return False
    if isinstance(backend, DeadlineBackend):
        return True
    if not isinstance(backend, core.NetworkBackend):
        return False
    pool._network_backend = DeadlineBackend(backend, core)
    return True


def install_client_deadline(client: Any, core: ModuleType) -> bool:
    """:func:`install_deadline` on every transport of an ``httpx.Client`` (or
    ``httpx2.Client``): the one it was given or built, and those it mounted for the proxies
    of the environment (which a transport passed to it would disable). Returns whether
    its main transport got the backend (if not, only :func:`read_body`'s check between
    chunks bounds a body)."""
    main = getattr(client, "_transport", None)
    installed = main is not None and install_deadline(main, core)
    for mounted in getattr(client, "_mounts", {}).values():
        if mounted is not None:
            install_deadline(mounted, core)
    return installed


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
    thread and an event loop read bodies by the same rules).

    Args:
        response: an ``httpx`` or ``httpx2`` response (its ``headers``,
            ``is_stream_consumed`` and ``content`` are read).
        max_bytes: the cap on the decoded body and on the bytes received.
        deadline: a ``time.monotonic`` time checked before each chunk.
        timeout_error: raised when the deadline has passed (the client's own
            ``ReadTimeout``; :class:`DeadlinePassed` by default).
        setting: the setting that raises the cap, named in :class:`ResponseTooLarge`
            (``None``: the cap is fixed).
    """

    def __init__(self, response: Any, max_bytes: int, deadline: float | None = None,
                 timeout_error: type[Exception] = DeadlinePassed,
                 setting: str | None = "max_response_bytes") -> None:
        self.max_bytes, self.deadline = max_bytes, deadline
        self.timeout_error, self.setting = timeout_error, setting
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise _too_large(max_bytes, f"declares {int(declared)} bytes", setting)
        #: the whole body when the response was built in memory (a mock transport)
        self.content: bytes | None = None
        if response.is_stream_consumed:
            if len(response.content) > max_bytes:
                raise _too_large(max_bytes, f"holds {len(response.content)} bytes",
                                setting)
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
            raise self.timeout_error("the attempt deadline passed while reading the body")
        self.received += len(chunk)
        if self.received > max_bytes:
            raise _too_large(max_bytes, f"sent more than {max_bytes} bytes", self.setting)
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
            raise _too_large(max_bytes, f"decodes to more than {max_bytes} bytes",
                             self.setting)

    def finish(self) -> bytes:
        """The decoded body, once every chunk was fed."""
        if self.inflater is not None:
            self.out += self.inflater.flush()
            if len(self.out) > self.max_bytes:
                raise _too_large(self.max_bytes,
                                 f"decodes to more than {self.max_bytes} bytes", self.setting)
        return bytes(self.out)


def read_body(response: Any, max_bytes: int, deadline: float | None = None,
              timeout_error: type[Exception] = DeadlinePassed,
              setting: str | None = "max_response_bytes") -> bytes:
    """The decoded body of a streamed ``response``, at most ``max_bytes`` long.

    Args:
        response: an ``httpx`` (or ``httpx2``) response opened with ``stream=True``; it
            is read here (the caller closes it).
        max_bytes: the cap on the decoded body (and on the bytes received).
        deadline: a ``time.monotonic`` time after which reading stops (checked between
            chunks, for transports without a :class:`DeadlineBackend`).
        timeout_error: the exception raised when the deadline passed between chunks.
        setting: the setting named in :class:`ResponseTooLarge` (``None``: none).

    Raises:
        ResponseTooLarge: the body (declared or received, before or after decoding) is
            larger than ``max_bytes``.
        UndecodableBody: an unknown content coding, or a corrupt gzip/deflate stream.
        timeout_error: the deadline passed between chunks (and the client's own timeout
            error when a :class:`DeadlineBackend` cut a read).
        Exception: the client's transport errors while reading.
    """
    reader = BodyReader(response, max_bytes, deadline, timeout_error, setting)
    if reader.content is not None:
        return reader.content
    for chunk in response.iter_raw():
        reader.feed(chunk)
    return reader.finish()


async def aread_body(response: Any, max_bytes: int) -> bytes:
    """:func:`read_body` of a response of an async client (its deadline is the
    caller's ``asyncio.timeout``)."""
    reader = BodyReader(response, max_bytes)
    if reader.content is not None:
        return reader.content
    async for chunk in response.aiter_raw():
        reader.feed(chunk)
    return reader.finish()


def _too_large(cap: int, what: str, setting: str | None) -> ResponseTooLarge:
    if setting is None:
        return ResponseTooLarge(f"the response body {what}, over the cap of {cap} bytes")
    return ResponseTooLarge(
        f"the response body {what}, over the cap of {cap} bytes ({setting}); "
        f"raise {setting} if such bodies are expected")


__all__ = [
    "ACCEPT_ENCODING",
    "BodyReader",
    "DeadlineBackend",
    "DeadlinePassed",
    "DeadlineStream",
    "ResponseTooLarge",
    "UndecodableBody",
    "aread_body",
    "attempt_deadline",
    "install_client_deadline",
    "install_deadline",
    "read_body",
]
