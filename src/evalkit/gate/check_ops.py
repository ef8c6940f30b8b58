"""The vocabulary of a check: its operators, levels and baseline rules, and the threshold
comparison. Standard library only, so the records that carry checks import no validator.
"""

from __future__ import annotations

import math
from typing import Literal

#: A threshold check's operator.
Op = Literal["<=", ">=", "=="]
#: ``block`` decides the exit code, ``warn`` is reported only.
Level = Literal["block", "warn"]
#: What a baseline check requires of the run.
BaselineRule = Literal["no_significant_regression"]

#: The comparison operators a threshold check accepts.
OPS: tuple[Op, ...] = ("<=", ">=", "==")
#: The levels a check may have.
LEVELS: tuple[Level, ...] = ("block", "warn")
#: The rules a baseline check (``vs_baseline``) may state.
BASELINE_RULES: tuple[BaselineRule, ...] = ("no_significant_regression",)
#: The significance level of a baseline check that gives none.
DEFAULT_ALPHA = 0.05

#: The fixed tolerance of ``==`` (not configurable): ``math.isclose`` with these values.
EQ_REL_TOL = 1e-9
#: The absolute tolerance of ``==`` (with :data:`EQ_REL_TOL`).
EQ_ABS_TOL = 1e-12


def compare_threshold(observed: float, op: Op, threshold: float) -> bool:
    """Whether ``observed op threshold`` holds.

    ``<=`` and ``>=`` are exact (the boundary itself passes). ``==`` is
    ``math.isclose(observed, threshold, rel_tol=1e-9, abs_tol=1e-12)``. A NaN never
    satisfies any op.

    Raises:
        ValueError: ``op`` is not one of :data:`OPS`.
    """
    if math.isnan(observed) or math.isnan(threshold):
        return False
    if op == "<=":
        return observed <= threshold
    if op == ">=":
        return observed >= threshold
    if op == "==":
        return math.isclose(observed, threshold, rel_tol=EQ_REL_TOL, abs_tol=EQ_ABS_TOL)
    raise ValueError(f"unknown op {op!r}; use one of {', '.join(OPS)}")


__all__ = [
    "BASELINE_RULES",
    "DEFAULT_ALPHA",
    "EQ_ABS_TOL",
    "EQ_REL_TOL",
    "LEVELS",
    "OPS",
    "BaselineRule",
    "Level",
    "Op",
    "compare_threshold",
]
