"""``AsyncHttpTarget``: :class:`~evalkit_http.target.HttpTarget` on ``httpx.AsyncClient``.

The same settings, retry rules (:mod:`evalkit_http.attempts`), rate-limit retry and
shared pause (:mod:`evalkit_http.ratelimit`), build-time checks and redaction
(:mod:`evalkit_http.base`) as ``HttpTarget``; only the sending differs:

* ``ainvoke(case)`` is a coroutine, so the runner calls it from one event loop
  (:mod:`evalkit.execute.async_executor`) and hundreds of calls in flight cost no
  threads;
* the deadline of each whole attempt (waiting for a pooled connection, connecting,
  sending, the headers and the complete body) is an ``asyncio.timeout(timeout_s)``
  around it, which cancels the attempt where it stands, however the server drips;
* the body is read within ``max_response_bytes`` of decoded bytes by the same reader
  (:func:`evalkit_http.bounds.aread_body`), never decoded whole.

The connections are split over several ``httpx.AsyncClient`` pools of at most
:data:`CONNECTIONS_PER_POOL` connections each (``max_connections`` in all), and each
request goes to the pool with the fewest requests in flight: httpcore's async pool
looks at every queued request and every connection whenever one finishes, so one pool
of 256 connections under 256 requests in flight spends most of a run there (a bare
``httpx.AsyncClient`` loop takes 21 s for 1,000 requests of 200 ms at 256 in flight,
32 pools of 8 take 3 s; docs/runner.md, "Throughput").

An ``httpx.AsyncClient`` belongs to the event loop that first used it: the target opens
its pools per loop, on its first call there, and :meth:`AsyncHttpTarget.aclose` closes
them (the runner awaits it when its loop ends, so a target can serve several runs).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from typing import TYPE_CHECKING, Unpack

import httpx

from evalkit.data.targets import TargetResponse
from evalkit_http.base import HttpTargetBase
from evalkit_http.bounds import aread_body
from evalkit_http.options import HttpOptionKeywords

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase

#: The most connections of one ``httpx.AsyncClient`` pool of the target.
CONNECTIONS_PER_POOL = 8


class AsyncHttpTarget(HttpTargetBase):
    """A target behind an HTTP JSON API, called from an event loop.

    Args: those of :class:`~evalkit_http.target.HttpTarget` (``url``, ``name`` and the
    options of :class:`~evalkit_http.options.HttpOptions`), with ``transport`` an
    ``httpx.AsyncBaseTransport`` (tests). Keep ``max_connections`` at least the runner's
    ``max_concurrency``.

    Raises:
        ValueError, TypeError: as ``HttpTarget``, before anything is sent.
    """

    def __init__(self, url: str, name: str | None = None, *,
                 transport: httpx.AsyncBaseTransport | None = None,
                 **options: Unpack[HttpOptionKeywords]) -> None:
        super().__init__(url, name, **options)
        self._own_transport = transport is not None
        max_connections = self.max_connections
        # one pool when the caller gives the transport (a test's): it is one transport
        self._pool_sizes = [max_connections] if transport is not None else [
            min(CONNECTIONS_PER_POOL, max_connections - i)
            for i in range(0, max_connections, CONNECTIONS_PER_POOL)]
        self._transport = transport
        self._clients: list[httpx.AsyncClient] = []
        self._busy: list[int] = []
        self._client_loop: asyncio.AbstractEventLoop | None = None
        self._ssl: ssl.SSLContext | None = None

    # ------------------------------------------------------------------ lifecycle
    def _pools_here(self) -> list[httpx.AsyncClient]:
        loop = asyncio.get_running_loop()
        if not self._clients or self._client_loop is not loop:
            if self._ssl is None:  # one for every pool: each costs about 40 ms to build
                self._ssl = httpx.create_ssl_context()
            self._clients = [httpx.AsyncClient(
                verify=self._ssl,
                headers=self._sent_headers, timeout=httpx.Timeout(self.timeout_s),
                limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
                follow_redirects=False, transport=self._transport)
                for size in self._pool_sizes]
            self._busy = [0] * len(self._clients)
            self._client_loop = loop
        return self._clients

    async def aclose(self) -> None:
        """Close the connection pools of the running loop's clients (idempotent); the
        next call opens new ones."""
        clients, self._clients, self._client_loop = self._clients, [], None
        for client in clients:
            await client.aclose()

    def close(self) -> None:
        """Forget the clients (their loop has ended; the runner closed them already)."""
        self._clients, self._client_loop = [], None

    def __enter__(self) -> AsyncHttpTarget:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> AsyncHttpTarget:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ ainvoke
    async def _attempt(self, body: bytes) -> tuple[int, str, httpx.Headers, bytes]:
        """One request within the attempt deadline: ``(status, reason, headers, body)``;
        the body is read only for a 2xx answer."""
        clients = self._pools_here()
        busy = self._busy
        pick = min(range(len(clients)), key=busy.__getitem__)  # the least busy pool
        busy[pick] += 1
        try:
            async with asyncio.timeout(self.timeout_s), \
                    clients[pick].stream("POST", self._url, content=body) as response:
                status, reason = response.status_code, response.reason_phrase
                if not 200 <= status < 300:
                    return status, reason, response.headers, b""
                return (status, reason, response.headers,
                        await aread_body(response, self.max_response_bytes))
        finally:
            busy[pick] -= 1

    async def ainvoke(self, case: GoldenCase) -> TargetResponse:
        """POST the case and return the extracted response (as ``HttpTarget.invoke``).

        Raises:
            TargetError: as ``HttpTarget.invoke``.
        """
        body = self._body(case)
        start = time.perf_counter()
        seq = self._attempts()
        while True:
            waited = time.monotonic()
            admitted = await self.pause_gate.admit_async(latest=seq.latest)
            started = self._admitted(case, seq, admitted, waited)
            cause: BaseException | None = None
            limited = 0
            try:
                try:
                    status, reason, headers, content = await self._attempt(body)
                except Exception as exc:
                    cause = exc
                    step = self._step_of_error(case, seq, exc)
                else:
                    limited = int(self.rate_limit.applies(status))
                    step = seq.answered(status, reason, headers)
            finally:
                self.pause_gate.release(started, limited)
            if step.done:
                break
            delay = self._delay_after(case, seq, step, cause)
            if delay > 0:
                await asyncio.sleep(delay)
        latency_ms = (time.perf_counter() - start) * 1000.0
        return self._finish(case, status, reason, content, seq, latency_ms)


__all__ = ["CONNECTIONS_PER_POOL", "AsyncHttpTarget"]
