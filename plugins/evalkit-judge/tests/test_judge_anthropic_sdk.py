"""The real ``anthropic`` SDK against a local imitation of the Messages API (127.0.0.1).

Every test starts its own server and stops it; the SDK's timeout bounds each attempt and
``retry-after-ms`` keeps the SDK's backoff short.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from evalkit_judge import TOOL_NAME, Budget, BudgetExhausted, JudgeError, LLMJudge
from evalkit_judge.testing import MessagesAPIServer, error_body, text_reply, tool_reply

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit.execute.scoring import MetricError, resolve_metrics, score_cases
from evalkit.plugins.default import use_registry

if TYPE_CHECKING:
    import anthropic

FAST = {"retry-after-ms": "1"}


@pytest.fixture
def server() -> Iterator[MessagesAPIServer]:
    with MessagesAPIServer() as srv:
        yield srv


def sdk(srv: MessagesAPIServer, retries: int = 3) -> anthropic.Anthropic:
    # imported here, not at collection: the SDK takes seconds to import, paid only by
    # the process that runs these tests
    import anthropic

    return anthropic.Anthropic(api_key="test-key", base_url=srv.base_url,
                               max_retries=retries, timeout=5.0)


def judge_for(srv: MessagesAPIServer, tmp_path: Path, retries: int = 3,
              **kw: Any) -> LLMJudge:
    return LLMJudge("Is the answer correct?", model="claude-test", client=sdk(srv, retries),
                    cache_path=tmp_path / "judge.sqlite", **kw)


def case(cid: str = "q1") -> GoldenCase:
    return GoldenCase(id=cid, query="Capital of France?", expected="Paris")


ANSWER = TargetResponse(text="Paris", latency_ms=12.0)


def test_grade_over_http_and_what_goes_on_the_wire(server: MessagesAPIServer,
                                                   tmp_path: Path) -> None:
    server.answer = lambda req: tool_reply(5, "right", model="claude-test-2025",
                                           input_tokens=321, output_tokens=45)
    judge = judge_for(server, tmp_path, prices={"claude-test": (1.0, 5.0)})
    grade = judge.grade(ANSWER, case())
    assert (grade.score, grade.reason, grade.served_model) == (5, "right", "claude-test-2025")
    assert (grade.usage.input_tokens, grade.usage.output_tokens) == (321, 45)
    assert grade.cost_usd == pytest.approx((321 * 1.0 + 45 * 5.0) / 1e6)
    (body,) = server.requests
    assert body["model"] == "claude-test" and body["max_tokens"] == 1024
    assert body["tool_choice"] == {"type": "tool", "name": TOOL_NAME,
                                   "disable_parallel_tool_use": True}
    assert body["tools"][0]["strict"] is True
    assert body["tools"][0]["input_schema"]["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    assert "temperature" not in body and "system" not in body
    assert "Paris" in body["messages"][0]["content"]
    assert server.headers[0]["anthropic-version"]
    # a rerun is served from the cache: no second request
    assert judge(ANSWER, case()) == 5.0
    assert len(server.requests) == 1


def test_temperature_and_system_reach_the_wire(server: MessagesAPIServer,
                                               tmp_path: Path) -> None:
    judge_for(server, tmp_path, temperature=0, system="Grade strictly.")(ANSWER, case())
    body = server.requests[0]
    assert body["temperature"] == 0.0 and body["system"] == "Grade strictly."


def test_429_529_and_500_are_retried_by_the_sdk(server: MessagesAPIServer,
                                                tmp_path: Path) -> None:
    server.script = [
        (429, error_body("rate_limit_error", "slow down"), FAST),
        (529, error_body("overloaded_error", "overloaded"), FAST),
        (500, error_body("api_error", "oops"), FAST),
        tool_reply(4),
    ]
    judge = judge_for(server, tmp_path, retries=3)
    assert judge(ANSWER, case()) == 4.0
    assert len(server.requests) == 4
    assert judge.cache is not None and len(judge.cache) == 1


def test_retries_are_bounded_and_the_final_failure_is_a_case_error(
        server: MessagesAPIServer, tmp_path: Path) -> None:
    server.answer = lambda req: (503, error_body("api_error", "down"), FAST)
    judge = judge_for(server, tmp_path, retries=2)
    with pytest.raises(JudgeError, match=r"case 'q1'.*503"):
        judge(ANSWER, case())
    assert len(server.requests) == 3  # one attempt and two retries
    assert judge.cache is not None and judge.cache.counts()["grades"] == 0
    server.answer = lambda req: tool_reply(2)
    assert judge(ANSWER, case()) == 2.0  # the failure was not cached
    assert len(server.requests) == 4


def test_a_judge_built_without_a_client_uses_the_sdk_with_its_retry_setting(
        server: MessagesAPIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    server.script = [(429, error_body("rate_limit_error", "slow"), FAST)] * 2 + [tool_reply(3)]
    judge = LLMJudge("r", model="m", base_url=server.base_url, max_retries=2, timeout=5.0,
                     cache_path=tmp_path / "c.sqlite")
    assert judge(ANSWER, case()) == 3.0
    assert len(server.requests) == 3
    server.script = [(429, error_body("rate_limit_error", "slow"), FAST)] * 3
    with pytest.raises(JudgeError, match=r"case 'q2'.*429"):
        judge(TargetResponse(text="Lyon"), case("q2"))


def test_client_errors_are_not_retried(server: MessagesAPIServer, tmp_path: Path) -> None:
    server.answer = lambda req: (400, error_body("invalid_request_error", "bad model"), {})
    judge = judge_for(server, tmp_path)
    with pytest.raises(JudgeError, match=r"case 'q1'.*bad model"):
        judge(ANSWER, case())
    assert len(server.requests) == 1


@pytest.mark.parametrize(("answer", "message"), [
    ((200, b"{not json", {}), "case 'q1'.*request failed"),
    ((200, b"", {}), "case 'q1'.*request failed"),
    (text_reply("I refuse."), "case 'q1'.*no record_grade tool call"),
    (tool_reply(7), "case 'q1'.*outside the scale 1-5"),
    (tool_reply("five"), "case 'q1'.*not an integer"),
])
def test_malformed_replies_are_case_errors_and_never_grades(
        server: MessagesAPIServer, tmp_path: Path, answer: Any, message: str) -> None:
    server.answer = lambda req: answer
    judge = judge_for(server, tmp_path, retries=0)
    with pytest.raises(JudgeError, match=message):
        judge(ANSWER, case())
    assert judge.cache is not None and judge.cache.counts()["grades"] == 0
    with use_registry(plugins=False) as reg:
        reg.register_metric("correct", higher_is_better=True)(judge)
        with pytest.raises(MetricError, match=r"'correct'.*case 'q1'"):
            score_cases([ANSWER], [case()], resolve_metrics(["correct"], reg))


def test_max_calls_stops_before_the_next_request(server: MessagesAPIServer,
                                                 tmp_path: Path) -> None:
    judge = judge_for(server, tmp_path, budget=Budget(max_calls=2))
    cases = [case(f"q{i}") for i in range(5)]
    responses = [TargetResponse(text=f"answer {i}") for i in range(5)]
    with use_registry(plugins=False) as reg:
        reg.register_metric("correct", higher_is_better=True)(judge)
        with pytest.raises(BudgetExhausted, match="--max-calls 2"):
            score_cases(responses, cases, resolve_metrics(["correct"], reg))
    assert len(server.requests) == 2
    assert judge.cache is not None and len(judge.cache) == 2
