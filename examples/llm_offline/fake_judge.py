"""The example's judge model: an OpenAI-compatible Chat Completions server on 127.0.0.1
(``evalkit_judge.testing.ChatCompletionsServer``, a free port) that grades every request
from the request itself, as a strict judge model would.

It reads the ``<response>`` and ``<answers>`` the judge sends and calls the forced
function ``record_grade`` on 1-5: 5 when the response is one of the answers (after SQuAD's
normalisation), 4 when it contains one, 2 when it shares a word with one, else 1. Asked
for a pairwise verdict (``evalkit pairwise``: the forced function ``record_verdict``), it
grades both answers so and prefers the higher grade (a tie when equal), whatever the
order they are shown in: this fake judge has no position bias. Usage
is reported as an API would bill it (prompt tokens a quarter of the characters, 25
completion tokens), so the judge's cost is real arithmetic on fake numbers.

The judge itself is declared in ``v1.yaml`` and ``v2.yaml`` (``judges:``), whose
``base_url: ${LLM_OFFLINE_JUDGE_URL}`` ``run_offline.py`` points at this server.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evalkit_judge.testing import ChatCompletionsServer, chat_tool_reply, chat_verdict_reply

#: The environment variable the configs read the judge's base URL from.
URL_VARIABLE = "LLM_OFFLINE_JUDGE_URL"
#: The judge's model (the configs name it, and price it at $1 / $5 per million tokens).
JUDGE_MODEL = "judge-small"


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
    """The reply to one request: a ``record_grade`` function call for a grading request,
    a ``record_verdict`` one for a pairwise request (the answer with the higher grade is
    better, equal grades a tie: the verdict does not depend on the order)."""
    content = str(request["messages"][-1]["content"])
    tokens = len(content) // 4
    if request["tools"][0]["function"]["name"] == "record_verdict":
        answers = json.loads(_block(content, "reference") or "[]")
        first = score_of(_block(content, "answer_a"), answers)[0]
        second = score_of(_block(content, "answer_b"), answers)[0]
        verdict = "A" if first > second else "B" if second > first else "tie"
        return chat_verdict_reply(verdict, f"grades {first} and {second}", model=JUDGE_MODEL,
                                  prompt_tokens=tokens, completion_tokens=25)
    score, reason = score_of(_block(content, "response"),
                             json.loads(_block(content, "answers") or "[]"))
    return chat_tool_reply(score, reason, model=JUDGE_MODEL, prompt_tokens=tokens,
                           completion_tokens=25)


def FakeJudge() -> ChatCompletionsServer:
    """The judge server, not yet started (use it as a context manager)."""
    return ChatCompletionsServer(grade)
