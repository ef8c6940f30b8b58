"""A run's spending limits, and the protocol a paid metric follows to honour them.

``evalkit run --max-calls N``, ``--max-cost USD`` and ``--dry-run`` make one
:class:`Spending` for the run and install it (:func:`use_spending`) around the run. The
kernel spends nothing itself: a metric that pays for what it computes (an LLM judge, any
metric that calls a paid API) follows this protocol:

1. before a paid request, ask :func:`current_spending` for the run's spending (``None``:
   no limit was given) and for its account there, ``spending.account(name, make)``: the
   account ``name`` (one per kind of paid metric: every judge of a run shares
   ``"judge"``) is made on first use by ``make(spending.limits)`` and shared from then on;
2. count each request in the account, and raise :class:`SpendingLimitReached` (or a
   subclass) *before* a request that would pass ``limits.max_calls`` or
   ``limits.max_cost``: it derives from :class:`BaseException`, so the per-case handlers
   let it through, the run stops as a whole, its rows so far are kept and ``evalkit run``
   exits 3 (``--resume`` continues);
3. under ``limits.dry_run`` send nothing: count what would be requested (and what it
   would cost) and raise an ``Exception`` naming the case, which the row records;
4. give the account ``report() -> dict`` (JSON-ready, money in US dollars) and
   ``describe() -> str`` (lines for people): ``evalkit run`` prints them after the run,
   after a stop, and as the result of a dry run.

The ``evalkit-judge`` plugin's ``Budget`` is such an account; docs/plugins.md shows a
third-party one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from evalkit.stats.numeric import finite_real


@dataclass(frozen=True)
class SpendingLimits:
    """What ``evalkit run`` allows the paid metrics of one run.

    Attributes:
        max_calls: the most paid requests (``None``: no limit).
        max_cost: the most US dollars (``None``: no limit).
        dry_run: send no paid request; count what would be sent.

    Raises:
        ValueError: ``max_calls`` that is not an integer >= 0, or ``max_cost`` that is not
            a finite number >= 0.
    """

    max_calls: int | None = None
    max_cost: float | None = None
    dry_run: bool = False

    def __post_init__(self) -> None:
        calls, cost = self.max_calls, self.max_cost
        if calls is not None and (isinstance(calls, bool) or not isinstance(calls, int)
                                  or calls < 0):
            raise ValueError(f"max_calls must be an integer >= 0, got {calls!r}")
        if cost is not None and ((c := finite_real(cost)) is None or c < 0):
            raise ValueError(f"max_cost must be a finite number >= 0, got {cost!r}")


class SpendingLimitReached(BaseException):
    """Raised by a paid metric before a request that would pass a spending limit.

    A :class:`BaseException` (as :class:`KeyboardInterrupt` is), so that ``except
    Exception`` around one case does not turn it into that case's error: the run stops
    cleanly and keeps what it has.

    Attributes:
        reason: one line saying which limit stopped the run
            (``"--max-calls 4 reached: ..."``).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SpendingAccount(Protocol):
    """What a paid metric keeps in a run's :class:`Spending` (see the module docstring)."""

    def report(self) -> dict[str, Any]:
        """The account's counters, JSON-ready (money in US dollars)."""
        ...

    def describe(self) -> str:
        """The same for people: one line per fact."""
        ...


A = TypeVar("A", bound=SpendingAccount)


class Spending:
    """The limits of one run and the accounts its paid metrics opened (thread-safe).

    Args:
        limits: what the run allows.
    """

    def __init__(self, limits: SpendingLimits) -> None:
        self.limits = limits
        self._accounts: dict[str, Any] = {}
        self._lock = threading.Lock()  # held while an account is looked up or made

    def account(self, name: str, make: Callable[[SpendingLimits], A]) -> A:
        """The account ``name``, made by ``make(self.limits)`` the first time it is asked
        for; every later call, from any thread, returns the same object."""
        with self._lock:
            found = self._accounts.get(name)
            if found is None:
                found = self._accounts[name] = make(self.limits)
        return cast(A, found)

    @property
    def accounts(self) -> dict[str, SpendingAccount]:
        """``{name: account}`` in the order they were opened."""
        with self._lock:
            return dict(self._accounts)

    def report(self) -> dict[str, Any]:
        """What ``evalkit run --dry-run --json`` prints: the report of the run's one
        account; with none or several, ``{"dry_run", "max_calls", "max_cost_usd",
        "accounts": {name: report}}``."""
        accounts = self.accounts
        if len(accounts) == 1:
            return next(iter(accounts.values())).report()
        return {"dry_run": self.limits.dry_run, "max_calls": self.limits.max_calls,
                "max_cost_usd": self.limits.max_cost,
                "accounts": {name: a.report() for name, a in accounts.items()}}

    def describe(self) -> str:
        """Every account's :meth:`~SpendingAccount.describe`, one after the other; a line
        saying so when no paid metric was called."""
        accounts = self.accounts
        if accounts:
            return "\n".join(a.describe() for a in accounts.values())
        what = "nothing would be requested" if self.limits.dry_run \
            else "the spending limits did not act"
        return f"no paid metric of this run was called: {what}"


_current: list[Spending] = []
_current_lock = threading.Lock()  # held for the list's update only


def current_spending() -> Spending | None:
    """The spending installed by the innermost :func:`use_spending` block, if any. It is
    process-wide (not per thread), so every worker thread of a run sees it."""
    with _current_lock:
        return _current[-1] if _current else None


@contextmanager
def use_spending(spending: Spending) -> Iterator[Spending]:
    """Make ``spending`` the run's for the block (:func:`current_spending`)."""
    with _current_lock:
        _current.append(spending)
    try:
        yield spending
    finally:
        with _current_lock:
            _current.remove(spending)


__all__ = ["Spending", "SpendingAccount", "SpendingLimitReached", "SpendingLimits",
           "current_spending", "use_spending"]
