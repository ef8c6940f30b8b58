"""The ``openai`` provider: the Chat Completions wire format (``POST
{base_url}/chat/completions``) over ``httpx``, which OpenAI, Azure OpenAI, vLLM, Ollama,
llama.cpp's server, LiteLLM's proxy and most hosted models accept.

The grade (or a pairwise verdict, ``record_verdict``) is forced in one of two strict ways
(``grade_via``):

* ``tool`` (default): the only tool is the function ``record_grade``, ``strict``, whose
  parameters are the grade's JSON schema, and ``tool_choice`` names it (with
  ``parallel_tool_calls: false``): the reply must hold exactly one call of it;
* ``json_schema``: ``response_format`` is ``{"type": "json_schema", "json_schema":
  {"name": "record_grade", "strict": true, "schema": ...}}``: the reply's content must be
  a JSON object of that schema.

:func:`chat_tool_input` accepts nothing else: prose, a reply cut at ``max_tokens``
(``finish_reason: length``), a refusal, another function, two calls, arguments that are
not JSON, keys the schema does not have, or a score off the scale are refused (the judge
keeps such a reply as rejected, never as a grade).

The output token cap is sent as ``max_tokens``, or as ``max_completion_tokens`` when the
judge's ``max_tokens_field`` says so (OpenAI's o-series models refuse ``max_tokens``).

Requests are retried ``retries`` times (default 4) after a 408, 409, 429, 5xx or a
transport failure, waiting what the server's ``retry-after-ms`` / ``Retry-After`` asks
(at most :data:`RETRY_AFTER_MAX_S`) or else a jittered exponential backoff from 0.5 s
(:mod:`evalkit.io.retry_waits`, the rule the official SDKs and evalkit's HTTP target
use). ``timeout`` is the deadline of each whole attempt, the reply's body included, which
is capped (:mod:`evalkit_judge.attempt_bounds`): an attempt past it is retried like any
timeout, a body over the cap is refused unread and not retried. The API key is read
from the environment variable ``api_key_env`` names (default
``OPENAI_API_KEY``; a local server without keys needs none) and sent as ``Authorization:
Bearer``; it and every extra header value are registered as secrets before the first
request.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from evalkit.execute.scoring import RunAborted
from evalkit.io.redaction import mask
from evalkit.io.retry_waits import backoff_s, retry_after_s
from evalkit_judge.attempt_bounds import (
    ACCEPT_ENCODING,
    UNREADABLE,
    bind_http_client,
    send_within,
)
from evalkit_judge.budget import JudgeError, JudgeUnavailable, Usage
from evalkit_judge.grades import (
    GRADE_FIELDS,
    TOOL_NAME,
    grade_fields,
    only_fields,
    refuse_malformed,
    reply_json,
    strict_object,
)
from evalkit_judge.pricing import reported_usage, token_count
from evalkit_judge.providers import (
    DEFAULT_RETRIES,
    MAX_TOKENS_FIELDS,
    JudgeProvider,
    ProviderSettings,
    RequestFailed,
    Sent,
    before_attempt,
)

if TYPE_CHECKING:
    import httpx

    from evalkit_judge.prompt import ForcedToolPrompt

#: Statuses retried (as the official SDKs do): timeout, conflict, rate limit, 5xx.
RETRIED_STATUSES = frozenset({408, 409, 429})
#: The longest server-asked wait honoured before a retry (seconds); a longer one is cut
#: to this.
RETRY_AFTER_MAX_S = 60.0
#: Seconds per HTTP attempt when the judge sets no timeout (the official SDK's default):
#: the deadline of the whole attempt (:mod:`evalkit_judge.attempt_bounds`).
DEFAULT_TIMEOUT_S = 600.0
#: Characters of a non-conforming content quoted in a refusal.
QUOTED = 120


class OpenAIProvider(JudgeProvider):
    """Grades on an OpenAI-compatible Chat Completions endpoint (module docstring).

    ``settings.base_url`` defaults to ``https://api.openai.com/v1``; the request goes to
    ``{base_url}/chat/completions``. :attr:`sleep` is the wait between attempts
    (``time.sleep``; a test may record the waits instead).
    """

    name: ClassVar[str] = "openai"
    grade_modes: ClassVar[tuple[str, ...]] = ("tool", "json_schema")
    max_tokens_fields: ClassVar[tuple[str, ...]] = MAX_TOKENS_FIELDS
    default_base_url: ClassVar[str | None] = "https://api.openai.com/v1"
    default_api_key_env: ClassVar[str | None] = "OPENAI_API_KEY"

    def __init__(self, settings: ProviderSettings) -> None:
        super().__init__(settings)
        self.retries = DEFAULT_RETRIES if settings.retries is None else settings.retries
        self.sleep: Callable[[float], None] = time.sleep
        self._http: httpx.Client | None = None
        self._attempt_s = DEFAULT_TIMEOUT_S

    # ------------------------------------------------------------------ the request
    def request(self, prompt: ForcedToolPrompt, message: str) -> dict[str, Any]:
        messages: list[dict[str, Any]] = []
        if prompt.system is not None:
            messages.append({"role": "system", "content": prompt.system})
        messages.append({"role": "user", "content": message})
        body: dict[str, Any] = {"model": prompt.model,
                                self.settings.max_tokens_field: prompt.max_tokens,
                                "messages": messages}
        name = prompt.tool_name
        if self.settings.grade_via == "tool":
            body["tools"] = [{"type": "function", "function": {
                "name": name, "description": prompt.tool["description"],
                "strict": True, "parameters": prompt.schema}}]
            body["tool_choice"] = {"type": "function", "function": {"name": name}}
            body["parallel_tool_calls"] = False
        else:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": name, "strict": True, "schema": prompt.schema}}
        if prompt.temperature is not None:
            body["temperature"] = prompt.temperature
        return body

    # ------------------------------------------------------------------ sending
    def prepare(self) -> None:
        """Build the HTTP client on first use: the key (``api_key_env``), the headers
        and the base URL resolved from the environment and registered as secrets, each
        checked for characters HTTP cannot send.

        Raises:
            RunAborted: an unset variable, an API refusal earlier (401), or a value HTTP
                cannot send (named, never shown).
        """
        stop = self.refused()
        if stop is not None:
            raise stop
        with self._lock:
            if self._http is not None:
                return
            import httpx

            from evalkit.io.headers import header_problem

            headers = {"content-type": "application/json",
                       **self.resolved_headers()}
            key = self.api_key()
            if key is not None:
                headers["authorization"] = f"Bearer {key}"
            for name, value in headers.items():
                problem = header_problem(value)
                if problem is not None:
                    what = ("the API key (" + (self.settings.api_key_env or
                                              str(self.default_api_key_env)) + ")"
                            if name == "authorization" else f"header {name!r}")
                    raise RunAborted(JudgeUnavailable(
                        f"judge {self.model!r}: {what} cannot be sent: "
                        f"{problem.replace('its value', 'it')}; no request was sent"))
            # a query in the base URL (Azure's ?api-version=...) goes with every request,
            # after the path: httpx would otherwise append the path to the query
            url = httpx.URL(self.resolved_base_url() or "")
            base = str(url.copy_with(query=None, fragment=None)).rstrip("/")
            timeout = DEFAULT_TIMEOUT_S if self.settings.timeout is None \
                else self.settings.timeout
            import httpcore

            headers["accept-encoding"] = ACCEPT_ENCODING  # what read_body decodes
            self._attempt_s = timeout
            self._http = bind_http_client(httpx.Client(
                base_url=base, params=url.params, headers=headers, timeout=timeout),
                httpcore)

    def send(self, body: dict[str, Any]) -> Sent:
        """POST ``body`` to ``/chat/completions``, retrying as the module says.

        Raises:
            RequestFailed: a status that is not retried (401 included: see
                :meth:`~evalkit_judge.providers.JudgeProvider.stop_for`), or the last
                retry failed; names the status and the API's message.
        """
        import httpx

        self.prepare()
        http = self._http
        assert http is not None
        attempt = 0
        while True:
            request = http.build_request("POST", "/chat/completions", json=body)
            before_attempt()  # counted; a retry past the run's limits is not sent
            try:
                answer = send_within(partial(http.send, request, stream=True),
                                     self._attempt_s, httpx.ReadTimeout)
            except UNREADABLE as exc:  # the same body again: not retried
                raise RequestFailed(f"{type(exc).__name__}: {exc}", retries=attempt) from None
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
                status: int | None = None
                wait = None
            else:
                if answer.status_code == 200:
                    return Sent(_reply_json(answer), attempt)
                status = answer.status_code
                problem = f"HTTP {status}: {_error_message(answer)}"
                if status not in RETRIED_STATUSES and status < 500:
                    raise RequestFailed(problem, status_code=status, retries=attempt)
                wait = retry_after_s(answer.headers)
            if attempt >= self.retries:
                raise RequestFailed(problem, status_code=status, retries=attempt)
            attempt += 1
            self.sleep(min(wait, RETRY_AFTER_MAX_S) if wait is not None
                       else backoff_s(attempt))

    def close(self) -> None:
        """Close the HTTP client (a new one is built by the next request)."""
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    # ------------------------------------------------------------------ the reply
    def tool_input(self, reply: Mapping[str, Any], name: str, fields: tuple[str, ...]
                   ) -> Mapping[str, Any]:
        return chat_tool_input(reply, name, fields, self.settings.grade_via)

    def usage(self, reply: Mapping[str, Any]) -> Usage:
        """``prompt_tokens`` (less its ``cached_tokens``, counted as cache reads) and
        ``completion_tokens`` of the reply's ``usage``.

        Raises:
            UsageUnknown: no usage, no ``prompt_tokens`` / ``completion_tokens``, or a
                count that is not a token count
                (:func:`~evalkit_judge.pricing.reported_usage`).
        """
        usage = reported_usage(reply, "prompt_tokens", "completion_tokens")
        details = usage.get("prompt_tokens_details")
        cached = token_count(details.get("cached_tokens"), "cached_tokens") \
            if isinstance(details, Mapping) else 0
        prompt = token_count(usage.get("prompt_tokens"), "prompt_tokens")
        return Usage(input_tokens=max(0, prompt - cached),
                     output_tokens=token_count(usage.get("completion_tokens"),
                                               "completion_tokens"),
                     cache_read_input_tokens=min(cached, prompt))


def _reply_json(answer: httpx.Response) -> dict[str, Any]:
    """The JSON object of a 200 reply (:func:`~evalkit_judge.grades.reply_json`: a
    repeated key is refused), or ``{"unreadable": text}`` (refused by
    :func:`parse_chat_reply`)."""
    return reply_json(answer.content)


def _error_message(answer: httpx.Response) -> str:
    """The API's error message (``{"error": {"message": ...}}``) or the body's start."""
    try:
        data = answer.json()
    except ValueError:
        return mask(answer.text[:300]) or answer.reason_phrase
    error = data.get("error") if isinstance(data, Mapping) else None
    message = error.get("message") if isinstance(error, Mapping) else error
    return mask(str(message if message is not None else data)[:300])


def parse_chat_reply(reply: Mapping[str, Any], scale: int, grade_via: str = "tool"
                     ) -> tuple[int, str]:
    """``(score, reason)`` of a Chat Completions reply that completed one conforming
    grade (:func:`chat_tool_input` of ``record_grade``): exactly ``score`` (an integer on
    ``1..scale``) and ``reason`` (text).

    Raises:
        JudgeError: :func:`chat_tool_input`'s refusals, a score off the scale or a reason
            that is not text.
    """
    return grade_fields(chat_tool_input(reply, TOOL_NAME, GRADE_FIELDS, grade_via), scale)


def chat_tool_input(reply: Mapping[str, Any], name: str, fields: tuple[str, ...],
                    grade_via: str = "tool") -> Mapping[str, Any]:
    """The answer object of a Chat Completions reply forced to the strict schema ``name``
    (a grade's ``record_grade``, a verdict's ``record_verdict``): with
    ``grade_via="tool"`` the arguments of one call of the function ``name``
    (``finish_reason`` ``tool_calls``, or ``stop``, which OpenAI reports for a forced
    function); with ``"json_schema"`` the content, a JSON object (``finish_reason``
    ``stop``). It may hold no key outside ``fields``.

    Raises:
        JudgeError: no choice, a refusal, prose, ``finish_reason`` ``length`` (or another
            that is not a completed answer), another function, two calls, content or
            arguments that are not a JSON object, keys outside the schema.
    """
    refuse_malformed(reply)
    if "unreadable" in reply:
        raise JudgeError(f"the reply is not a JSON chat completion: "
                         f"{str(reply['unreadable'])[:QUOTED]!r}")
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise JudgeError("the reply has no choice")
    if len(choices) > 1:
        raise JudgeError(f"the reply has {len(choices)} choices, not one")
    choice = choices[0]
    finish = choice.get("finish_reason")
    message = choice.get("message")
    message = message if isinstance(message, Mapping) else {}
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        raise JudgeError(f"the model refused to answer: {refusal[:QUOTED]!r}")
    if finish == "length":
        raise JudgeError(f"the reply stopped with finish_reason='length', not a completed "
                         f"{name} answer (it hit max_tokens: the answer, and its reason, may "
                         "be cut mid-word; raise max_tokens)")
    calls = message.get("tool_calls")
    calls = [c for c in calls if isinstance(c, Mapping)] if isinstance(calls, list) else []
    if grade_via == "tool":
        raw = _tool_arguments(calls, finish, name)
    else:
        if calls:
            raise JudgeError(f"the reply called a function; an answer via json_schema is "
                             f"the content (finish_reason={finish!r})")
        if finish != "stop":
            raise JudgeError(f"the reply stopped with finish_reason={finish!r}, not a "
                             f"completed {name} answer ('stop')")
        raw = message.get("content")
    if not isinstance(raw, str):
        raise JudgeError(f"the {name} answer is not JSON text: {raw!r}")
    data = strict_object(raw, name, QUOTED)
    return only_fields(data, name, fields)


def _tool_arguments(calls: list[Mapping[str, Any]], finish: Any, name: str) -> Any:
    """The arguments of the one call of the function ``name`` among ``calls``.

    Raises:
        JudgeError: no call, another function, two calls, or a reply not finished by the
            call.
    """
    if not calls:
        raise JudgeError(f"the reply has no {name} function call "
                         f"(finish_reason={finish!r})")
    functions: list[Mapping[str, Any]] = []
    for call in calls:
        function = call.get("function")
        functions.append(function if isinstance(function, Mapping) else {})
    ours = [f for f in functions if f.get("name") == name]
    if not ours:
        names = ", ".join(repr(f.get("name")) for f in functions)
        raise JudgeError(f"the reply called {names}, not {name}")
    if len(calls) > 1:
        raise JudgeError(f"the reply made {len(calls)} function calls, not one "
                         f"{name} call")
    if finish not in ("tool_calls", "stop"):
        raise JudgeError(f"the reply stopped with finish_reason={finish!r}, not a "
                         f"completed {name} call ('tool_calls')")
    return ours[0].get("arguments")


__all__ = ["DEFAULT_TIMEOUT_S", "RETRIED_STATUSES", "RETRY_AFTER_MAX_S", "OpenAIProvider",
           "chat_tool_input", "parse_chat_reply"]
