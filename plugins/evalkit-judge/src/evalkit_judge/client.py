"""The judge's API client: built on first use, checked for credentials before the first
request, and dropped or refused for good when the API says its credentials cannot work.

Also the client's token counting endpoint (``messages.count_tokens``), which
``max_cost`` uses to count a request's input tokens: asked until the client lacks it or
it fails once, then the judge estimates input tokens from earlier replies.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol, cast

from evalkit.execute.scoring import RunAborted
from evalkit_judge.budget import JudgeUnavailable
from evalkit_judge.credentials import (
    build_client,
    is_credentials_failure,
    is_refusal,
    refusal_message,
    require_credentials,
    unusable_message,
)

#: Retries of 429, 529, 5xx and connection errors on a client the judge builds itself.
DEFAULT_MAX_RETRIES = 4

log = logging.getLogger("evalkit_judge")


class _Messages(Protocol):
    def create(self, **kwargs: Any) -> Any: ...


class AnthropicLike(Protocol):
    """What the judge needs of a client: ``client.messages.create(**request)``.

    ``client.messages.count_tokens(...)`` (the token counting endpoint, which the
    ``anthropic`` SDK has) is used under ``max_cost`` when present.
    """

    @property
    def messages(self) -> _Messages: ...


class JudgeClient:
    """The client of one judge (``model``), given or built on first use.

    Args:
        model: the judge model id (named in every message).
        client: a client to use; ``None`` builds an ``anthropic.Anthropic`` on first use
            (:func:`evalkit_judge.credentials.build_client`). A given SDK client gets
            ``max_retries`` through ``with_options`` when both are set.
        max_retries, timeout, base_url: the settings of a client built here
            (``max_retries`` defaults to :data:`DEFAULT_MAX_RETRIES`).
        build_options: more keyword arguments of a client built here (``api_key``,
            ``default_headers``), read when it is built.
    """

    def __init__(self, model: str, client: Any | None, *, max_retries: int | None,
                 timeout: float | None, base_url: str | None,
                 build_options: Callable[[], dict[str, Any]] | None = None) -> None:
        if client is not None and max_retries is not None and hasattr(client, "with_options"):
            client = client.with_options(max_retries=max_retries)
        self.model = model
        self.max_retries, self.timeout, self.base_url = max_retries, timeout, base_url
        self._client = client
        self._builds_client = client is None
        self._build_options = build_options
        self._lock = threading.Lock()
        self._count_tokens = True  # until the client lacks the endpoint or it fails
        # why the API refused this judge's credentials (401): no request is sent after it
        self._refused: str | None = None

    @property
    def current(self) -> Any | None:
        """The client in use: the one given (after ``with_options``), or the one built;
        ``None`` before a built client's first use."""
        return self._client

    def resolve(self) -> AnthropicLike:
        """The client, built on first use; raises :class:`RunAborted` when no request can
        be sent: the API refused this judge's credentials earlier, the client cannot be
        built, or it has no credentials (a client built without them is not kept, so the
        environment is read again next time)."""
        if self._refused is not None:
            raise RunAborted(JudgeUnavailable(self._refused))
        with self._lock:
            client = self._client
            if client is None:
                options = self._build_options() if self._build_options else {}
                client = build_client(self.model, max_retries=DEFAULT_MAX_RETRIES
                                      if self.max_retries is None else self.max_retries,
                                      timeout=self.timeout,
                                      base_url=options.pop("base_url", self.base_url),
                                      **options)
            require_credentials(client, self.model)
            self._client = client
            return cast(AnthropicLike, client)

    def unusable(self, exc: Exception) -> RunAborted:
        """The client could not resolve its credentials when it came to send a request:
        nothing was sent, and the run stops. A client the judge built is dropped, so that
        the next use reads the environment again."""
        if self._builds_client:
            with self._lock:
                self._client = None
        return RunAborted(JudgeUnavailable(unusable_message(self.model, exc)))

    def refuse(self, exc: Exception) -> RunAborted:
        """Remember that the API refused this judge's credentials (401): the run stops,
        and this judge sends no request from now on."""
        self._refused = refusal_message(self.model, exc)
        return RunAborted(JudgeUnavailable(self._refused))

    def stop_for(self, exc: Exception) -> RunAborted | None:
        """The :class:`RunAborted` a failed call's ``exc`` means (credentials unusable,
        or refused by the API), or ``None`` for any other failure."""
        if is_credentials_failure(exc):
            return self.unusable(exc)
        if is_refusal(exc):
            return self.refuse(exc)
        return None

    def count_input_tokens(self, body: Mapping[str, Any]) -> int | None:
        """The input tokens of ``body`` by ``client.messages.count_tokens``, or ``None``
        (no such endpoint on the client, or it failed: then it is not asked again).

        Raises:
            RunAborted: the client's credentials cannot work (see :meth:`stop_for`).
        """
        if not self._count_tokens:
            return None
        count = getattr(self.resolve().messages, "count_tokens", None)
        if not callable(count):
            self._count_tokens = False
            return None
        request = {k: body[k] for k in ("model", "messages", "tools", "tool_choice", "system")
                   if k in body}
        try:
            counted = count(**request)
        except Exception as exc:
            stop = self.stop_for(exc)
            if stop is not None:
                raise stop from exc
            self._count_tokens = False
            log.warning("judge %r: counting input tokens failed (%s: %s); estimating them "
                        "from earlier replies from now on", self.model,
                        type(exc).__name__, exc)
            return None
        tokens = counted.get("input_tokens") if isinstance(counted, Mapping) \
            else getattr(counted, "input_tokens", None)
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            self._count_tokens = False
            log.warning("judge %r: the token count %r is not a count; estimating input "
                        "tokens from earlier replies from now on", self.model, tokens)
            return None
        return tokens
