"""A comparison as columns and DataFrames: what ``Comparison.to_pandas()`` returns.

* :func:`comparison_columns`: one row per (candidate, metric), every scalar field of
  :class:`~evalkit.comparison.MetricComparison` (:data:`COMPARISON_FIELDS`), plus, when
  some run has repeated samples, K and the within-case spread;
* :func:`comparison_long_columns`: ``qid, system, metric, value`` per paired query, as
  PyTerrier's ``pt.Experiment(..., perquery=True)``;
* :func:`comparison_frame`: either as a ``pandas.DataFrame`` (the optional extra
  ``paired-evalkit[pandas]``, :mod:`evalkit.tables.frames`).

The columns are plain lists (:data:`evalkit.tables.columns.Columns`), so
:func:`evalkit.report.tables.write_csv` writes them without pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.tables.columns import Columns, row_order
from evalkit.tables.frames import frame

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.comparison.records import ComparisonRecord

#: The scalar fields of a MetricComparison, in the order of the comparison's table.
COMPARISON_FIELDS: tuple[str, ...] = (
    "candidate", "baseline", "metric", "n_queries", "baseline_mean", "candidate_mean",
    "diff", "ci_low", "ci_high", "p_value", "p_adjusted", "p_note", "significant",
    "significant_unadjusted", "wins", "ties", "losses", "higher_is_better",
    "standardized_effect", "method", "ci_method", "p_resamples",
)


def comparison_columns(c: ComparisonRecord) -> Columns:
    """One row per result of ``c`` (per candidate and metric, in the comparison's order),
    one column per field of :data:`COMPARISON_FIELDS`. When some run has repeated samples
    (K >= 2) also ``k_baseline``, ``k_candidate`` (samples per case) and the within-case
    spread: ``within_share``, ``se_diff`` (now) and ``se_limit`` (unlimited samples),
    None where a pair has no spread (:mod:`evalkit.stats.spread`)."""
    out = {f: [getattr(r, f) for r in c.results] for f in COMPARISON_FIELDS}
    k = {run.name: int((run.provenance.get("samples") or {}).get("epochs") or 1)
         for run in c.runs}
    if any(v > 1 for v in k.values()):
        out["k_baseline"] = [k.get(r.baseline, 1) for r in c.results]
        out["k_candidate"] = [k.get(r.candidate, 1) for r in c.results]
        for col, attr in (("within_share", "within_share"), ("se_diff", "se"),
                          ("se_limit", "se_limit")):
            out[col] = [None if r.spread is None else getattr(r.spread, attr)
                        for r in c.results]
    return out


def comparison_long_columns(c: ComparisonRecord) -> Columns:
    """``qid, system, metric, value``: every paired query's value of every compared metric
    in every run, by run (baseline first), then metric, then query id (in natural order,
    :func:`evalkit.tables.columns.row_order`)."""
    values: dict[tuple[str, str], tuple[tuple[str, ...], tuple[float, ...]]] = {}
    for r in c.results:
        values.setdefault((r.baseline, r.metric), (r.query_ids, r.baseline_values))
        values.setdefault((r.candidate, r.metric), (r.query_ids, r.candidate_values))
    out: Columns = {"qid": [], "system": [], "metric": [], "value": []}
    for run in c.runs:
        for metric in c.metrics:
            ids, vals = values.get((run.name, metric), ((), ()))
            order = row_order(ids)
            out["qid"] += [ids[i] for i in order]
            out["system"] += [run.name] * len(ids)
            out["metric"] += [metric] * len(ids)
            out["value"] += [float(vals[i]) for i in order]
    return out


def comparison_frame(c: ComparisonRecord, long: bool = False) -> pd.DataFrame:
    """``c`` as a ``pandas.DataFrame``: one row per (candidate, metric)
    (:func:`comparison_columns`), or with ``long`` one row per (system, metric, query)
    with columns ``qid, system, metric, value`` (:func:`comparison_long_columns`).

    Raises:
        evalkit.tables.frames.MissingExtraError: pandas is not installed.
    """
    if long:
        return frame(comparison_long_columns(c), ("value",))
    return frame(comparison_columns(c), ("ci_low", "ci_high", "p_adjusted",
                                         "standardized_effect"))


__all__ = ["COMPARISON_FIELDS", "comparison_columns", "comparison_frame",
           "comparison_long_columns"]
