"""The judge's ``openai`` provider against a real HTTP server on 127.0.0.1 speaking the
Chat Completions wire format (``evalkit_judge.testing.ChatCompletionsServer``).

The same server is driven by the official ``openai`` client with our request bodies, so
the requests we send are ones the real API's client accepts, field for field; and every
refusal path (prose, a reply cut at max_tokens, a wrong schema, no call), the retries
(429 with Retry-After, 5xx, exhausted), the cache key, the budget and the secrets are
checked on it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import Budget, BudgetExhausted, JudgeError, LLMJudge, use_budget
from evalkit_judge.testing import (
    ChatCompletionsServer,
    FakeAnthropic,
    chat_content_reply,
    chat_json_reply,
    chat_tool_reply,
    openai_error_body,
    tool_reply,
)

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit.execute.scoring import RunAborted

KEY = "sk-test-0123456789abcdef-secret"
HEADER_SECRET = "org-secret-header-value-42"
CASE = GoldenCase("c1", "what is alpha", expected="the first letter")
RESPONSE = TargetResponse(text="alpha is the first letter")


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_TEST_KEY", KEY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def judge(server: ChatCompletionsServer, **kw: Any) -> LLMJudge:
    kw.setdefault("api_key_env", "JUDGE_TEST_KEY")
    j = LLMJudge("Is it right?", model="gpt-test", provider="openai",
                 base_url=server.api_base, timeout=5.0, **kw)
    j.provider.sleep = lambda s: WAITS.append(s)  # type: ignore[attr-defined]
    return j


WAITS: list[float] = []


@pytest.fixture(autouse=True)
def no_waits() -> None:
    WAITS.clear()


# ---------------------------------------------------------------- what is sent
def test_a_conforming_function_call_is_a_grade_and_the_request_forces_it() -> None:
    with ChatCompletionsServer(lambda req: chat_tool_reply(4, "right")) as server:
        j = judge(server, headers={"OpenAI-Organization": HEADER_SECRET})
        assert j(RESPONSE, CASE) == 4.0
    body, headers = server.requests[0], server.headers[0]
    assert body["model"] == "gpt-test" and body["max_tokens"] == 1024
    assert body["tools"] == [{"type": "function", "function": {
        "name": "record_grade", "description": "Record the grade of the response under "
        "evaluation.", "strict": True, "parameters": {
            "type": "object", "properties": {
                "score": {"type": "integer", "enum": [1, 2, 3, 4, 5],
                          "description": "1 is the worst grade, 5 the best."},
                "reason": {"type": "string",
                           "description": "A short justification of the score."}},
            "required": ["score", "reason"], "additionalProperties": False}}}]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "record_grade"}}
    assert body["parallel_tool_calls"] is False
    assert "temperature" not in body and "response_format" not in body
    assert body["messages"][0]["role"] == "user"
    assert "<response>\nalpha is the first letter\n</response>" in \
        body["messages"][0]["content"]
    assert headers["authorization"] == f"Bearer {KEY}"
    assert headers["openai-organization"] == HEADER_SECRET
    details = j.details("c1")
    assert details is not None and details["score"] == 4 and details["reason"] == "right"
    assert details["input_tokens"] == 100 and details["output_tokens"] == 20


def test_json_schema_mode_sends_a_strict_response_format_and_reads_the_content() -> None:
    with ChatCompletionsServer() as server:
        j = judge(server, grade_via="json_schema", system="Be strict.", temperature=0.0)
        assert j(RESPONSE, CASE) == 3.0
    body = server.requests[0]
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "record_grade", "strict": True, "schema": j.prompt.schema}}
    assert "tools" not in body and "tool_choice" not in body
    assert body["messages"][0] == {"role": "system", "content": "Be strict."}
    assert body["temperature"] == 0.0


def test_the_output_cap_is_sent_under_the_field_the_judge_names(tmp_path: Path) -> None:
    with ChatCompletionsServer() as server:
        o_series = judge(server, max_tokens=300, max_tokens_field="max_completion_tokens")
        assert o_series(RESPONSE, CASE) == 3.0
        default = judge(server, max_tokens=300)
        assert default(RESPONSE, CASE) == 3.0
        with pytest.raises(ValueError, match="not 'max_output_tokens'"):
            judge(server, max_tokens_field="max_output_tokens")
    sent, plain = server.requests
    assert sent["max_completion_tokens"] == 300 and "max_tokens" not in sent
    assert plain["max_tokens"] == 300 and "max_completion_tokens" not in plain
    # two requests, two grades: the cache key and the definition tell them apart
    assert o_series.key(RESPONSE, CASE) != default.key(RESPONSE, CASE)
    assert o_series.definition != default.definition
    assert o_series.record()["max_tokens_field"] == "max_completion_tokens"
    with pytest.raises(ValueError, match="provider 'anthropic' sends the output token cap "
                       "as 'max_tokens', not 'max_completion_tokens'"):
        LLMJudge("Is it right?", model="m", client=FakeAnthropic(),
                 max_tokens_field="max_completion_tokens")


def test_the_official_openai_client_sends_our_requests_unchanged() -> None:
    """Our bodies are valid ``chat.completions.create`` parameters (the SDK's own types
    accept them: a key it does not know would be a TypeError), the official client puts
    the same JSON on the wire, and it parses the server's replies."""
    openai = pytest.importorskip("openai")
    from openai.types.chat import completion_create_params
    from pydantic import TypeAdapter

    adapter = TypeAdapter(completion_create_params.CompletionCreateParamsNonStreaming)
    for via, cap in (("tool", "max_tokens"), ("json_schema", "max_tokens"),
                     ("tool", "max_completion_tokens")):
        with ChatCompletionsServer() as server:
            j = judge(server, grade_via=via, system="Be strict.", temperature=0.5,
                      max_tokens_field=cap)
            assert j(RESPONSE, CASE) == 3.0
            ours = server.requests[0]
            assert ours[cap] == 1024
            adapter.validate_python(ours)  # the SDK's request type, field by field
            client = openai.OpenAI(base_url=server.api_base, api_key=KEY, max_retries=0)
            completion = client.chat.completions.create(**ours)
            theirs = server.requests[1]
        assert theirs == ours, (via, cap)
        assert server.headers[1]["authorization"] == server.headers[0]["authorization"]
        choice = completion.choices[0]
        if via == "tool":
            assert choice.message.tool_calls is not None
            call = choice.message.tool_calls[0]
            assert call.function.name == "record_grade"
            assert json.loads(call.function.arguments)["score"] == 3
        else:
            assert json.loads(choice.message.content or "")["score"] == 3


# ---------------------------------------------------------------- refusals
REFUSED = [
    (chat_content_reply("I'd give it a 4: it is right."), "no record_grade function call"),
    (chat_tool_reply(4, finish_reason="length", arguments='{"score": 4, "reas'),
     "finish_reason='length'"),
    (chat_content_reply('{"score": 4, "reason": "ok"}'), "no record_grade function call"),
    (chat_tool_reply(4, name="other_tool"), "called 'other_tool', not record_grade"),
    (chat_tool_reply(4, arguments="four, because it is right"), "never read from prose"),
    (chat_tool_reply(4, arguments='{"score": 4, "reason": "ok", "confidence": 0.9}'),
     "'confidence' the schema does not allow"),
    (chat_tool_reply("4"), "is not an integer"),
    (chat_tool_reply(6), "outside the scale 1-5"),
    (chat_tool_reply(4, reason=None), "is not text"),
    (chat_tool_reply(4, finish_reason="content_filter"), "finish_reason='content_filter'"),
    (chat_content_reply(None, refusal="I can't help with that."), "the model refused"),
    ({"choices": []}, "no choice"),
]


@pytest.mark.parametrize(("reply", "message"), REFUSED)
def test_a_reply_that_is_not_a_conforming_grade_is_refused_and_never_cached(
        tmp_path: Path, reply: dict[str, Any], message: str) -> None:
    with ChatCompletionsServer(script=[reply]) as server:
        j = judge(server, cache_path=tmp_path / "c.sqlite")
        with pytest.raises(JudgeError, match="judge 'gpt-test', case 'c1'") as err:
            j(RESPONSE, CASE)
        assert message in str(err.value)
        assert j.cache is not None and j.cache.get(j.key(RESPONSE, CASE)) is None
        assert j.cache.counts()["rejected"] == 1
        assert j(RESPONSE, CASE) == 3.0  # asked again, never served from the rejected
    assert len(server.requests) == 2


JSON_REFUSED = [
    (chat_content_reply("A 4: it is right."), "never read from prose"),
    (chat_json_reply(4, finish_reason="length"), "finish_reason='length'"),
    (chat_content_reply('{"grade": 4}'), "'grade' the schema does not allow"),
    (chat_content_reply('[4, "ok"]'), "not a JSON object"),
    (chat_tool_reply(4), "called a function"),
]


@pytest.mark.parametrize(("reply", "message"), JSON_REFUSED)
def test_json_schema_mode_refuses_what_is_not_the_schema(reply: dict[str, Any],
                                                         message: str) -> None:
    with ChatCompletionsServer(script=[reply]) as server:
        j = judge(server, grade_via="json_schema")
        with pytest.raises(JudgeError) as err:
            j(RESPONSE, CASE)
    assert message in str(err.value)


def test_forced_function_with_finish_reason_stop_is_a_grade() -> None:
    """OpenAI reports ``stop`` for a call forced by ``tool_choice``."""
    with ChatCompletionsServer(script=[chat_tool_reply(2, finish_reason="stop")]) as server:
        assert judge(server)(RESPONSE, CASE) == 2.0


# ---------------------------------------------------------------- retries
def test_429_waits_what_retry_after_asks_then_grades() -> None:
    limited = (429, openai_error_body("Rate limit reached"), {"Retry-After": "7"})
    with ChatCompletionsServer(script=[limited]) as server:
        j = judge(server)
        assert j(RESPONSE, CASE) == 3.0
    assert WAITS == [7.0] and len(server.requests) == 2
    details = j.details("c1")
    assert details is not None and details["retries"] == 1


def test_a_server_wait_longer_than_a_minute_is_cut_to_a_minute() -> None:
    limited = (429, openai_error_body("slow down"), {"retry-after": "86400"})
    with ChatCompletionsServer(script=[limited]) as server:
        assert judge(server)(RESPONSE, CASE) == 3.0
    assert WAITS == [60.0]


def test_5xx_then_success_backs_off_as_the_sdks_do() -> None:
    failure: tuple[int, Any, dict[str, str]] = (500, openai_error_body("boom", "server_error"),
                                                {})
    with ChatCompletionsServer(script=[failure, (502, "bad gateway", {})]) as server:
        assert judge(server, retries=2)(RESPONSE, CASE) == 3.0
    # min(0.5 x 2^(n-1), 8) x (1 - 0.25 u), u in [0, 1): n = 1, 2
    assert len(WAITS) == 2
    assert 0.375 < WAITS[0] <= 0.5 and 0.75 < WAITS[1] <= 1.0


def test_retries_exhausted_is_a_case_error_naming_them_and_nothing_is_cached(
        tmp_path: Path) -> None:
    failure: tuple[int, Any, dict[str, str]] = (
        503, openai_error_body("overloaded", "server_error"), {"retry-after": "0"})
    with ChatCompletionsServer(lambda req: failure) as server:
        j = judge(server, retries=3, cache_path=tmp_path / "c.sqlite")
        with pytest.raises(JudgeError, match=r"failed after 3 retries \(RequestFailed: HTTP "
                                             r"503: overloaded\)"):
            j(RESPONSE, CASE)
    assert len(server.requests) == 4 and WAITS == [0.0, 0.0, 0.0]
    assert j.cache is not None and j.cache.counts() == {"grades": 0, "rejected": 0,
                                                        "seed_grades": 0}


def test_a_400_is_not_retried() -> None:
    bad: tuple[int, Any, dict[str, str]] = (
        400, openai_error_body("Unknown parameter: 'parallel_tool_calls'",
                               "invalid_request_error"), {})
    with ChatCompletionsServer(lambda req: bad) as server, \
            pytest.raises(JudgeError, match="HTTP 400: Unknown parameter"):
        judge(server)(RESPONSE, CASE)
    assert len(server.requests) == 1


def test_a_transport_failure_is_retried() -> None:
    with ChatCompletionsServer() as server:
        url = server.api_base
    # the server is stopped: every connection is refused
    j = LLMJudge("Is it right?", model="gpt-test", provider="openai", base_url=url,
                 api_key_env="JUDGE_TEST_KEY", retries=2, timeout=2.0)
    j.provider.sleep = lambda s: WAITS.append(s)  # type: ignore[attr-defined]
    with pytest.raises(JudgeError, match=r"after 2 retries .*ConnectError"):
        j(RESPONSE, CASE)
    assert len(WAITS) == 2


def test_retries_and_max_retries_are_one_setting() -> None:
    assert LLMJudge("r", model="m", client=FakeAnthropic(), max_retries=2).provider \
        .settings.retries == 2
    with pytest.raises(ValueError, match="one setting"):
        LLMJudge("r", model="m", retries=1, max_retries=2)
    with pytest.raises(ValueError, match="retries must be an integer from 0 to 10"):
        LLMJudge("r", model="m", provider="openai", retries=11)
    with pytest.raises(ValueError, match="grades via 'tool', not 'json_schema'"):
        LLMJudge("r", model="m", grade_via="json_schema")


# ---------------------------------------------------------------- credentials
def test_an_unset_key_variable_stops_before_any_request(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JUDGE_TEST_KEY")
    with ChatCompletionsServer() as server, pytest.raises(RunAborted) as err:
        judge(server)(RESPONSE, CASE)
    assert "api_key_env names JUDGE_TEST_KEY, which is not set" in str(err.value.error)
    assert server.requests == []


def test_a_401_stops_the_run_once_and_masks_the_key_the_server_echoes() -> None:
    refused: tuple[int, Any, dict[str, str]] = (
        401, openai_error_body(f"Incorrect API key provided: {KEY}", "invalid_api_key"), {})
    with ChatCompletionsServer(lambda req: refused) as server:
        j = judge(server)
        with pytest.raises(RunAborted) as err:
            j(RESPONSE, CASE)
        with pytest.raises(RunAborted):
            j(RESPONSE, GoldenCase("c2", "another"))
    assert len(server.requests) == 1  # nothing sent after the refusal
    text = str(err.value.error)
    assert "refused the credentials (401" in text and "JUDGE_TEST_KEY" in text
    assert KEY not in text


def test_a_local_server_needs_no_key() -> None:
    with ChatCompletionsServer() as server:
        j = LLMJudge("r", model="llama", provider="openai", base_url=server.api_base)
        assert j(RESPONSE, CASE) == 3.0
    assert "authorization" not in server.headers[0]


def test_base_url_and_headers_expand_environment_references(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with ChatCompletionsServer() as server:
        monkeypatch.setenv("JUDGE_URL", server.api_base)
        monkeypatch.setenv("ORG_TOKEN", HEADER_SECRET)
        j = LLMJudge("r", model="m", provider="openai", base_url="${JUDGE_URL}",
                     headers={"X-Org": "Bearer ${ORG_TOKEN}"})
        assert j(RESPONSE, CASE) == 3.0
    assert server.headers[0]["x-org"] == f"Bearer {HEADER_SECRET}"
    assert j.record()["headers"] == {"X-Org": "Bearer ${ORG_TOKEN}"}
    assert j.record()["base_url"] == "${JUDGE_URL}"


def test_a_query_in_the_base_url_is_sent_after_the_path() -> None:
    with ChatCompletionsServer() as server:
        j = LLMJudge("r", model="m", provider="openai",
                     base_url=server.api_base + "/?api-version=2024-06-01&x=a%20b")
        assert j(RESPONSE, CASE) == 3.0
    assert server.paths == ["/v1/chat/completions?api-version=2024-06-01&x=a+b"]


# ---------------------------------------------------------------- both providers agree
def scripted(case_id: str) -> int:
    return {"a": 5, "b": 1, "c": 3, "d": 4}[case_id]


def test_the_same_scripted_replies_give_the_same_scores_through_both_providers(
        tmp_path: Path) -> None:
    cases = [GoldenCase(c, f"question {c}", expected=f"answer {c}") for c in "abcd"]
    resp = [TargetResponse(text=f"response {c.id}") for c in cases]

    def case_of(request_text: str) -> str:
        return next(c.id for c in cases if f"question {c.id}\n" in request_text)

    anthropic = LLMJudge("Is it right?", model="m", client=FakeAnthropic(lambda req: tool_reply(
        scripted(case_of(req["messages"][0]["content"])))), cache_path=tmp_path / "a.db")
    with ChatCompletionsServer(lambda req: chat_tool_reply(
            scripted(case_of(req["messages"][-1]["content"])))) as tool_server, \
            ChatCompletionsServer(lambda req: chat_json_reply(
                scripted(case_of(req["messages"][-1]["content"])))) as json_server:
        via_tool = judge(tool_server, cache_path=tmp_path / "o.db")
        via_json = judge(json_server, grade_via="json_schema", cache_path=tmp_path / "j.db")
        scores = {name: [j(r, c) for r, c in zip(resp, cases, strict=True)]
                  for name, j in (("anthropic", anthropic), ("tool", via_tool),
                                  ("json", via_json))}
    assert scores == {"anthropic": [5.0, 1.0, 3.0, 4.0], "tool": [5.0, 1.0, 3.0, 4.0],
                      "json": [5.0, 1.0, 3.0, 4.0]}
    # the same user message reaches both APIs
    assert anthropic.render(resp[0], cases[0]) == via_tool.request(resp[0], cases[0])[
        "messages"][-1]["content"]


# ---------------------------------------------------------------- cache and budget
def test_the_cache_key_covers_provider_endpoint_model_and_request(tmp_path: Path) -> None:
    with ChatCompletionsServer() as one, ChatCompletionsServer() as two:
        cache = tmp_path / "shared.sqlite"
        a = judge(one, cache_path=cache)
        keys = {
            "openai one": a.key(RESPONSE, CASE),
            "openai two": judge(two, cache_path=cache).key(RESPONSE, CASE),
            "json": judge(one, grade_via="json_schema").key(RESPONSE, CASE),
            "model": LLMJudge("Is it right?", model="gpt-other", provider="openai",
                              base_url=one.api_base).key(RESPONSE, CASE),
            "anthropic": LLMJudge("Is it right?", model="gpt-test",
                                  client=FakeAnthropic()).key(RESPONSE, CASE),
            "anthropic there": LLMJudge("Is it right?", model="gpt-test",
                                        client=FakeAnthropic(),
                                        base_url=one.base_url).key(RESPONSE, CASE),
        }
        assert len(set(keys.values())) == len(keys)
        # a header or a key is never part of it
        same = judge(one, headers={"X-Other": "x"}).key(RESPONSE, CASE)
        assert same == keys["openai one"]
        a(RESPONSE, CASE)
        again = judge(one, cache_path=cache)
        assert again(RESPONSE, CASE) == 3.0 and len(one.requests) == 1
        assert again.details("c1")["cached"] is True  # type: ignore[index]
        judge(two, cache_path=cache)(RESPONSE, CASE)  # another endpoint: asked again
        assert len(two.requests) == 1


def test_budget_counts_and_prices_openai_grades(tmp_path: Path) -> None:
    cases = [GoldenCase(f"c{i}", f"question {i}") for i in range(5)]
    with ChatCompletionsServer() as server:
        # 100 input and 20 output tokens at $1 / $5 per million: $0.0002 a grade
        j = judge(server, prices={"gpt-test": (1.0, 5.0)})
        budget = Budget(max_calls=3)
        with use_budget(budget), pytest.raises(BudgetExhausted):
            for c in cases:
                j(RESPONSE, c)
        assert len(server.requests) == 3
        details = j.details("c0")
        assert details is not None and details["cost_usd"] == pytest.approx(0.0002)
        # without a price for the model, a cost limit stops before the first request
        unpriced = judge(server)
        with use_budget(Budget(max_cost=1.0)), pytest.raises(BudgetExhausted):
            unpriced(RESPONSE, GoldenCase("x", "never sent"))
        assert len(server.requests) == 3
        # a dry run sends nothing and prices what it would send
        dry = Budget(dry_run=True)
        with use_budget(dry):
            for c in cases:
                with pytest.raises(JudgeError, match="dry run"):
                    judge(server, prices={"gpt-test": (1.0, 5.0)})(TargetResponse(
                        text="new"), c)
        assert len(server.requests) == 3
        report = dry.report()
        assert report["would_request"] == 5 and report["estimated_cost_usd"] > 0


def test_cached_prompt_tokens_are_priced_as_cache_reads() -> None:
    reply = chat_tool_reply(4, prompt_tokens=1000, completion_tokens=10)
    reply["usage"]["prompt_tokens_details"] = {"cached_tokens": 800}
    with ChatCompletionsServer(script=[reply]) as server:
        j = judge(server, prices={"gpt-test": {"input": 2.0, "output": 8.0,
                                               "cache_read": 0.5}})
        j(RESPONSE, CASE)
    details = j.details("c1")
    assert details is not None
    assert (details["input_tokens"], details["cache_read_input_tokens"]) == (200, 800)
    # (200 x 2 + 800 x 0.5 + 10 x 8) / 1e6
    assert details["cost_usd"] == pytest.approx(880 / 1e6)


def test_secrets_never_reach_the_cache_or_the_record(tmp_path: Path) -> None:
    echo = chat_content_reply(f"your key is {KEY} and header {HEADER_SECRET}")
    with ChatCompletionsServer(script=[echo, chat_tool_reply(
            4, f"saw {KEY}")]) as server:
        j = judge(server, cache_path=tmp_path / "c.sqlite",
                  headers={"X-Org": HEADER_SECRET})
        with pytest.raises(JudgeError) as err:
            j(RESPONSE, CASE)
        assert j(RESPONSE, CASE) == 4.0
    assert KEY not in str(err.value)
    j.cache.close()  # type: ignore[union-attr]
    for path in tmp_path.iterdir():
        data = path.read_bytes()
        assert KEY.encode() not in data and HEADER_SECRET.encode() not in data, path
    with sqlite3.connect(tmp_path / "c.sqlite") as db:
        assert db.execute("select count(*) from rejected").fetchone() == (1,)
    record = json.dumps(j.record())
    assert KEY not in record and HEADER_SECRET not in record
    assert j.record()["headers"] == {"X-Org": "<redacted>"}
