"""A golden case's reference ``answers`` reach the judge's request (so a case with answers
and no ``expected`` is graded against them), and a case without answers sends the request
it sent before the field existed (its cache key is unchanged)."""

from __future__ import annotations

import json

from evalkit_judge import LLMJudge
from evalkit_judge.testing import FakeAnthropic

from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse


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
