"""The example's judge model: an OpenAI-compatible Chat Completions server on 127.0.0.1
(``evalkit_judge.testing.ChatCompletionsServer``, a free port) that grades every request
from the request itself, as a strict judge model would.

It reads the ``<response>`` and ``<answers>`` the judge sends and calls the forced
function ``record_grade`` on 1-5: 5 when the response is one of the answers (after SQuAD's
normalisation), 4 when it contains one, 2 when it shares a word with one, else 1. Usage
is reported as an API would bill it (prompt tokens a quarter of the characters, 25
completion tokens), so the judge's cost is real arithmetic on fake numbers.

The judge itself is declared in ``v1.yaml`` and ``v2.yaml`` (``judges:``), whose
``base_url: ${LLM_OFFLINE_JUDGE_URL}`` ``run_offline.py`` points at this server.
"""

from __future__ import annotations

import json
import re
from typing import Any

from evalkit_judge.testing import ChatCompletionsServer, chat_tool_reply

#: The environment variable the configs read the judge's base URL from.
URL_VARIABLE = "LLM_OFFLINE_JUDGE_URL"
#: The judge's model (the configs name it, and price it at $1 / $5 per million tokens).
JUDGE_MODEL = "judge-small"


def _block(content: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", content, re.DOTALL)
    return found.group(1) if found else ""


def grade(request: dict[str, Any]) -> dict[str, Any]:
    """The reply to one grading request (a ``record_grade`` function call)."""
    from evalkit_text.squad import normalize_answer

    content = str(request["messages"][-1]["content"])
    said = normalize_answer(_block(content, "response"))
    answers = [normalize_answer(a) for a in json.loads(_block(content, "answers") or "[]")]
    words = set(said.split())
    if said in answers:
        score, reason = 5, "the response is a correct answer"
    elif any(a and f" {a} " in f" {said} " for a in answers):
        score, reason = 4, "the response contains a correct answer"
    elif any(words & set(a.split()) for a in answers):
        score, reason = 2, "the response is related to the answer but not correct"
    else:
        score, reason = 1, "the response is wrong"
    return chat_tool_reply(score, reason, model=JUDGE_MODEL,
                           prompt_tokens=len(content) // 4, completion_tokens=25)


def FakeJudge() -> ChatCompletionsServer:
    """The judge server, not yet started (use it as a context manager)."""
    return ChatCompletionsServer(grade)
