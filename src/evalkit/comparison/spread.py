"""Repeated samples in a comparison: what K each run has, the note that runs with
different K are paired after reduction, and the within-case spread of each metric
(:mod:`evalkit.stats.spread`) when both runs have K >= 2 samples reduced by the mean.

Tests, intervals and verdicts never see the samples: they work on the reduced per-case
values (``RunResult.per_query``), paired by case id, so K samples never count as K cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.data.samples import parse_reduce, sample_scores
from evalkit.stats.spread import WithinCaseSpread, within_case_spread

__all__ = ["samples_record", "samples_warnings", "spread_of"]


def samples_record(run: Any) -> dict[str, Any] | None:
    """``{"epochs": K, "reduce": ...}`` of a run with repeated samples, else None."""
    if not getattr(run, "samples", None) or run.epochs < 2:
        return None
    recorded = run.header.get("samples") or {}
    return {"epochs": run.epochs, "reduce": parse_reduce(recorded.get("reduce")).spec}


def samples_warnings(runs: Sequence[Any]) -> list[str]:
    """One note when some run has repeated samples: each run's K and how its samples were
    reduced, and that pairing is by case on the reduced values."""
    records = [(r.name, samples_record(r)) for r in runs]
    if all(rec is None for _, rec in records):
        return []
    parts = [f"{name} K = {rec['epochs']} ({rec['reduce']})" if rec else f"{name} K = 1"
             for name, rec in records]
    differ = len({rec["epochs"] if rec else 1 for _, rec in records}) > 1
    return ["samples per case: " + ", ".join(parts) + "; every test is on the reduced "
            "per-case values, paired by case id" + (
                " (runs with different K are paired after reduction)" if differ else "")]


def spread_of(baseline: Any, candidate: Any, metric: str, ids: Sequence[str]
              ) -> WithinCaseSpread | None:
    """The within-case spread of ``candidate - baseline`` on ``metric`` over ``ids``, or
    None unless both runs have K >= 2 samples reduced by the mean (with ``max``, ``min``
    or ``all`` the reduced value is not a mean, and the decomposition does not hold)."""
    recs = [samples_record(r) for r in (baseline, candidate)]
    if any(rec is None or rec["reduce"] != "mean" for rec in recs):
        return None
    b, c = sample_scores(baseline, metric), sample_scores(candidate, metric)
    paired = [q for q in ids if q in b and q in c]
    try:
        return within_case_spread(b, c, paired)
    except ValueError:
        return None
