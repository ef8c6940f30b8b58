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

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from evalkit.io.limits import MAX_WAIT_S

#: The statuses a rate-limit retry applies to.
RATE_LIMIT_STATUSES = frozenset({429, 529})
#: Backoff without a header: the first wait and the longest (seconds), as the OpenAI SDK.
INITIAL_BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0


def retry_after_s(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait a rate-limit answer asks for, in seconds (``>= 0``), or ``None``.

    Reads ``retry-after-ms`` (a number of milliseconds) first, then ``Retry-After``: a
    number of seconds (``"2"``, ``"0.25"``) or an HTTP date (``"Wed, 21 Oct 2026 07:28:00
    GMT"``, a wait of that date minus ``now``, Unix seconds, default ``time.time()``).
    A negative, non-finite or unreadable value counts as absent.
    """
    for key, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        text = (headers.get(key) or "").strip()
        if not text:
            continue
        try:
            value = float(text) * scale
        except ValueError:
            if scale != 1.0:
                continue
            try:
                when = parsedate_to_datetime(text)
            except (TypeError, ValueError, IndexError):
                continue
            if when.tzinfo is None:
                continue
            value = when.timestamp() - (time.time() if now is None else now)
            value = max(value, 0.0)
        if math.isfinite(value) and value >= 0:
            return value
    return None


def backoff_s(retry: int, rand: float | None = None, *,
              initial: float = INITIAL_BACKOFF_S) -> float:
    """The jittered exponential wait before retry number ``retry`` (1, 2, ...):
    ``min(initial x 2^(retry-1), max(initial, 8)) x (1 - 0.25 x rand)`` seconds, ``rand``
    uniform in [0, 1) by default (the OpenAI SDK's rule, whose ``initial`` is 0.5 s).

    A rate-limit answer without a server's wait uses the default ``initial``; a 5xx or a
    transport failure starts from the target's ``retry_backoff_s``
    (:class:`evalkit_http.attempts.Attempts`). An ``initial`` over 8 s is never doubled.
    """
    u = random.random() if rand is None else rand
    cap = max(initial, MAX_BACKOFF_S)
    return min(initial * 2.0 ** (max(retry, 1) - 1), cap) * (1 - 0.25 * u)


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
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not math.isfinite(value) or not 0 < value <= MAX_WAIT_S:
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
