"""Offline stand-ins for the Anthropic and OpenAI APIs, for tests and benchmarks.

* :class:`FakeAnthropic`: an in-process client whose ``messages.create(**request)``
  answers from a function and records every request (and, when given ``count=``, whose
  ``messages.count_tokens(**request)`` answers like the token counting endpoint);
* :class:`MessagesAPIServer`: a local HTTP server on 127.0.0.1 that imitates
  ``POST /v1/messages`` and ``POST /v1/messages/count_tokens``, so the real ``anthropic``
  SDK can be pointed at it with ``base_url`` (retries, status errors and malformed bodies
  included);
* :class:`ChatCompletionsServer`: the same for the OpenAI wire format, ``POST
  /v1/chat/completions`` (:func:`chat_tool_reply`, :func:`chat_json_reply`,
  :func:`chat_content_reply` build its replies), for the judge's ``openai`` provider and
  the official ``openai`` client.

Neither touches the network beyond 127.0.0.1.
"""

from __future__ import annotations

import itertools
import json
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from evalkit_judge.grades import TOOL_NAME
from evalkit_judge.pairwise_prompt import VERDICT_TOOL

Reply = dict[str, Any]
#: ``(status, body, headers)``; a ``str`` or ``bytes`` body is sent as is.
HTTPAnswer = tuple[int, Any, Mapping[str, str]]

#: Input tokens a reply reports by default, and what the fakes count for any request.
DEFAULT_INPUT_TOKENS = 100

_ids = itertools.count(1)


@dataclass(frozen=True)
class Drip:
    """An answer of :class:`MessagesAPIServer` (and :class:`ChatCompletionsServer`) that
    never completes: status 200, ``content-length: declared``, then one space every
    ``interval_s`` seconds until the client hangs up or the server stops (a 100,000-byte
    body at 0.2 s a byte takes hours)."""

    declared: int = 100_000
    interval_s: float = 0.2


class Reset:
    """An answer of :class:`MessagesAPIServer` (and :class:`ChatCompletionsServer`) that
    resets the connection (``SO_LINGER`` 0, then close) after reading the request: the
    request was received, no reply comes back."""


def tool_reply(score: Any, reason: Any = "graded by a test double", *, model: str = "fake",
               input_tokens: int = DEFAULT_INPUT_TOKENS, output_tokens: int = 20,
               name: str = TOOL_NAME) -> Reply:
    """A Messages API reply holding one ``tool_use`` block with ``{score, reason}``."""
    n = next(_ids)
    return {
        "id": f"msg_{n:08d}", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "tool_use", "id": f"toolu_{n:08d}", "name": name,
                     "input": {"score": score, "reason": reason}}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def verdict_reply(verdict: Any, reason: Any = "judged by a test double", *,
                  model: str = "fake", input_tokens: int = DEFAULT_INPUT_TOKENS,
                  output_tokens: int = 20, name: str = VERDICT_TOOL) -> Reply:
    """A Messages API reply holding one ``tool_use`` block with ``{verdict, reason}`` (a
    pairwise verdict: ``"A"``, ``"B"`` or ``"tie"``)."""
    reply = tool_reply(None, reason, model=model, input_tokens=input_tokens,
                       output_tokens=output_tokens, name=name)
    reply["content"][0]["input"] = {"verdict": verdict, "reason": reason}
    return reply


def text_reply(text: str = "I would rather not grade this.", *, model: str = "fake",
               input_tokens: int = 100, output_tokens: int = 10) -> Reply:
    """A Messages API reply with text only (no tool call)."""
    n = next(_ids)
    return {
        "id": f"msg_{n:08d}", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def error_body(kind: str, message: str) -> Reply:
    """The body of an API error reply (``rate_limit_error``, ``overloaded_error``, ...)."""
    return {"type": "error", "error": {"type": kind, "message": message}}


def _default_answer(request: Mapping[str, Any]) -> Reply:
    return tool_reply(3, model=str(request.get("model", "fake")))


class _FakeMessages:
    def __init__(self, owner: FakeAnthropic) -> None:
        self._owner = owner

    def create(self, **kwargs: Any) -> Any:
        return self._owner._answer_call(kwargs)


class _FakeCountingMessages(_FakeMessages):
    def count_tokens(self, **kwargs: Any) -> Any:
        return self._owner._count_call(kwargs)


CountFn = Callable[[dict[str, Any]], Any]


class FakeAnthropic:
    """An in-process client: ``messages.create(**request)`` returns ``answer(request)``.

    ``answer`` receives the request (keyword arguments, ``extra_body`` merged in) and
    returns a reply dict, or an exception instance to raise. The default answers score 3.
    ``calls`` lists every request in arrival order (thread-safe).

    ``count``: when given, the client also has ``messages.count_tokens(**request)``, which
    returns ``{"input_tokens": n}`` for ``n = count(request)`` (or ``count`` itself when it
    is an int), or raises ``count(request)`` when that is an exception; ``count_calls``
    lists those requests. Without it the client has no ``count_tokens``.
    """

    def __init__(self, answer: Callable[[dict[str, Any]], Any] | None = None, *,
                 count: CountFn | int | None = None) -> None:
        self.answer = answer or _default_answer
        self.count = count
        self.calls: list[dict[str, Any]] = []
        self.count_calls: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.messages = _FakeMessages(self) if count is None else _FakeCountingMessages(self)

    def _count_call(self, kwargs: dict[str, Any]) -> Any:
        with self._lock:
            self.count_calls.append(dict(kwargs))
        count = self.count
        out = count(dict(kwargs)) if callable(count) else count
        if isinstance(out, BaseException):
            raise out
        return {"input_tokens": out}

    def _answer_call(self, kwargs: dict[str, Any]) -> Any:
        request = {k: v for k, v in kwargs.items() if k != "extra_body"}
        request.update(kwargs.get("extra_body") or {})
        with self._lock:
            self.calls.append(request)
        out = self.answer(request)
        if isinstance(out, BaseException):
            raise out
        return out

    @property
    def call_count(self) -> int:
        with self._lock:
            return len(self.calls)


class MessagesAPIServer:
    """A local imitation of the Messages API on ``127.0.0.1`` (a free port).

    Each ``POST /v1/messages`` takes the next answer of ``script`` if any is left, else
    asks ``answer(request_json)``; an answer is a reply dict (sent with status 200) or an
    ``(status, body, headers)`` tuple. ``requests`` lists the decoded request bodies,
    ``headers`` their HTTP headers. Use it as a context manager (it stops its thread on
    exit) and point the SDK at :attr:`base_url`.

    ``POST /v1/messages/count_tokens`` (the token counting endpoint) answers
    ``{"input_tokens": count(request_json)}``; ``count`` may also return an ``(status,
    body, headers)`` tuple. By default every request counts :data:`DEFAULT_INPUT_TOKENS`,
    what :func:`tool_reply` reports. ``count_requests`` lists those requests (they are
    not in ``requests``).
    """

    def __init__(self, answer: Callable[[dict[str, Any]], Any] | None = None, *,
                 script: Iterable[Any] = (), count: CountFn | None = None) -> None:
        self.answer = answer or _default_answer
        self.count: CountFn = count or (lambda request: DEFAULT_INPUT_TOKENS)
        self.script: list[Any] = list(script)
        self.requests: list[dict[str, Any]] = []
        self.count_requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []  # each request's path and query, as sent
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (the server must be started)."""
        if self._server is None:
            raise RuntimeError("the server is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def _next(self, request: dict[str, Any]) -> HTTPAnswer:
        with self._lock:
            self.requests.append(request)
            item = self.script.pop(0) if self.script else None
        if item is None:
            item = self.answer(request)
        if isinstance(item, tuple):
            status, body, headers = item
            return int(status), body, dict(headers)
        return 200, item, {}

    def _count(self, request: dict[str, Any]) -> HTTPAnswer:
        with self._lock:
            self.count_requests.append(request)
        out = self.count(request)
        if isinstance(out, tuple):
            status, body, headers = out
            return int(status), body, dict(headers)
        return 200, {"input_tokens": out}, {}

    def _route(self, path: str, request: dict[str, Any]) -> HTTPAnswer:
        """The answer to a POST of ``request`` to ``path``."""
        if path == "/v1/messages":
            return self._next(request)
        if path == "/v1/messages/count_tokens":
            return self._count(request)
        return 404, error_body("not_found_error", path), {}

    def start(self) -> Self:
        """Start serving in a daemon thread."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    request = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    request = {"_undecodable": raw.decode("utf-8", "replace")}
                with owner._lock:
                    owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                    owner.paths.append(self.path)
                path = self.path.split("?")[0]
                status, body, headers = owner._route(path, request)
                if isinstance(body, Reset):
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               struct.pack("ii", 1, 0))
                    self.connection.close()
                    self.close_connection = True
                    return
                if isinstance(body, Drip):
                    self._drip(status, body)
                    return
                data = body if isinstance(body, bytes) else (
                    body.encode() if isinstance(body, str) else json.dumps(body).encode())
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _drip(self, status: int, drip: Drip) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(drip.declared))
                self.end_headers()
                try:
                    for _ in range(drip.declared - 1):
                        if owner._server is None:
                            return
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(drip.interval_s)
                except OSError:  # the client hung up
                    return

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (waits at most 5 seconds for the thread)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ---------------------------------------------------------------------------- OpenAI wire
def chat_tool_reply(score: Any, reason: Any = "graded by a test double", *,
                    model: str = "fake", prompt_tokens: int = DEFAULT_INPUT_TOKENS,
                    completion_tokens: int = 20, name: str = TOOL_NAME,
                    finish_reason: str = "tool_calls", arguments: str | None = None
                    ) -> Reply:
    """A Chat Completions reply holding one function call of ``name`` with arguments
    ``{"score": score, "reason": reason}`` (or the raw ``arguments`` text)."""
    n = next(_ids)
    args = json.dumps({"score": score, "reason": reason}) if arguments is None else arguments
    return _chat(n, model, {"role": "assistant", "content": None, "refusal": None,
                            "tool_calls": [{"id": f"call_{n:08d}", "type": "function",
                                            "function": {"name": name, "arguments": args}}]},
                 finish_reason, prompt_tokens, completion_tokens)


def chat_verdict_reply(verdict: Any, reason: Any = "judged by a test double", *,
                       name: str = VERDICT_TOOL, **kwargs: Any) -> Reply:
    """A Chat Completions reply holding one function call of ``record_verdict`` with
    arguments ``{"verdict": verdict, "reason": reason}`` (a pairwise verdict: ``"A"``,
    ``"B"`` or ``"tie"``); other keywords as :func:`chat_tool_reply`'s."""
    return chat_tool_reply(None, name=name, arguments=json.dumps(
        {"verdict": verdict, "reason": reason}), **kwargs)


def chat_content_reply(content: str | None, *, model: str = "fake",
                       prompt_tokens: int = DEFAULT_INPUT_TOKENS, completion_tokens: int = 20,
                       finish_reason: str = "stop", refusal: str | None = None) -> Reply:
    """A Chat Completions reply whose message is ``content`` (prose, or the JSON of a
    grade under ``response_format``)."""
    n = next(_ids)
    return _chat(n, model, {"role": "assistant", "content": content, "refusal": refusal},
                 finish_reason, prompt_tokens, completion_tokens)


def chat_json_reply(score: Any, reason: Any = "graded by a test double", **kwargs: Any
                    ) -> Reply:
    """A Chat Completions reply whose content is the JSON grade ``{score, reason}``."""
    return chat_content_reply(json.dumps({"score": score, "reason": reason}), **kwargs)


def _chat(n: int, model: str, message: dict[str, Any], finish_reason: str,
          prompt_tokens: int, completion_tokens: int) -> Reply:
    return {
        "id": f"chatcmpl-{n:08d}", "object": "chat.completion", "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason,
                     "logprobs": None}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def openai_error_body(message: str, kind: str = "rate_limit_exceeded") -> Reply:
    """The body of an OpenAI API error reply."""
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def _default_chat_answer(request: Mapping[str, Any]) -> Reply:
    if "response_format" in request:
        return chat_json_reply(3, model=str(request.get("model", "fake")))
    return chat_tool_reply(3, model=str(request.get("model", "fake")))


class ChatCompletionsServer(MessagesAPIServer):
    """A local imitation of an OpenAI-compatible ``POST /v1/chat/completions`` on
    ``127.0.0.1`` (a free port), for the judge's ``openai`` provider and the official
    ``openai`` client alike: point either at :attr:`api_base` (``base_url`` plus
    ``/v1``).

    Each request takes the next answer of ``script`` if any is left, else asks
    ``answer(request_json)``; an answer is a reply dict (status 200) or an ``(status,
    body, headers)`` tuple. The default answer grades 3 (a function call, or JSON
    content when the request has ``response_format``). ``requests`` and ``headers``
    list what arrived.
    """

    def __init__(self, answer: Callable[[dict[str, Any]], Any] | None = None, *,
                 script: Iterable[Any] = ()) -> None:
        super().__init__(answer or _default_chat_answer, script=script)

    @property
    def api_base(self) -> str:
        """``http://127.0.0.1:<port>/v1``: the ``base_url`` of an OpenAI client."""
        return f"{self.base_url}/v1"

    def _route(self, path: str, request: dict[str, Any]) -> HTTPAnswer:
        if path == "/v1/chat/completions":
            return self._next(request)
        return 404, openai_error_body(f"no route {path}", "not_found"), {}
