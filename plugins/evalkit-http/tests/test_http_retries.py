"""``retries``: how often an HTTP target retries a 5xx or a transport failure, with a
jittered exponential backoff from ``retry_backoff_s``; the retried requests in the
summary of ``evalkit run``.

Every test runs a real server on 127.0.0.1 that fails a number of times, then answers,
and counts the requests it received.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
import subprocess
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from evalkit_http import AsyncHttpTarget, HttpTarget
from evalkit_http.factory import make_http_target
from evalkit_http.ratelimit import backoff_s
from evalkit_http.testing import RecordedRequest, Reply, ScriptedServer

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetError, TargetResponse
from evalkit.testing.child_runs import EVALKIT_COMMAND

CASE = GoldenCase("q1", "what is alpha")
OK = Reply(200, {"ranked_ids": ["d1", "d2"]})


def invoke(kind: type[HttpTarget | AsyncHttpTarget], server: ScriptedServer,
           **options: Any) -> TargetResponse:
    options.setdefault("retry_backoff_s", 0.0)
    if kind is AsyncHttpTarget:
        target = AsyncHttpTarget(server.url + "search", name="svc", **options)

        async def call() -> TargetResponse:
            try:
                return await target.ainvoke(CASE)
            finally:
                await target.aclose()

        return asyncio.run(call())
    with HttpTarget(server.url + "search", name="svc", **options) as threaded:
        return threaded.invoke(CASE)


@pytest.mark.parametrize("kind", [HttpTarget, AsyncHttpTarget])
def test_two_retries_get_through_two_500s(kind: type) -> None:
    with ScriptedServer([Reply(500), Reply(503), OK]) as server:
        response = invoke(kind, server, retries=2)
    assert len(server.requests) == 3
    assert len({r.body for r in server.requests}) == 1  # the very same body each time
    assert list(response.ranked_ids) == ["d1", "d2"] and response.requests == 3


@pytest.mark.parametrize("kind", [HttpTarget, AsyncHttpTarget])
def test_by_default_one_retry_then_the_case_fails_saying_how_to_retry_more(
        kind: type) -> None:
    with ScriptedServer([Reply(500), Reply(502), OK]) as server:
        url = server.url
        with pytest.raises(TargetError) as info:
            invoke(kind, server)
    assert len(server.requests) == 2
    assert str(info.value) == (
        f"target 'svc' failed on case 'q1': HTTP 502 Bad Gateway, still after retrying "
        f"once (retries: 1) (2 requests to {url}search)")
    assert info.value.requests == 2


@pytest.mark.parametrize("kind", [HttpTarget, AsyncHttpTarget])
def test_zero_retries_sends_one_request_on_a_500_and_on_a_reset(kind: type) -> None:
    for first in (Reply(500), Reply(reset=True)):
        with ScriptedServer([first, OK]) as server, pytest.raises(TargetError) as info:
            invoke(kind, server, retries=0)
        assert len(server.requests) == 1
        assert "(not retried: retries is 0)" in str(info.value)


def test_the_retries_wait_a_jittered_doubling_backoff(caplog: pytest.LogCaptureFixture
                                                      ) -> None:
    # the waits logged before retries 1, 2, 3 lie in [0.75, 1] x 0.02 x 2^(n-1) s
    caplog.set_level(logging.INFO, logger="evalkit.http")
    with ScriptedServer([Reply(500), Reply(500), Reply(500), OK]) as server:
        invoke(HttpTarget, server, retries=3, retry_backoff_s=0.02)
    notes = re.findall(r"retry (\d) of 3 in ([0-9.e-]+) s", caplog.text)
    assert [int(n) for n, _ in notes] == [1, 2, 3]
    for n, wait in notes:
        full = 0.02 * 2 ** (int(n) - 1)
        assert 0.75 * full - 1e-12 <= float(wait) <= full


def test_the_backoff_rule_by_hand() -> None:
    # min(b x 2^(n-1), max(b, 8)) x (1 - 0.25 u)
    assert backoff_s(1, 0.0, initial=0.1) == 0.1
    assert backoff_s(3, 0.5, initial=0.1) == pytest.approx(0.4 * 0.875)
    assert backoff_s(10, 0.0, initial=0.1) == 8.0  # 0.1 x 512 = 51.2, capped at 8 s
    assert backoff_s(2, 0.0, initial=20.0) == 20.0  # a first wait over 8 s never doubles
    assert backoff_s(4, 0.999, initial=0.0) == 0.0
    assert backoff_s(1, 0.0) == 0.5  # the rate-limit backoff is unchanged


def test_a_retry_that_would_pass_the_cases_deadline_is_not_made() -> None:
    with ScriptedServer([Reply(500), OK]) as server, pytest.raises(TargetError) as info:
        invoke(HttpTarget, server, retries=3, retry_backoff_s=5.0, retry_rate_limited=True,
               rate_limit_total_s=1.0)
    assert len(server.requests) == 1
    assert re.search(r"HTTP 500 Internal Server Error; retrying in [0-9.]+ s would pass "
                     r"rate_limit_total_s \(1 s\)", str(info.value))


@pytest.mark.parametrize("value", [-1, 11, True, False, 1.5, "2", None, math.inf])
@pytest.mark.parametrize("make", [HttpTarget, AsyncHttpTarget, make_http_target])
def test_retries_outside_0_to_10_or_not_an_integer_is_refused(make: object, value: object
                                                              ) -> None:
    url = "http://127.0.0.1:9/search"
    with pytest.raises(ValueError) as info:
        if make is make_http_target:
            make_http_target(url=url, retries=value)
        else:
            make(url, retries=value)  # type: ignore[operator]
    assert str(info.value) == f"HttpTarget retries must be an integer from 0 to 10, got {value!r}"


def test_ten_retries_is_the_most() -> None:
    with HttpTarget("http://127.0.0.1:9/search", retries=10) as target:
        assert target.retries == 10


# ------------------------------------------------------------------ evalkit run
N_CASES = 30
FLAKY = {"c03": 2, "c17": 2, "c21": 1}  # case -> 500s answered before its 200


class Flaky:
    """A handler that answers each case's first ``FLAKY[case]`` requests with a 500."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest, index: int) -> Reply:
        case = request.json()["id"]
        with self.lock:
            self.seen[case] += 1
            failing = self.seen[case] <= FLAKY.get(case, 0)
        return Reply(500) if failing else Reply(200, {"ranked_ids": [case]})


def run_project(tmp_path: Path, url: str, retries: object, *args: str
                ) -> subprocess.CompletedProcess[str]:
    (tmp_path / "goldens.jsonl").write_text("".join(
        json.dumps({"id": f"c{i:02d}", "query": "q", "expected": [f"c{i:02d}"]}) + "\n"
        for i in range(N_CASES)))
    kwargs: dict[str, object] = {"url": url, "retry_backoff_s": 0.0}
    if retries is not None:
        kwargs["retries"] = retries
    (tmp_path / "evalkit.yaml").write_text(
        "goldens: goldens.jsonl\n"
        f"target: {json.dumps({'factory': 'http', 'kwargs': kwargs})}\n"
        "metrics: [recall@1]\noutput: runs/run.jsonl\nmax_concurrency: 4\n")
    return subprocess.run([*EVALKIT_COMMAND, "run", "--no-progress", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


def duplicates(server: ScriptedServer) -> int:
    """The requests the server received for a case it had seen before."""
    return len(server.requests) - len({r.json()["id"] for r in server.requests})


@pytest.mark.parametrize("retries", [2, None])
def test_evalkit_run_counts_the_requests_the_server_saw_twice(tmp_path: Path,
                                                              retries: int | None) -> None:
    with ScriptedServer(handler=Flaky()) as server:
        done = run_project(tmp_path, server.url, retries, "--json")
    summary = json.loads(done.stdout)
    if retries == 2:  # every flaky case gets through
        assert done.returncode == 0, done.stderr
        assert summary["status"] == "complete" and duplicates(server) == 2 + 2 + 1
    else:  # the documented default: one retry, so the cases with two 500s fail
        assert done.returncode != 0
        assert sorted(summary["error_ids"]) == ["c03", "c17"]
        assert duplicates(server) == 1 + 1 + 1
    assert summary["retried_requests"] == {"target": duplicates(server)}


def test_the_text_summary_names_the_retried_requests(tmp_path: Path) -> None:
    with ScriptedServer(handler=Flaky()) as server:
        done = run_project(tmp_path, server.url, 2)
    assert done.returncode == 0, done.stderr
    assert duplicates(server) == 5
    assert ("retried: 5 request(s) sent again by the target (after a 5xx, a transport "
            "failure or a rate-limit answer)") in done.stdout.splitlines()
    with ScriptedServer() as quiet:  # no retry, no line
        again = run_project(tmp_path, quiet.url, 2, "--overwrite")
    assert again.returncode != 0 or "retried:" not in again.stdout


@pytest.mark.parametrize("value", [-1, True])
def test_retries_in_the_eval_config_is_checked_with_its_line(tmp_path: Path, value: object
                                                             ) -> None:
    done = run_project(tmp_path, "http://127.0.0.1:9/", value)
    assert done.returncode == 2
    assert "evalkit.yaml:2" in done.stderr
    assert f"HttpTarget retries must be an integer from 0 to 10, got {value!r}" in done.stderr
