"""The bounds of each attempt of the judge's built-in providers
(:mod:`evalkit_judge.attempt_bounds`): ``timeout`` is the deadline of the whole attempt,
body included, and a reply body over the cap is refused unread and not retried.

Real 127.0.0.1 servers (the ``anthropic`` SDK and the ``openai`` provider's ``httpx``
talk to them) answer 200 with ``content-length: 100000`` and then one byte every 0.2 s:
no read ever waits the timeout, and the body takes hours. So a call that ends at all was
cut by the deadline; each runs in a thread waited for far beyond any deadline here (a
guard against a hang, never a measurement). What is asserted: the call ends, with the
error of a failed request, after exactly ``1 + retries`` requests.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from evalkit_judge import JudgeError, LLMJudge
from evalkit_judge.attempt_bounds import MAX_REPLY_BYTES
from evalkit_judge.testing import ChatCompletionsServer, Drip, MessagesAPIServer

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit.testing import returns_within

#: one of the suite's longest modules: handed to a worker first (tests/conftest.py)
pytestmark = pytest.mark.schedule_first

CASE = GoldenCase("c1", "what is alpha")
RESPONSE = TargetResponse(text="alpha is a letter")
#: a guard against a hang: far beyond 3 attempts of 1 s, far below a dripped body (hours)
HANG_S = 120.0
DRIP: tuple[int, Any, dict[str, str]] = (200, Drip(declared=100_000, interval_s=0.2), {})
#: a JSON body one byte over the cap
HUGE: tuple[int, Any, dict[str, str]] = (200, json.dumps({"pad": " " * MAX_REPLY_BYTES}), {})


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("JUDGE_TEST_KEY", "test-key")


def openai_judge(server: ChatCompletionsServer, **kw: Any) -> LLMJudge:
    j = LLMJudge("Is it right?", model="gpt-test", provider="openai",
                 base_url=server.api_base, api_key_env="JUDGE_TEST_KEY", **kw)
    j.provider.sleep = lambda s: None  # type: ignore[attr-defined]
    return j


def anthropic_judge(server: MessagesAPIServer, **kw: Any) -> LLMJudge:
    return LLMJudge("Is it right?", model="claude-test", base_url=server.base_url,
                    client=None, **kw)


def failure(j: LLMJudge) -> str:
    _, result = returns_within(lambda: j(RESPONSE, CASE), HANG_S)
    assert isinstance(result, JudgeError), result
    return str(result)


def test_openai_a_dripping_body_is_cut_at_the_deadline_of_each_attempt() -> None:
    with ChatCompletionsServer(lambda req: DRIP) as server:
        message = failure(openai_judge(server, timeout=0.5, retries=2))
    assert len(server.requests) == 3  # the first attempt and both retries
    assert "after 2 retries" in message and "Timeout" in message


def test_anthropic_a_dripping_body_is_cut_at_the_deadline_of_each_attempt() -> None:
    with MessagesAPIServer(lambda req: DRIP) as server:
        message = failure(anthropic_judge(server, timeout=0.5, max_retries=2))
    assert len(server.requests) == 3
    assert "APITimeoutError" in message


def test_a_dripped_reply_after_a_grade_still_grades_the_next_case() -> None:
    # the deadline is per attempt: a drip that is cut leaves the pool usable
    with ChatCompletionsServer(script=[DRIP]) as server:
        j = openai_judge(server, timeout=1.0, retries=1)
        _, score = returns_within(lambda: j(RESPONSE, CASE), HANG_S)
    assert score == 3.0 and len(server.requests) == 2


def test_openai_an_oversized_reply_is_refused_without_a_retry() -> None:
    with ChatCompletionsServer(lambda req: HUGE) as server:
        message = failure(openai_judge(server, timeout=30.0, retries=2))
    assert len(server.requests) == 1
    assert f"over the cap of {MAX_REPLY_BYTES} bytes" in message


def test_anthropic_an_oversized_reply_is_refused_without_a_retry() -> None:
    with MessagesAPIServer(lambda req: HUGE) as server:
        message = failure(anthropic_judge(server, timeout=30.0, max_retries=2))
    assert len(server.requests) == 1
    assert f"over the cap of {MAX_REPLY_BYTES} bytes" in message


def test_the_built_clients_carry_the_deadline_backend() -> None:
    from evalkit.io.http_bounds import DeadlineBackend

    with ChatCompletionsServer() as server, MessagesAPIServer() as messages:
        oa = openai_judge(server, timeout=5.0)
        oa(RESPONSE, CASE)
        an = anthropic_judge(messages, timeout=5.0)
        an(RESPONSE, CASE)
    http = oa.provider._http  # type: ignore[attr-defined]
    assert isinstance(http._transport._pool._network_backend, DeadlineBackend)
    sdk = an.provider.client.current  # type: ignore[attr-defined]
    assert isinstance(sdk._client._transport._pool._network_backend, DeadlineBackend)
