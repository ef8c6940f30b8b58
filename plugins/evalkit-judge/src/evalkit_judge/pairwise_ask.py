"""One pairwise verdict through a judge's request, cache and budget path.

:func:`ask_verdict` is the only place pairwise judging touches a judge: it reads the
judge's grade cache (a verdict is a row of it, its ``score`` the verdict's code), sends the
request with :meth:`LLMJudge.send <evalkit_judge.judge.LLMJudge.send>` through the judge's provider
(dry runs, spending limits, retries, credentials: exactly as for a grade), parses the
reply strictly with the provider's reading of a forced tool
(:func:`~evalkit_judge.pairwise_prompt.parse_verdict`) and commits the verdict to the
cache before returning it, or keeps a reply that holds none as rejected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from evalkit_judge.budget import Budget, JudgeError, Usage, active_budget
from evalkit_judge.cache import CacheError
from evalkit_judge.judge import SingleFlight
from evalkit_judge.pairwise_prompt import VERDICT_CODES, parse_verdict

if TYPE_CHECKING:
    from evalkit_judge.judge import LLMJudge

_VERDICT_OF_CODE = {code: verdict for verdict, code in VERDICT_CODES.items()}


@dataclass(frozen=True)
class Answer:
    """One verdict and where it came from.

    Attributes:
        verdict: ``"A"`` (the answer shown first is better), ``"B"`` or ``"tie"``.
        reason: the judge's justification.
        key: the cache key of the request.
        cached: ``True`` when no request was sent for it.
        usage: the tokens of the request that produced it.
        cost_usd: what that request cost in US dollars, ``None`` without a price.
        served_model: the model id the API reported, ``None`` when unknown.
    """

    verdict: str
    reason: str
    key: str
    cached: bool
    usage: Usage
    cost_usd: float | None
    served_model: str | None


@dataclass
class Task:
    """One verdict to ask: ``first``'s answer shown as A, ``second``'s as B."""

    case: str
    sample: int | None
    first: str
    second: str
    body: dict[str, Any]
    key: str


def _stored(judge: LLMJudge, key: str) -> Answer | None:
    if judge.cache is None:
        return None
    try:
        found = judge.cache.get(key)
    except CacheError as exc:
        raise JudgeError(str(exc)) from exc
    if found is None or found.score not in _VERDICT_OF_CODE:
        return None
    return Answer(_VERDICT_OF_CODE[found.score], found.reason, key, True, found.usage,
                  judge.cost(found.usage, found.served_model), found.served_model)


def ask_verdict(judge: LLMJudge, body: dict[str, Any], key: str, *, case_id: str,
                what: str, inflight: SingleFlight[Answer] | None = None,
                budget: Budget | None = None) -> Answer:
    """The verdict of the request ``body`` (cache key ``key``), from ``judge``'s cache or
    asked of its model.

    Args:
        judge: the judge whose client, cache, prices and budget are used.
        body: the verdict request in the judge provider's wire format
            (:meth:`PairwisePrompt.request
            <evalkit_judge.pairwise_prompt.PairwisePrompt.request>`).
        key: its cache key.
        case_id: stored on the cache row.
        what: names the judge, the case and the pair in error messages.
        inflight: shared between threads so that one key is requested once.
        budget: the budget to consult (default: the judge's, else the active one).

    Raises:
        GradeNotRequested: dry run and the verdict is not cached.
        BudgetExhausted: a spending limit would be passed (stops the comparison).
        RunAborted: the judge has no usable credentials.
        JudgeError: the request failed, or the cache failed.
        RejectedVerdict: (a ``JudgeError``) the reply held no valid verdict (kept in the
            cache's ``rejected`` table, never served); it says what the reply cost.
    """
    budget = budget or judge.budget or active_budget()
    found = _stored(judge, key)
    if found is None:
        def fetch() -> Answer:
            return _requested(judge, body, key, case_id=case_id, what=what, budget=budget)

        found, _ = (inflight or SingleFlight()).run(key, lambda: _stored(judge, key), fetch)
    if found.cached and budget is not None:
        budget.note_cached()
    return found


class RejectedVerdict(JudgeError):
    """A reply the API delivered (and billed) that held no valid verdict.

    Attributes:
        usage: its token counts.
        cost_usd: what it cost in US dollars, ``None`` without a price.
    """

    def __init__(self, message: str, usage: Usage, cost_usd: float | None) -> None:
        super().__init__(message)
        self.usage, self.cost_usd = usage, cost_usd


def _requested(judge: LLMJudge, body: dict[str, Any], key: str, *, case_id: str,
               what: str, budget: Budget | None) -> Answer:
    sent = judge.send(key, body, what, budget)
    try:
        verdict, reason = parse_verdict(judge.provider, sent.reply)
    except JudgeError as exc:
        message = f"{what}: {exc}"
        if judge.cache is not None:
            try:
                judge.cache.reject(key, case_id=case_id, model=judge.model, error=str(exc),
                                   reply=sent.reply)
            except CacheError as cache_exc:
                message += f" (and the reply could not be kept: {cache_exc})"
        raise RejectedVerdict(message, sent.usage, sent.cost_usd) from None
    if judge.cache is not None:
        try:
            judge.cache.put(key, case_id=case_id, model=judge.model,
                            score=VERDICT_CODES[verdict], reason=reason, usage=sent.usage,
                            served_model=sent.served_model, source="api", reply=sent.reply)
        except CacheError as exc:
            raise JudgeError(f"{what}: {exc}; the verdict was not used") from exc
    return Answer(verdict, reason, key, False, sent.usage, sent.cost_usd, sent.served_model)
