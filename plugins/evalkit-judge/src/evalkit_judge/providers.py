"""The model APIs a judge can grade with ("providers"), and how a third party adds one.

A provider turns a forced-tool prompt (a grade's, or a pairwise verdict's: the same
code, another strict schema) into the request body of its wire format, sends it
(retrying what may succeed later), and reads the tool's input out of the reply, refusing
any reply that is not one completed, schema-conforming answer. The judge does the rest for
every provider alike: the cache key (:meth:`JudgeProvider.key_scope` plus the whole
body), the cache, the budget, the row details and the run header.

Built in: ``anthropic`` (the Messages API through the ``anthropic`` SDK:
:mod:`evalkit_judge.anthropic_provider`) and ``openai`` (the Chat Completions wire
format over ``httpx``, which OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server and
LiteLLM's proxy accept: :mod:`evalkit_judge.openai_provider`). Another package adds one
through the entry-point group :data:`ENTRY_POINT_GROUP`:

.. code-block:: toml

    [project.entry-points."evalkit_judge.providers"]
    mycloud = "mycloud_judge:MyCloudProvider"   # a JudgeProvider subclass

and a judge then says ``provider: mycloud`` (docs/judge.md, "A provider of your own").
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from evalkit.execute.scoring import RunAborted
from evalkit.io.redaction import (
    ENV_REFERENCE,
    mask,
    redact_url,
    register_secret,
    register_url_secrets,
)
from evalkit_judge.budget import JudgeUnavailable, Usage

if TYPE_CHECKING:
    from evalkit_judge.prompt import ForcedToolPrompt

class AttemptGate:
    """The HTTP attempts of one judge request (:func:`attempt_gate`): ``admit`` (a
    budget's :meth:`~evalkit_judge.budget.Budget.retry`, or nothing) is asked before
    every attempt after the first, and may stop it by raising.

    Attributes:
        attempts: the attempts admitted so far (the first included).
    """

    def __init__(self, admit: Callable[[], None] | None) -> None:
        self.admit = admit
        self.attempts = 0


_GATE: ContextVar[AttemptGate | None] = ContextVar("evalkit_judge_attempt_gate",
                                                   default=None)


@contextmanager
def attempt_gate(admit: Callable[[], None] | None) -> Iterator[AttemptGate]:
    """Count the HTTP attempts a provider's :meth:`JudgeProvider.send` makes in this
    thread (each one calls :func:`before_attempt`), asking ``admit`` before each retry."""
    gate = AttemptGate(admit)
    token = _GATE.set(gate)
    try:
        yield gate
    finally:
        _GATE.reset(token)


def before_attempt() -> None:
    """Called by a provider just before each HTTP attempt of a request (the first and
    every retry): counts it, and before a retry asks the judge's budget, which raises
    :class:`~evalkit_judge.budget.BudgetExhausted` when the retry would pass
    ``--max-calls`` or ``--max-cost`` (the retry is then not sent). Nothing outside a
    judge's request."""
    gate = _GATE.get()
    if gate is None:
        return
    if gate.attempts and gate.admit is not None:
        gate.admit()
    gate.attempts += 1


#: The entry-point group through which a package registers a provider class.
ENTRY_POINT_GROUP = "evalkit_judge.providers"
#: The ways of forcing the grade: a required tool (function) call with a JSON schema,
#: or a reply whose content must be JSON of that schema (``response_format``).
GRADE_VIA = ("tool", "json_schema")
#: The names under which a request may carry the output token cap: ``max_tokens``, or
#: ``max_completion_tokens``, which OpenAI's o-series (reasoning) models require in its
#: place (Chat Completions API reference: ``max_tokens`` is deprecated there and "not
#: compatible with o-series models").
MAX_TOKENS_FIELDS = ("max_tokens", "max_completion_tokens")
#: A header value that is shown in run headers and listings as it is written: only a
#: value made of ``${NAME}`` references and text around them is; any other is a secret.
REDACTED = "<redacted>"


@dataclass(frozen=True)
class ProviderSettings:
    """What a judge tells its provider (none of it secret; a key is read from the
    environment when the first request is about to leave).

    Attributes:
        model: the model id asked.
        base_url: the API's base URL (``None``: the provider's default); ``${NAME}``
            references are expanded from the environment when the first request leaves.
        api_key_env: the environment variable holding the API key (``None``: the
            provider's default variable).
        headers: extra HTTP headers of every request; ``${NAME}`` references in a value
            are expanded from the environment. Every value is a secret (masked).
        retries: retries of a 408, 409, 429, 5xx or a transport failure (``None``: the
            provider's default, 4).
        timeout: the deadline in seconds of each whole HTTP attempt, body included
            (``None``: the provider's default).
        grade_via: ``"tool"`` or ``"json_schema"`` (:data:`GRADE_VIA`).
        max_tokens_field: the request's name of the output token cap (one of
            :data:`MAX_TOKENS_FIELDS`; ``"max_tokens"`` by default).
        client: a ready client object, for providers that take one (``anthropic``:
            an ``anthropic.Anthropic`` or a test double).
    """

    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    retries: int | None = None
    timeout: float | None = None
    grade_via: str = "tool"
    client: Any = None
    max_tokens_field: str = "max_tokens"


@dataclass(frozen=True)
class Sent:
    """A reply the API delivered: its JSON-ready body and the requests sent again for it
    (after a 429, 5xx or transport failure)."""

    reply: dict[str, Any]
    retries: int = 0


class RequestFailed(Exception):
    """A request that got no reply to read after its retries: the last HTTP status
    (``status_code``, ``None`` for a transport failure) and the retries made."""

    def __init__(self, message: str, *, status_code: int | None = None,
                 retries: int = 0) -> None:
        super().__init__(mask(message))
        self.status_code = status_code
        self.retries = retries


#: Retries of a judge's requests when its settings give none.
DEFAULT_RETRIES = 4


class JudgeProvider:
    """The base of every provider: a subclass sets :attr:`name` and implements
    :meth:`request`, :meth:`send` and :meth:`tool_input` (and :meth:`usage` when its
    replies report tokens differently from the Messages API). :meth:`request` and
    :meth:`tool_input` serve every forced-tool prompt alike: grades (:meth:`parse` reads
    the ``record_grade`` input with :meth:`tool_input`) and pairwise verdicts
    (``record_verdict``).

    The judge calls, per grade: :meth:`request` (the body, JSON-ready: it is hashed
    into the cache key with :meth:`key_scope`), then, unless the grade is cached,
    :meth:`prepare` (before the budget counts a request: a provider that cannot send
    one raises ``RunAborted(JudgeUnavailable(...))``), :meth:`send`, and
    :meth:`parse` on the reply (a ``JudgeError`` keeps the reply as rejected, never as
    a grade). A failed :meth:`send` is passed to :meth:`stop_for`, which says whether
    it stops the run (credentials refused).

    Args:
        settings: the judge's :class:`ProviderSettings`.

    Raises:
        ValueError: a setting the provider does not support (a ``grade_via`` outside
            :attr:`grade_modes`, a ``max_tokens_field`` outside
            :attr:`max_tokens_fields`).
    """

    #: The provider's name (``provider:`` of a judge entry).
    name: ClassVar[str] = ""
    #: The ``grade_via`` values the provider supports.
    grade_modes: ClassVar[tuple[str, ...]] = ("tool",)
    #: The ``max_tokens_field`` values the provider supports (its :meth:`request`
    #: sends the cap under ``settings.max_tokens_field``).
    max_tokens_fields: ClassVar[tuple[str, ...]] = ("max_tokens",)
    #: The base URL used when the settings give none.
    default_base_url: ClassVar[str | None] = None
    #: The environment variable of the API key when the settings name none.
    default_api_key_env: ClassVar[str | None] = None

    def __init__(self, settings: ProviderSettings) -> None:
        if settings.grade_via not in self.grade_modes:
            raise ValueError(f"provider {self.name!r} grades via "
                             f"{' or '.join(map(repr, self.grade_modes))}, not "
                             f"{settings.grade_via!r}")
        if settings.max_tokens_field not in self.max_tokens_fields:
            raise ValueError(f"provider {self.name!r} sends the output token cap as "
                             f"{' or '.join(map(repr, self.max_tokens_fields))}, not "
                             f"{settings.max_tokens_field!r}")
        self.settings = settings
        self.model = settings.model
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ what is sent
    def request(self, prompt: ForcedToolPrompt, message: str) -> dict[str, Any]:
        """The JSON-ready request body sending ``message`` (the rendered user message)
        with ``prompt``'s model, system prompt and generation settings, whose only
        possible answer is ``prompt``'s strict tool (:attr:`ForcedToolPrompt.tool
        <evalkit_judge.prompt.ForcedToolPrompt.tool>`: a grade or a verdict)."""
        raise NotImplementedError

    @property
    def endpoint(self) -> str | None:
        """The base URL as configured (``${NAME}`` references unexpanded), or the
        provider's default."""
        return self.settings.base_url or self.default_base_url

    def key_scope(self) -> dict[str, Any]:
        """What the cache key covers besides the request body: the provider and the
        endpoint (with its ``${NAME}`` references expanded, so two servers never share
        grades). Never a key or a header value."""
        return {"provider": self.name, "endpoint": self.resolved_base_url()}

    def record(self) -> dict[str, Any]:
        """The provider's settings as a run header records them: no secret (a header
        value is shown only when it is made of ``${NAME}`` references and plain text; the
        base URL without user info and query string, :func:`~evalkit.io.redaction.redact_url`)."""
        s = self.settings
        return {
            "provider": self.name,
            "base_url": None if s.base_url is None else redact_url(s.base_url),
            "api_key_env": s.api_key_env, "headers": shown_headers(s.headers),
            "retries": s.retries, "timeout": s.timeout, "grade_via": s.grade_via,
            "max_tokens_field": s.max_tokens_field,
        }

    # ------------------------------------------------------------------ sending
    def prepare(self) -> None:
        """Check, before the budget counts a request, that one can be sent (credentials,
        headers); raise ``RunAborted(JudgeUnavailable(...))`` otherwise. Default: nothing
        to check."""

    def send(self, body: dict[str, Any]) -> Sent:
        """Send ``body``; the reply (any HTTP 200 body) and the retries it took. A
        provider calls :func:`before_attempt` just before each HTTP attempt, so that every
        attempt counts against the run's limits and a retry past them is not sent (one
        that does not is counted afterwards, from the retries it reports).

        Raises:
            RequestFailed: no reply after the retries (or a status that is not retried).
        """
        raise NotImplementedError

    def stop_for(self, exc: Exception) -> RunAborted | None:
        """The :class:`RunAborted` a failed :meth:`send` means (credentials refused), or
        ``None`` when only this case failed. Default: a 401 refuses the credentials, and
        no request is sent afterwards."""
        if getattr(exc, "status_code", None) == 401:
            with self._lock:
                self._refused = (
                    f"judge {self.model!r}: the {self.name} API at "
                    f"{redact_url(self.resolved_base_url() or 'its default endpoint')} "
                    "refused the "
                    f"credentials (401: {exc}); check "
                    f"{self.settings.api_key_env or self.default_api_key_env or 'the key'}; "
                    "the run stops here, and no more requests are sent")
            return RunAborted(JudgeUnavailable(self._refused))
        return None

    _refused: str | None = None

    def refused(self) -> RunAborted | None:
        """The stop of an earlier 401, if any (checked before every request)."""
        return None if self._refused is None else RunAborted(JudgeUnavailable(self._refused))

    def sent_anything(self, exc: Exception) -> bool:
        """Whether a failed :meth:`send` reached the API (counted as a request sent)."""
        return True

    def retries_before(self, exc: Exception) -> int:
        """The retries made before :meth:`send` raised ``exc``."""
        retries = getattr(exc, "retries", 0)
        return retries if isinstance(retries, int) and retries > 0 else 0

    def count_input_tokens(self, body: Mapping[str, Any]) -> int | None:
        """The input tokens of ``body`` counted by the API free of charge, or ``None``
        (no such endpoint: the judge estimates them)."""
        return None

    # ------------------------------------------------------------------ reading
    def tool_input(self, reply: Mapping[str, Any], name: str, fields: tuple[str, ...]
                   ) -> Mapping[str, Any]:
        """The input of the one completed call of the forced tool ``name`` in ``reply``
        (a reply to :meth:`request`), an object with no key outside ``fields``; its values
        are checked by the caller (a grade's score, a verdict).

        Raises:
            JudgeError: anything else (prose, a cut reply, another tool, two calls, input
                that is not an object, a key the schema does not allow).
        """
        raise NotImplementedError

    def parse(self, reply: Mapping[str, Any], scale: int) -> tuple[int, str]:
        """``(score, reason)`` of a reply holding one completed, conforming grade: the
        ``record_grade`` input read by :meth:`tool_input`, its score on ``1..scale``.

        Raises:
            JudgeError: anything else (prose, a cut reply, another tool, a wrong schema).
        """
        from evalkit_judge.grades import GRADE_FIELDS, TOOL_NAME, grade_fields

        return grade_fields(self.tool_input(reply, TOOL_NAME, GRADE_FIELDS), scale)

    def usage(self, reply: Mapping[str, Any]) -> Usage:
        """The tokens the reply reports (Messages API ``usage`` fields by default).

        Raises:
            UsageUnknown: no usage or a count that is not a token count
                (:meth:`~evalkit_judge.pricing.Usage.from_reply`); the judge then
                charges the request's worst-case estimate
                (:meth:`~evalkit_judge.costs.CostModel.reply_usage`).
        """
        return Usage.from_reply(reply)

    def served_model(self, reply: Mapping[str, Any]) -> str | None:
        """The model id the API says answered, or ``None``."""
        served = reply.get("model")
        return served if isinstance(served, str) else None

    # ------------------------------------------------------------------ helpers
    def resolved_base_url(self) -> str | None:
        """:attr:`endpoint` with its ``${NAME}`` references expanded (an unset variable
        is refused: ``RunAborted``); its password and query values are registered as
        secrets."""
        url = self.endpoint
        if url is None:
            return None
        url = expand_env(url, f"judge {self.model!r}: base_url", secret=False)
        register_url_secrets(url)  # its password and query values: masked when shown
        return url

    def resolved_headers(self) -> dict[str, str]:
        """The extra headers with ``${NAME}`` references expanded; every value is
        registered as a secret (masked wherever it could be shown)."""
        out: dict[str, str] = {}
        for name, value in self.settings.headers.items():
            out[name] = expand_env(value, f"judge {self.model!r}: header {name!r}",
                                   secret=True)
            register_secret(out[name])
        return out

    def api_key(self) -> str | None:
        """The API key from :attr:`ProviderSettings.api_key_env` (which must then be set)
        or else from :attr:`default_api_key_env` (``None`` when that is unset too);
        registered as a secret.

        Raises:
            RunAborted: the variable named by ``api_key_env`` is unset or empty.
        """
        variable = self.settings.api_key_env
        if variable is None:
            value = os.environ.get(self.default_api_key_env or "") or None
        else:
            value = os.environ.get(variable)
            if not value or not value.strip():
                raise RunAborted(JudgeUnavailable(
                    f"judge {self.model!r}: api_key_env names {variable}, which is "
                    f"{'not set' if value is None else 'empty'}; export {variable} (a "
                    "--dry-run needs no key); no request was sent"))
        if value is not None:
            register_secret(value)
        return value


def expand_env(value: str, what: str, *, secret: bool) -> str:
    """``value`` with each ``${NAME}`` replaced by the environment variable's value
    (registered as a secret when ``secret``).

    Raises:
        RunAborted: a variable is unset or empty (named, never a value).
    """
    def sub(m: Any) -> str:
        var = m.group(1)
        found = os.environ.get(var)
        if not found or not found.strip():
            raise RunAborted(JudgeUnavailable(
                f"{what} refers to ${{{var}}}, which is "
                f"{'not set' if found is None else 'empty'}; export {var} before the run; "
                "no request was sent"))
        if secret:
            register_secret(found)
        return found

    return ENV_REFERENCE.sub(sub, value)


def shown_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` as records show them: a value that is one ``${NAME}`` reference (or
    ``Bearer ${NAME}``) as written, since it names a variable and holds no secret; any
    other value as :data:`REDACTED`."""
    return {k: v if ENV_REFERENCE.fullmatch(v.strip().removeprefix("Bearer ").strip())
            else REDACTED for k, v in headers.items()}


def builtin_providers() -> dict[str, str]:
    """``{name: "module:Class"}`` of the providers this plugin ships."""
    return {"anthropic": "evalkit_judge.anthropic_provider:AnthropicProvider",
            "openai": "evalkit_judge.openai_provider:OpenAIProvider"}


def provider_names() -> list[str]:
    """Every provider a judge can name: the built-in ones and those of the entry-point
    group :data:`ENTRY_POINT_GROUP`, sorted."""
    from importlib.metadata import entry_points

    return sorted({*builtin_providers(), *(ep.name for ep in
                                            entry_points(group=ENTRY_POINT_GROUP))})


def provider_class(name: str) -> type[JudgeProvider]:
    """The provider class registered as ``name``.

    Raises:
        ValueError: no provider of that name (the known ones listed), two entry points
            of that name, one named like a built-in provider, an entry point that cannot
            be imported, or an object that is not a :class:`JudgeProvider` subclass.
    """
    from importlib.metadata import entry_points

    from evalkit.core.import_strings import import_object

    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    builtin = builtin_providers().get(name)
    if builtin is not None and found:
        raise ValueError(f"provider {name!r} is built into evalkit-judge; the entry point "
                         f"{found[0].value!r} of group {ENTRY_POINT_GROUP!r} cannot replace "
                         "it: register it under another name")
    if len(found) > 1:
        raise ValueError(f"provider {name!r} is registered by two entry points of "
                         f"{ENTRY_POINT_GROUP!r}: {found[0].value!r} and {found[1].value!r}")
    if builtin is None and not found:
        raise ValueError(f"no judge provider {name!r}; known: {', '.join(provider_names())} "
                         f"(a package adds one through the entry-point group "
                         f"{ENTRY_POINT_GROUP!r}: docs/judge.md)")
    target = builtin if builtin is not None else found[0].value
    try:
        cls = import_object(target)
    except Exception as exc:
        raise ValueError(f"provider {name!r} ({target}) cannot be imported: "
                         f"{type(exc).__name__}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, JudgeProvider)):
        raise ValueError(f"provider {name!r} ({target}) is not a subclass of "
                         "evalkit_judge.JudgeProvider")
    return cls


def make_provider(provider: str | JudgeProvider, settings: ProviderSettings) -> JudgeProvider:
    """``provider`` itself when it is an instance, else the provider of that name built
    with ``settings``.

    Raises:
        ValueError: an unknown provider, or settings it refuses.
    """
    if isinstance(provider, JudgeProvider):
        return provider
    if not isinstance(provider, str) or not provider:
        raise ValueError(f"provider must be a provider's name or a JudgeProvider, got "
                         f"{provider!r}")
    return provider_class(provider)(settings)


__all__ = [
    "DEFAULT_RETRIES",
    "ENTRY_POINT_GROUP",
    "GRADE_VIA",
    "MAX_TOKENS_FIELDS",
    "JudgeProvider",
    "ProviderSettings",
    "RequestFailed",
    "Sent",
    "builtin_providers",
    "expand_env",
    "make_provider",
    "provider_class",
    "provider_names",
    "shown_headers",
]
