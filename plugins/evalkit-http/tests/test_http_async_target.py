"""AsyncHttpTarget keeps HttpTarget's rules and bounds against
real 127.0.0.1 servers: the retry policy, the deadline of a whole attempt against a
dripping server, the decoded-size cap (a gzip bomb included), secrets masked by value,
headers HTTP forbids refused when the target is built, and the rate-limit retry.

The dripping servers never finish on their own (hours), so a call that ends at all was
cut by its deadline: the lower bounds come from the deadlines in docs/runner.md
(``attempts x timeout_s + retry_backoff_s``), and the test waits with a limit far beyond
them only as a guard against a hang; how close a call comes to the bound is measured by
benchmarks/bench_http_bounds.py. Sizes come from how the bodies are built here.
"""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from pathlib import Path
from typing import Any

import httpx
import pytest
from evalkit_http import AsyncHttpTarget
from evalkit_http.testing import RateLimit, Reply, ScriptedServer

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import TargetError, TargetResponse
from evalkit.execute.pacing import Pacing
from evalkit.execute.target_runner import evaluate
from evalkit.testing import returns_within

#: one of the suite's longest modules: handed to a worker first (tests/conftest.py)
pytestmark = pytest.mark.schedule_first

CASE = GoldenCase("q1", "what is alpha")
OK = Reply(200, {"ranked_ids": ["d1", "d2"], "cost_usd": 0.25})
#: a guard against a hang: far beyond every deadline below, far below every drip
HANG_S = 120.0
#: repeats of a dripped body: hours at the drips below, so only a deadline ends a call
ENDLESS = 1000


def target(server: ScriptedServer, **kw: Any) -> AsyncHttpTarget:
    kw.setdefault("retry_backoff_s", 0.0)
    return AsyncHttpTarget(server.url + "search", name="svc", **kw)


def call(t: AsyncHttpTarget, case: GoldenCase = CASE) -> TargetResponse:
    async def go() -> TargetResponse:
        async with t:
            return await t.ainvoke(case)

    return asyncio.run(go())


def failure(t: AsyncHttpTarget) -> tuple[float, TargetError]:
    """``(seconds, the error)`` of a call that must fail, waited for at most
    :data:`HANG_S`."""
    elapsed, error = returns_within(lambda: call(t), HANG_S)
    assert isinstance(error, TargetError), error
    return elapsed, error


def test_a_200_is_extracted_with_its_meta_and_request_count() -> None:
    with ScriptedServer([OK]) as server:
        response = call(target(server, meta_keys=("cost_usd",)))
    assert list(response.ranked_ids) == ["d1", "d2"] and dict(response.meta) == {
        "cost_usd": 0.25}
    assert response.requests == 1 and server.requests[0].json() == {
        "id": "q1", "query": "what is alpha"}


def test_a_5xx_is_retried_once_and_a_4xx_never() -> None:
    with ScriptedServer([Reply(503), OK]) as server:
        assert call(target(server)).requests == 2
    assert server.requests[0].body == server.requests[1].body
    with ScriptedServer([Reply(500), Reply(502), OK]) as server:
        _, err = failure(target(server))
    assert "HTTP 502" in str(err) and "2 requests" in str(err) and len(server.requests) == 2
    with ScriptedServer([Reply(429), OK]) as server:
        _, err = failure(target(server))
    assert "HTTP 429" in str(err) and "not retried" in str(err) and len(server.requests) == 1


def test_a_dripping_body_is_cut_at_the_deadline_of_each_attempt() -> None:
    drip = Reply(200, b"x" * 60, drip_s=0.2, repeat=ENDLESS)  # hours; no read waits 1 s
    with ScriptedServer([drip]) as server:
        elapsed, err = failure(target(server, timeout_s=1.0, retry_backoff_s=0.1))
    bound = 2 * 1.0 + 0.1
    assert bound - 0.05 <= elapsed
    assert "timed out after 1 s (the whole attempt" in str(err) and "2 requests" in str(err)


def test_dripping_headers_are_cut_at_the_deadline() -> None:
    # one header byte every 0.1 s, with a header of 100,000 bytes: hours unbounded
    slow = Reply(200, {"ranked_ids": []}, header_drip_s=0.1, headers={"X-Pad": "p" * 100_000})
    with ScriptedServer([slow]) as server:
        elapsed, err = failure(target(server, timeout_s=0.5))
    assert elapsed >= 2 * 0.5 - 0.05 and "timed out" in str(err)
    assert len(server.requests) == 2


def test_the_size_cap_holds_for_declared_chunked_and_gzip_bomb_bodies() -> None:
    big = Reply(200, b"x" * (1 << 20), repeat=50)
    with ScriptedServer([big]) as server:
        _, err = failure(target(server))
    assert f"declares {50 << 20} bytes, over the cap of 10000000 bytes" in str(err)
    chunked = Reply(200, b"x" * (1 << 20), repeat=50, chunked=True)
    with ScriptedServer([chunked]) as server:
        _, err = failure(target(server, max_response_bytes=3_000_000))
    assert "sent more than 3000000 bytes, over the cap of 3000000 bytes" in str(err)
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    bomb = b"".join([packer.compress(bytes(1 << 20)) for _ in range(100)] + [packer.flush()])
    with ScriptedServer([Reply(200, bomb, headers={"Content-Encoding": "gzip"})]) as server:
        _, err = failure(target(server))
    assert "decodes to more than 10000000 bytes" in str(err) and len(server.requests) == 1


def test_secrets_are_masked_in_errors_and_bad_headers_refused_at_build() -> None:
    secret = "sk-live-0123456789abcdef"
    echo = Reply(200, f"not json: Bearer {secret}".encode())  # a server echoing the token
    with ScriptedServer([echo]) as server:
        _, err = failure(target(server, headers={"Authorization": f"Bearer {secret}"}))
    assert "the response body is not JSON" in str(err) and "<redacted>" in str(err)
    assert secret not in str(err) and "0123456789abcdef" not in str(err)
    with pytest.raises(ValueError) as info:
        AsyncHttpTarget("http://127.0.0.1:9/", headers={"Authorization": f"Bearer {secret}\r"})
    message = str(info.value)
    assert message.startswith("AsyncHttpTarget header 'Authorization': its value holds")
    assert "0123456789" not in message


def test_a_429_with_retry_after_is_retried_and_waited() -> None:
    with ScriptedServer([Reply(429, headers={"Retry-After": "0.3"}), OK]) as server:
        response = call(target(server, retry_rate_limited=True))
    assert response.requests == 2 and response.rate_limited == 1
    # counted from when the case starts waiting, a moment after the 429 that set the
    # deadline: a millisecond or so short of the 0.3 s asked
    assert response.meta["wait_ms"] >= 300.0 - 5.0


def test_a_rate_limited_async_run_has_no_errored_row() -> None:
    limit = RateLimit(rate=40.0, burst=4.0, delay_s=0.01)
    cases = GoldenSet(GoldenCase(f"c{i:03d}", "q", expected=[f"c{i:03d}-a"])
                      for i in range(100))
    with ScriptedServer(handler=limit) as server:
        t = AsyncHttpTarget(server.url, retry_rate_limited=True)
        run = evaluate(t, cases, ["recall@1"], max_concurrency=16, progress=False)
        # the runner closed the loop's client at the end of its loop; a second run opens
        # one of its own
        again = evaluate(t, GoldenSet(list(cases)[:5]), ["recall@1"], progress=False)
    statuses = [entry[1] for entry in limit.log]
    assert statuses.count(429) > 0
    assert run.header["status"] == "complete" and run.mean("recall@1") == 1.0
    assert sum(r.requests or 0 for r in [*run.per_query, *again.per_query]) == len(limit.log)
    assert again.header["status"] == "complete"


class RecordingAsync(httpx.AsyncBaseTransport):
    """Each request's send time and, for each 429, when it reached the client and when
    the wait its ``retry-after-ms`` asked for ends (as the threaded suite's)."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.sent: list[float] = []
        self.pauses: list[tuple[float, float]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(time.monotonic())
        response = await self.inner.handle_async_request(request)
        if response.status_code == 429:
            got = time.monotonic()
            self.pauses.append((got, got + float(response.headers["retry-after-ms"]) / 1000))
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def test_no_async_call_starts_before_a_retry_after(monkeypatch: pytest.MonkeyPatch) -> None:
    # every start the target's pause gate grants, and every pause a Retry-After sets (when
    # it was set and when it ends), on the event loop's thread: a start granted after a
    # pause was set and before it ended would be a call started before its Retry-After.
    # Cause and effect, not a time window: no result depends on the machine's load.
    grants: list[tuple[int, float]] = []
    pauses: list[tuple[int, float, float]] = []
    admit, pause = Pacing.admit_async, Pacing.pause

    async def admit_async(gate: Pacing, *args: Any, **kw: Any) -> float | None:
        started = await admit(gate, *args, **kw)
        if started is not None:
            grants.append((id(gate), started))
        return started

    def paused(gate: Pacing, seconds: float) -> None:
        pause(gate, seconds)
        pauses.append((id(gate), time.monotonic(), gate._paused_until))

    monkeypatch.setattr(Pacing, "admit_async", admit_async)
    monkeypatch.setattr(Pacing, "pause", paused)
    limit = RateLimit(rate=30.0, burst=3.0, delay_s=0.01)
    recording = RecordingAsync()
    cases = GoldenSet(GoldenCase(f"c{i:03d}", "q", expected=[f"c{i:03d}-a"])
                      for i in range(80))
    with ScriptedServer(handler=limit) as server:
        t = AsyncHttpTarget(server.url, retry_rate_limited=True, transport=recording)
        run = evaluate(t, cases, ["recall@1"], max_concurrency=8, progress=False)
    assert run.header["errors"] == 0 and recording.pauses and pauses
    assert {gate for gate, _ in grants} & {gate for gate, _, _ in pauses}  # the same gate
    early = [(g, set_at, end) for gate, g in grants for paused_gate, set_at, end in pauses
             if gate == paused_gate and set_at < g < end]
    assert early == []


def test_evalkit_run_builds_an_async_target_from_the_config(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from evalkit.cli.app import app

    (tmp_path / "goldens.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "query": "q", "expected": [f"c{i}-a"]}) + "\n"
        for i in range(6)))
    limit = RateLimit(rate=50.0, burst=2.0)
    with ScriptedServer(handler=limit) as server:
        (tmp_path / "evalkit.yaml").write_text(
            "goldens: goldens.jsonl\n"
            f"target: {{factory: http, kwargs: {{url: '{server.url}', asynchronous: true, "
            "retry_rate_limited: true}}\n"
            "metrics: [recall@1]\noutput: run.jsonl\nmax_concurrency: 6\n"
            "requests_per_minute: 6000\n")
        monkeypatch.chdir(tmp_path)
        res = CliRunner().invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in (tmp_path / "run.jsonl").read_text().splitlines()]
    rows = [o for o in lines if o["type"] == "row"]
    assert lines[0]["target"]["type"] == "evalkit_http.AsyncHttpTarget"
    assert sum(r["requests"] for r in rows) == len(limit.log)
    assert all(r["metrics"]["recall@1"] == 1.0 and "wait_ms" in r["response"]["meta"]
               for r in rows)
