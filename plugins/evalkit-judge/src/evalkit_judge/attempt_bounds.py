"""The bounds of each HTTP attempt of a judge's built-in providers: ``timeout`` is a
deadline for the whole attempt, and the reply body is capped.

An HTTP library's timeout bounds each socket operation, so a server that sends its body
one byte every half second never trips it and holds a request for as long as it likes.
The judge's ``timeout`` is therefore the deadline of the whole attempt: connecting,
sending, the status line and headers, and the complete body. Past it the attempt is
abandoned as a timeout (retried like one, ``retries`` times; then the case errors). A
reply body over :data:`MAX_REPLY_BYTES` (declared, received or decoded) is refused
without being read whole, and is not retried.

The one implementation is the kernel's :mod:`evalkit.io.http_bounds` (the HTTP target's
too): the client's connection pool gets its deadline backend
(:func:`~evalkit.io.http_bounds.install_client_deadline`), and :func:`send_within` reads
each reply through :func:`~evalkit.io.http_bounds.read_body` inside
:func:`~evalkit.io.http_bounds.attempt_deadline`. The ``openai`` provider does so on its
``httpx`` client; the ``anthropic`` provider builds the SDK's ``httpx2`` client as
:func:`anthropic_http_client` (the SDK's retries then retry an attempt cut at the
deadline, each attempt bounded). A client passed to the judge (``client=``) is used as
it is, with its own timeouts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalkit.io.http_bounds import (
    ACCEPT_ENCODING,
    ResponseTooLarge,
    UndecodableBody,
    attempt_deadline,
    install_client_deadline,
    read_body,
)
from evalkit_judge.providers import before_attempt

#: The largest reply body a judge reads (decoded bytes): a grade or a verdict is a few
#: hundred bytes; a server sending more than this is refused, not read.
MAX_REPLY_BYTES = 4 * 1024 * 1024

#: What :func:`send_within` raises for a reply it refuses to read (not retried).
UNREADABLE = (ResponseTooLarge, UndecodableBody)


def send_within(send: Callable[[], Any], seconds: float,
                timeout_error: type[Exception]) -> Any:
    """``send()`` (an ``httpx``/``httpx2`` ``Client.send(request, stream=True)``) and its
    body read within ``seconds`` of the start and :data:`MAX_REPLY_BYTES`; returns the
    closed response with its content read (``response.content``, ``.json()``).

    Raises:
        ResponseTooLarge: the body is over :data:`MAX_REPLY_BYTES`.
        UndecodableBody: an unknown or corrupt content coding.
        timeout_error: the deadline passed (between chunks; a cut read raises the
            client's own timeout error, a subclass of it for ``httpx.ReadTimeout``).
        Exception: the client's transport errors.
    """
    with attempt_deadline(seconds) as deadline:
        response = send()
        try:
            body = read_body(response, MAX_REPLY_BYTES, deadline, timeout_error, None)
        finally:
            response.close()
    # the body was read raw (decoded here within the cap): the response keeps it as its
    # content, as if httpx had read it
    response._content = body
    return response


def bind_http_client(client: Any, core: Any) -> Any:
    """``client`` (an ``httpx.Client``, ``core=httpcore``) with the deadline backend in
    its pool; refused when it cannot be installed (then no deadline would hold)."""
    if not install_client_deadline(client, core):
        raise RuntimeError("the attempt deadline cannot be installed in the HTTP client's "
                           "connection pool (an httpx version whose transport evalkit does "
                           "not know)")
    return client


_client_class: type | None = None


def anthropic_http_client(seconds: float) -> Any:
    """An ``httpx2.Client`` for ``anthropic.Anthropic(http_client=...)`` (the SDK's
    default client, its limits and redirects) whose every attempt is bounded by
    :func:`send_within` (``seconds``, :data:`MAX_REPLY_BYTES`); a reply refused unread is
    raised as an ``anthropic.AnthropicError``, which the SDK does not retry."""
    global _client_class
    if _client_class is None:
        _client_class = _define_client_class()
    return _client_class(seconds)


def _define_client_class() -> type:
    import anthropic
    import httpcore2
    import httpx2

    class ReplyRefused(anthropic.AnthropicError):
        """A reply body over the cap, or not decodable (not retried by the SDK)."""

    class BoundedClient(anthropic.DefaultHttpxClient):
        def __init__(self, seconds: float) -> None:
            # only the codings read_body decodes within the cap
            super().__init__(headers={"accept-encoding": ACCEPT_ENCODING})
            self.attempt_s = seconds
            bind_http_client(self, httpcore2)

        def send(self, request: Any, *, stream: bool = False, **kwargs: Any) -> Any:
            before_attempt()  # each SDK attempt counted; a retry past the limits not sent
            parent = super().send
            # the SDK asks for stream=True on every request (it reads the body itself),
            # so an event stream is told by the request: the SDK's raw-stream header, an
            # event-stream accept, or "stream": true in its JSON body
            if stream and _is_event_stream(request):  # its headers within the deadline
                with attempt_deadline(self.attempt_s):
                    return parent(request, stream=True, **kwargs)
            try:
                return send_within(lambda: parent(request, stream=True, **kwargs),
                                   self.attempt_s, httpx2.ReadTimeout)
            except UNREADABLE as exc:
                raise ReplyRefused(str(exc)) from None

    return BoundedClient


def _is_event_stream(request: Any) -> bool:
    """Whether ``request`` (an ``httpx2.Request`` the SDK built) asks for a server-sent
    event stream rather than one JSON reply."""
    headers = request.headers
    if headers.get("x-stainless-raw-response") == "stream" \
            or "text/event-stream" in headers.get("accept", ""):
        return True
    import json

    try:
        body = json.loads(request.content or b"{}")
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(body, dict) and body.get("stream") is True


__all__ = ["ACCEPT_ENCODING", "MAX_REPLY_BYTES", "UNREADABLE", "anthropic_http_client",
           "bind_http_client", "send_within"]
