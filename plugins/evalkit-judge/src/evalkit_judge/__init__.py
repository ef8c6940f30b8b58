"""evalkit-judge: an LLM-as-judge metric for paired-evalkit, on the Anthropic API.

``LLMJudge(rubric, model, scale)`` grades ``(response, case)`` with one forced, strict
tool call and caches every grade in SQLite (:class:`GradeCache`); a :class:`Budget`
bounds the requests and money of a run, or counts them in a dry run.
"""

from __future__ import annotations

from evalkit_judge.budget import (
    Budget,
    BudgetExhausted,
    GradeNotRequested,
    JudgeError,
    JudgeUnavailable,
    ModelPrice,
    Usage,
    active_budget,
    price_table,
    use_budget,
)
from evalkit_judge.cache import CacheError, GradeCache, JudgeCacheWarning
from evalkit_judge.judge import TOOL_NAME, Grade, LLMJudge, summarize

__version__ = "0.3.0"

__all__ = [
    "TOOL_NAME",
    "Budget",
    "BudgetExhausted",
    "CacheError",
    "Grade",
    "GradeCache",
    "GradeNotRequested",
    "JudgeCacheWarning",
    "JudgeError",
    "JudgeUnavailable",
    "LLMJudge",
    "ModelPrice",
    "Usage",
    "__version__",
    "active_budget",
    "price_table",
    "summarize",
    "use_budget",
]
