"""Replies a judge refuses as malformed, whatever the provider: a repeated key anywhere
in the reply (the grade's tool arguments, a JSON answer, the body itself; JSON keeps the
last value, so the grade would be ambiguous), and token counts that are not counts
(negative, non-finite, fractions, text), which would lower what a run records as spent:
such a reply is charged the request's worst-case estimate instead.

Both providers run against real servers on 127.0.0.1 (the ``openai`` provider's own
client, and the ``anthropic`` SDK), which count the requests they receive.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from evalkit_judge import Budget, JudgeError, LLMJudge, use_budget
from evalkit_judge.testing import (
    ChatCompletionsServer,
    MessagesAPIServer,
    chat_content_reply,
    chat_tool_reply,
    tool_reply,
)

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse

CASE = GoldenCase("c1", "what is alpha", expected="the first letter")
RESPONSE = TargetResponse(text="alpha is the first letter")
PRICES = {"judge-test": (1.0, 5.0)}
MAX_TOKENS = 100


@pytest.fixture(autouse=True)
def api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def openai_judge(server: ChatCompletionsServer, **kw: Any) -> LLMJudge:
    return LLMJudge("Is it right?", model="judge-test", provider="openai",
                    base_url=server.api_base, timeout=5.0, retries=0, prices=PRICES,
                    max_tokens=MAX_TOKENS, **kw)


def anthropic_judge(server: MessagesAPIServer) -> LLMJudge:
    return LLMJudge("Is it right?", model="judge-test", base_url=server.base_url,
                    client=None, timeout=5.0, max_retries=0, prices=PRICES,
                    max_tokens=MAX_TOKENS)


# ---------------------------------------------------------------- repeated keys
def test_openai_tool_arguments_that_repeat_the_score_are_refused() -> None:
    reply = chat_tool_reply(None, arguments='{"score": 1, "score": 5, "reason": "r"}')
    with ChatCompletionsServer(script=[reply]) as server:
        the_judge = openai_judge(server)
        with pytest.raises(JudgeError, match="malformed: key 'score' appears twice"):
            the_judge(RESPONSE, CASE)
    assert len(server.requests) == 1
    details = the_judge.details("c1")
    assert details is not None and "score" not in details and "appears twice" in \
        details["rejected"]


def test_openai_json_answer_that_repeats_a_key_is_refused() -> None:
    reply = chat_content_reply('{"score": 4, "reason": "a", "reason": "b"}')
    with ChatCompletionsServer(script=[reply]) as server, \
            pytest.raises(JudgeError, match="key 'reason' appears twice"):
        openai_judge(server, grade_via="json_schema")(RESPONSE, CASE)


def test_openai_body_that_repeats_a_key_is_refused_and_charged_the_estimate() -> None:
    good = json.dumps(chat_tool_reply(4))
    body = good[:-1] + ', "usage": {"prompt_tokens": 0, "completion_tokens": 0}}'
    with ChatCompletionsServer(script=[(200, body, {})]) as server:
        the_judge = openai_judge(server)
        with pytest.raises(JudgeError, match="key 'usage' appears twice"):
            the_judge(RESPONSE, CASE)
    details = the_judge.details("c1")
    assert details is not None and details["output_tokens"] == MAX_TOKENS
    assert details["cost_usd"] > 0


def test_anthropic_tool_input_that_repeats_the_score_is_refused() -> None:
    good = json.dumps(tool_reply(4, model="judge-test"))
    assert '"score": 4' in good
    body = good.replace('"score": 4', '"score": 1, "score": 5')
    with MessagesAPIServer(script=[(200, body, {})]) as server:
        the_judge = anthropic_judge(server)
        with pytest.raises(JudgeError, match="key 'score' appears twice"):
            the_judge(RESPONSE, CASE)
    assert len(server.requests) == 1


# ---------------------------------------------------------------- token counts
def honest_cost(tokens_in: int = 100, tokens_out: int = 20) -> float:
    return (tokens_in * 1.0 + tokens_out * 5.0) / 1e6


@pytest.mark.parametrize("bad", ["-1e308", "-1", "12.5", "NaN", "Infinity", '"100"',
                                 "true"])
def test_openai_token_counts_that_are_not_counts_charge_the_estimate(bad: str) -> None:
    body = json.dumps(chat_tool_reply(4)).replace('"prompt_tokens": 100', f'"prompt_tokens": {bad}')
    with ChatCompletionsServer(script=[(200, body, {})]) as server, \
            use_budget(Budget()) as budget:
        the_judge = openai_judge(server)
        assert the_judge(RESPONSE, CASE) == 4.0  # the grade stands; its cost is estimated
    details = the_judge.details("c1")
    assert details is not None
    assert details["output_tokens"] == MAX_TOKENS and details["input_tokens"] > 100
    assert details["cost_usd"] > honest_cost()
    assert budget.spent_usd == pytest.approx(details["cost_usd"])


@pytest.mark.parametrize("bad", ["-5", "-1e308", "1.5"])
def test_anthropic_token_counts_that_are_not_counts_charge_the_estimate(bad: str) -> None:
    body = json.dumps(tool_reply(4, model="judge-test")).replace(
        '"input_tokens": 100', f'"input_tokens": {bad}')
    with MessagesAPIServer(script=[(200, body, {})]) as server, \
            use_budget(Budget()) as budget:
        the_judge = anthropic_judge(server)
        assert the_judge(RESPONSE, CASE) == 4.0
    details = the_judge.details("c1")
    assert details is not None and details["output_tokens"] == MAX_TOKENS
    assert details["cost_usd"] > honest_cost()
    assert budget.spent_usd == pytest.approx(details["cost_usd"])


def test_honest_counts_are_charged_as_reported() -> None:
    with ChatCompletionsServer(script=[chat_tool_reply(4)]) as server:
        the_judge = openai_judge(server)
        the_judge(RESPONSE, CASE)
    details = the_judge.details("c1")
    assert details is not None and details["cost_usd"] == pytest.approx(honest_cost())


# ---------------------------------------------------------------- usage that cannot be read
def worst_case_usd(request: dict[str, Any]) -> float:
    """The documented worst case of ``request``, computed here from the body the server
    received: its canonical JSON at 3 characters per token plus 500 tokens of tool
    overhead, at $1/Mtok, and ``max_tokens`` of output at $5/Mtok (docs/judge.md)."""
    text = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    tokens_in = -(-len(text) // 3) + 500
    return (tokens_in * 1.0 + MAX_TOKENS * 5.0) / 1e6


def without_usage(reply: dict[str, Any], usage: Any) -> str:
    out = {k: v for k, v in reply.items() if k != "usage"}
    if usage != "absent":
        out["usage"] = usage
    return json.dumps(out)


@pytest.mark.parametrize("usage", ["absent", None, {}, {"prompt_tokens": 100},
                                   {"completion_tokens": 20}, [100, 20], "100"])
def test_openai_reply_without_readable_usage_is_charged_the_worst_case(usage: Any) -> None:
    body = without_usage(chat_tool_reply(4), usage)
    with ChatCompletionsServer(script=[(200, body, {})]) as server, \
            use_budget(Budget()) as budget:
        the_judge = openai_judge(server)
        assert the_judge(RESPONSE, CASE) == 4.0  # the grade stands; its cost is the worst
    expected = worst_case_usd(server.requests[0])
    details = the_judge.details("c1")
    assert details is not None and details["output_tokens"] == MAX_TOKENS
    assert details["cost_usd"] == pytest.approx(expected)
    assert budget.spent_usd == pytest.approx(expected)


@pytest.mark.parametrize("usage", ["absent", None, {}, {"input_tokens": 100}])
def test_anthropic_reply_without_readable_usage_is_charged_the_worst_case(usage: Any) -> None:
    body = without_usage(tool_reply(4, model="judge-test"), usage)
    with MessagesAPIServer(script=[(200, body, {})]) as server, \
            use_budget(Budget()) as budget:
        the_judge = anthropic_judge(server)
        assert the_judge(RESPONSE, CASE) == 4.0
    details = the_judge.details("c1")
    assert details is not None and details["output_tokens"] == MAX_TOKENS
    assert details["cost_usd"] == pytest.approx(worst_case_usd(server.requests[0]))
    assert budget.spent_usd == pytest.approx(details["cost_usd"])


@pytest.mark.parametrize("body", ['{"id": "x", "choices": [', "<html>bad gateway</html>",
                                  "[1, 2]", '"text"'])
def test_openai_200_reply_that_is_not_json_is_refused_and_charged_the_worst_case(
        body: str) -> None:
    with ChatCompletionsServer(script=[(200, body, {})]) as server, \
            use_budget(Budget()) as budget:
        the_judge = openai_judge(server)
        with pytest.raises(JudgeError, match="not a JSON chat completion"):
            the_judge(RESPONSE, CASE)
    expected = worst_case_usd(server.requests[0])
    details = the_judge.details("c1")
    assert details is not None and details["cost_usd"] == pytest.approx(expected)
    assert budget.spent_usd == pytest.approx(expected)


def test_openai_tool_arguments_that_repeat_a_key_are_charged_the_worst_case() -> None:
    reply = chat_tool_reply(None, arguments='{"score": 1, "score": 5, "reason": "r"}')
    with ChatCompletionsServer(script=[reply]) as server, use_budget(Budget()) as budget:
        the_judge = openai_judge(server)
        with pytest.raises(JudgeError, match="appears twice"):
            the_judge(RESPONSE, CASE)
    expected = worst_case_usd(server.requests[0])
    assert expected > honest_cost()  # the reply's own usage (100 in, 20 out) is not used
    details = the_judge.details("c1")
    assert details is not None and details["cost_usd"] == pytest.approx(expected)
    assert budget.spent_usd == pytest.approx(expected)


def test_max_cost_holds_against_a_server_that_never_reports_usage() -> None:
    from evalkit_judge import BudgetExhausted

    body = without_usage(chat_tool_reply(4), "absent")
    with ChatCompletionsServer(answer=lambda request: (200, body, {})) as server:
        the_judge = openai_judge(server)
        the_judge(RESPONSE, CASE)  # the worst case of one request, as charged
        first = worst_case_usd(server.requests[0])
        budget = Budget(max_cost=1.5 * first)  # room for one such request, not two
        cases = [GoldenCase(f"c{i}", "what is alpha", expected="the first letter")
                 for i in range(2, 12)]
        with use_budget(budget), pytest.raises(BudgetExhausted, match="--max-cost"):
            for case in cases:
                the_judge(RESPONSE, case)
    assert len(server.requests) == 2  # the unbudgeted one, then exactly one more
    assert budget.spent_usd == pytest.approx(worst_case_usd(server.requests[1]))
    assert budget.spent_usd <= 1.5 * first


# ---------------------------------------------------------------- usage that cannot be true
def chat_usage_reply(prompt: int, completion: int, cached: int | None = None) -> str:
    reply = chat_tool_reply(4)
    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                             "total_tokens": prompt + completion}
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return without_usage(reply, usage)


@pytest.mark.parametrize(("prompt", "completion"), [(0, 0), (0, 20), (1, 20), (100, 0)])
def test_openai_usage_that_cannot_be_true_is_charged_the_worst_case(
        prompt: int, completion: int) -> None:
    # 0 input tokens (every request has input), 1 (below the prompt text's floor: the
    # request holds several hundred characters), or 0 output tokens for a tool call
    with ChatCompletionsServer(script=[(200, chat_usage_reply(prompt, completion), {})]) \
            as server, use_budget(Budget()) as budget:
        the_judge = openai_judge(server)
        assert the_judge(RESPONSE, CASE) == 4.0
    expected = worst_case_usd(server.requests[0])
    details = the_judge.details("c1")
    assert details is not None and details["output_tokens"] == MAX_TOKENS
    assert details["cost_usd"] == pytest.approx(expected)
    assert budget.spent_usd == pytest.approx(expected)


@pytest.mark.parametrize(("tokens_in", "tokens_out"), [(0, 0), (0, 20), (2, 20), (100, 0)])
def test_anthropic_usage_that_cannot_be_true_is_charged_the_worst_case(
        tokens_in: int, tokens_out: int) -> None:
    reply = tool_reply(4, model="judge-test", input_tokens=tokens_in, output_tokens=tokens_out)
    with MessagesAPIServer(script=[reply]) as server, use_budget(Budget()) as budget:
        the_judge = anthropic_judge(server)
        assert the_judge(RESPONSE, CASE) == 4.0
    details = the_judge.details("c1")
    assert details is not None and details["output_tokens"] == MAX_TOKENS
    assert details["cost_usd"] == pytest.approx(worst_case_usd(server.requests[0]))
    assert budget.spent_usd == pytest.approx(details["cost_usd"])


@pytest.mark.parametrize(("prompt", "completion", "cached"),
                         [(60, 1, None), (60, 3, 59), (100, 20, 100)])
def test_plausible_small_usage_is_charged_as_reported(
        prompt: int, completion: int, cached: int | None) -> None:
    # at $1 / $5 per million tokens; cached input is priced as input (no cache price)
    expected = (prompt * 1.0 + completion * 5.0) / 1e6
    body = chat_usage_reply(prompt, completion, cached)
    with ChatCompletionsServer(script=[(200, body, {})]) as server, \
            use_budget(Budget()) as budget:
        the_judge = openai_judge(server)
        assert the_judge(RESPONSE, CASE) == 4.0
    details = the_judge.details("c1")
    assert details is not None and details["output_tokens"] == completion
    assert details["cost_usd"] == pytest.approx(expected)
    assert budget.spent_usd == pytest.approx(expected)


def test_max_cost_holds_against_a_server_that_reports_zero_usage() -> None:
    from evalkit_judge import BudgetExhausted

    body = chat_usage_reply(0, 0)
    with ChatCompletionsServer(answer=lambda request: (200, body, {})) as server:
        the_judge = openai_judge(server)
        the_judge(RESPONSE, CASE)  # the worst case of one request, as charged
        first = worst_case_usd(server.requests[0])
        budget = Budget(max_cost=1.5 * first)  # room for one such request, not two
        cases = [GoldenCase(f"c{i}", "what is alpha", expected="the first letter")
                 for i in range(2, 12)]
        with use_budget(budget), pytest.raises(BudgetExhausted, match="--max-cost"):
            for case in cases:
                the_judge(RESPONSE, case)
    assert len(server.requests) == 2  # the unbudgeted one, then exactly one more
    assert budget.spent_usd == pytest.approx(worst_case_usd(server.requests[1]))
