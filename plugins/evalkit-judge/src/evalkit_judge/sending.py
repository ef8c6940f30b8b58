"""One request of a judge sent through its provider within the run's budget
(:func:`send_request`, behind :meth:`LLMJudge.send <evalkit_judge.judge.LLMJudge.send>`,
which grades and pairwise verdicts both go through): nothing sent under a dry run (the
request's typical and worst cost are noted), the worst case reserved before sending and
the real cost settled after, every HTTP attempt admitted by the budget, and failures that
repeat the same way stopping the judge (:mod:`evalkit_judge.systemic`). The reply is
returned as delivered (:class:`SentReply`); parsing it and caching it are the caller's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalkit_judge.budget import Budget, GradeNotRequested, JudgeError, Reservation, Usage
from evalkit_judge.costs import CostModel
from evalkit_judge.credentials import is_refusal
from evalkit_judge.providers import JudgeProvider, attempt_gate
from evalkit_judge.systemic import FailureStreak


@dataclass(frozen=True)
class SentReply:
    """A reply the API delivered for one request (:func:`send_request`, :meth:`LLMJudge.send
    <evalkit_judge.judge.LLMJudge.send>`), not yet parsed.

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


def send_request(provider: JudgeProvider, costs: CostModel, failures: FailureStreak, key: str,
                 body: dict[str, Any], what: str, budget: Budget | None) -> SentReply:
    """Send one request ``body`` (cache key ``key``) through ``provider`` within
    ``budget``, priced by ``costs`` (its model is the judge's) and counted by the judge's
    ``failures``; the reply, not parsed and not cached. The errors are those of
    :meth:`LLMJudge.send <evalkit_judge.judge.LLMJudge.send>` (``GradeNotRequested``,
    ``BudgetExhausted``, ``RunAborted``, ``JudgeError``)."""
    if budget is not None and budget.dry_run:
        typical, most = costs.estimate(body)
        budget.note_planned(key, typical, most)
        raise GradeNotRequested(f"{what}: dry run, grade not cached and not requested")
    # before the budget counts a request: a provider that cannot send one stops the run
    stop = provider.refused() or failures.stopped()
    if stop is not None:
        raise stop
    provider.prepare()
    reservation: Reservation | None = None
    if budget is not None:
        # input tokens counted by the API when the budget may not fit the worst case
        plan = costs.plan(body, budget, provider.count_input_tokens)
        reservation = budget.reserve(None, model=costs.model, plan=plan)

    def admit() -> None:  # before each retry: none once the judge is stopped (other
        # requests decided it cannot work) or past the budget's limits
        stopped = failures.stopped()
        if stopped is not None:
            raise stopped
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
            stop = failures.failure(exc, message)
            if stop is not None:
                raise stop from exc
            failed = JudgeError(message)
            failed.requests = (1 + retried) if provider.sent_anything(exc) else 0
            raise failed from exc
    failures.success()
    reply = sent.reply
    retries = max(sent.retries, gate.attempts - 1)
    if budget is not None:
        budget.count_retries(retries - max(0, gate.attempts - 1))
    usage = costs.reply_usage(provider.usage, body, reply, what)
    served = provider.served_model(reply)
    cost = costs.cost(usage, served)
    if budget is not None and reservation is not None:
        budget.settle(reservation, cost)
    return SentReply(reply, usage, served, cost, retries)


__all__ = ["SentReply", "send_request"]
