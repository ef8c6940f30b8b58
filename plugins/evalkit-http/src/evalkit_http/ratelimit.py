"""Rate-limit answers (429, 529): how long to wait, and the pause shared by a whole target.

With ``retry_rate_limited=True`` an HTTP target retries an answer ``429 Too Many
Requests`` or ``529`` (Anthropic's "overloaded") as the official OpenAI and Anthropic
SDKs do:

* the wait is the server's: ``retry-after-ms`` (milliseconds, the SDKs' header) or else
  ``Retry-After`` (seconds, decimals accepted, or an HTTP date, RFC 9110 section 10.2.3),
  capped at ``retry_after_max_s``;
* without a usable header, jittered exponential backoff: ``min(0.5 x 2^(n-1), 8) x
  (1 - 0.25 x u)`` seconds before the n-th retry, ``u`` uniform in [0, 1) (the OpenAI
  SDK's ``INITIAL_RETRY_DELAY``, ``MAX_RETRY_DELAY`` and jitter);
* a server's wait pauses the whole target: no call of that target sends a request
  before it ends, not only the call that was answered 429; a backoff without a header
  delays only the call that met it. The target's requests (retries included) pass one
  :class:`evalkit.execute.pacing.Pacing`, whose limit on requests in flight halves at a
  rate-limit answer and grows back with successes, so calls held by a pause do not all
  rush back at once and each spend a retry on a new 429.

A case stops retrying after ``rate_limit_retries`` retries of rate-limit answers, or
when the next request could not start within ``rate_limit_total_s`` of the case's start.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from evalkit.io.limits import MAX_WAIT_S
from evalkit.io.retry_waits import INITIAL_BACKOFF_S as INITIAL_BACKOFF_S
from evalkit.io.retry_waits import MAX_BACKOFF_S as MAX_BACKOFF_S
from evalkit.io.retry_waits import backoff_s as backoff_s
from evalkit.io.retry_waits import retry_after_s as retry_after_s
from evalkit.stats.numeric import finite_real

#: The statuses a rate-limit retry applies to.
RATE_LIMIT_STATUSES = frozenset({429, 529})
@dataclass(frozen=True)
class RateLimitPolicy:
    """The bounds of the rate-limit retry of one target (see the module docstring).

    Attributes:
        enabled: retry 429 and 529 at all (``retry_rate_limited``).
        retries: the most rate-limit retries of one case (so at most ``retries + 1``
            rate-limited requests).
        total_s: no request of a case starts later than this many seconds after the case
            started (its pauses included).
        retry_after_max_s: the cap on a server's wait.
    """

    enabled: bool = False
    retries: int = 20
    total_s: float = 120.0
    retry_after_max_s: float = 60.0

    def __post_init__(self) -> None:
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) \
                or self.retries < 0:
            raise ValueError(f"rate_limit_retries must be an integer >= 0, got {self.retries!r}")
        for key, value in (("rate_limit_total_s", self.total_s),
                           ("retry_after_max_s", self.retry_after_max_s)):
            if (seconds := finite_real(value)) is None or not 0 < seconds <= MAX_WAIT_S:
                raise ValueError(f"{key} must be a positive number of seconds, at most "
                                 f"{MAX_WAIT_S:g} (one hour), got {value!r}")

    def applies(self, status: int) -> bool:
        """Whether an answer with ``status`` is retried as a rate limit."""
        return self.enabled and status in RATE_LIMIT_STATUSES

    def wait_for(self, headers: Mapping[str, str], retry: int) -> tuple[float, bool]:
        """``(seconds, from_server)``: the wait before rate-limit retry ``retry``."""
        asked = retry_after_s(headers)
        if asked is not None:
            return min(asked, self.retry_after_max_s), True
        return backoff_s(retry), False


__all__ = [
    "INITIAL_BACKOFF_S",
    "MAX_BACKOFF_S",
    "RATE_LIMIT_STATUSES",
    "RateLimitPolicy",
    "backoff_s",
    "retry_after_s",
]
