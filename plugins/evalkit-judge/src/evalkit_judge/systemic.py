"""When a judge's failed requests mean the judge itself cannot work (an endpoint that
refuses connections or has no DNS name, a model that does not exist, a parameter every
request carries), not one case's trouble.

:class:`FailureStreak` watches the requests a judge sends (grades and pairwise verdicts
alike: :meth:`LLMJudge.send <evalkit_judge.judge.LLMJudge.send>`). It stops the judge,
as a refused API key stops it (``RunAborted(JudgeUnavailable(...))``, checked before
every later request and every retry), when

- the first :data:`SYSTEMIC_FAILURES` requests that ended all failed the same way
  (same exception type, same HTTP status or transport failure) and none succeeded, or
- :data:`SYSTEMIC_FAILURES` requests in a row failed to reach the server the same way
  (a transport failure: connection refused, a name that does not resolve, a timeout),
  at any point: the endpoint went away.

A failure that differs from case to case (a 400 for one case's content among replies)
never stops the judge: each such case keeps its error.
"""

from __future__ import annotations

import threading

from evalkit.execute.scoring import RunAborted
from evalkit_judge.budget import JudgeUnavailable

#: Requests failing the same way that stop the judge (see the module's docstring).
SYSTEMIC_FAILURES = 3


def failure_kind(exc: BaseException) -> tuple[str, int | None, str]:
    """What a failed request is compared on: ``(exception type, HTTP status or None,
    the transport error's name)``; the last is the message's leading ``Name:`` for a
    failure without a status (``ConnectError``), else ``""``."""
    status = getattr(exc, "status_code", None)
    status = status if isinstance(status, int) else None
    transport = ""
    if status is None:
        head = str(exc).split(":", 1)[0].strip()
        transport = head if head.isidentifier() else ""
    return type(exc).__name__, status, transport


class FailureStreak:
    """The failed requests of one judge, and the stop they mean (thread-safe)."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._lock = threading.Lock()
        self._succeeded = False
        self._kind: tuple[str, int | None, str] | None = None
        self._count = 0
        self._stop: str | None = None

    def stopped(self) -> RunAborted | None:
        """The stop decided earlier, if any (checked before every request)."""
        with self._lock:
            return None if self._stop is None else RunAborted(JudgeUnavailable(self._stop))

    def success(self) -> None:
        """A request got a reply."""
        with self._lock:
            self._succeeded = True
            self._kind, self._count = None, 0

    def failure(self, exc: BaseException, message: str) -> RunAborted | None:
        """A request failed with ``exc`` (``message`` says which and why): the stop it
        completes, or ``None`` when it is one case's failure so far."""
        kind = failure_kind(exc)
        with self._lock:
            if self._stop is not None:
                return RunAborted(JudgeUnavailable(self._stop))
            if kind == self._kind:
                self._count += 1
            else:
                self._kind, self._count = kind, 1
            transport = kind[1] is None
            if self._count < SYSTEMIC_FAILURES or (self._succeeded and not transport):
                return None
            which = (f"the first {self._count} requests" if not self._succeeded
                     else f"{self._count} requests in a row")
            self._stop = (
                f"judge {self.model!r}: {which} failed the same way ({message}); the "
                "judge cannot be reached or refuses every request, so no more requests "
                "are sent: check its base_url, model and network, then run the same "
                "command again (what was received is in the judge's cache)")
            return RunAborted(JudgeUnavailable(self._stop))


__all__ = ["SYSTEMIC_FAILURES", "FailureStreak", "failure_kind"]
