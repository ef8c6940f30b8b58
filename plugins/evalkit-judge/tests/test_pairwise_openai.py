"""Pairwise verdicts through the OpenAI provider: the Chat Completions wire format against
a real server on 127.0.0.1 (``ChatCompletionsServer``) gives the verdicts, statistics and
strengths the Anthropic provider gives for the same scripted judge, and refuses what is
not one conforming ``record_verdict`` answer, as grades are refused.

The scripted judge decides from the two answers it is shown (system ``c`` beats ``b``
beats ``a``; on even cases it prefers whatever is shown first when ``a`` meets ``b``), so
the known figures are hand counts: ``c`` wins all 6 cases against both, ``a`` vs ``b``
flips on the 3 even cases (ties) and loses the 3 odd ones, a win rate of 1.5 / 6 = 0.25.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import JudgeProvider, LLMJudge, ProviderSettings, Sent, pairwise
from evalkit_judge.pairwise import PairwiseError
from evalkit_judge.testing import (
    ChatCompletionsServer,
    FakeAnthropic,
    chat_content_reply,
    chat_tool_reply,
    chat_verdict_reply,
    verdict_reply,
)

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry

ANSWER = re.compile(r"<answer_(a|b)>\n(.*?)\n</answer_\1>", re.DOTALL)
RANK = {"a": 0, "b": 1, "c": 2}
RUBRIC = "The better answer is the more correct one."
GOLDEN = [GoldenCase(id=f"c{i}", query=f"question {i}") for i in range(6)]


class Named:
    def __init__(self, name: str) -> None:
        self.name = name

    def invoke(self, case: GoldenCase) -> TargetResponse:
        return TargetResponse(text=f"{self.name}|{case.id}")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("runs")
    paths = []
    with use_registry(plugins=False):
        for name in ("a", "b", "c"):
            path = folder / f"{name}.jsonl"
            evaluate(Named(name), GOLDEN, [], progress=False, artifact=path, name=name)
            paths.append(path)
    return paths


def decide(content: str) -> str:
    shown = dict(ANSWER.findall(content))
    (first, case), (second, _) = shown["a"].split("|"), shown["b"].split("|")
    if {first, second} == {"a", "b"} and int(case[1:]) % 2 == 0:
        return "A"  # position bias on even cases
    return "A" if RANK[first] > RANK[second] else "B"


def openai_judge(server: ChatCompletionsServer, cache: Path, **kw: Any) -> LLMJudge:
    return LLMJudge(RUBRIC, model="judge-m", provider="openai", base_url=server.api_base,
                    timeout=5.0, cache_path=cache, prices={"judge-m": (1.0, 5.0)}, **kw)


def summary(result: Any) -> tuple[Any, ...]:
    rows = sorted((r["id"], r["first"], r["second"], r["verdict"], r["winner"])
                  for r in result.rows)
    pairs = [{k: v for k, v in p.items()} for p in result.pairs]
    return rows, pairs, result.header["bradley_terry"]


def test_the_openai_provider_gives_the_anthropic_providers_verdicts(
        tmp_path: Path, runs: list[Path]) -> None:
    fake = FakeAnthropic(lambda req: verdict_reply(decide(req["messages"][0]["content"])))
    anthropic = LLMJudge(RUBRIC, model="judge-m", client=fake,
                         cache_path=tmp_path / "anthropic.sqlite",
                         prices={"judge-m": (1.0, 5.0)})
    expected = pairwise(runs, anthropic, goldens=GOLDEN, bt_resamples=50)
    with ChatCompletionsServer(lambda req: chat_verdict_reply(
            decide(req["messages"][-1]["content"]))) as server:
        got = pairwise(runs, openai_judge(server, tmp_path / "openai.sqlite"),
                       goldens=GOLDEN, bt_resamples=50)
        sent = list(server.requests)
        # asked again of the same endpoint: every verdict from the cache, nothing sent
        again = pairwise(runs, openai_judge(server, tmp_path / "openai.sqlite"),
                         goldens=GOLDEN, bt_resamples=50)
        assert len(server.requests) == len(sent)
    assert again.header["totals"]["cached"] == 36 and summary(again) == summary(got)
    assert summary(got) == summary(expected)
    assert fake.call_count == len(sent) == 6 * 3 * 2  # cases x pairs x orders
    # the hand counts of the module docstring
    pairs = {(p["a"], p["b"]): p for p in got.pairs}
    assert (pairs["a", "b"]["wins"], pairs["a", "b"]["ties"], pairs["a", "b"]["losses"]) \
        == (0, 3, 3)
    assert pairs["a", "b"]["win_rate"] == 0.25 and pairs["a", "b"]["flipped"] == 3
    assert pairs["a", "c"]["win_rate"] == 0.0 and pairs["b", "c"]["win_rate"] == 0.0
    # each request forced the strict record_verdict function, the verdict schema its
    # parameters
    body = sent[0]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "record_verdict"}}
    assert body["parallel_tool_calls"] is False
    (tool,) = body["tools"]
    assert tool["function"]["strict"] is True
    assert tool["function"]["parameters"] == {
        "type": "object", "additionalProperties": False, "required": ["verdict", "reason"],
        "properties": {"verdict": {"type": "string", "enum": ["A", "B", "tie"],
                                   "description": tool["function"]["parameters"][
                                       "properties"]["verdict"]["description"]},
                       "reason": {"type": "string", "description": tool["function"][
                           "parameters"]["properties"]["reason"]["description"]}}}
    # another endpoint (another port) shares no verdict: the key covers the provider's
    # scope
    with ChatCompletionsServer(lambda req: chat_verdict_reply("tie")) as other:
        pairwise(runs[:2], openai_judge(other, tmp_path / "openai.sqlite"), goldens=GOLDEN)
        assert len(other.requests) == 12


def test_json_schema_mode_gives_the_same_verdicts(tmp_path: Path, runs: list[Path]) -> None:
    def reply(req: dict[str, Any]) -> dict[str, Any]:
        assert "tools" not in req
        fmt = req["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "record_verdict"
        assert fmt["json_schema"]["strict"] is True
        verdict = decide(req["messages"][-1]["content"])
        return chat_content_reply(json.dumps({"verdict": verdict, "reason": "scripted"}))

    with ChatCompletionsServer(reply) as server:
        got = pairwise(runs[:2], openai_judge(server, tmp_path / "c.sqlite",
                                              grade_via="json_schema"), goldens=GOLDEN)
    (pair,) = got.pairs
    assert (pair["wins"], pair["ties"], pair["losses"], pair["win_rate"]) == (0, 3, 3, 0.25)


@pytest.mark.parametrize(("reply", "message"), [
    (chat_content_reply("A is better."), "no record_verdict function call"),
    (chat_verdict_reply("A", finish_reason="length"), "finish_reason='length'"),
    (chat_tool_reply(None, name="record_verdict",
                     arguments='{"verdict": "A", "reason": "ok", "score": 5}'),
     "'score' the schema does not allow"),
    (chat_verdict_reply("C"), "not one of 'A', 'B', 'tie'"),
    (chat_tool_reply(4), "called 'record_grade', not record_verdict"),
    (chat_tool_reply(None, name="record_verdict", arguments="A, because"),
     "never read from prose"),
])
def test_a_reply_that_is_not_a_verdict_is_refused_and_kept_as_rejected(
        tmp_path: Path, runs: list[Path], reply: dict[str, Any], message: str) -> None:
    with ChatCompletionsServer(lambda req: reply) as server:
        judge = openai_judge(server, tmp_path / "c.sqlite")
        result = pairwise(runs[:2], judge, goldens=GOLDEN)
    assert result.header["totals"]["errors"] == 12  # 6 cases x 2 orders
    assert all(message in r["error"] for r in result.rows), result.rows
    assert judge.cache is not None and judge.cache.counts()["rejected"] == 12


def test_a_provider_that_reads_only_grades_is_refused_before_anything_is_sent(
        runs: list[Path]) -> None:
    class GradesOnly(JudgeProvider):
        name = "grades-only"

        def request(self, prompt: Any, message: str) -> dict[str, Any]:
            return {"input": message}

        def send(self, body: dict[str, Any]) -> Sent:
            raise AssertionError("nothing is sent")

        def parse(self, reply: Any, scale: int) -> tuple[int, str]:
            return 1, ""

    judge = LLMJudge(RUBRIC, model="m", provider=GradesOnly(ProviderSettings(model="m")))
    with pytest.raises(PairwiseError, match="'grades-only' reads grades but not pairwise "
                                            "verdicts: it implements no tool_input"):
        pairwise(runs[:2], judge, goldens=GOLDEN)
