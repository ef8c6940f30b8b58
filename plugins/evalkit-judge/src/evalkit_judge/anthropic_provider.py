"""The ``anthropic`` provider: the Messages API through the ``anthropic`` SDK.

One grade (or pairwise verdict) is one request whose only possible answer is a call of
the strict tool ``record_grade`` (``record_verdict``): ``tool_choice`` forces it, and
:func:`evalkit_judge.grades.forced_tool_input` reads it. The SDK retries 408, 409, 429,
5xx (529 included) and connection failures with its jittered exponential backoff,
honouring ``retry-after`` (the rule of :mod:`evalkit.io.retry_waits`), ``retries``
times. ``timeout`` is the deadline of each whole attempt, the reply's body included,
which is capped (:mod:`evalkit_judge.attempt_bounds`), on the client the judge builds;
a client passed to it keeps its own timeouts. The client, its credentials and the token
counting endpoint are :class:`~evalkit_judge.client.JudgeClient`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from evalkit.execute.scoring import RunAborted
from evalkit_judge.attempt_bounds import anthropic_http_client
from evalkit_judge.client import JudgeClient
from evalkit_judge.credentials import is_credentials_failure
from evalkit_judge.grades import MALFORMED, forced_tool_input, reply_dict, reply_json
from evalkit_judge.providers import JudgeProvider, ProviderSettings, Sent

if TYPE_CHECKING:
    from evalkit_judge.prompt import ForcedToolPrompt

#: Seconds per attempt when the judge sets no timeout (the SDK's default).
DEFAULT_TIMEOUT_S = 600.0
#: The header the ``anthropic`` SDK sends with each request: the retries before it.
RETRY_COUNT_HEADER = "x-stainless-retry-count"


class AnthropicProvider(JudgeProvider):
    """Grades on the Anthropic Messages API (see the module docstring).

    ``settings.client`` is used when given (an ``anthropic.Anthropic`` or any object
    with ``messages.create``); otherwise a client is built on first use with
    ``base_url``, ``timeout``, ``retries`` (the SDK's ``max_retries``), the key of
    ``api_key_env`` when named (else what the SDK finds: ``ANTHROPIC_API_KEY``,
    ``ANTHROPIC_AUTH_TOKEN``, a profile), the extra ``headers`` and an HTTP client whose
    every attempt ends by ``timeout`` (:func:`~evalkit_judge.attempt_bounds.anthropic_http_client`).
    """

    name: ClassVar[str] = "anthropic"
    default_api_key_env: ClassVar[str | None] = "ANTHROPIC_API_KEY"

    def __init__(self, settings: ProviderSettings) -> None:
        super().__init__(settings)
        self.client = JudgeClient(settings.model, settings.client,
                                  max_retries=settings.retries, timeout=settings.timeout,
                                  base_url=None,  # resolved by _build_options
                                  build_options=self._build_options)

    def _build_options(self) -> dict[str, Any]:
        # each attempt within `timeout` as a whole, its reply capped (the SDK's own
        # timeout bounds each read alone)
        options: dict[str, Any] = {"http_client": anthropic_http_client(
            DEFAULT_TIMEOUT_S if self.settings.timeout is None else self.settings.timeout)}
        if self.settings.api_key_env is not None:
            options["api_key"] = self.api_key()
        if self.settings.headers:
            options["default_headers"] = self.resolved_headers()
        if self.settings.base_url is not None:
            options["base_url"] = self.resolved_base_url()
        return options

    def key_scope(self) -> dict[str, Any]:
        """Empty at the API's default endpoint (the key is the body's alone), else the
        provider and the endpoint."""
        return {} if self.settings.base_url is None else super().key_scope()

    def request(self, prompt: ForcedToolPrompt, message: str) -> dict[str, Any]:
        return prompt.messages_body(message)

    def prepare(self) -> None:
        self.client.resolve()

    def refused(self) -> RunAborted | None:
        return None  # JudgeClient.resolve refuses after a 401

    def send(self, body: dict[str, Any]) -> Sent:
        kwargs = dict(body)
        temperature = kwargs.pop("temperature", None)
        if temperature is not None:  # the SDK's types lack it: sent in the body as is
            kwargs["extra_body"] = {"temperature": temperature}
        message, retries, strict = _sent(self.client.resolve(), kwargs)
        if strict is not None and MALFORMED in strict:  # a repeated key: refused
            return Sent(strict, retries)
        return Sent(reply_dict(message), retries)

    def stop_for(self, exc: Exception) -> RunAborted | None:
        return self.client.stop_for(exc)

    def sent_anything(self, exc: Exception) -> bool:
        return not is_credentials_failure(exc)

    def retries_before(self, exc: Exception) -> int:
        """The retries the SDK made before the request that raised ``exc`` (the retry
        count header of its last request; 0 when unknown)."""
        request = getattr(exc, "request", None)
        try:
            return max(0, int(getattr(request, "headers", {}).get(RETRY_COUNT_HEADER, 0)))
        except (TypeError, ValueError):
            return 0

    def count_input_tokens(self, body: Mapping[str, Any]) -> int | None:
        return self.client.count_input_tokens(body)

    def tool_input(self, reply: Mapping[str, Any], name: str, fields: tuple[str, ...]
                   ) -> Mapping[str, Any]:
        return forced_tool_input(reply, name, fields)


def _sent(client: Any, kwargs: dict[str, Any]) -> tuple[Any, int, dict[str, Any] | None]:
    """The reply to ``client.messages.create(**kwargs)``, the requests the client sent
    again on the way (the SDK's ``retries_taken``; 0 for a client that does not say), and
    the reply body read strictly (:func:`~evalkit_judge.grades.reply_json`: the SDK's
    parser keeps the last of a repeated key), ``None`` when the client does not give it."""
    raw_api = getattr(client.messages, "with_raw_response", None)
    if raw_api is None:
        return client.messages.create(**kwargs), 0, None
    raw = raw_api.create(**kwargs)
    retries = getattr(raw, "retries_taken", 0)
    content = getattr(getattr(raw, "http_response", None), "content", None)
    strict = reply_json(content) if isinstance(content, bytes) else None
    return raw.parse(), retries if isinstance(retries, int) and retries > 0 else 0, strict


__all__ = ["DEFAULT_TIMEOUT_S", "RETRY_COUNT_HEADER", "AnthropicProvider"]
