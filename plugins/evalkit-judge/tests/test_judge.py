"""LLMJudge with an in-process fake client: request shape, key, validation, details.

A golden case's reference ``answers`` reach the judge's request (so a case with answers
and no ``expected`` is graded against them), and a case without answers sends a request
with no answers block, the same request as a golden set without the field (so the same
cache key).

LLMJudge's ``timeout`` is checked when the judge is built, as HttpTarget's numeric
options are (plugins/evalkit-http/tests/test_http_options.py): NaN, infinities, zero,
negatives, booleans and text are refused before any request.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from evalkit_judge import TOOL_NAME, JudgeError, LLMJudge, summarize
from evalkit_judge.testing import FakeAnthropic, text_reply, tool_reply

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit.execute.scoring import MetricError, resolve_metrics, score_cases
from evalkit.plugins.default import use_registry


def case(cid: str = "c1", query: str = "What is 2+2?", **kw: Any) -> GoldenCase:
    return GoldenCase(id=cid, query=query, **kw)


def answer(text: str = "4", **kw: Any) -> TargetResponse:
    return TargetResponse(text=text, **kw)


def test_model_is_required_and_has_no_default() -> None:
    with pytest.raises(TypeError, match="model"):
        LLMJudge("Score correctness.")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="model="):
        LLMJudge("Score correctness.", model="")
    with pytest.raises(ValueError, match="rubric"):
        LLMJudge("  ", model="m")
    with pytest.raises(ValueError, match="scale"):
        LLMJudge("r", model="m", scale=1)
    with pytest.raises(ValueError, match="max_tokens"):
        LLMJudge("r", model="m", max_tokens=0)
    with pytest.raises(ValueError, match="temperature"):
        LLMJudge("r", model="m", temperature=-1)


def test_seed_import_path_resolves_to_the_plugin_class() -> None:
    from evalkit.metrics import LLMJudge as FromKernel

    assert FromKernel is LLMJudge


def test_request_is_a_forced_strict_tool_call() -> None:
    fake = FakeAnthropic(lambda req: tool_reply(4))
    judge = LLMJudge("Score correctness.", model="judge-a", scale=4, client=fake,
                     max_tokens=300, system="You are strict.")
    assert judge(answer(), case()) == 4.0
    (req,) = fake.calls
    assert req["model"] == "judge-a"
    assert req["max_tokens"] == 300
    assert req["system"] == "You are strict."
    assert "temperature" not in req
    assert req["tool_choice"] == {"type": "tool", "name": TOOL_NAME,
                                  "disable_parallel_tool_use": True}
    (tool,) = req["tools"]
    assert tool["name"] == TOOL_NAME and tool["strict"] is True
    schema = tool["input_schema"]
    assert schema["required"] == ["score", "reason"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["score"] == {
        "type": "integer", "enum": [1, 2, 3, 4], "description": "1 is the worst grade, 4 the best."
    }
    assert schema["properties"]["reason"]["type"] == "string"
    (msg,) = req["messages"]
    assert msg["role"] == "user"
    assert "Score correctness." in msg["content"] and "What is 2+2?" in msg["content"]


def test_temperature_is_sent_only_when_set() -> None:
    fake = FakeAnthropic()
    LLMJudge("r", model="m", client=fake, temperature=0)(answer(), case())
    assert fake.calls[0]["temperature"] == 0.0


def test_rendered_request_holds_case_fields_and_output_but_not_latency() -> None:
    judge = LLMJudge("r", model="m", client=FakeAnthropic())
    c = case(expected="four", context={"source": "arith"}, relevance={"d1": 2})
    text = judge.render(TargetResponse(text="4", ranked_ids=["d1", "d9"]), c)
    for piece in ("What is 2+2?", "four", '"source":"arith"', '"d1":2', "4",
                  '["d1","d9"]'):
        assert piece in text
    base = judge.key(answer(latency_ms=5.0), c)
    assert judge.key(answer(latency_ms=900.0, raw={"id": 1}, meta={"cost": 1}), c) == base
    assert judge.key(answer("5"), c) != base
    assert judge.key(answer(), case(expected="five", context={"source": "arith"},
                                    relevance={"d1": 2})) != base
    assert judge.key(answer(), case(expected="four", context={"source": "other"},
                                    relevance={"d1": 2})) != base
    assert judge.key(answer(), case(query="What is 3+1?", expected="four",
                                    context={"source": "arith"}, relevance={"d1": 2})) != base
    # sets are rendered in a stable order
    a = judge.key(answer(), case(expected={"x", "y", "z"}))
    b = judge.key(answer(), case(expected={"z", "y", "x"}))
    assert a == b


def test_key_is_sha256_of_canonical_request() -> None:
    judge = LLMJudge("r", model="m", client=FakeAnthropic())
    body = judge.request(answer(), case())
    text = json.dumps({"version": "evalkit-judge/1", "scale": 5, "rubric": "r",
                       "request": body}, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))
    assert judge.key(answer(), case()) == hashlib.sha256(text.encode()).hexdigest()


def test_c26_cache_key_covers_model_prompt_and_generation_parameters(tmp_path: Path) -> None:
    """Handed case C26: 6 calls in order, 4 API calls, 4 cache entries."""
    fake = FakeAnthropic(lambda req: tool_reply(3))
    cache = tmp_path / "judge.sqlite"
    steps = [("judge-a", "P", 0, 256), ("judge-a", "P", 0, 256), ("judge-b", "P", 0, 256),
             ("judge-a", "P", 0, 512), ("judge-a", "P (rubric edited)", 0, 256),
             ("judge-a", "P", 0, 256)]
    per_step = []
    for model, rubric, temperature, max_tokens in steps:
        before = fake.call_count
        judge = LLMJudge(rubric, model=model, client=fake, cache_path=cache,
                         temperature=temperature, max_tokens=max_tokens)
        assert judge(answer(), case()) == 3.0
        per_step.append(fake.call_count - before)
    assert per_step == [1, 0, 1, 1, 1, 0]
    assert fake.call_count == 4
    assert len(LLMJudge("P", model="judge-a", cache_path=cache).cache or []) == 4


@pytest.mark.parametrize("change", [
    {"system": "Be lenient."}, {"scale": 10}, {"temperature": 0.5}, {"max_tokens": 2048},
    {"model": "judge-b"}, {"rubric": "Score style."},
])
def test_every_grade_shaping_parameter_is_in_the_key(tmp_path: Path,
                                                     change: dict[str, Any]) -> None:
    fake = FakeAnthropic(lambda req: tool_reply(2))
    args: dict[str, Any] = {"rubric": "Score correctness.", "model": "judge-a"}
    LLMJudge(**args, client=fake, cache_path=tmp_path / "c.sqlite")(answer(), case())
    LLMJudge(**args, client=fake, cache_path=tmp_path / "c.sqlite")(answer(), case())
    assert fake.call_count == 1
    LLMJudge(**{**args, **change}, client=fake,
             cache_path=tmp_path / "c.sqlite")(answer(), case())
    assert fake.call_count == 2


@pytest.mark.parametrize(("reply", "message"), [
    (tool_reply(6), "case 'c7'.*outside the scale 1-5"),
    (tool_reply(0), "case 'c7'.*outside the scale 1-5"),
    (tool_reply("4"), "case 'c7'.*not an integer"),
    (tool_reply(4.5), "case 'c7'.*not an integer"),
    (tool_reply(True), "case 'c7'.*not an integer"),
    (tool_reply(4, reason=None), "case 'c7'.*reason"),
    (text_reply(), "case 'c7'.*no record_grade tool call"),
    (tool_reply(4, name="other_tool"), "case 'c7'.*called 'other_tool'"),
    ({"content": "nonsense"}, "case 'c7'.*no record_grade tool call"),
])
def test_bad_replies_are_errors_naming_the_case_and_never_cached(
        tmp_path: Path, reply: dict[str, Any], message: str) -> None:
    fake = FakeAnthropic(lambda req: reply)
    judge = LLMJudge("r", model="m", client=fake, cache_path=tmp_path / "c.sqlite")
    for _ in range(2):
        with pytest.raises(JudgeError, match=message):
            judge(answer(), case("c7"))
    assert fake.call_count == 2  # nothing was cached, so both were requested
    assert judge.cache is not None
    assert judge.cache.counts() == {"grades": 0, "rejected": 2, "seed_grades": 0}
    rejected = judge.details("c7")  # the reply was billed: the row keeps what it cost
    assert rejected is not None and "score" not in rejected
    assert re.search(message.split(".*")[1], rejected["rejected"])
    assert rejected["cached"] is False and rejected["source"] == "api"


def test_failed_call_is_an_error_naming_the_case_and_not_cached(tmp_path: Path) -> None:
    outcomes: list[Any] = [ConnectionError("network down"), tool_reply(5)]
    fake = FakeAnthropic(lambda req: outcomes.pop(0))
    judge = LLMJudge("r", model="m", client=fake, cache_path=tmp_path / "c.sqlite")
    with pytest.raises(JudgeError, match=r"case 'q1'.*network down"):
        judge(answer(), case("q1"))
    assert judge.cache is not None and len(judge.cache) == 0
    assert judge(answer(), case("q1")) == 5.0
    assert fake.call_count == 2


def test_as_a_registered_metric_errors_name_metric_and_case() -> None:
    fake = FakeAnthropic(lambda req: tool_reply(9))
    with use_registry(plugins=False) as reg:
        judge = LLMJudge("r", model="m", client=fake)
        reg.register_metric("helpfulness", higher_is_better=True)(judge)
        specs = resolve_metrics(["helpfulness"], reg)
        with pytest.raises(MetricError, match=r"'helpfulness'.*case 'z'.*outside"):
            score_cases([answer()], [case("z")], specs)
        assert reg.provider_of("helpfulness").module == __name__
        assert specs[0].description == "LLM judge m, scale 1-5"


def test_scores_through_score_cases() -> None:
    scores = {"good": 5, "bad": 1}
    fake = FakeAnthropic(lambda req: tool_reply(
        scores["good" if "<response>\ngood\n" in req["messages"][0]["content"] else "bad"]))
    with use_registry(plugins=False) as reg:
        reg.register_metric("quality", higher_is_better=True)(
            LLMJudge("r", model="m", client=fake))
        values = score_cases([answer("good"), answer("bad")], [case("a"), case("b")],
                             resolve_metrics(["quality"], reg))
    assert values == [{"quality": 5.0}, {"quality": 1.0}]


def test_details_and_summary_carry_usage_and_cost(tmp_path: Path) -> None:
    fake = FakeAnthropic(lambda req: tool_reply(4, "fine", model="m-2025",
                                                input_tokens=1000, output_tokens=200))
    judge = LLMJudge("r", model="m", client=fake, cache_path=tmp_path / "c.sqlite",
                     prices={"m": (3.0, 15.0)})
    judge(answer(), case("a"))
    first = judge.details("a")
    assert first is not None
    # 1000 * $3/M + 200 * $15/M = 0.003 + 0.003
    assert first["cost_usd"] == pytest.approx(0.006)
    assert (first["score"], first["reason"], first["model"], first["served_model"]) == \
        (4, "fine", "m", "m-2025")
    assert (first["input_tokens"], first["output_tokens"], first["cached"]) == \
        (1000, 200, False)
    judge(answer(), case("b"))  # same request: served from the cache
    second = judge.details("b")
    assert second is not None and second["cached"] is True and second["source"] == "cache"
    assert second["cost_usd"] == pytest.approx(0.006)
    assert fake.call_count == 1
    total = summarize([first, second, None])
    assert total["grades"] == 2 and total["requested"] == 1 and total["cached"] == 1
    # what was spent: the one request; the cached grade's original cost apart
    assert total["input_tokens"] == 1000 and total["output_tokens"] == 200
    assert total["cost_usd"] == pytest.approx(0.006)
    assert total["cached_cost_usd"] == pytest.approx(0.006)
    assert total["unpriced"] == 0 and total["models"] == ["m"]
    assert LLMJudge.summarize_details([first]) == summarize([first])


def test_details_are_replaced_when_a_later_grade_of_the_case_fails() -> None:
    outcomes: list[Any] = [tool_reply(3), tool_reply(99), ConnectionError("down")]
    judge = LLMJudge("r", model="m",
                     client=FakeAnthropic(lambda req: outcomes.pop(0)))
    judge(answer(), case("a"))
    assert judge.details("a") is not None
    with pytest.raises(JudgeError):
        judge(answer("other"), case("a"))
    found = judge.details("a")  # a rejected reply: what it cost, no score
    assert found is not None and "score" not in found and "99" in found["rejected"]
    with pytest.raises(JudgeError):
        judge(answer("third"), case("a"))
    failed = judge.details("a")  # no reply at all: the request counted, nothing billed
    assert failed is not None and failed["requests"] == 1 and "down" in failed["failed"]
    assert "score" not in failed and "cost_usd" not in failed


def test_sdk_message_objects_are_read(tmp_path: Path) -> None:
    from anthropic.types import Message

    reply = Message.model_validate(tool_reply(2, "meh", model="m"))
    judge = LLMJudge("r", model="m", client=FakeAnthropic(lambda req: reply),
                     cache_path=tmp_path / "c.sqlite")
    grade = judge.grade(answer(), case())
    assert (grade.score, grade.reason, grade.usage.input_tokens) == (2, "meh", 100)


def test_a_passed_sdk_client_gets_the_retry_setting() -> None:
    import anthropic

    client = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9", max_retries=0)
    judge = LLMJudge("r", model="m", client=client, max_retries=7)
    assert getattr(judge.api_client.current, "max_retries", None) == 7
    assert getattr(LLMJudge("r", model="m", client=client).api_client.current, "max_retries",
                   None) == 0


def test_plugin_is_discovered_through_its_entry_point() -> None:
    with use_registry() as reg:
        infos = [p for p in reg.plugins if p.distribution == "evalkit-judge"]
    assert len(infos) == 1
    assert infos[0].status == "loaded" and infos[0].version == "0.3.0"
    # the judges are defined and named by the client (in the config's `judges:` section,
    # which the plugin declares, or in Python): the plugin registers no metric itself,
    # only the cost and agreement aggregates, the `judges:` section and the pairwise and
    # agreement commands
    assert infos[0].hooks == ["evalkit_register_aggregates", "evalkit_register_commands",
                              "evalkit_register_config_sections"]
    assert infos[0].names == ["cost_total", "cost_per_case", "tokens_in_total",
                              "tokens_out_total", "judge_cost_total", "krippendorff_alpha",
                              "krippendorff_alpha_ordinal", "krippendorff_alpha_nominal",
                              "cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic",
                              "spearman_rho", "judge_abs_bias", "labelled_cases", "pairwise",
                              "agreement", "judges"]


def test_llmjudge_import_path_and_missing_plugin_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    from evalkit_judge import LLMJudge as Direct

    import evalkit.metrics

    assert evalkit.metrics.LLMJudge is Direct
    monkeypatch.setitem(sys.modules, "evalkit_judge", None)
    with pytest.raises(ImportError, match=r"LLMJudge is provided by the 'evalkit-judge' "
                       r"plugin.*pip install -e plugins/evalkit-judge"):
        evalkit.metrics.__getattr__("LLMJudge")


def sent(case: GoldenCase) -> str:
    client = FakeAnthropic()
    LLMJudge("Is it right?", model="m", client=client)(TargetResponse(text="Paris"), case)
    (request,) = client.calls
    content = request["messages"][0]["content"]
    assert isinstance(content, str)
    return content


def test_answers_are_sent_and_absent_answers_change_nothing() -> None:
    with_answers = sent(GoldenCase("c", "Capital of France?", answers=["Paris", "City of Paris"]))
    assert f"<answers>\n{json.dumps(['Paris', 'City of Paris'], separators=(',', ':'))}\n" \
           "</answers>" in with_answers
    without = sent(GoldenCase("c", "Capital of France?", expected="Paris"))
    assert "<answers>" not in without
    assert without == "\n\n".join([
        "Grade the response below against the rubric.", "<rubric>\nIs it right?\n</rubric>",
        "<scale>integers from 1 (worst) to 5 (best)</scale>",
        "<query>\nCapital of France?\n</query>", "<expected>\nParis\n</expected>",
        "<response>\nParis\n</response>", "Call record_grade once with the score and the reason."])


@pytest.mark.parametrize("value", [-1, 0, math.nan, math.inf, True, "30"])
def test_the_judges_timeout_is_checked_as_well(value: object) -> None:
    from evalkit_judge.judge import LLMJudge

    with pytest.raises(ValueError, match=r"^timeout must be a finite number of seconds > 0"):
        LLMJudge("Is it right?", model="claude-test", timeout=value)  # type: ignore[arg-type]
    assert LLMJudge("Is it right?", model="claude-test", timeout=2.5).timeout == 2.5
