"""The opt-in rate-limit retry against real 127.0.0.1 servers.

Expected waits come from the headers the server sent (read here with the standard
library, not with the target's parser), the backoff formula of the OpenAI SDK written
out by hand, and the bounds in docs/runner.md. "No call starts before its Retry-After"
is observed at the transport, below the target: every request's send time, and for every
429 the time it reached the client plus the wait its header asked for.
"""

from __future__ import annotations

import email.utils
import statistics
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from evalkit_http import HttpTarget
from evalkit_http.ratelimit import backoff_s, retry_after_s
from evalkit_http.testing import RateLimit, Reply, ScriptedServer

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import TargetError, TargetResponse
from evalkit.execute.pacing import Pacing
from evalkit.execute.target_runner import evaluate

#: one of the suite's longest modules: handed to a worker first (tests/conftest.py)
pytestmark = pytest.mark.schedule_first

CASE = GoldenCase("q1", "what is alpha")
OK = Reply(200, {"ranked_ids": ["d1"]})


def limited(seconds: str) -> Reply:
    return Reply(429, {"error": "slow down"}, headers={"Retry-After": seconds})


# ------------------------------------------------------------------ the headers
def test_retry_after_in_seconds_milliseconds_and_as_an_http_date() -> None:
    assert retry_after_s({"retry-after": "2"}) == 2.0
    assert retry_after_s({"retry-after": "0.25"}) == 0.25
    assert retry_after_s({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5  # ms first
    now = 1_800_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)  # 30 s later, RFC 9110 format
    assert retry_after_s({"retry-after": date}, now=now) == pytest.approx(30.0)
    past = email.utils.formatdate(now - 30, usegmt=True)
    assert retry_after_s({"retry-after": past}, now=now) == 0.0
    for junk in ("", "soon", "-1", "nan", "inf"):
        assert retry_after_s({"retry-after": junk}) is None, junk
    assert retry_after_s({}) is None


def test_the_backoff_is_the_sdks_jittered_doubling() -> None:
    # min(0.5 x 2^(n-1), 8) x (1 - 0.25 u)
    assert [backoff_s(n, 0.0) for n in (1, 2, 3, 4, 5, 6, 9)] == [0.5, 1, 2, 4, 8, 8, 8]
    assert backoff_s(1, 1.0) == 0.375 and backoff_s(3, 0.5) == 2 * 0.875


# ------------------------------------------------------------------ one call
def test_the_default_still_never_retries_a_429_and_treats_529_as_a_5xx() -> None:
    with ScriptedServer([limited("0"), OK]) as server, \
            HttpTarget(server.url, retry_backoff_s=0) as t, \
            pytest.raises(TargetError, match=r"HTTP 429 .*not retried.*1 request\b"):
        t.invoke(CASE)
    with ScriptedServer([Reply(529), OK]) as server, \
            HttpTarget(server.url, retry_backoff_s=0) as t:
        response = t.invoke(CASE)
    assert len(server.requests) == 2 and response.requests == 2
    assert "wait_ms" not in response.meta  # without the opt-in, a row has no wait_ms


def test_a_429_is_retried_after_its_retry_after() -> None:
    with ScriptedServer([limited("0.4"), Reply(529, headers={"Retry-After": "0.2"}), OK]
                        ) as server, HttpTarget(server.url, retry_rate_limited=True) as t:
        start = time.monotonic()
        response = t.invoke(CASE)
        elapsed = time.monotonic() - start
    assert list(response.ranked_ids) == ["d1"]
    assert response.requests == 3 and response.rate_limited == 2
    # 0.4 s + 0.2 s, as the headers asked: the wait is counted from when the case starts
    # waiting, a moment after the reply that set the deadline (up to ~1 ms short); that no
    # request started early is the `elapsed` check below
    assert response.meta["wait_ms"] >= 600.0 - 5.0
    assert response.latency_ms >= response.meta["wait_ms"]  # latency spans the waits
    assert elapsed >= 0.6


def test_without_a_header_the_wait_is_the_jittered_backoff() -> None:
    with ScriptedServer([Reply(429), Reply(429), OK]) as server, \
            HttpTarget(server.url, retry_rate_limited=True) as t:
        response = t.invoke(CASE)
    # 0.5 x (1 - 0.25 u) + 1.0 x (1 - 0.25 u): between 1.125 s and 1.5 s
    assert 1125.0 <= response.meta["wait_ms"] <= 1500.0 + 50.0
    assert response.requests == 3


def test_the_retries_are_bounded_by_count_and_by_total_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedServer([limited("0")]) as server, \
            HttpTarget(server.url, retry_rate_limited=True, rate_limit_retries=3) as t, \
            pytest.raises(TargetError) as info:
        t.invoke(CASE)
    assert len(server.requests) == 4  # the first request and 3 retries
    assert "rate limited: HTTP 429 Too Many Requests on 4 request(s), more than " \
        "rate_limit_retries (3) retries (4 requests to" in str(info.value)
    assert info.value.requests == 4 and info.value.rate_limited == 4
    with ScriptedServer([limited("5")]) as server, \
            HttpTarget(server.url, retry_rate_limited=True, rate_limit_total_s=2) as t:
        slept: list[float] = []  # the sleeps of this thread (the server has its own)
        real_sleep, caller = time.sleep, threading.get_ident()

        def sleep(seconds: float) -> None:
            if threading.get_ident() == caller:
                slept.append(seconds)
            real_sleep(seconds)

        monkeypatch.setattr(time, "sleep", sleep)
        with pytest.raises(TargetError, match=r"waiting 5 s more would pass "
                           r"rate_limit_total_s \(2 s\)"):
            t.invoke(CASE)
        monkeypatch.undo()
        assert slept == []  # refused at once, not after waiting
    assert len(server.requests) == 1


def test_a_retry_after_is_capped() -> None:
    with ScriptedServer([limited("3600"), OK]) as server, \
            HttpTarget(server.url, retry_rate_limited=True, retry_after_max_s=0.3) as t:
        response = t.invoke(CASE)
    assert 300.0 <= response.meta["wait_ms"] < 3_600_000
    assert len(server.requests) == 2


# ------------------------------------------------------------------ the whole target
class Recording(httpx.BaseTransport):
    """Records each request's send time and, for each 429, when it reached the client
    and when the wait its ``retry-after-ms`` asked for ends."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.sent: list[float] = []
        self.pauses: list[tuple[float, float]] = []
        self.lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.sent.append(time.monotonic())
        response = self.inner.handle_request(request)
        if response.status_code == 429:
            got = time.monotonic()
            with self.lock:
                self.pauses.append((got, got + float(response.headers["retry-after-ms"])
                                    / 1000))
        return response

    def close(self) -> None:
        self.inner.close()


class PauseWatch:
    """Every start a :class:`Pacing` grants (stamped under its lock) and every pause a
    Retry-After sets (when it was set, when it ends). A start granted after a pause was
    set and before it ended is a call started before its Retry-After: cause and effect
    under one lock, not a time window, so no result depends on the machine's load."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.grants: list[tuple[int, float]] = []
        self.pauses: list[tuple[int, float, float]] = []
        try_start, pause = Pacing._try_start, Pacing.pause

        def counted(gate: Pacing, latest: float) -> tuple[bool, float]:
            started, wait = try_start(gate, latest)  # the caller holds the gate's lock
            if started:
                self.grants.append((id(gate), time.monotonic()))
            return started, wait

        def paused(gate: Pacing, seconds: float) -> None:
            pause(gate, seconds)
            self.pauses.append((id(gate), time.monotonic(), gate._paused_until))

        monkeypatch.setattr(Pacing, "_try_start", counted)
        monkeypatch.setattr(Pacing, "pause", paused)

    def early(self) -> list[tuple[float, float, float]]:
        return [(g, set_at, end) for gate, g in self.grants
                for paused_gate, set_at, end in self.pauses
                if gate == paused_gate and set_at < g < end]


@pytest.fixture
def cases() -> Iterator[GoldenSet]:
    yield GoldenSet(GoldenCase(f"c{i:03d}", "q", expected=[f"c{i:03d}-a"])
                    for i in range(120))


def test_no_call_starts_before_a_retry_after_and_no_row_errors(
        cases: GoldenSet, monkeypatch: pytest.MonkeyPatch) -> None:
    # 30 requests a second allowed, 8 calls in flight answered in 10 ms would make ~800
    watch = PauseWatch(monkeypatch)
    limit = RateLimit(rate=30.0, burst=3.0, delay_s=0.01)
    recording = Recording()
    with ScriptedServer(handler=limit) as server, HttpTarget(
            server.url, retry_rate_limited=True, transport=recording) as t:
        run = evaluate(t, cases, ["recall@1"], max_concurrency=8, progress=False)
    statuses = [entry[1] for entry in limit.log]
    assert statuses.count(429) > 0  # the server did refuse some
    assert run.header["status"] == "complete" and run.header["errors"] == 0
    assert run.mean("recall@1") == 1.0
    assert recording.pauses and watch.pauses and watch.early() == []
    assert {gate for gate, _ in watch.grants} & {gate for gate, _, _ in watch.pauses}
    rows = run.per_query
    assert sum(r.requests or 0 for r in rows) == len(limit.log)  # every request counted
    assert sum(r.rate_limited for r in rows) == statuses.count(429)
    assert all(r.response is not None and r.response.meta["wait_ms"] >= 0 for r in rows)
    back = run.per_query[0].to_json()
    assert back["requests"] == rows[0].requests


class Counting:
    """The target as the runner sees it, counting the calls in flight at each start."""

    def __init__(self, inner: HttpTarget) -> None:
        self.inner, self.name = inner, inner.name
        self.in_flight = 0
        self.starts: list[tuple[float, int]] = []
        self.lock = threading.Lock()

    def invoke(self, case: GoldenCase) -> TargetResponse:
        with self.lock:
            self.in_flight += 1
            self.starts.append((time.monotonic(), self.in_flight))
        try:
            return self.inner.invoke(case)
        finally:
            with self.lock:
                self.in_flight -= 1


def test_the_concurrency_falls_under_429s_and_recovers_when_they_stop() -> None:
    # rate limited for the first 1.5 s (20 requests a second), unlimited after
    limit = RateLimit(rate=20.0, burst=2.0, delay_s=0.03, limited_for_s=1.5)
    cases = GoldenSet(GoldenCase(f"c{i:03d}", "q", expected=[f"c{i:03d}-a"])
                      for i in range(700))
    with ScriptedServer(handler=limit) as server, HttpTarget(
            server.url, retry_rate_limited=True) as t:
        counting = Counting(t)
        run = evaluate(counting, cases, ["recall@1"], max_concurrency=16, progress=False)
    assert run.header["errors"] == 0 and run.header["status"] == "complete"
    first = limit.log[0][0]
    free = first + 1.5  # the server stops refusing
    assert limit.log[-1][0] > free + 0.5  # the run went on well after it
    refused = [when for when, status, _, _ in limit.log if status == 429]
    start = [n for when, n in counting.starts if when < first + 0.1]
    # windows bounded by the server's own events, not by a time the machine's load moves:
    # from the first 429 to the end of the limit, and the last quarter of the calls
    limited = [n for when, n in counting.starts if refused[0] < when < free]
    end = [n for _, n in counting.starts[-len(counting.starts) // 4:]]
    # calls in flight when a call started: all 16 at first; once a 429 halved the limit,
    # 8 or fewer, and well under 16 for most of the limited time (successes between 429s
    # raise the limit one call at a time, faster on a loaded machine, whose calls take
    # longer); and 16 again before the end
    assert max(start) == 16
    assert limited and min(limited) <= 8 and statistics.median(limited) <= 12
    assert max(end) >= 15
