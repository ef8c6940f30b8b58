"""The example's local plugin (``[tool.evalkit] local_plugins`` in pyproject.toml): it
registers ``correctness``, an LLM judge, as a higher-is-better metric, which also gives
the pairwise verdicts of ``evalkit pairwise --judge correctness``.

The judge is evalkit-judge's real ``LLMJudge`` on the plugin's fake Anthropic client
(``evalkit_judge.testing.FakeAnthropic``), whose grader answers every request from the
request itself: it reads the ``<response>`` and ``<answers>`` the judge sends and grades
on 1-5: 5 when the response is one of the answers (after SQuAD's normalisation), 4 when
it contains one, 2 when it shares a word with one, else 1. Asked for a pairwise verdict,
it grades both answers so and prefers the higher grade (a tie when equal), whatever the
order they are shown in: this fake judge has no position bias. Usage is counted as an API
would bill it (input tokens a quarter of the characters), so the judge's cost is real
arithmetic on fake numbers.

The judge is built on its first grade, so a command that only reads the metric's
polarity (``evalkit gate``, ``evalkit compare``, ``evalkit plugins list``) opens no grade
cache and imports no judge. Its grades, their cost and the run's judge totals reach the
rows through the judge's ``details`` and ``summarize_details``, as if it were registered
directly.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec

if TYPE_CHECKING:
    from evalkit_judge import LLMJudge

    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse

#: the grade cache, shared by the runs of both systems (identical answers are graded once)
CACHE = Path(os.environ.get("LLM_OFFLINE_OUT", Path(__file__).parent / "out")) \
    / "judge-cache.sqlite"
#: The judge's model and its price, US dollars per million (input, output) tokens.
JUDGE_MODEL = "judge-small"
JUDGE_PRICES = {JUDGE_MODEL: (1.00, 5.00)}
RUBRIC = ("5: the response is a correct answer, nothing more. 4: it contains a correct "
          "answer. 2: it is related but not correct. 1: it is wrong.")


def _block(content: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", content, re.DOTALL)
    return found.group(1) if found else ""


def score_of(response: str, answers: list[str]) -> tuple[int, str]:
    """The 1-5 grade of ``response`` against the reference ``answers`` (and its reason)."""
    from evalkit_text.squad import normalize_answer

    said = normalize_answer(response)
    normal = [normalize_answer(a) for a in answers]
    words = set(said.split())
    if said in normal:
        return 5, "the response is a correct answer"
    if any(a and f" {a} " in f" {said} " for a in normal):
        return 4, "the response contains a correct answer"
    if any(words & set(a.split()) for a in normal):
        return 2, "the response is related to the answer but not correct"
    return 1, "the response is wrong"


def grade(request: dict[str, Any]) -> dict[str, Any]:
    """The reply to one request: a ``record_grade`` tool call for a grading request, a
    ``record_verdict`` one for a pairwise request (the answer with the higher grade is
    better, equal grades a tie: the verdict does not depend on the order)."""
    from evalkit_judge.testing import tool_reply, verdict_reply

    content = str(request["messages"][0]["content"])
    tokens = len(content) // 4
    if request["tools"][0]["name"] == "record_verdict":
        answers = json.loads(_block(content, "reference") or "[]")
        first = score_of(_block(content, "answer_a"), answers)[0]
        second = score_of(_block(content, "answer_b"), answers)[0]
        verdict = "A" if first > second else "B" if second > first else "tie"
        return verdict_reply(verdict, f"grades {first} and {second}", model=JUDGE_MODEL,
                             input_tokens=tokens, output_tokens=25)
    answers = json.loads(_block(content, "answers") or "[]")
    score, reason = score_of(_block(content, "response"), answers)
    return tool_reply(score, reason, model=JUDGE_MODEL, input_tokens=tokens, output_tokens=25)


def make_judge(cache_path: Path) -> LLMJudge:
    """The example's judge: the real LLMJudge on the fake client, with a grade cache."""
    from evalkit_judge import LLMJudge
    from evalkit_judge.testing import FakeAnthropic

    return LLMJudge(RUBRIC, model=JUDGE_MODEL, scale=5, client=FakeAnthropic(grade),
                    cache_path=cache_path, prices=JUDGE_PRICES)


class LazyJudge:
    """``make_judge(CACHE)``, built on the first grade."""

    def __init__(self) -> None:
        self._judge: LLMJudge | None = None
        self._lock = threading.Lock()

    def _get(self) -> LLMJudge:
        with self._lock:
            if self._judge is None:
                CACHE.parent.mkdir(parents=True, exist_ok=True)
                self._judge = make_judge(CACHE)
            return self._judge

    def __call__(self, response: TargetResponse, case: GoldenCase) -> float:
        return self._get()(response, case)

    def llm_judge(self) -> LLMJudge:
        """The judge itself: what ``evalkit pairwise --judge correctness`` asks."""
        return self._get()

    def details(self, case_id: str) -> dict[str, Any] | None:
        return None if self._judge is None else self._judge.details(case_id)

    def summarize_details(self, rows: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
        from evalkit_judge import summarize

        return summarize(rows)


@hookimpl
def evalkit_register_metrics() -> list[MetricSpec]:
    """``correctness``: the fake-client LLM judge's 1-5 grade."""
    return [MetricSpec("correctness", LazyJudge(), True,
                       description="LLM judge (fake client): 1-5 grade against the answers")]
