"""A grade requested from the API: the dry run's plan, the budget's reservation, the one
request, its cost, the reply's grade, and the cache entry it leaves.

The grades served without a request (the cache, a 0.2 grade, another thread's request)
are :mod:`evalkit_judge.serving`'s; :meth:`evalkit_judge.judge.LLMJudge.grade` asks there
first and comes here for the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit_judge.budget import (
    Budget,
    GradeNotRequested,
    JudgeError,
    Reservation,
    Usage,
)
from evalkit_judge.cache import CacheError
from evalkit_judge.credentials import is_credentials_failure, is_refusal
from evalkit_judge.grades import Grade, parse_reply, reply_dict

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit_judge.judge import LLMJudge


def _what(judge: LLMJudge, case: GoldenCase) -> str:
    return f"judge {judge.model!r}, case {str(case.id)!r}"


def request_grade(judge: LLMJudge, key: str, body: dict[str, Any], case: GoldenCase,
                  budget: Budget | None) -> Grade:
    """Send ``body`` (the request of ``case``, cached under ``key``) and return its grade.

    Under a dry run nothing is sent: the request's typical and worst cost are noted on the
    budget. Otherwise the budget reserves the worst case first and settles the real cost
    after; the grade (or the reply that held none) is kept in the judge's cache.

    Raises:
        GradeNotRequested: dry run.
        BudgetExhausted: the budget's limits leave no room for the request.
        RunAborted: the client has no usable credentials, or the API refused them.
        JudgeError: the request failed after the SDK's retries, the reply held no valid
            grade, or the grade could not be cached (names the case).
    """
    if budget is not None and budget.dry_run:
        typical, most = judge.estimate(body)
        budget.note_planned(key, typical, most)
        raise GradeNotRequested(f"{_what(judge, case)}: dry run, grade not cached and "
                                "not requested")
    # before the budget counts a request: a client that cannot send one stops the run
    client = judge.api_client.resolve()
    reservation: Reservation | None = None
    if budget is not None:
        reservation = budget.reserve(None, model=judge.model, plan=judge._plan(body, budget))
    kwargs = dict(body)
    temperature = kwargs.pop("temperature", None)
    if temperature is not None:
        kwargs["extra_body"] = {"temperature": temperature}
    try:
        message, retries = _sent(client, kwargs)
    except Exception as exc:
        if budget is not None and reservation is not None:
            budget.release(reservation, sent=not is_credentials_failure(exc),
                           refused=is_refusal(exc))
        stop = judge.api_client.stop_for(exc)
        if stop is not None:
            raise stop from exc
        retried = _retries_before(exc)
        after = f" after {retried} retr{'y' if retried == 1 else 'ies'}" if retried else ""
        raise JudgeError(f"{_what(judge, case)}: the request failed{after} "
                         f"({type(exc).__name__}: {exc})") from exc
    reply = reply_dict(message)
    usage = Usage.from_reply(reply.get("usage"))
    judge.costs.calibrate(body, usage)
    served = reply.get("model") if isinstance(reply.get("model"), str) else None
    cost = judge.cost(usage, served)
    if budget is not None and reservation is not None:
        budget.settle(reservation, cost)
    return _graded(judge, key, case, reply, usage, served, cost, retries)


#: The header the ``anthropic`` SDK sends with each request: the retries before it.
RETRY_COUNT_HEADER = "x-stainless-retry-count"


def _sent(client: Any, kwargs: dict[str, Any]) -> tuple[Any, int]:
    """The reply to ``client.messages.create(**kwargs)`` and the requests the client sent
    again on the way (the SDK's ``retries_taken``; 0 for a client that does not say)."""
    raw_api = getattr(client.messages, "with_raw_response", None)
    if raw_api is None:
        return client.messages.create(**kwargs), 0
    raw = raw_api.create(**kwargs)
    retries = getattr(raw, "retries_taken", 0)
    return raw.parse(), retries if isinstance(retries, int) and retries > 0 else 0


def _retries_before(exc: Exception) -> int:
    """The retries the SDK made before the request that raised ``exc`` (the retry count
    header of its last request; 0 when unknown)."""
    request = getattr(exc, "request", None)
    try:
        return max(0, int(getattr(request, "headers", {}).get(RETRY_COUNT_HEADER, 0)))
    except (TypeError, ValueError):
        return 0


def _graded(judge: LLMJudge, key: str, case: GoldenCase, reply: dict[str, Any],
            usage: Usage, served: str | None, cost: float | None, retries: int = 0
            ) -> Grade:
    """The grade of ``reply``, kept in the cache (or the reply kept as rejected)."""
    try:
        score, reason = parse_reply(reply, judge.scale)
    except JudgeError as exc:
        message_text = f"{_what(judge, case)}: {exc}"
        if judge.cache is not None:
            try:
                judge.cache.reject(key, case_id=str(case.id), model=judge.model,
                                   error=str(exc), reply=reply)
            except CacheError as cache_exc:
                message_text += f" (and the reply could not be kept: {cache_exc})"
        raise JudgeError(message_text) from None
    if judge.cache is not None:
        try:
            judge.cache.put(key, case_id=str(case.id), model=judge.model, score=score,
                            reason=reason, usage=usage, served_model=served,
                            source="api", reply=reply)
        except CacheError as exc:
            raise JudgeError(f"{_what(judge, case)}: {exc}; the grade was not used") \
                from exc
    return Grade(score=score, reason=reason, model=judge.model, key=key, cached=False,
                 source="api", usage=usage, cost_usd=cost, served_model=served,
                 definition=judge.definition, retries=retries)
