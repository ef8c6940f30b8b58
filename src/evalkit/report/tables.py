"""Runs, comparisons and gates as plain columns: what ``to_pandas()`` turns into DataFrames
and ``evalkit eval --csv`` writes, without pandas.

Each function returns ``{column name: [value, ...]}`` (insertion-ordered, every list of one
length), with ``None`` where a value is missing; :mod:`evalkit.report.frames` makes DataFrames of
them and :func:`write_csv` writes them with the standard library's :mod:`csv`.

* :func:`run_columns`: one row per query (or case, or sample), in the run's order (a
  TREC run's, which evalkit keeps in text order, in natural order: ``2`` before ``10``):
  ``qid``, ``sample`` (runs with repeated samples only), one column per metric (the
  union over the rows, in first-seen order), one per count (``num_ret``, ``num_rel``,
  ...), then ``error`` (the failed target call's message) and ``latency_ms``.
* :func:`comparison_columns`: one row per (candidate, metric), every scalar field of
  :class:`~evalkit.comparison.MetricComparison`; :func:`comparison_long_columns`: ``qid,
  system, metric, value`` per paired query, as PyTerrier's ``perquery=True``.
* :func:`gate_columns`: one row per check.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.comparison.model import Comparison
    from evalkit.data.results import RunResult
    from evalkit.gate.verdicts import GateReport

#: A table as ``{column name: [value, ...]}``, every list of one length.
Columns = dict[str, list[Any]]

#: The scalar fields of a MetricComparison, in the order of the comparison's table.
COMPARISON_FIELDS: tuple[str, ...] = (
    "candidate", "baseline", "metric", "n_queries", "baseline_mean", "candidate_mean",
    "diff", "ci_low", "ci_high", "p_value", "p_adjusted", "p_note", "significant",
    "significant_unadjusted", "wins", "ties", "losses", "higher_is_better",
    "standardized_effect", "method", "ci_method", "p_resamples",
)

#: The columns of a gate's table (:func:`gate_columns`).
GATE_FIELDS: tuple[str, ...] = (
    "check", "metric", "kind", "level", "verdict", "observed", "op", "threshold", "scope",
    "evaluated", "covered", "metric_kind", "baseline_value", "difference", "ci_low",
    "ci_high", "p_value", "p_adjusted", "alpha", "method", "n_cases", "message",
)


def _union(rows: list[Any], attr: str) -> list[str]:
    names: dict[str, None] = {}
    for r in rows:
        for name in getattr(r, attr, None) or {}:
            names.setdefault(str(name), None)
    return list(names)


def column_names(run: RunResult) -> tuple[list[str], list[str]]:
    """``(metrics, counts)``: every metric and every count some row of ``run`` holds, in
    first-seen order (the columns :func:`run_columns` gives them)."""
    rows = list(run.per_query)
    return _union(rows, "metrics"), _union(rows, "counts")


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key of an id in natural order: its runs of digits compare as numbers
    (``"2"`` before ``"10"``, ``"q2"`` before ``"q10"``), the rest as text; ids equal
    as numbers (``"7"``, ``"007"``) fall back to the text."""
    parts = re.split(r"(\d+)", text)
    return (*((int(p) if i % 2 else p) for i, p in enumerate(parts)), text)


def row_order(ids: Sequence[str]) -> list[int]:
    """The positions of ``ids`` in the order a table lists them: the run's own order, or,
    when the ids are in text order (``"1", "10", "100", "2"``: how evalkit keeps a TREC
    run's or a DataFrame's rows, as trec_eval prints them), natural order (``"1", "2",
    "10", "100"``, :func:`natural_key`)."""
    positions = list(range(len(ids)))
    if all(ids[i] <= ids[i + 1] for i in range(len(ids) - 1)):
        positions.sort(key=lambda i: natural_key(ids[i]))
    return positions


def run_columns(run: RunResult, metrics: Sequence[str] | None = None,
                counts: Sequence[str] | None = None) -> Columns:
    """One row per row of ``run`` (see the module docstring), in the run's order, or in
    natural order of the ids when they are stored in text order (:func:`row_order`).

    Metric values are floats (``None`` where a row has no value: the metric or the call
    failed there); counts keep their stored type; ``latency_ms`` is ``None`` for rows of
    a precomputed run. ``metrics`` and ``counts`` choose those columns (default: every
    metric and count of the rows), as ``evalkit eval -m`` does.

    Raises:
        ValueError: a metric and a count share a name, or a metric is named like one of
            the id or error columns.
    """
    rows = list(run.per_query)
    rows = [rows[i] for i in row_order([str(r.query_id) for r in rows])]
    all_metrics, all_counts = column_names(run)
    metrics = all_metrics if metrics is None else list(metrics)
    counts = all_counts if counts is None else list(counts)
    fixed = ["qid", "sample", "error", "latency_ms"]
    clash = [n for n in metrics + counts if n in fixed] or sorted(set(metrics) & set(counts))
    if clash:
        raise ValueError(f"run {run.name!r}: {', '.join(clash)} would name two columns")
    out: Columns = {"qid": [str(r.query_id) for r in rows]}
    if any(getattr(r, "sample", None) is not None for r in rows):
        out["sample"] = [getattr(r, "sample", None) for r in rows]
    for m in metrics:
        out[m] = [None if m not in r.metrics else float(r.metrics[m]) for r in rows]
    for c in counts:
        out[c] = [(getattr(r, "counts", None) or {}).get(c) for r in rows]
    out["error"] = [getattr(r, "error", None) for r in rows]
    out["latency_ms"] = [getattr(r, "latency_ms", None) for r in rows]
    return out


def comparison_columns(c: Comparison) -> Columns:
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


def comparison_long_columns(c: Comparison) -> Columns:
    """``qid, system, metric, value``: every paired query's value of every compared metric
    in every run, by run (baseline first), then metric, then query id (in natural order,
    :func:`row_order`)."""
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


def gate_columns(g: GateReport) -> Columns:
    """One row per check of ``g``, in check order (:data:`GATE_FIELDS`): the check, its
    verdict, the run's value and the rule, coverage, and for a baseline check its
    statistics (``None`` elsewhere)."""
    out: Columns = {f: [] for f in GATE_FIELDS}
    for r in g.results:
        d = r.to_dict()
        comp: Mapping[str, Any] = d["comparison"] or {}
        row = {
            "check": d["id"], "metric": d["metric"], "kind": d["kind"], "level": d["level"],
            "verdict": d["verdict"], "observed": r.observed, "op": d["op"],
            "threshold": d["threshold"],
            "scope": None if d["scope"] is None else ",".join(map(str, d["scope"])),
            "evaluated": r.evaluated, "covered": r.covered, "metric_kind": r.metric_kind,
            "message": r.message or None,
        }
        for key in ("baseline_value", "difference", "ci_low", "ci_high", "p_value",
                    "p_adjusted", "alpha", "method", "n_cases"):
            row[key] = comp.get(key)
        for f in GATE_FIELDS:
            out[f].append(row[f])
    return out


def csv_text(columns: Columns) -> str:
    """The columns as CSV text (a header line, then one line per row; RFC 4180 quoting).

    Each cell, the header's included, is :func:`evalkit.report.escaping.csv_cell`: empty
    for None and NaN, floats as their ``repr`` (they read back exactly), and text that a
    spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab or carriage return
    first) with a leading ``'``, so that Excel and LibreOffice show it as text."""
    from evalkit.report.escaping import csv_cell

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    names = list(columns)
    writer.writerow([csv_cell(name) for name in names])
    n = len(columns[names[0]]) if names else 0
    for i in range(n):
        writer.writerow([csv_cell(columns[name][i]) for name in names])
    return buf.getvalue()


def write_csv(columns: Columns, path: str | Path) -> Path:
    """Write :func:`csv_text` of ``columns`` to ``path``, atomically and with registered
    secrets masked (:func:`evalkit.io.outputs.write_output`).

    Raises:
        evalkit.io.outputs.UnwritableError: the file cannot be written.
    """
    from evalkit.io.outputs import write_output
    from evalkit.io.redaction import mask

    return write_output(Path(path), mask(csv_text(columns)))


__all__ = ["COMPARISON_FIELDS", "GATE_FIELDS", "Columns", "column_names", "comparison_columns",
           "comparison_long_columns", "csv_text", "gate_columns", "natural_key", "row_order",
           "run_columns", "write_csv"]
