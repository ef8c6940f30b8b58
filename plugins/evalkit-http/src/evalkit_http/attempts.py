"""The attempt sequence of one case: which outcome is retried, after how long, and when
the case gives up. Shared by :class:`~evalkit_http.target.HttpTarget` (threads) and
:class:`~evalkit_http.async_target.AsyncHttpTarget` (an event loop), which only differ in
how they send a request and how they sleep.

The rules (docs/runner.md, "Retry policy"):

* a 5xx answer or a transport failure (any timeout of the whole attempt included) is
  retried up to ``retries`` times (default once), after a jittered exponential backoff
  from ``retry_backoff_s`` (:func:`~evalkit_http.ratelimit.backoff_s`), as long as the
  retry can start before the case's deadline (``rate_limit_total_s``, when the
  rate-limit retry is on);
* with the rate-limit retry on (:class:`~evalkit_http.ratelimit.RateLimitPolicy`), a 429
  or 529 is retried up to ``rate_limit_retries`` times, after the server's wait (which
  pauses the whole target) or a jittered backoff, as long as the next request can start
  within ``rate_limit_total_s`` of the case's start;
* anything else ends the sequence (a 2xx is read, any other answer is an error).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from evalkit.execute.pacing import Pacing
from evalkit_http.ratelimit import RateLimitPolicy, backoff_s


@dataclass(frozen=True)
class Step:
    """What follows an attempt: ``done`` (read the answer), ``error`` (give up with this
    message), or a retry after ``delay_s`` seconds of this call's own sleep (a server's
    wait is kept by the gate instead)."""

    done: bool = False
    error: str | None = None
    delay_s: float = 0.0
    note: str = ""


class Attempts:
    """The counters and the rules of one case's attempt sequence.

    Attributes:
        requests: requests sent so far.
        rate_limited: rate-limit answers (429/529) received.
        server_retries: retries after a 5xx or a transport failure so far.
        waited_s: seconds spent waiting (the target's pause, rate-limit waits and the
            5xx backoff), measured by the caller through :meth:`add_wait`.
    """

    def __init__(self, policy: RateLimitPolicy, gate: Pacing, retry_backoff_s: float,
                 retries: int = 1) -> None:
        self.policy, self.gate, self.retry_backoff_s = policy, gate, retry_backoff_s
        self.retries = retries
        self.start = time.monotonic()
        self.latest = self.start + policy.total_s if policy.enabled else float("inf")
        self.requests = 0
        self.rate_limited = 0
        self.server_retries = 0
        self.waited_s = 0.0

    def add_wait(self, seconds: float) -> None:
        self.waited_s += max(0.0, seconds)

    def paused_too_long(self) -> str:
        """The error of a case whose next request could not start in time."""
        return (f"rate limited: the target is paused until after rate_limit_total_s "
                f"({self.policy.total_s:g} s) from the case's start; "
                f"{self.rate_limited} rate-limit answer(s)")

    def failed(self, problem: str) -> Step:
        """After a transport failure (or a 5xx, through :meth:`answered`)."""
        if self.server_retries >= self.retries:
            if not self.retries:
                return Step(error=f"{problem} (not retried: retries is 0)")
            times = "once" if self.retries == 1 else f"{self.retries} times"
            return Step(error=f"{problem}, still after retrying {times} (retries: "
                        f"{self.retries})")
        self.server_retries += 1
        wait = backoff_s(self.server_retries, initial=self.retry_backoff_s)
        if time.monotonic() + wait > self.latest:
            return Step(error=f"{problem}; retrying in {wait:.3g} s would pass "
                        f"rate_limit_total_s ({self.policy.total_s:g} s)")
        return Step(delay_s=wait, note=f"{problem}; retry {self.server_retries} of "
                    f"{self.retries} in {wait:.3g} s")

    def answered(self, status: int, reason: str, headers: Mapping[str, str]) -> Step:
        """After an answer with ``status`` (its ``headers`` give a server's wait)."""
        problem = f"HTTP {status} {reason}".rstrip()
        if self.policy.applies(status):
            self.rate_limited += 1
            if self.rate_limited > self.policy.retries:
                return Step(error=f"rate limited: {problem} on {self.rate_limited} "
                            f"request(s), more than rate_limit_retries "
                            f"({self.policy.retries}) retries")
            wait, from_server = self.policy.wait_for(headers, self.rate_limited)
            if time.monotonic() + wait > self.latest:
                return Step(error=f"rate limited: {problem}; waiting {wait:.3g} s more "
                            f"would pass rate_limit_total_s ({self.policy.total_s:g} s) "
                            f"after {self.rate_limited} rate-limit answer(s)")
            if from_server:
                self.gate.pause(wait)  # no call of this target starts before it
                return Step(note=f"{problem}; the target pauses {wait:.3g} s (Retry-After)")
            return Step(delay_s=wait, note=f"{problem}; retrying in {wait:.3g} s (backoff)")
        if status >= 500:
            return self.failed(problem)
        return Step(done=True)


__all__ = ["Attempts", "Step"]
