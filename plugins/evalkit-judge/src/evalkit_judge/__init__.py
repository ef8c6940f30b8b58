"""evalkit-judge: an LLM-as-judge metric for paired-evalkit, on the Anthropic API, any
OpenAI-compatible endpoint, or a provider another package registers.

``LLMJudge(rubric, model, scale)`` grades ``(response, case)`` with one forced, strict
tool call (or a strict JSON schema reply) and caches every grade in SQLite
(:class:`GradeCache`); a :class:`Budget` bounds the requests and money of a run, or
counts them in a dry run. :func:`pairwise` compares the stored answers of two or more
runs with a judge's verdicts, in both orders, through the same provider.

Names are imported on first use, so discovering the plugin (``evalkit plugins list``)
imports neither sqlite3 nor the judge.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.3.0"

_EXPORTS: dict[str, str] = {
    "Budget": "evalkit_judge.budget",
    "BudgetExhausted": "evalkit_judge.budget",
    "GradeNotRequested": "evalkit_judge.budget",
    "JudgeError": "evalkit_judge.budget",
    "JudgeUnavailable": "evalkit_judge.budget",
    "ModelPrice": "evalkit_judge.budget",
    "Usage": "evalkit_judge.budget",
    "active_budget": "evalkit_judge.budget",
    "price_table": "evalkit_judge.budget",
    "use_budget": "evalkit_judge.budget",
    "CacheError": "evalkit_judge.cache",
    "GradeCache": "evalkit_judge.cache",
    "JudgeCacheWarning": "evalkit_judge.cache",
    "TOOL_NAME": "evalkit_judge.grades",
    "Grade": "evalkit_judge.grades",
    "LLMJudge": "evalkit_judge.judge",
    "JudgeProvider": "evalkit_judge.providers",
    "ProviderSettings": "evalkit_judge.providers",
    "RequestFailed": "evalkit_judge.providers",
    "Sent": "evalkit_judge.providers",
    "summarize": "evalkit_judge.grades",
    "PairwiseError": "evalkit_judge.pairwise",
    "PairwiseResult": "evalkit_judge.pairwise_artifact",
    "load_pairwise": "evalkit_judge.pairwise_artifact",
    "pairwise": "evalkit_judge.pairwise",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evalkit_judge' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    from evalkit_judge.budget import Budget as Budget
    from evalkit_judge.budget import BudgetExhausted as BudgetExhausted
    from evalkit_judge.budget import GradeNotRequested as GradeNotRequested
    from evalkit_judge.budget import JudgeError as JudgeError
    from evalkit_judge.budget import JudgeUnavailable as JudgeUnavailable
    from evalkit_judge.budget import ModelPrice as ModelPrice
    from evalkit_judge.budget import Usage as Usage
    from evalkit_judge.budget import active_budget as active_budget
    from evalkit_judge.budget import price_table as price_table
    from evalkit_judge.budget import use_budget as use_budget
    from evalkit_judge.cache import CacheError as CacheError
    from evalkit_judge.cache import GradeCache as GradeCache
    from evalkit_judge.cache import JudgeCacheWarning as JudgeCacheWarning
    from evalkit_judge.grades import TOOL_NAME as TOOL_NAME
    from evalkit_judge.grades import Grade as Grade
    from evalkit_judge.grades import summarize as summarize
    from evalkit_judge.judge import LLMJudge as LLMJudge
    from evalkit_judge.pairwise import PairwiseError as PairwiseError
    from evalkit_judge.pairwise import pairwise as pairwise
    from evalkit_judge.pairwise_artifact import PairwiseResult as PairwiseResult
    from evalkit_judge.pairwise_artifact import load_pairwise as load_pairwise
    from evalkit_judge.providers import JudgeProvider as JudgeProvider
    from evalkit_judge.providers import ProviderSettings as ProviderSettings
    from evalkit_judge.providers import RequestFailed as RequestFailed
    from evalkit_judge.providers import Sent as Sent
