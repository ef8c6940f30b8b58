"""Metric helpers. ``LLMJudge`` comes from the ``evalkit-judge`` plugin when installed."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "LLMJudge":
        from evalkit.plugins.loading import import_optional

        mod = import_optional("evalkit_judge", "evalkit-judge", "LLMJudge")
        return mod.LLMJudge
    raise AttributeError(f"module 'evalkit.metrics' has no attribute {name!r}")
