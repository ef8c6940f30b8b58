"""How long to wait before retrying a request: the server's ``Retry-After``, or a jittered
exponential backoff (the rule of the official OpenAI and Anthropic SDKs).

One implementation for every client evalkit's plugins make: the HTTP target's rate-limit
and 5xx retries (``evalkit_http``) and the LLM judge's providers (``evalkit_judge``).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

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

    The HTTP target's rate-limit retry uses the default ``initial`` and its 5xx retry
    the target's ``retry_backoff_s``; the LLM judge's providers use the default for
    every retry. An ``initial`` over 8 s is never doubled.
    """
    u = random.random() if rand is None else rand
    cap = max(initial, MAX_BACKOFF_S)
    return min(initial * 2.0 ** (max(retry, 1) - 1), cap) * (1 - 0.25 * u)


__all__ = ["INITIAL_BACKOFF_S", "MAX_BACKOFF_S", "backoff_s", "retry_after_s"]
