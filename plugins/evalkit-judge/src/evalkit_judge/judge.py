"""``LLMJudge``: a per-case metric graded by a model through a forced, strict tool call.

The request sent for a case is built from the judge's definition (model, system prompt,
rubric, scale, tool schema, generation parameters) and the case (query, expected answer,
relevance labels, context) and the response's output (text and ranked ids; never the
latency, raw body or meta). The cache key is the SHA-256 of that request's canonical
JSON, so anything that can change the grade changes the key.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import sys
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from evalkit.scoring import RunAborted
from evalkit_judge.budget import (
    Budget,
    CostPlan,
    GradeNotRequested,
    JudgeError,
    JudgeUnavailable,
    ModelPrice,
    PricesLike,
    Reservation,
    Usage,
    active_budget,
    price_table,
)
from evalkit_judge.cache import CacheError, GradeCache
from evalkit_judge.credentials import (
    check_credentials,
    is_credentials_failure,
    is_refusal,
    lacks_credentials,
)

if TYPE_CHECKING:
    from evalkit.cases import GoldenCase
    from evalkit.targets import TargetResponse

#: The name of the tool the model is forced to call to record its grade.
TOOL_NAME = "record_grade"
#: Folded into every key: bump it when the rendering of requests changes.
KEY_VERSION = "evalkit-judge/1"
#: Characters per token assumed when nothing better is known: dry-run estimates, and the
#: first request of a judge whose client cannot count tokens (conservative for English).
CHARS_PER_TOKEN = 3.0
#: Tokens the API adds to a request for the tool definition and tool-use instructions
#: (part of the same fallback estimate).
TOOL_OVERHEAD_TOKENS = 500
#: Output tokens assumed for a typical grade in dry-run estimates.
TYPICAL_OUTPUT_TOKENS = 150
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


@dataclass(frozen=True)
class Grade:
    """One grade and where it came from.

    Attributes:
        score: an integer in ``1..scale``.
        reason: the judge's justification.
        model: the model asked (part of the key); ``served_model`` is the one the API
            reported, ``None`` when unknown.
        key: the cache key (SHA-256 hex of the request).
        cached: ``True`` when no request was sent for this grade.
        source: ``"api"`` (requested now), ``"cache"`` or ``"seed-json"`` (imported from
            a 0.2 JSON cache).
        usage: tokens of the request that produced the grade (zeros for imported ones).
        cost_usd: the cost of that request in US dollars, ``None`` without a price.
        definition: a short hash of the judge's definition (everything but the case).
    """

    score: int
    reason: str
    model: str
    key: str
    cached: bool
    source: str
    usage: Usage
    cost_usd: float | None
    served_model: str | None
    definition: str

    def as_dict(self) -> dict[str, Any]:
        """The JSON-ready details kept on a run row."""
        return {
            "score": self.score,
            "reason": self.reason,
            "model": self.model,
            "served_model": self.served_model,
            "cached": self.cached,
            "source": self.source,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
            "cache_creation_input_tokens": self.usage.cache_creation_input_tokens,
            "cache_read_input_tokens": self.usage.cache_read_input_tokens,
            "cost_usd": self.cost_usd,
            "key": self.key,
            "definition": self.definition,
        }


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plain(value: Any) -> Any:
    """A JSON-ready, deterministic copy of ``value`` (sets sorted, unknown types as repr)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        items = [_plain(v) for v in value]
        return sorted(items, key=_canonical_json)
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return repr(value)


def _text_block(value: Any) -> str:
    plain = _plain(value)
    return plain if isinstance(plain, str) else _canonical_json(plain)


def _seed_sha(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\x00")
    return digest.hexdigest()


class LLMJudge:
    """Grade a response against a rubric with a model; usable as a per-case metric.

    ``judge(response, case)`` returns the score as a float in ``[1, scale]``; register it
    with ``register_metric(name, higher_is_better=...)(judge)``. Grading is one forced
    call of a strict tool whose input is ``{"score": integer 1..scale, "reason": text}``.

    Args:
        rubric: what a good response is; part of every request (non-empty).
        model: the judge model id; required, no default, part of the cache key.
        scale: the top score (an integer >= 2); scores run from 1 to ``scale``.
        client: an ``anthropic.Anthropic`` client, or any object with
            ``messages.create(**request)`` returning a Message (or its dict). By default
            one is built on first use, with the credentials the SDK finds
            (``ANTHROPIC_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``, a credentials profile). An
            SDK client without credentials stops the run before its first request (see
            :class:`~evalkit_judge.budget.JudgeUnavailable`); a dry run needs none.
        cache_path: the SQLite grade cache (created if missing; a 0.2 JSON cache at this
            path is imported). ``None``: no cache, every grade is requested.
        max_tokens: the output token cap of a request (also the worst case that
            ``max_cost`` reserves).
        temperature: sent only when not ``None``. Anthropic API version 2026-10-21, the one
            the ``anthropic`` 2.x SDK sends, rejects every sampling parameter, so set it
            only for an endpoint that accepts it. Part of the cache key either way.
        system: an optional system prompt (part of the key).
        prices: ``{model: (input, output)}`` in US dollars per million tokens (see
            :func:`~evalkit_judge.budget.price_table`), or a JSON file of them. Needed for
            costs on rows and for ``max_cost``.
        budget: the :class:`Budget` to consult; by default the one installed by
            :func:`~evalkit_judge.budget.use_budget` (``evalkit run --max-calls ...``).
        max_retries: retries of 429, 529, 5xx and connection failures, done by the SDK
            with exponential backoff (honouring ``retry-after``). Applied to the client
            the judge builds (default 4) and, when given, to a passed SDK client through
            ``with_options``.
        timeout: seconds per HTTP attempt for a client the judge builds.
        base_url: the API base URL for a client the judge builds.
        seed_grades: serve grades imported from a 0.2 JSON cache (matched on what 0.2
            hashed: case id, output, rubric, scale, model, system).

    Raises:
        ValueError: an empty rubric or model, a scale below 2, ``max_tokens`` below 1, a
            negative or non-finite temperature, or a malformed price table.
        CacheError: the cache file cannot be opened or created.
    """

    def __init__(
        self,
        rubric: str,
        model: str,
        scale: int = 5,
        *,
        client: AnthropicLike | Any | None = None,
        cache_path: str | Path | None = None,
        max_tokens: int = 1024,
        temperature: float | None = None,
        system: str | None = None,
        prices: PricesLike | None = None,
        budget: Budget | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        base_url: str | None = None,
        seed_grades: bool = True,
    ) -> None:
        if not isinstance(rubric, str) or not rubric.strip():
            raise ValueError("LLMJudge needs a non-empty rubric")
        if not isinstance(model, str) or not model.strip():
            raise ValueError(
                "LLMJudge needs model=, the judge model id; there is no default, because "
                "a different judge gives grades that are not comparable"
            )
        if isinstance(scale, bool) or not isinstance(scale, int) or scale < 2:
            raise ValueError(f"scale must be an integer >= 2, got {scale!r}")
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be an integer >= 1, got {max_tokens!r}")
        if temperature is not None and (
            isinstance(temperature, bool) or not isinstance(temperature, int | float)
            or not math.isfinite(temperature) or temperature < 0
        ):
            raise ValueError(f"temperature must be a finite number >= 0 or None, "
                             f"got {temperature!r}")
        if max_retries is not None and (isinstance(max_retries, bool)
                                        or not isinstance(max_retries, int) or max_retries < 0):
            raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        if system is not None and not isinstance(system, str):
            raise ValueError("system must be a string or None")
        self.rubric = rubric
        self.model = model
        self.scale = scale
        self.max_tokens = max_tokens
        self.temperature = None if temperature is None else float(temperature)
        self.system = system
        self.prices = price_table(prices)
        self.budget = budget
        self.max_retries = max_retries
        self.timeout = timeout
        self.base_url = base_url
        self.seed_grades = seed_grades
        if client is not None and max_retries is not None and hasattr(client, "with_options"):
            client = client.with_options(max_retries=max_retries)
        self._client = client
        self._builds_client = client is None
        self._client_lock = threading.Lock()
        self.cache: GradeCache | None = None if cache_path is None else GradeCache(cache_path)
        self._details: dict[str, dict[str, Any]] = {}
        self._inflight: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        # cost calibration from this judge's replies (see _plan): the request length and
        # input tokens of the reply with the most input tokens per character, and the
        # most output tokens of any reply
        self._calibration: tuple[int, int] | None = None
        self._most_output: int | None = None
        self._count_tokens = True  # until the client lacks the endpoint or it fails
        # why the API refused this judge's credentials (401): no request is sent after it
        self._refused: str | None = None
        self.definition = _sha256(_canonical_json(self._definition()))[:16]
        # Registered metrics take their description and provider from the function.
        self.__doc__ = f"LLM judge {model}, scale 1-{scale}"
        caller = sys._getframe(1).f_globals.get("__name__")
        if isinstance(caller, str):
            self.__module__ = caller

    def __repr__(self) -> str:
        return (f"LLMJudge(model={self.model!r}, scale={self.scale}, "
                f"definition={self.definition!r})")

    # ------------------------------------------------------------------ request
    @property
    def tool(self) -> dict[str, Any]:
        """The grading tool: strict input ``{"score": 1..scale, "reason": text}``."""
        return {
            "name": TOOL_NAME,
            "description": "Record the grade of the response under evaluation.",
            "strict": True,
            "input_schema": {
                "type": "object",
                "properties": {
                    "score": {
                        "type": "integer",
                        "enum": list(range(1, self.scale + 1)),
                        "description": f"1 is the worst grade, {self.scale} the best.",
                    },
                    "reason": {
                        "type": "string",
                        "description": "A short justification of the score.",
                    },
                },
                "required": ["score", "reason"],
                "additionalProperties": False,
            },
        }

    def _definition(self) -> dict[str, Any]:
        return {
            "version": KEY_VERSION, "model": self.model, "system": self.system,
            "rubric": self.rubric, "scale": self.scale, "tool": self.tool,
            "max_tokens": self.max_tokens, "temperature": self.temperature,
        }

    def render(self, response: TargetResponse, case: GoldenCase) -> str:
        """The user message of the request for ``(response, case)``."""
        parts = [
            "Grade the response below against the rubric.",
            f"<rubric>\n{self.rubric}\n</rubric>",
            f"<scale>integers from 1 (worst) to {self.scale} (best)</scale>",
            f"<query>\n{case.query}\n</query>",
        ]
        if case.expected is not None:
            parts.append(f"<expected>\n{_text_block(case.expected)}\n</expected>")
        if case.relevance:
            parts.append(f"<relevance>\n{_text_block(dict(case.relevance))}\n</relevance>")
        if case.context:
            parts.append(f"<context>\n{_text_block(dict(case.context))}\n</context>")
        if response.text is not None:
            parts.append(f"<response>\n{response.text}\n</response>")
        if response.ranked_ids:
            parts.append(
                f"<ranked_ids>\n{_text_block([str(x) for x in response.ranked_ids])}\n"
                "</ranked_ids>"
            )
        if response.text is None and not response.ranked_ids:
            parts.append("<response>\n\n</response>")
        parts.append(f"Call {TOOL_NAME} once with the score and the reason.")
        return "\n\n".join(parts)

    def request(self, response: TargetResponse, case: GoldenCase) -> dict[str, Any]:
        """The Messages API request body for ``(response, case)`` (JSON-ready)."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": [{"role": "user", "content": self.render(response, case)}],
            "tools": [self.tool],
            "tool_choice": {"type": "tool", "name": TOOL_NAME,
                            "disable_parallel_tool_use": True},
        }
        if self.system is not None:
            body["system"] = self.system
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body

    def key(self, response: TargetResponse, case: GoldenCase) -> str:
        """The cache key of ``(response, case)``: SHA-256 hex of the canonical request."""
        return self._key(self.request(response, case))

    def _key(self, body: Mapping[str, Any]) -> str:
        return _sha256(_canonical_json({"version": KEY_VERSION, "scale": self.scale,
                                        "rubric": self.rubric, "request": body}))

    def seed_key(self, response: TargetResponse, case: GoldenCase) -> str:
        """The key the 0.2 judge used for ``(response, case)`` in its JSON cache."""
        output: Any = response.text if response.text is not None \
            else [str(x) for x in response.ranked_ids]
        rubric_hash = _seed_sha(self.rubric, str(self.scale), self.model, self.system or "")
        canonical = json.dumps(output, sort_keys=True, ensure_ascii=False)
        return _seed_sha(str(case.id), _seed_sha(canonical), rubric_hash)

    # ------------------------------------------------------------------ money
    def price(self, model: str | None = None) -> ModelPrice | None:
        """The price of ``model`` (default: the judge's), or ``None`` when not configured."""
        return self.prices.get(model or self.model)

    def cost(self, usage: Usage, served_model: str | None = None) -> float | None:
        """The cost in US dollars of ``usage``; ``None`` without a price."""
        price = self.price() or (self.price(served_model) if served_model else None)
        return None if price is None else price.cost(usage)

    def estimate(self, body: Mapping[str, Any]) -> tuple[float | None, float | None]:
        """``(typical, worst)`` cost in US dollars of sending ``body``; ``None`` without a
        price. Input tokens are estimated from the request's length."""
        price = self.price()
        if price is None:
            return None, None
        tokens_in = math.ceil(len(_canonical_json(body)) / CHARS_PER_TOKEN) \
            + TOOL_OVERHEAD_TOKENS
        typical = price.cost(Usage(tokens_in, min(self.max_tokens, TYPICAL_OUTPUT_TOKENS)))
        worst = price.cost(Usage(tokens_in, self.max_tokens))
        return typical, worst

    def _plan(self, body: Mapping[str, Any], budget: Budget) -> CostPlan:
        """``() -> (expected, worst)`` cost in US dollars of sending ``body`` now, from
        what this judge knows when it is called; ``(None, None)`` without a price. See
        docs/judge.md, "How --max-cost decides".

        Input tokens, when the spending is limited and the worst case might not fit in
        what the budget has left: counted once, here, by the API's token counting endpoint
        (when the client has ``messages.count_tokens``). Otherwise estimated: expected, from
        the reply of this judge with the most input tokens per character of request (before
        any reply, the conservative :data:`CHARS_PER_TOKEN` estimate); worst, the larger
        of that and the conservative estimate. Output tokens: ``max_tokens`` in the worst
        case; expected, the most any earlier reply of this judge used (none before the
        first reply).
        """
        price = self.price()
        if price is None:
            return lambda: (None, None)
        chars = len(_canonical_json(body))
        conservative = math.ceil(chars / CHARS_PER_TOKEN) + TOOL_OVERHEAD_TOKENS

        def estimated_input() -> tuple[int, int]:
            with self._lock:
                calibration = self._calibration
            if calibration is None:
                return conservative, conservative
            seen_chars, seen_tokens = calibration
            scaled = -(-seen_tokens * chars // seen_chars)  # ceil, in integers
            return scaled, max(scaled, conservative)

        counted = None
        headroom = budget.headroom()
        if headroom is not None and budget.stopped is None \
                and price.cost(Usage(estimated_input()[1], self.max_tokens)) > headroom:
            counted = self._counted_input_tokens(body)

        def plan() -> tuple[float | None, float | None]:
            expected_in, worst_in = (counted, counted) if counted is not None \
                else estimated_input()
            with self._lock:
                most_output = self._most_output
            expected_out = 0 if most_output is None else min(most_output, self.max_tokens)
            return (price.cost(Usage(expected_in, expected_out)),
                    price.cost(Usage(worst_in, self.max_tokens)))

        return plan

    def _counted_input_tokens(self, body: Mapping[str, Any]) -> int | None:
        """The input tokens of ``body`` by ``client.messages.count_tokens``, or ``None``
        (no such endpoint on the client, or it failed: then it is not asked again)."""
        if not self._count_tokens:
            return None
        count = getattr(self._resolve_client().messages, "count_tokens", None)
        if not callable(count):
            self._count_tokens = False
            return None
        request = {k: body[k] for k in ("model", "messages", "tools", "tool_choice", "system")
                   if k in body}
        try:
            counted = count(**request)
        except Exception as exc:
            if is_credentials_failure(exc):
                raise self._unusable(exc) from exc
            if is_refusal(exc):
                raise self._refuse(exc) from exc
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

    def _calibrate(self, body: Mapping[str, Any], usage: Usage) -> None:
        """Learn input tokens per character and output tokens from one reply."""
        tokens_in = (usage.input_tokens + usage.cache_creation_input_tokens
                     + usage.cache_read_input_tokens)
        chars = len(_canonical_json(body))
        with self._lock:
            if tokens_in > 0 and chars > 0:
                old = self._calibration
                if old is None or tokens_in * old[0] > old[1] * chars:
                    self._calibration = (chars, tokens_in)
            self._most_output = max(self._most_output or 0, usage.output_tokens)

    # ------------------------------------------------------------------ the metric
    def __call__(self, response: TargetResponse, case: GoldenCase) -> float:
        """The score of ``response`` on ``case`` as a float in ``[1, scale]``.

        Raises:
            JudgeError: the request failed after the SDK's retries, or the reply had no
                grade tool call or a score outside the scale (names the case).
            GradeNotRequested: dry run and the grade is not cached.
            BudgetExhausted: a limit of the budget would be passed (stops the run).
            RunAborted: no grade can be requested: the client has no credentials (checked
                before any request), the API refused them (401), or the client cannot be
                built. Its ``error`` is a :class:`JudgeUnavailable` saying what to fix;
                it stops the run once instead of erroring every case.
        """
        return float(self.grade(response, case).score)

    def details(self, case_id: str) -> dict[str, Any] | None:
        """The details of the last grade this judge produced for ``case_id`` in this
        process (see :meth:`Grade.as_dict`), or ``None`` when the last attempt failed or
        there was none."""
        with self._lock:
            found = self._details.get(str(case_id))
            return None if found is None else dict(found)

    @staticmethod
    def summarize_details(rows: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
        """Totals of per-row grade details (see :func:`summarize`)."""
        return summarize(rows)

    def grade(self, response: TargetResponse, case: GoldenCase) -> Grade:
        """Grade one response; see :meth:`__call__` for the errors."""
        case_id = str(case.id)
        with self._lock:
            self._details.pop(case_id, None)
        body = self.request(response, case)
        key = self._key(body)
        budget = self.budget or active_budget()
        grade = self._from_cache(key, response, case)
        if grade is None:
            grade = self._single_flight(key, body, response, case, budget)
        elif budget is not None:
            budget.note_cached()
        with self._lock:
            self._details[case_id] = grade.as_dict()
        return grade

    # ------------------------------------------------------------------ internals
    def _stored(self, key: str) -> Grade | None:
        if self.cache is None:
            return None
        try:
            stored = self.cache.get(key)
        except CacheError as exc:
            raise JudgeError(str(exc)) from exc
        if stored is None:
            return None
        return Grade(score=stored.score, reason=stored.reason, model=self.model, key=key,
                     cached=True, source="cache" if stored.source == "api" else stored.source,
                     usage=stored.usage, served_model=stored.served_model,
                     cost_usd=None if stored.source == "seed-json"
                     else self.cost(stored.usage, stored.served_model),
                     definition=self.definition)

    def _from_cache(self, key: str, response: TargetResponse,
                    case: GoldenCase) -> Grade | None:
        grade = self._stored(key)
        if grade is not None or self.cache is None or not self.seed_grades:
            return grade
        try:
            if not self.cache.has_seed_grades():
                return None
            seed = self.cache.seed_get(self.seed_key(response, case))
            if seed is None:
                return None
            score, reason = seed
            if not 1 <= score <= self.scale:
                return None
            self.cache.put(key, case_id=str(case.id), model=self.model, score=score,
                           reason=reason, usage=Usage(), served_model=None,
                           source="seed-json", reply=None)
        except CacheError as exc:
            raise JudgeError(str(exc)) from exc
        return self._stored(key)

    def _single_flight(self, key: str, body: dict[str, Any], response: TargetResponse,
                       case: GoldenCase, budget: Budget | None) -> Grade:
        """Request the grade, unless another thread of this process already is."""
        while True:
            with self._lock:
                event = self._inflight.get(key)
                if event is None:
                    event = self._inflight[key] = threading.Event()
                    owner = True
                else:
                    owner = False
            if owner:
                try:
                    # a request that finished between our cache read and now
                    grade = self._stored(key)
                    if grade is not None:
                        if budget is not None:
                            budget.note_cached()
                        return grade
                    return self._request(key, body, case, budget)
                finally:
                    with self._lock:
                        del self._inflight[key]
                    event.set()
            event.wait()
            grade = self._stored(key)
            if grade is not None:
                if budget is not None:
                    budget.note_cached()
                return grade
            # the other request failed, or there is no cache: try ourselves

    def _resolve_client(self) -> AnthropicLike:
        """The client, built on first use; raises :class:`RunAborted` when no request can
        be sent: the API refused this judge's credentials earlier, the client cannot be
        built, or it has no credentials (a client built without them is not kept, so the
        environment is read again next time)."""
        if self._refused is not None:
            raise RunAborted(JudgeUnavailable(self._refused))
        with self._client_lock:
            client = self._client
            if client is None:
                kwargs: dict[str, Any] = {
                    "max_retries": DEFAULT_MAX_RETRIES if self.max_retries is None
                    else self.max_retries,
                }
                if self.timeout is not None:
                    kwargs["timeout"] = self.timeout
                if self.base_url is not None:
                    kwargs["base_url"] = self.base_url
                try:
                    import anthropic

                    client = anthropic.Anthropic(**kwargs)
                except Exception as exc:
                    raise RunAborted(JudgeUnavailable(
                        f"judge {self.model!r}: cannot build the Anthropic client "
                        f"({type(exc).__name__}: {exc}); no request was sent"
                    )) from exc
            check_credentials(client, self.model)
            if lacks_credentials(client):
                raise RunAborted(JudgeUnavailable(
                    f"judge {self.model!r}: no Anthropic API credentials, so no grade can "
                    "be requested: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or pass "
                    "client=... to LLMJudge; no request was sent (a --dry-run needs no "
                    "credentials)"
                ))
            self._client = client
            return cast(AnthropicLike, client)

    def _unusable(self, exc: Exception) -> RunAborted:
        """The client could not resolve its credentials when it came to send a request (a
        missing or broken credentials profile, an identity token that cannot be read or
        exchanged): nothing was sent, and the run stops. A client the judge built is
        dropped, so that the next use reads the environment again."""
        if self._builds_client:
            with self._client_lock:
                self._client = None
        return RunAborted(JudgeUnavailable(
            f"judge {self.model!r}: the Anthropic client's credentials cannot be used "
            f"({type(exc).__name__}: {exc}); fix them, set ANTHROPIC_API_KEY (or "
            "ANTHROPIC_AUTH_TOKEN), or pass client=... to LLMJudge; no request was sent"
        ))

    def _refuse(self, exc: Exception) -> RunAborted:
        """Remember that the API refused this judge's credentials (401): the run stops,
        and this judge sends no request from now on."""
        self._refused = (
            f"judge {self.model!r}: the Anthropic API refused the credentials (401: "
            f"{exc}); check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, or the client "
            "passed to LLMJudge); the run stops here, and no more requests are sent"
        )
        return RunAborted(JudgeUnavailable(self._refused))

    def _what(self, case: GoldenCase) -> str:
        return f"judge {self.model!r}, case {str(case.id)!r}"

    def _request(self, key: str, body: dict[str, Any], case: GoldenCase,
                 budget: Budget | None) -> Grade:
        if budget is not None and budget.dry_run:
            typical, most = self.estimate(body)
            budget.note_planned(key, typical, most)
            raise GradeNotRequested(f"{self._what(case)}: dry run, grade not cached and "
                                    "not requested")
        # before the budget counts a request: a client that cannot send one stops the run
        client = self._resolve_client()
        reservation: Reservation | None = None
        if budget is not None:
            reservation = budget.reserve(None, model=self.model,
                                         plan=self._plan(body, budget))
        kwargs = dict(body)
        temperature = kwargs.pop("temperature", None)
        if temperature is not None:
            kwargs["extra_body"] = {"temperature": temperature}
        try:
            message = client.messages.create(**kwargs)
        except Exception as exc:
            unsent = is_credentials_failure(exc)
            refused = is_refusal(exc)
            if budget is not None and reservation is not None:
                budget.release(reservation, sent=not unsent, refused=refused)
            if unsent:
                raise self._unusable(exc) from exc
            if refused:
                raise self._refuse(exc) from exc
            raise JudgeError(f"{self._what(case)}: the request failed "
                             f"({type(exc).__name__}: {exc})") from exc
        reply = _reply_dict(message)
        usage = Usage.from_reply(reply.get("usage"))
        self._calibrate(body, usage)
        served = reply.get("model") if isinstance(reply.get("model"), str) else None
        cost = self.cost(usage, served)
        if budget is not None and reservation is not None:
            budget.settle(reservation, cost)
        try:
            score, reason = self._parse(reply)
        except JudgeError as exc:
            message_text = f"{self._what(case)}: {exc}"
            if self.cache is not None:
                try:
                    self.cache.reject(key, case_id=str(case.id), model=self.model,
                                      error=str(exc), reply=reply)
                except CacheError as cache_exc:
                    message_text += f" (and the reply could not be kept: {cache_exc})"
            raise JudgeError(message_text) from None
        if self.cache is not None:
            try:
                self.cache.put(key, case_id=str(case.id), model=self.model, score=score,
                               reason=reason, usage=usage, served_model=served,
                               source="api", reply=reply)
            except CacheError as exc:
                raise JudgeError(f"{self._what(case)}: {exc}; the grade was not used") \
                    from exc
        return Grade(score=score, reason=reason, model=self.model, key=key, cached=False,
                     source="api", usage=usage, cost_usd=cost, served_model=served,
                     definition=self.definition)

    def _parse(self, reply: Mapping[str, Any]) -> tuple[int, str]:
        content = reply.get("content")
        blocks = [b for b in content if isinstance(b, Mapping)] \
            if isinstance(content, list) else []
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        if not uses:
            raise JudgeError(f"the reply has no {TOOL_NAME} tool call "
                             f"(stop_reason={reply.get('stop_reason')!r})")
        ours = [b for b in uses if b.get("name") == TOOL_NAME]
        if not ours:
            names = ", ".join(repr(b.get("name")) for b in uses)
            raise JudgeError(f"the reply called {names}, not {TOOL_NAME}")
        if len(ours) > 1:
            raise JudgeError(f"the reply called {TOOL_NAME} {len(ours)} times")
        stop = reply.get("stop_reason")
        if stop != "tool_use":  # only a completed tool call is a grade
            why = (" (it hit max_tokens: the tool call, and its reason, may be cut "
                   "mid-word; raise max_tokens)" if stop == "max_tokens" else "")
            raise JudgeError(f"the reply stopped with stop_reason={stop!r}, not a completed "
                             f"{TOOL_NAME} tool call ('tool_use'){why}")
        data = ours[0].get("input")
        if not isinstance(data, Mapping):
            raise JudgeError(f"the {TOOL_NAME} input is not an object: {data!r}")
        score = data.get("score")
        if isinstance(score, bool) or not isinstance(score, int):
            raise JudgeError(f"the score {score!r} is not an integer")
        if not 1 <= score <= self.scale:
            raise JudgeError(f"the score {score} is outside the scale 1-{self.scale}")
        reason = data.get("reason")
        if not isinstance(reason, str):
            raise JudgeError(f"the reason {reason!r} is not text")
        return score, reason


def _reply_dict(message: Any) -> dict[str, Any]:
    """A JSON-ready dict of a Messages API reply (an SDK ``Message`` or a dict)."""
    if isinstance(message, Mapping):
        return cast(dict[str, Any], _plain(message))
    dump = getattr(message, "model_dump", None)
    if callable(dump):
        try:
            return cast(dict[str, Any], _plain(dump(mode="json")))
        except Exception:  # fall back to reading attributes
            pass
    blocks = []
    for block in getattr(message, "content", None) or []:
        blocks.append({"type": getattr(block, "type", None), "name": getattr(block, "name", None),
                       "input": _plain(getattr(block, "input", None)),
                       "text": getattr(block, "text", None)})
    usage = getattr(message, "usage", None)
    return {
        "model": getattr(message, "model", None),
        "stop_reason": getattr(message, "stop_reason", None),
        "content": blocks,
        "usage": {name: getattr(usage, name, None) for name in (
            "input_tokens", "output_tokens", "cache_creation_input_tokens",
            "cache_read_input_tokens")} if usage is not None else None,
    }


def summarize(rows: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """Totals of the grade details of a run's rows (``None`` rows are skipped).

    Returns:
        ``{"grades", "requested", "cached", "input_tokens", "output_tokens", "cost_usd",
        "unpriced", "models", "definitions"}``: ``requested`` and ``cached`` count the
        rows whose grade was requested, or served from the cache, when the row was
        written; token counts and ``cost_usd`` (US dollars) cover every grade on the rows,
        at what it cost when it was requested; ``unpriced`` counts grades with no cost (no
        price configured, or imported from 0.2). What one session actually spent is
        reported by its :class:`~evalkit_judge.budget.Budget`.
    """
    out: dict[str, Any] = {"grades": 0, "requested": 0, "cached": 0, "input_tokens": 0,
                           "output_tokens": 0, "cost_usd": 0.0, "unpriced": 0}
    models: set[str] = set()
    definitions: set[str] = set()
    for row in rows:
        if not row:
            continue
        out["grades"] += 1
        cached = bool(row.get("cached"))
        out["cached" if cached else "requested"] += 1
        for name in ("input_tokens", "output_tokens"):
            value = row.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                out[name] += value
        cost = row.get("cost_usd")
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            out["cost_usd"] += float(cost)
        else:
            out["unpriced"] += 1
        if isinstance(row.get("model"), str):
            models.add(row["model"])
        if isinstance(row.get("definition"), str):
            definitions.add(row["definition"])
    out["models"] = sorted(models)
    out["definitions"] = sorted(definitions)
    return out
