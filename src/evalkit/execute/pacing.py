"""How many target calls may start, and when: adaptive concurrency and rate limits.

The rules, as docs/runner.md (Rate limits) gives them: the calls in flight adapt (AIMD:
a call that met a rate-limit answer halves the limit, at most once per round trip, RFC
5681's one decrease per window; each success raises it by ``1 / limit``, up to
``max_concurrency``); a server's ``Retry-After`` pauses every start
(:meth:`Pacing.pause`); ``requests_per_minute`` and ``tokens_per_minute`` are token
buckets shared by every worker, each holding at most one second's worth, the second
applied after the fact from the tokens a response reports (:func:`reported_tokens`;
:meth:`Pacing.token_limit_note` says when none did). A worker takes its next case before
it waits for a start, so the run ends when its last call does. Both limits have a floor
(:data:`MIN_REQUESTS_PER_MINUTE`, :data:`MIN_TOKENS_PER_MINUTE`) so that a slip of units
is refused instead of making the run wait for ever.

:class:`Pacing` is the limit and the buckets of one run; :meth:`Pacing.admit` (threads)
and :meth:`Pacing.admit_async` (an event loop) wait for a start, :meth:`Pacing.release`
reports how a call went. The arithmetic is under one lock, so threads and an event loop
can share it.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from evalkit.data.usage_keys import TOKENS_IN_KEY, TOKENS_OUT_KEY
from evalkit.stats.numeric import finite_real

if TYPE_CHECKING:
    import asyncio

#: The factor a rate-limit answer multiplies the concurrency limit by.
DECREASE = 0.5
#: The lowest ``requests_per_minute``: one call an hour.
MIN_REQUESTS_PER_MINUTE = 1 / 60
#: The lowest ``tokens_per_minute``: one token a second.
MIN_TOKENS_PER_MINUTE = 60.0
#: ``{key: its floor}`` for the messages of every place that takes the limits.
RATE_FLOORS = {"requests_per_minute": MIN_REQUESTS_PER_MINUTE,
               "tokens_per_minute": MIN_TOKENS_PER_MINUTE}
#: How often a waiting worker looks at the stop flag (seconds).
_POLL_S = 0.05


def rate_floor_text(key: str) -> str:
    """``"at least 1/60 (one call an hour)"``: the floor of the limit ``key``, in words."""
    return ("at least 1/60 (one call an hour)" if key == "requests_per_minute"
            else "at least 60 (one token a second)")


def check_rate(key: str, value: object) -> float | None:
    """``value`` of the limit ``key`` (``requests_per_minute`` or ``tokens_per_minute``)
    as a float, ``None`` for no limit.

    Raises:
        ValueError: not a finite number (booleans and text refused), or below the floor
            of :data:`RATE_FLOORS`; the message names ``key`` and the floor.
    """
    if value is None:
        return None
    rate = finite_real(value)
    if rate is None or rate <= 0:
        raise ValueError(f"{key} must be a positive number, {rate_floor_text(key)}, "
                         f"got {value!r}")
    if rate < RATE_FLOORS[key]:
        raise ValueError(f"{key} {value!r} is below the floor: it must be "
                         f"{rate_floor_text(key)}, or left out for no limit; a lower "
                         "limit would keep the run waiting for hours between calls")
    return rate


def reported_tokens(meta: Mapping[str, Any]) -> int:
    """The tokens a response reports in its ``meta``, the first of: ``tokens`` (a
    number); ``tokens_in + tokens_out`` (the keys a target reports a call's tokens
    under, :data:`evalkit.data.usage_keys.TOKENS_IN_KEY`, as ``HttpTarget(meta_keys=...)``
    copies them in docs/text.md); ``usage`` holding ``total_tokens`` (OpenAI) or ``input_tokens +
    output_tokens`` (Anthropic; ``prompt_tokens + completion_tokens`` too); 0 when none
    is reported (a value that is not a finite number > 0 counts as 0)."""
    def number(value: Any) -> int:
        v = finite_real(value)
        return int(v) if v is not None and v > 0 else 0

    if "tokens" in meta:
        return number(meta["tokens"])
    if TOKENS_IN_KEY in meta or TOKENS_OUT_KEY in meta:
        return number(meta.get(TOKENS_IN_KEY)) + number(meta.get(TOKENS_OUT_KEY))
    usage = meta.get("usage")
    if isinstance(usage, Mapping):
        if "total_tokens" in usage:
            return number(usage["total_tokens"])
        return sum(number(usage.get(k)) for k in (
            "input_tokens", "output_tokens", "prompt_tokens", "completion_tokens"))
    return 0


class _Bucket:
    """A token bucket: ``rate`` tokens a second, at most ``capacity`` held; it may go
    below zero when tokens are taken after the fact."""

    def __init__(self, per_minute: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate)
        self.level = self.capacity
        self.stamp = time.monotonic()

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, need: float, now: float) -> float:
        """Seconds until the bucket holds ``need`` (0: now)."""
        self.refill(now)
        return 0.0 if self.level >= need else (need - self.level) / self.rate


class Pacing:
    """The concurrency limit and the rate buckets of one run (see the module docstring).

    Args:
        max_concurrency: the ceiling of the limit (>= 1).
        requests_per_minute: ``None`` for no request limit, else at least
            :data:`MIN_REQUESTS_PER_MINUTE`.
        tokens_per_minute: ``None`` for no token limit, else at least
            :data:`MIN_TOKENS_PER_MINUTE`.

    Raises:
        ValueError: a limit that is not a positive number, or below its floor
            (:func:`check_rate`).
    """

    def __init__(self, max_concurrency: int, requests_per_minute: float | None = None,
                 tokens_per_minute: float | None = None) -> None:
        requests_per_minute = check_rate("requests_per_minute", requests_per_minute)
        tokens_per_minute = check_rate("tokens_per_minute", tokens_per_minute)
        self.max_concurrency = max_concurrency
        self.limit = float(max_concurrency)
        self.in_flight = 0
        self.lowest = max_concurrency
        self.decreases = 0
        self._last_decrease = -math.inf
        self._requests = None if requests_per_minute is None else _Bucket(requests_per_minute)
        self._tokens = None if tokens_per_minute is None else _Bucket(tokens_per_minute)
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._waiters: list[asyncio.Future[None]] = []
        self._paused_until = 0.0
        self.answers = 0  # calls whose answer was seen (release / observe)
        self.token_answers = 0  # those whose answer reported its tokens

    def pause(self, seconds: float) -> None:
        """No call starts within ``seconds`` from now (a later pause already set stays):
        a server's ``Retry-After``."""
        until = time.monotonic() + seconds
        with self._lock:
            self._paused_until = max(self._paused_until, until)

    @property
    def current(self) -> int:
        """The number of calls that may be in flight now."""
        return max(1, min(self.max_concurrency, int(self.limit)))

    def _try_start(self, latest: float) -> tuple[bool, float]:
        """Under the lock: ``(True, 0)`` when a start was taken; else ``(False, wait)``,
        the longest wait before looking again (``-1``: not before ``latest``)."""
        now = time.monotonic()
        if self._paused_until > latest or now > latest:
            return False, -1.0
        if now < self._paused_until:
            return False, min(self._paused_until - now, _POLL_S)
        if self.in_flight >= self.current:
            return False, _POLL_S
        wait = 0.0
        if self._tokens is not None:
            wait = max(wait, self._tokens.wait_for(1e-9, now))
        if self._requests is not None:
            wait = max(wait, self._requests.wait_for(1.0, now))
        if wait > 0:
            return False, min(wait, _POLL_S)
        if self._requests is not None:
            self._requests.level -= 1.0
        self.in_flight += 1
        return True, 0.0

    def admit(self, stop: threading.Event | None = None, latest: float = math.inf
              ) -> float | None:
        """Wait until a call may start (a worker thread): its start time
        (``time.monotonic``) to give :meth:`release`, or ``None`` when ``stop`` was set
        first, or the call could not start by ``latest`` (it must not start)."""
        with self._cond:
            while stop is None or not stop.is_set():
                started, wait = self._try_start(latest)
                if started:
                    return time.monotonic()
                if wait < 0:
                    return None
                # in slices of at most _POLL_S until a start is free, `stop` is set or
                # `latest` passes: a start frees when a call ends, within its target's bounds
                self._cond.wait(wait)  # a release wakes it at once
        return None

    def try_admit(self) -> float | None:
        """:meth:`admit` without waiting (a driver that hands calls to other processes):
        the start time, or ``None`` when no call may start now."""
        with self._lock:
            started, _ = self._try_start(math.inf)
        return time.monotonic() if started else None

    async def admit_async(self, stopped: Callable[[], bool] | None = None,
                          latest: float = math.inf) -> float | None:
        """:meth:`admit` for a task of an event loop (whose tasks also call
        :meth:`release`); ``stopped()`` says whether to give up."""
        import asyncio  # only async runs need it (it imports a thread pool)

        while stopped is None or not stopped():
            with self._lock:
                started, wait = self._try_start(latest)
            if started:
                return time.monotonic()
            if wait < 0:
                return None
            # as admit(): a slice of at most _POLL_S, then look again
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter, wait)
        return None

    def release(self, started: float, rate_limited: int = 0, tokens: int = 0) -> None:
        """A call that started at ``started`` ended, having met ``rate_limited`` rate-limit
        answers and used ``tokens`` (both as reported): :meth:`finish` and
        :meth:`observe` at once."""
        self._settle(1, (started, rate_limited, tokens))

    def finish(self, calls: int = 1) -> None:
        """``calls`` calls ended, what they met not known yet (a remote executor learns
        that a task is over before its rows arrive): their slots are free now, and
        :meth:`observe` follows for each."""
        if calls > 0:
            self._settle(calls, None)

    def observe(self, started: float, rate_limited: int = 0, tokens: int = 0) -> None:
        """What a call that :meth:`finish` already counted met (see :meth:`release`)."""
        self._settle(0, (started, rate_limited, tokens))

    def _settle(self, ended: int, seen: tuple[float, int, int] | None) -> None:
        with self._lock:
            self.in_flight -= ended
            if seen is not None:
                self._adapt(*seen)
            self._cond.notify(max(1, ended))
            waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _adapt(self, started: float, rate_limited: int, tokens: int) -> None:
        """Under the lock: the token bucket and the window after one call's answer."""
        self.answers += 1
        self.token_answers += tokens > 0
        if tokens and self._tokens is not None:
            self._tokens.refill(time.monotonic())
            self._tokens.level -= tokens
        if rate_limited > 0:
            if started > self._last_decrease:  # one decrease per round trip
                # half of what was in flight (this call included), when that is
                # fewer than the limit allowed
                self.limit = max(1.0, min(self.limit, self.in_flight + 1) * DECREASE)
                self._last_decrease = time.monotonic()
                self.decreases += 1
                self.lowest = min(self.lowest, self.current)
        else:
            self.limit = min(float(self.max_concurrency), self.limit + 1.0 / self.limit)

    def token_limit_note(self) -> str | None:
        """A sentence when ``tokens_per_minute`` is set and calls were answered but none
        reported its tokens (:func:`reported_tokens`): the limit then never acted.
        ``None`` otherwise."""
        with self._lock:
            if self._tokens is None or not self.answers or self.token_answers:
                return None
            return (f"tokens_per_minute {self._tokens.rate * 60:g} did not act: none of "
                    f"the {self.answers} answered call(s) reported its tokens (meta "
                    "'tokens', 'tokens_in' + 'tokens_out', or 'usage'); report them, or "
                    "drop the limit")

    def summary(self) -> dict[str, int]:
        """``{"max_concurrency", "lowest", "final", "decreases"}`` of the limit so far."""
        with self._lock:
            return {"max_concurrency": self.max_concurrency, "lowest": self.lowest,
                    "final": self.current, "decreases": self.decreases}


__all__ = ["DECREASE", "MIN_REQUESTS_PER_MINUTE", "MIN_TOKENS_PER_MINUTE", "RATE_FLOORS", "Pacing",
           "check_rate", "rate_floor_text", "reported_tokens"]
