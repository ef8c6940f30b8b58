"""The spend limits shared by every judge call of a run (prices and usage:
:mod:`evalkit_judge.pricing`).

A :class:`Budget` is consulted before each API request. It counts requests and, under
``max_cost``, admits a request only when the money already spent, plus the worst case
held for every request in flight, plus this request's expected cost fits the limit; the
request then holds its own worst case (input plus ``max_tokens`` of output) until its
reply settles it at the real cost. When the next request would pass ``max_calls`` or
``max_cost`` it raises :class:`BudgetExhausted`, which derives from :class:`BaseException`
so that per-case ``except Exception`` handlers (metric errors, target errors) let it
through and the run stops as a whole, keeping every grade already stored.

What ``max_cost`` guarantees: the money spent never passes ``max_cost`` by more than the
amount by which the last request sent exceeded its expected cost, so by less than that
one request's actual cost, whatever the concurrency, provided no request in flight costs
more than the worst case it holds (certain when :class:`~evalkit_judge.judge.LLMJudge`
counted its input tokens with the API; see ``docs/judge.md``, "How --max-cost decides").

In a dry run no request is sent: the budget counts the grades found in the cache and the
ones that would be requested, with their estimated cost when prices are known.

A budget is the judges' account in the kernel's spending protocol
(:mod:`evalkit.execute.spending`): under ``evalkit run --max-calls/--max-cost/--dry-run``
or :func:`use_budget` every judge without a budget of its own shares it
(:func:`active_budget`), and :class:`BudgetExhausted` is a
:class:`~evalkit.execute.spending.SpendingLimitReached`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn

from evalkit.execute.spending import (
    Spending,
    SpendingLimitReached,
    SpendingLimits,
    current_spending,
    use_spending,
)
from evalkit_judge.pricing import CostPlan as CostPlan
from evalkit_judge.pricing import ModelPrice as ModelPrice
from evalkit_judge.pricing import PricesLike as PricesLike
from evalkit_judge.pricing import PriceTable as PriceTable
from evalkit_judge.pricing import Usage as Usage
from evalkit_judge.pricing import price_table as price_table


class JudgeError(RuntimeError):
    """A grade could not be produced; the message names the case (and the model).

    The runner records it as the case's error: a failed grade is never a score.

    Attributes:
        requests: for a request that failed, the HTTP attempts sent for it (retries
            included; 0 when none left this machine).
    """

    requests: int = 0


class GradeNotRequested(JudgeError):
    """Dry run: the grade is not in the cache, and no request was sent for it."""


class JudgeUnavailable(JudgeError, ValueError):
    """The judge can grade no case: it has no credentials for the Anthropic API, the API
    refused them (401), or its client cannot be built. The message says what to fix.

    The judge raises it wrapped in :class:`evalkit.execute.scoring.RunAborted` (a
    ``BaseException``), so that it stops the run once instead of becoming every case's
    error; the runner then raises this exception. It is a ``ValueError`` too, like other
    configuration errors, so ``evalkit run`` prints it on one line and exits 2.
    """


class BudgetExhausted(SpendingLimitReached):
    """Raised before a request that would exceed ``max_calls`` or ``max_cost``.

    It derives from :class:`BaseException` (as :class:`KeyboardInterrupt` does), through
    the kernel's :class:`~evalkit.execute.spending.SpendingLimitReached`, so that ``except
    Exception`` clauses around single cases do not turn it into a case error: the run
    stops cleanly, and every grade already received stays in the cache.

    Attributes:
        reason: one line saying which limit stopped the run.
    """


#: Slack for the float sums of prices compared with ``max_cost`` (US dollars).
_EPSILON_USD = 1e-12


@dataclass
class Reservation:
    """The part of a budget held for one request in flight (its worst case), through
    every HTTP attempt of it (:meth:`Budget.retry`)."""

    worst_usd: float
    expected_usd: float = 0.0
    closed: bool = False


class Budget:
    """Spend limits and counters shared by the judge calls of one run (thread-safe).

    Args:
        max_calls: the most API requests the run may send (``None``: no limit). Every
            HTTP attempt counts when it is sent, whatever its outcome, a retry of a failed
            attempt included (:meth:`retry`), except one the API refused for its
            credentials (401), which the API did no work for (the run stops then).
        max_cost: the most the run may spend, in US dollars (``None``: no limit). A request
            is sent only if the money already spent, plus the worst case of the requests
            in flight, plus this request's expected cost stays within it (when only the
            worst cases of requests in flight are in the way, it waits for them to
            settle). Spending can pass the limit only by what the last request sent cost
            beyond its expected cost. Judges need a price for their model, else the run
            stops before the first request.
        dry_run: send nothing; count cached grades and the grades that would be requested.

    Raises:
        ValueError: a negative limit.
    """

    def __init__(self, *, max_calls: int | None = None, max_cost: float | None = None,
                 dry_run: bool = False) -> None:
        SpendingLimits(max_calls, max_cost, dry_run)  # ValueError for a bad limit
        self.max_calls = max_calls
        self.max_cost = None if max_cost is None else float(max_cost)
        self.dry_run = dry_run
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)
        self.calls = 0
        self.in_flight = 0
        self.failed_calls = 0
        self.refused_calls = 0
        self.spent_usd = 0.0
        self.unpriced_calls = 0
        self.reserved_usd = 0.0
        self.cached = 0
        self.planned_keys: set[str] = set()
        self.estimated_usd = 0.0
        self.worst_usd = 0.0
        self.unpriced_planned = 0
        self.stopped: str | None = None

    # ------------------------------------------------------------------ live runs
    def reserve(self, worst_usd: float | None, *, model: str,
                expected_usd: float | None = None,
                plan: CostPlan | None = None) -> Reservation:
        """Count one request about to be sent and hold its worst-case cost.

        Args:
            worst_usd: the most the request can cost (its input plus ``max_tokens`` of
                output), held until :meth:`settle` or :meth:`release`; ``None`` when the
                model has no price.
            model: the judge model (named in the message when it has no price).
            expected_usd: what the request is expected to cost (default ``worst_usd``);
                under ``max_cost`` the request is sent only if the money spent, plus the
                worst case of the requests in flight, plus this fits. When it would fit
                but for requests still in flight, the call waits for them to settle.
            plan: ``() -> (expected_usd, worst_usd)``, asked again at every check instead
                of the two fixed figures (a judge learns from the replies that settle while
                a request waits). It runs under the budget's lock: quick, no budget calls.

        Raises:
            BudgetExhausted: the request would pass ``max_calls`` or ``max_cost``, or
                ``max_cost`` is set and ``worst_usd`` is ``None`` (no price for ``model``).
                Once raised, every later call raises too.
        """
        with self._settled:
            while True:
                if self.stopped is not None:
                    raise BudgetExhausted(self.stopped)
                if self.max_calls is not None and self.calls >= self.max_calls:
                    self._stop(f"--max-calls {self.max_calls} reached: {self.calls} judge "
                               "request(s) sent; the run stops here")
                if plan is not None:
                    expected_usd, worst_usd = plan()
                if self.max_cost is None:
                    break
                if worst_usd is None:
                    self._stop(f"--max-cost is set but there is no price for judge model "
                               f"{model!r}; configure prices= on the judge")
                expected = worst_usd if expected_usd is None else min(expected_usd, worst_usd)
                limit = self.max_cost + _EPSILON_USD
                if self.spent_usd + expected > limit:
                    # settling the requests in flight can only add to what is spent
                    self._stop(
                        f"--max-cost ${self.max_cost:.6f} reached: ${self.spent_usd:.6f} spent, "
                        f"{self.in_flight} request(s) in flight, the next request is expected "
                        f"to cost ${expected:.6f}; the run stops here"
                    )
                if self.in_flight == 0 or self.spent_usd + self.reserved_usd + expected <= limit:
                    break
                # it fits unless the requests in flight cost their worst case: wait for them
                # (in slices of 0.5 s; each request in flight settles within its client's
                # timeout and retries, and settling wakes this wait)
                self._settled.wait(timeout=0.5)
            held = worst_usd or 0.0
            self.calls += 1
            self.in_flight += 1
            self.reserved_usd += held
            return Reservation(held, held if expected_usd is None
                               else min(expected_usd, held))

    def retry(self, reservation: Reservation) -> None:
        """Count one more HTTP attempt of the request holding ``reservation``, whose last
        attempt failed (counted as a failed request); called before the retry is sent.

        Raises:
            BudgetExhausted: the retry would pass ``max_calls``, or under ``max_cost`` the
                money spent plus the request's expected cost no longer fits: the retry is
                not sent, and the reservation is dropped.
        """
        with self._settled:
            self.failed_calls += 1
            if self.stopped is None and self.max_calls is not None \
                    and self.calls >= self.max_calls:
                self.stopped = (f"--max-calls {self.max_calls} reached: {self.calls} judge "
                                "request(s) sent (retries included); the run stops here")
            if self.stopped is None and self.max_cost is not None and \
                    self.spent_usd + reservation.expected_usd > self.max_cost + _EPSILON_USD:
                self.stopped = (f"--max-cost ${self.max_cost:.6f} reached: "
                                f"${self.spent_usd:.6f} spent, the next retry is expected to "
                                f"cost ${reservation.expected_usd:.6f}; the run stops here")
            if self.stopped is not None:
                self._close(reservation)
                raise BudgetExhausted(self.stopped)
            self.calls += 1

    def count_retries(self, n: int) -> None:
        """Count ``n`` failed attempts the client retried without asking :meth:`retry`
        (a client passed to the judge, whose retries are known only afterwards)."""
        if n > 0:
            with self._lock:
                self.calls += n
                self.failed_calls += n

    def headroom(self) -> float | None:
        """What ``max_cost`` leaves after the money spent and the worst cases held for the
        requests in flight, in US dollars (``None``: no ``max_cost``)."""
        with self._lock:
            if self.max_cost is None:
                return None
            return self.max_cost - self.spent_usd - self.reserved_usd

    def _stop(self, reason: str) -> NoReturn:
        """Record why the run stops, wake every waiting request and raise (lock held)."""
        self.stopped = reason
        self._settled.notify_all()
        raise BudgetExhausted(reason)

    def _close(self, reservation: Reservation) -> None:
        """Drop ``reservation`` once (lock held)."""
        if not reservation.closed:
            reservation.closed = True
            self._unhold(reservation)

    def _unhold(self, reservation: Reservation) -> None:
        self.in_flight = max(0, self.in_flight - 1)
        self.reserved_usd = 0.0 if self.in_flight == 0 \
            else max(0.0, self.reserved_usd - reservation.worst_usd)
        self._settled.notify_all()

    def settle(self, reservation: Reservation, cost_usd: float | None) -> None:
        """Replace a reservation by the real cost of the reply (``None``: no price)."""
        with self._settled:
            if cost_usd is None:
                self.unpriced_calls += 1
            else:
                self.spent_usd += cost_usd
            self._close(reservation)

    def release(self, reservation: Reservation, *, sent: bool = True,
                refused: bool = False) -> None:
        """Drop a reservation whose request failed (no reply, nothing billed).

        ``sent=False``: the request failed on this machine before it was sent; it is not
        counted at all. ``refused``: the API refused the request's credentials (401)
        without doing any work; it is counted as refused, not as sent. Neither counts
        against ``max_calls``.
        """
        with self._settled:
            if reservation.closed:  # dropped by retry(): its attempts are counted
                return
            if not sent or refused:
                self.calls = max(0, self.calls - 1)
            if refused and sent:
                self.refused_calls += 1
            elif sent:
                self.failed_calls += 1
            self._close(reservation)

    # ------------------------------------------------------------------ counting
    def note_cached(self) -> None:
        """Count one grade served from the cache."""
        with self._lock:
            self.cached += 1

    def note_planned(self, key: str, estimated_usd: float | None,
                     worst_usd: float | None) -> None:
        """Dry run: count one grade that would be requested (a key is counted once)."""
        with self._lock:
            if key in self.planned_keys:
                self.cached += 1  # the first request would have stored it
                return
            self.planned_keys.add(key)
            if estimated_usd is None or worst_usd is None:
                self.unpriced_planned += 1
            else:
                self.estimated_usd += estimated_usd
                self.worst_usd += worst_usd

    def report(self) -> dict[str, Any]:
        """The counters as a JSON-ready dict (money in US dollars)."""
        with self._lock:
            out: dict[str, Any] = {
                "dry_run": self.dry_run,
                "cached": self.cached,
                "max_calls": self.max_calls,
                "max_cost_usd": self.max_cost,
                "stopped": self.stopped,
            }
            if self.dry_run:
                out["would_request"] = len(self.planned_keys)
                out["estimated_cost_usd"] = None if self.unpriced_planned else self.estimated_usd
                out["max_estimated_cost_usd"] = None if self.unpriced_planned \
                    else self.worst_usd
                out["unpriced"] = self.unpriced_planned
            else:
                out["requests"] = self.calls
                out["failed_requests"] = self.failed_calls
                out["refused_requests"] = self.refused_calls
                out["spent_usd"] = self.spent_usd
                out["unpriced_replies"] = self.unpriced_calls
            return out

    def describe(self) -> str:
        """A short human-readable summary (one line per fact)."""
        r = self.report()
        if self.dry_run:
            lines = [f"judge dry run: {r['cached']} grade(s) cached, "
                     f"{r['would_request']} would be requested"]
            if r["would_request"]:
                if r["estimated_cost_usd"] is None:
                    lines.append(f"estimated cost unknown: {r['unpriced']} grade(s) have no "
                                 "price for their model")
                else:
                    lines.append(f"estimated cost ${r['estimated_cost_usd']:.4f} "
                                 f"(at most ${r['max_estimated_cost_usd']:.4f})")
            return "\n".join(lines)
        lines = [f"judge: {r['requests']} request(s) sent ({r['failed_requests']} failed), "
                 f"{r['cached']} grade(s) from the cache, ${r['spent_usd']:.4f} spent"]
        if r["refused_requests"]:
            lines.append(f"{r['refused_requests']} request(s) refused by the API for their "
                         "credentials (401): not billed, not counted as sent")
        if r["unpriced_replies"]:
            lines.append(f"{r['unpriced_replies']} reply(ies) had no price for their model")
        if r["stopped"]:
            lines.append(f"stopped: {r['stopped']}")
        return "\n".join(lines)


#: The judges' account in a run's spending (:mod:`evalkit.execute.spending`).
ACCOUNT = "judge"


def active_budget() -> Budget | None:
    """The budget every judge without its own ``budget=`` consults: the judges' account
    in the innermost spending (:func:`evalkit.execute.spending.current_spending`), the one
    :func:`use_budget` installs or the one ``evalkit run --max-calls/--max-cost/--dry-run``
    makes, whose budget is made on first use from its limits and shared by every judge of
    the run; ``None`` outside both.

    It is process-wide (not per thread), so worker threads of a run share it.
    """
    spending = current_spending()
    if spending is None:
        return None
    return spending.account(ACCOUNT, lambda limits: Budget(
        max_calls=limits.max_calls, max_cost=limits.max_cost, dry_run=limits.dry_run))


@contextmanager
def use_budget(budget: Budget) -> Iterator[Budget]:
    """Make ``budget`` the one every judge without its own ``budget=`` consults (a run's
    spending whose judges' account it is)."""
    spending = Spending(SpendingLimits(budget.max_calls, budget.max_cost, budget.dry_run))
    spending.account(ACCOUNT, lambda limits: budget)
    with use_spending(spending):
        yield budget
