"""A scripted HTTP server on 127.0.0.1 for testing HTTP targets without a network.

Each request gets the next :class:`Reply` of the script (the last one repeats), or the
answer of a handler function. Replies can delay, answer any status and body, send a body
that is not JSON, reset the connection without answering, drip the headers or the body
a byte at a time, send a large body without holding it (``repeat``), with chunked
transfer encoding, or send raw bytes that are not valid HTTP at all. Every request is
recorded (method, path, headers, body), so tests can count attempts and compare retried
bodies.

    with ScriptedServer([Reply(503), Reply(200, {"ranked_ids": ["d1"]})]) as server:
        target = HttpTarget(server.url)
        ...
        assert len(server.requests) == 2

Run ``python -m evalkit_http.testing --delay-ms 50`` to serve ``{"ranked_ids": [...]}``
after a fixed delay from a separate process; it prints its URL on the first line.
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer.

    Attributes:
        status: the HTTP status code.
        body: bytes sent as is, or any other value sent as JSON.
        delay_s: seconds to wait before answering (a timeout test sets it above the
            client's ``timeout_s``).
        reset: close the connection with a TCP reset instead of answering.
        headers: extra response headers.
        drip_s: send the body ``drip_bytes`` at a time with this pause after each piece
            (a server that never stalls long enough for a read timeout).
        drip_bytes: the size of each dripped piece.
        header_drip_s: send the status line and headers one byte at a time with this
            pause after each.
        repeat: send the body bytes this many times (a large body from a small one).
        chunked: use ``Transfer-Encoding: chunked`` instead of ``Content-Length``.
        raw: bytes sent as the whole answer instead of a well-formed response.
    """

    status: int = 200
    body: Any = field(default_factory=lambda: {"ranked_ids": []})
    delay_s: float = 0.0
    reset: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)
    drip_s: float = 0.0
    drip_bytes: int = 1
    header_drip_s: float = 0.0
    repeat: int = 1
    chunked: bool = False
    raw: bytes | None = None


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server saw it (``headers`` with lower-case names;
    ``client_port`` tells connections apart)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    client_port: int = 0

    def json(self) -> Any:
        return json.loads(self.body)


Handler = Callable[[RecordedRequest, int], Reply]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # resets and client timeouts are expected here


class ScriptedServer:
    """A threaded HTTP/1.1 server on ``127.0.0.1`` and a free port.

    Args:
        script: replies in order; the last one repeats. Ignored when ``handler`` is set.
        handler: ``(request, index) -> Reply`` (index counts from 0 across all requests).
    """

    def __init__(self, script: Sequence[Reply] = (), handler: Handler | None = None) -> None:
        if handler is None and not script:
            script = [Reply()]
        self.script = list(script)
        self.handler = handler
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the server is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>/`` (append a path if the target needs one)."""
        return f"http://127.0.0.1:{self.port}/"

    def _reply_for(self, request: RecordedRequest) -> Reply:
        with self._lock:
            index = len(self.requests)
            self.requests.append(request)
        if self.handler is not None:
            return self.handler(request, index)
        return self.script[min(index, len(self.script) - 1)]

    def start(self) -> ScriptedServer:
        owner = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as two writes

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                request = RecordedRequest(
                    self.command, self.path,
                    {k.lower(): v for k, v in self.headers.items()}, body,
                    int(self.client_address[1]),
                )
                reply = owner._reply_for(request)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.reset:
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                    self.connection.close()
                    self.close_connection = True
                    return
                try:
                    self._answer(reply)
                except OSError:  # the client went away (a cut drip, an oversized body)
                    self.close_connection = True

            def _answer(self, reply: Reply) -> None:
                if reply.raw is not None:
                    self.wfile.write(reply.raw)
                    self.close_connection = True
                    return
                data = reply.body if isinstance(reply.body, bytes) else json.dumps(
                    reply.body).encode("utf-8")
                lines = [f"HTTP/1.1 {reply.status} {_reason(reply.status)}",
                         "Content-Type: application/json"]
                if reply.chunked:
                    lines.append("Transfer-Encoding: chunked")
                else:
                    lines.append(f"Content-Length: {len(data) * reply.repeat}")
                lines.extend(f"{k}: {v}" for k, v in reply.headers.items())
                head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
                _write(self.wfile, head, reply.header_drip_s, 1)
                for _ in range(reply.repeat):
                    piece = f"{len(data):x}\r\n".encode() + data + b"\r\n" \
                        if reply.chunked and data else data
                    _write(self.wfile, piece, reply.drip_s, reply.drip_bytes)
                if reply.chunked:
                    self.wfile.write(b"0\r\n\r\n")

            do_POST = _serve
            do_GET = _serve
            do_PUT = _serve

        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _reason(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def _write(out: Any, data: bytes, pause: float, size: int) -> None:
    """Write ``data`` at once, or ``size`` bytes at a time with ``pause`` after each."""
    if pause <= 0:
        out.write(data)
        return
    for i in range(0, len(data), max(1, size)):
        out.write(data[i:i + size])
        out.flush()
        time.sleep(pause)


def _echo_ranking(delay_s: float) -> Handler:
    def handler(request: RecordedRequest, index: int) -> Reply:
        try:
            case_id = str(request.json().get("id", index))
        except ValueError:
            case_id = str(index)
        return Reply(200, {"ranked_ids": [f"{case_id}-a", f"{case_id}-b"]}, delay_s=delay_s)

    return handler


@dataclass
class RateLimit:
    """A handler that allows ``rate`` requests a second (a token bucket holding at most
    ``burst`` tokens, full at the start) and answers ``429`` above it, with
    ``Retry-After`` (decimal seconds) and ``retry-after-ms`` saying when the next token
    comes; allowed requests get ``{"ranked_ids": ["<id>-a"]}`` after ``delay_s``. From
    ``limited_for_s`` seconds after the first request on, nothing is refused (a rate
    limit that ends). Every request is logged in :attr:`log` as ``(arrival
    time.monotonic(), status, requests in flight at arrival, the time its Retry-After
    ends or 0)``."""

    rate: float
    burst: float = 1.0
    delay_s: float = 0.0
    limited_for_s: float = float("inf")
    log: list[tuple[float, int, int, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._level = self.burst
        self._stamp = 0.0
        self._first = 0.0
        self._in_flight = 0

    def __call__(self, request: RecordedRequest, index: int) -> Reply:
        with self._lock:
            now = time.monotonic()
            if not self.log:
                self._first, self._stamp = now, now
            self._level = min(self.burst, self._level + (now - self._stamp) * self.rate)
            self._stamp = now
            free = now - self._first >= self.limited_for_s
            if self._level >= 1.0 or free:
                self._level = max(0.0, self._level - 1.0)
                self._in_flight += 1
                self.log.append((now, 200, self._in_flight, 0.0))
                wait = None
            else:
                wait = (1.0 - self._level) / self.rate
                self.log.append((now, 429, self._in_flight, now + wait))
        if wait is not None:
            return Reply(429, {"error": "rate limited"}, headers={
                "Retry-After": f"{wait:.3f}", "retry-after-ms": f"{wait * 1000:.1f}"})
        try:
            if self.delay_s:
                time.sleep(self.delay_s)
            case_id = str(request.json().get("id", index))
        finally:
            with self._lock:
                self._in_flight -= 1
        return Reply(200, {"ranked_ids": [f"{case_id}-a"]})


def main(argv: Sequence[str] | None = None) -> None:
    """Serve ``{"ranked_ids": ["<id>-a", "<id>-b"]}`` after ``--delay-ms`` until stdin
    closes; with ``--rate R``, at most R requests a second (:class:`RateLimit`, 429
    above it), and the counts of 200 and 429 answers printed at the end."""
    parser = argparse.ArgumentParser(prog="python -m evalkit_http.testing")
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--rate", type=float, default=None)
    parser.add_argument("--burst", type=float, default=1.0)
    args = parser.parse_args(argv)
    limit = None if args.rate is None else RateLimit(args.rate, args.burst,
                                                     args.delay_ms / 1000.0)
    handler = limit if limit is not None else _echo_ranking(args.delay_ms / 1000.0)
    server = ScriptedServer(handler=handler).start()
    print(server.url, flush=True)
    try:
        sys.stdin.read()
    finally:
        server.stop()
        if limit is not None:
            statuses = [entry[1] for entry in limit.log]
            print(json.dumps({"200": statuses.count(200), "429": statuses.count(429)}),
                  flush=True)


if __name__ == "__main__":
    main()
