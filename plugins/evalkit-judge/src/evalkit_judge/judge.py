"""``LLMJudge``: a per-case metric graded by a model through a forced, strict tool call.

A grade is served from the cache when its request was sent before (or imported from a 0.2
JSON cache), requested once per key however many threads ask for it (:class:`SingleFlight`:
a thread asking for a grade another thread is requesting waits for it and reads what it
stored), and sent only when the budget allows: under a dry run the request's typical and
worst cost are noted instead; otherwise the budget reserves the worst case first and
settles the real cost after, and the grade (or the reply that held none) is kept in the
cache. The request itself is :mod:`evalkit_judge.prompt`'s, its cost
:mod:`evalkit_judge.costs`'s, the reply's parsing :mod:`evalkit_judge.grades`', the
client :mod:`evalkit_judge.client`'s and its credentials :mod:`evalkit_judge.credentials`'.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from evalkit.execute.samples import current_sample
from evalkit.io.limits import MAX_RETRIES
from evalkit.stats.numeric import finite_real
from evalkit_judge.budget import (
    Budget,
    CostPlan,
    GradeNotRequested,
    JudgeError,
    ModelPrice,
    PricesLike,
    Reservation,
    Usage,
    active_budget,
    price_table,
)
from evalkit_judge.cache import CacheError, GradeCache
from evalkit_judge.client import DEFAULT_MAX_RETRIES as DEFAULT_MAX_RETRIES
from evalkit_judge.client import AnthropicLike as AnthropicLike
from evalkit_judge.costs import CostModel
from evalkit_judge.credentials import is_refusal
from evalkit_judge.grades import (
    Grade,
    canonical_json,
    failed_details,
    rejected_details,
    sha256_hex,
    summarize,
)
from evalkit_judge.prompt import GradingPrompt
from evalkit_judge.providers import (
    JudgeProvider,
    ProviderSettings,
    attempt_gate,
    make_provider,
)
from evalkit_judge.systemic import FailureStreak

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse

T = TypeVar("T")


class SingleFlight(Generic[T]):
    """One fetch per key at a time: a thread asking for a key another thread is fetching
    waits for it, then reads what it stored; if nothing was stored (the fetch failed, or
    there is no cache), it fetches itself."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inflight: dict[str, threading.Event] = {}

    def run(self, key: str, reread: Callable[[], T | None], fetch: Callable[[], T]
            ) -> tuple[T, bool]:
        """``(value, whether it was read rather than fetched)``."""
        while True:
            with self._lock:
                event = self._inflight.get(key)
                owner = event is None
                if event is None:
                    event = self._inflight[key] = threading.Event()
            if owner:
                try:
                    found = reread()  # a fetch that finished between our read and now
                    return (found, True) if found is not None else (fetch(), False)
                finally:
                    with self._lock:
                        del self._inflight[key]
                    event.set()
            # unbounded: as long as the owner's request for this key, which its client's
            # timeout and retries bound; the owner sets the event whatever happens (finally)
            event.wait()
            found = reread()
            if found is not None:
                return found, True


@dataclass(frozen=True)
class SentReply:
    """A reply the API delivered for one request (:meth:`LLMJudge.send`), not yet parsed.

    Attributes:
        reply: the reply as a JSON-ready dict (:func:`~evalkit_judge.grades.reply_dict`).
        usage: its token counts.
        served_model: the model id the API reported, or ``None``.
        cost_usd: what it cost in US dollars, ``None`` without a price.
        retries: the requests the SDK sent again on the way.
    """

    reply: dict[str, Any]
    usage: Usage
    served_model: str | None
    cost_usd: float | None
    retries: int


class LLMJudge:
    """Grade a response against a rubric with a model; usable as a per-case metric.

    ``judge(response, case)`` returns the score as a float in ``[1, scale]``; register it
    with ``register_metric(name, higher_is_better=...)(judge)``. Grading is one forced
    call of a strict tool whose input is ``{"score": integer 1..scale, "reason": text}``.

    Args:
        rubric: what a good response is; part of every request (non-empty).
        model: the judge model id; required, no default, part of the cache key.
        scale: the top score (an integer >= 2); scores run from 1 to ``scale``.
        provider: the model API: ``"anthropic"`` (the Messages API, default),
            ``"openai"`` (the Chat Completions wire format, for OpenAI and compatible
            servers), a provider registered through the entry-point group
            ``evalkit_judge.providers``, or a
            :class:`~evalkit_judge.providers.JudgeProvider` instance
            (:mod:`evalkit_judge.providers`).
        api_key_env: the environment variable holding the API key (default:
            ``ANTHROPIC_API_KEY`` / the SDK's credentials for ``anthropic``,
            ``OPENAI_API_KEY`` for ``openai``); read when the first request leaves.
        headers: extra HTTP headers of every request (``${NAME}`` references expanded
            from the environment); every value is a secret, never recorded.
        grade_via: ``"tool"`` (a forced, strict tool call; every provider) or
            ``"json_schema"`` (``response_format`` with a strict JSON schema; ``openai``).
        retries: retries of a 408, 409, 429, 5xx or a transport failure, with the
            server's ``Retry-After`` or a jittered exponential backoff: an integer from 0
            to 10 (default 4). ``max_retries`` is the same setting under its former name
            (give one of them).
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
        max_tokens_field: the name the request gives that cap: ``"max_tokens"``
            (default) or ``"max_completion_tokens"`` (``openai`` only: OpenAI's o-series
            models refuse ``max_tokens``). Part of the cache key and, when not the
            default, of the definition hash.
        temperature: sent only when not ``None``. Anthropic API version 2026-10-21, the one
            the ``anthropic`` 2.x SDK sends, rejects every sampling parameter, so set it
            only for an endpoint that accepts it. Part of the cache key either way.
        system: an optional system prompt (part of the key).
        prices: ``{model: (input, output)}`` in US dollars per million tokens (see
            :func:`~evalkit_judge.budget.price_table`), or a JSON file of them. Needed for
            costs on rows and for ``max_cost``.
        budget: the :class:`Budget` to consult; by default the run's
            (:func:`~evalkit_judge.budget.active_budget`: the one installed by
            :func:`~evalkit_judge.budget.use_budget`, or ``evalkit run --max-calls ...``).
        max_retries: retries of 429, 529, 5xx and connection failures, done by the SDK
            with jittered exponential backoff (honouring ``retry-after``): an integer from
            0 to 10 (:data:`evalkit.io.limits.MAX_RETRIES`). Applied to the client the
            judge builds (default 4) and, when given, to a passed SDK client through
            ``with_options``. The requests sent again are counted on the grade's details
            (``retries``) and in the run's totals (``retried``).
        timeout: the deadline in seconds of each whole HTTP attempt (connecting, headers
            and the complete body, capped at
            :data:`~evalkit_judge.attempt_bounds.MAX_REPLY_BYTES`) for a client the judge
            builds.
        base_url: the API base URL for a client the judge builds.
        seed_grades: serve grades imported from a 0.2 JSON cache (matched on what 0.2
            hashed: case id, output, rubric, scale, model, system).
        judge_resamples: in a run with repeated samples (``epochs`` K >= 2), add the
            sample number to the cache key, so that identical outputs of two samples are
            graded twice and the judge's own variance is measured too. Default: every
            sample is graded, and identical outputs reuse one cached grade.

    Raises:
        ValueError: an empty rubric or model, a scale below 2, ``max_tokens`` below 1, a
            negative or non-finite temperature, ``max_retries`` that is not an integer
            from 0 to 10, or a malformed price table.
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
        judge_resamples: bool = False,
        provider: str | JudgeProvider = "anthropic",
        api_key_env: str | None = None,
        headers: Mapping[str, str] | None = None,
        grade_via: str = "tool",
        retries: int | None = None,
        max_tokens_field: str = "max_tokens",
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
            (t := finite_real(temperature)) is None or t < 0
        ):
            raise ValueError(f"temperature must be a finite number >= 0 or None, "
                             f"got {temperature!r}")
        if retries is not None and max_retries is not None and retries != max_retries:
            raise ValueError(f"retries={retries!r} and max_retries={max_retries!r} are one "
                             "setting (max_retries is its former name): give one of them")
        option = "retries" if retries is not None else "max_retries"
        retries = retries if retries is not None else max_retries
        if retries is not None and (isinstance(retries, bool) or not isinstance(
                retries, int) or not 0 <= retries <= MAX_RETRIES):
            raise ValueError(f"{option} must be an integer from 0 to {MAX_RETRIES}, got "
                             f"{retries!r}")
        max_retries = retries
        if timeout is not None and ((s := finite_real(timeout)) is None or s <= 0):
            raise ValueError(f"timeout must be a finite number of seconds > 0 or None, "
                             f"got {timeout!r}")
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
        self.seed_grades, self.judge_resamples = seed_grades, bool(judge_resamples)
        #: the model API (:class:`~evalkit_judge.providers.JudgeProvider`)
        self.provider = make_provider(provider, ProviderSettings(
            model=model, base_url=base_url, api_key_env=api_key_env,
            headers=dict(headers or {}), retries=retries, timeout=timeout,
            grade_via=grade_via, client=client, max_tokens_field=max_tokens_field))
        self.cache_path = None if cache_path is None else Path(cache_path)
        self.cache: GradeCache | None = None if cache_path is None else GradeCache(cache_path)
        self._details: dict[tuple[str, int | None], dict[str, Any]] = {}  # (case, sample)
        self._inflight: SingleFlight[Grade] = SingleFlight()
        self._lock = threading.Lock()
        # requests failing the same way stop the judge (evalkit_judge.systemic)
        self._failures = FailureStreak(model)
        self.costs = CostModel(self.prices, model, max_tokens)
        self.prompt = GradingPrompt(rubric, model, scale, max_tokens, self.temperature,
                                    system)
        self.definition = self._definition_hash()
        self._scope: dict[str, Any] | None = None
        # Registered metrics take their description and provider from the function.
        self.__doc__ = f"LLM judge {model}, scale 1-{scale}"
        caller = sys._getframe(1).f_globals.get("__name__")
        if isinstance(caller, str):
            self.__module__ = caller

    @property
    def api_client(self) -> Any:
        """The Anthropic provider's client (:class:`~evalkit_judge.client.JudgeClient`);
        ``None`` for another provider."""
        return getattr(self.provider, "client", None)

    def _definition_hash(self) -> str:
        """A short hash of everything a grade depends on but the case (16 hex digits):
        the prompt's definition, and the provider and its endpoint unless they are the
        Anthropic API's default."""
        settings = self.provider.settings
        if self.provider.name == "anthropic" and settings.base_url is None:
            return self.prompt.definition_hash()
        where = {"provider": self.provider.name, "base_url": self.provider.endpoint,
                 "grade_via": settings.grade_via}
        if settings.max_tokens_field != "max_tokens":  # hashes of the default unchanged
            where["max_tokens_field"] = settings.max_tokens_field
        return sha256_hex(canonical_json({**self.prompt.definition(), **where}))[:16]

    def record(self) -> dict[str, Any]:
        """The judge's whole definition, JSON-ready and without secrets (a header value
        is shown only as its ``${NAME}`` reference): provider settings, model, rubric,
        scale, system prompt, generation settings, prices, cache path and the definition
        hash. A run header keeps it under ``details[metric]["judge"]``."""
        return {
            **self.provider.record(),
            "model": self.model, "rubric": self.rubric, "scale": self.scale,
            "system": self.system, "max_tokens": self.max_tokens,
            "temperature": self.temperature, "judge_resamples": self.judge_resamples,
            "cache": None if self.cache_path is None else str(self.cache_path),
            "prices": {m: {"input": p.input_per_mtok, "output": p.output_per_mtok,
                           "cache_write": p.cache_write_per_mtok,
                           "cache_read": p.cache_read_per_mtok}
                       for m, p in sorted(self.prices.items())},
            "definition": self.definition,
        }

    def scope(self) -> dict[str, Any]:
        """What the cache key covers besides the request body: the provider and its
        endpoint (:meth:`JudgeProvider.key_scope
        <evalkit_judge.providers.JudgeProvider.key_scope>`), worked out on first use."""
        if self._scope is None:
            self._scope = self.provider.key_scope()
        return self._scope

    def __repr__(self) -> str:
        return (f"LLMJudge(model={self.model!r}, scale={self.scale}, "
                f"definition={self.definition!r})")

    # ------------------------------------------------------------------ request
    @property
    def tool(self) -> dict[str, Any]:
        """The grading tool: strict input ``{"score": 1..scale, "reason": text}``."""
        return self.prompt.tool

    def render(self, response: TargetResponse, case: GoldenCase) -> str:
        """The user message of the request for ``(response, case)``."""
        return self.prompt.render(response, case)

    def request(self, response: TargetResponse, case: GoldenCase) -> dict[str, Any]:
        """The request body for ``(response, case)`` in the provider's wire format
        (JSON-ready)."""
        return self.provider.request(self.prompt, self.prompt.render(response, case))

    def key(self, response: TargetResponse, case: GoldenCase) -> str:
        """The cache key of ``(response, case)``: SHA-256 hex of the canonical request
        (and, under ``judge_resamples``, of the sample number being scored)."""
        return self.prompt.key(self.request(response, case), self._sample(), self.scope())

    def _sample(self) -> int | None:
        return current_sample() if self.judge_resamples else None

    def seed_key(self, response: TargetResponse, case: GoldenCase) -> str:
        """The key the 0.2 judge used for ``(response, case)`` in its JSON cache."""
        return self.prompt.seed_key(response, case)

    # ------------------------------------------------------------------ money
    def price(self, model: str | None = None) -> ModelPrice | None:
        """The price of ``model`` (default: the judge's), or ``None`` when not configured."""
        return self.costs.price(model)

    def cost(self, usage: Usage, served_model: str | None = None) -> float | None:
        """The cost in US dollars of ``usage``; ``None`` without a price."""
        return self.costs.cost(usage, served_model)

    def estimate(self, body: Mapping[str, Any]) -> tuple[float | None, float | None]:
        """``(typical, worst)`` cost in US dollars of sending ``body`` (see
        :meth:`CostModel.estimate <evalkit_judge.costs.CostModel.estimate>`)."""
        return self.costs.estimate(body)

    def _plan(self, body: Mapping[str, Any], budget: Budget) -> CostPlan:
        """The cost plan of sending ``body`` now (:meth:`evalkit_judge.costs.CostModel.plan`),
        input tokens counted by the API when the budget may not fit the worst case."""
        return self.costs.plan(body, budget, self.provider.count_input_tokens)

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
        """The details of the last grade this judge produced for ``case_id`` (and the
        sample being scored, in a run with repeated samples) in this process (see
        :meth:`Grade.as_dict`); for a reply the API delivered but the judge rejected,
        what it cost (:func:`~evalkit_judge.grades.rejected_details`); for a request that
        got no reply after its retries, the HTTP attempts sent
        (:func:`~evalkit_judge.grades.failed_details`); ``None`` when there was none."""
        with self._lock:
            found = self._details.get((str(case_id), current_sample()))
            return None if found is None else dict(found)

    @staticmethod
    def summarize_details(rows: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
        """Totals of per-row grade details (see :func:`summarize`)."""
        return summarize(rows)

    def grade(self, response: TargetResponse, case: GoldenCase) -> Grade:
        """Grade one response; see :meth:`__call__` for the errors."""
        case_id = (str(case.id), current_sample())
        with self._lock:
            self._details.pop(case_id, None)
        body = self.request(response, case)
        key = self.prompt.key(body, self._sample(), self.scope())
        budget = self.budget or active_budget()
        grade = self._cached_grade(key, response, case)
        cached = grade is not None
        if grade is None:  # one request per key, however many threads ask for it
            grade, cached = self._inflight.run(key, lambda: self._stored_grade(key),
                                               lambda: self._request_grade(key, body, case,
                                                                           budget))
        if cached and budget is not None:
            budget.note_cached()
        with self._lock:
            self._details[case_id] = grade.as_dict()
        return grade

    # ------------------------------------------------------------------ grades
    def _what(self, case: GoldenCase) -> str:
        return f"judge {self.model!r}, case {str(case.id)!r}"

    def _stored_grade(self, key: str) -> Grade | None:
        """The grade the judge's cache holds for ``key``, or None.

        Raises:
            JudgeError: the cache cannot be read.
        """
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

    def _cached_grade(self, key: str, response: TargetResponse, case: GoldenCase
                      ) -> Grade | None:
        """The stored grade for ``key``, else one imported from a 0.2 JSON cache (matched
        on the 0.2 key, kept under ``key`` from now on) when ``seed_grades`` allows, else
        None.

        Raises:
            JudgeError: the cache cannot be read or written.
        """
        grade = self._stored_grade(key)
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
        return self._stored_grade(key)

    def _request_grade(self, key: str, body: dict[str, Any], case: GoldenCase,
                       budget: Budget | None) -> Grade:
        """Send ``body`` (the request of ``case``, cached under ``key``); its grade, kept
        in the cache (or the reply that held none kept as rejected). The errors are
        :meth:`send`'s and :meth:`_graded`'s."""
        try:
            sent = self.send(key, body, self._what(case), budget)
        except JudgeError as exc:
            requests = getattr(exc, "requests", 0)
            if requests:  # sent and failed: the row counts what the server received
                with self._lock:
                    self._details[(str(case.id), current_sample())] = failed_details(
                        model=self.model, key=key, definition=self.definition,
                        error=str(exc), requests=requests)
            raise
        return self._graded(key, case, sent.reply, sent.usage, sent.served_model,
                            sent.cost_usd, sent.retries)

    def send(self, key: str, body: dict[str, Any], what: str, budget: Budget | None
             ) -> SentReply:
        """Send one request ``body`` (cache key ``key``) through this judge's client,
        within ``budget``; the reply, not parsed and not cached (the caller parses it and
        keeps it in the cache). Grades and pairwise verdicts both go through here.

        Under a dry run nothing is sent: the request's typical and worst cost are noted on
        the budget. Otherwise the budget reserves the worst case first and settles the real
        cost after.

        Raises:
            GradeNotRequested: dry run.
            BudgetExhausted: the budget's limits leave no room for the request.
            RunAborted: the client has no usable credentials, the API refused them, or
                requests failed the same way often enough to mean the judge cannot work
                (:mod:`evalkit_judge.systemic`; then no request is sent after it).
            JudgeError: the request failed after the SDK's retries (``what`` names the
                model and the case).
        """
        if budget is not None and budget.dry_run:
            typical, most = self.estimate(body)
            budget.note_planned(key, typical, most)
            raise GradeNotRequested(f"{what}: dry run, grade not cached and not requested")
        # before the budget counts a request: a provider that cannot send one stops the run
        provider = self.provider
        stop = provider.refused() or self._failures.stopped()
        if stop is not None:
            raise stop
        provider.prepare()
        reservation: Reservation | None = None
        if budget is not None:
            reservation = budget.reserve(None, model=self.model, plan=self._plan(body, budget))

        def admit() -> None:  # before each retry: none once the judge is stopped (other
            # requests decided it cannot work) or past the budget's limits
            stop = self._failures.stopped()
            if stop is not None:
                raise stop
            if budget is not None and reservation is not None:
                budget.retry(reservation)

        with attempt_gate(admit) as gate:
            try:
                sent = provider.send(body)
            except Exception as exc:
                retried = max(provider.retries_before(exc), gate.attempts - 1)
                if budget is not None and reservation is not None:
                    # retries the provider made without asking (a client passed in)
                    budget.count_retries(retried - max(0, gate.attempts - 1))
                    budget.release(reservation, sent=provider.sent_anything(exc),
                                   refused=is_refusal(exc))
                stop = provider.stop_for(exc)
                if stop is not None:
                    raise stop from exc
                after = f" after {retried} retr{'y' if retried == 1 else 'ies'}" \
                    if retried else ""
                message = f"{what}: the request failed{after} ({type(exc).__name__}: {exc})"
                stop = self._failures.failure(exc, message)
                if stop is not None:
                    raise stop from exc
                failed = JudgeError(message)
                failed.requests = (1 + retried) if provider.sent_anything(exc) else 0
                raise failed from exc
        self._failures.success()
        reply = sent.reply
        retries = max(sent.retries, gate.attempts - 1)
        if budget is not None:
            budget.count_retries(retries - max(0, gate.attempts - 1))
        usage = self.costs.reply_usage(provider.usage, body, reply, what)
        served = provider.served_model(reply)
        cost = self.cost(usage, served)
        if budget is not None and reservation is not None:
            budget.settle(reservation, cost)
        return SentReply(reply, usage, served, cost, retries)

    def _graded(self, key: str, case: GoldenCase, reply: dict[str, Any], usage: Usage,
                served: str | None, cost: float | None, retries: int = 0) -> Grade:
        """The grade of ``reply``, kept in the cache (or the reply kept as rejected)."""
        try:
            score, reason = self.provider.parse(reply, self.scale)
        except JudgeError as exc:
            # billed all the same: the case's row keeps what it cost
            with self._lock:
                self._details[(str(case.id), current_sample())] = rejected_details(
                    model=self.model, key=key, definition=self.definition, error=str(exc),
                    usage=usage, served_model=served, cost_usd=cost, retries=retries)
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
                     definition=self.definition, retries=retries)
