"""Retrieval metric helpers at the import paths ``evalkit.metrics.*``.

Holds the adapters from ``(retrieved, relevant, k) -> float`` functions to per-case
metrics and ``register_retrieval_metric`` (:mod:`.retrieval`), and two facades:
:mod:`.core` re-exports the retrieval plugin's core functions and ``LLMJudge`` is the judge
plugin's, each imported on first use and naming what to install when missing.

May import: core, plugins, data.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "LLMJudge":  # a facade: the judge is the evalkit-judge plugin's
        try:
            from evalkit_judge import LLMJudge
        except ImportError as exc:
            from evalkit.plugins.loading import missing_plugin

            raise missing_plugin("evalkit-judge", name, exc) from exc
        return LLMJudge
    raise AttributeError(f"module 'evalkit.metrics' has no attribute {name!r}")
