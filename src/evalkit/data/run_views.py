"""A run as a table: its columns, its DataFrame, its Parquet file and its notebook view.

What ``RunResult.to_pandas()`` and ``_repr_html_()`` show and ``evalkit eval --csv`` and
``--parquet`` write, made from the run's rows by the generic tables of
:mod:`evalkit.tables`:

* :func:`run_columns`: one row per query (or case, or sample), in the run's order (a
  TREC run's, which evalkit keeps in text order, in natural order: ``2`` before ``10``):
  ``qid``, ``sample`` (runs with repeated samples only), one column per metric (the
  union over the rows, in first-seen order), one per count (``num_ret``, ``num_rel``,
  ...), then ``error`` (the failed target call's message) and ``latency_ms``;
* :func:`run_frame`: those columns as a ``pandas.DataFrame`` (the optional extra
  ``paired-evalkit[pandas]``), as PyTerrier's per-query results; :func:`write_parquet`
  writes it to a Parquet file;
* :func:`run_html`: Jupyter's view, per metric its mean and per count its total.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.data.summaries import mean_value
from evalkit.tables.cells import number_cell
from evalkit.tables.columns import Columns, row_order
from evalkit.tables.frames import frame, write_parquet_frame
from evalkit.tables.html import escape, html_table

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.data.run_record import RunRecord

#: The columns of a run's table that are neither a metric nor a count.
FIXED_COLUMNS: tuple[str, ...] = ("qid", "sample", "error", "latency_ms")


def _union(rows: list[Any], attr: str) -> list[str]:
    names: dict[str, None] = {}
    for r in rows:
        for name in getattr(r, attr, None) or {}:
            names.setdefault(str(name), None)
    return list(names)


def column_names(run: RunRecord) -> tuple[list[str], list[str]]:
    """``(metrics, counts)``: every metric and every count some row of ``run`` holds, in
    first-seen order (the columns :func:`run_columns` gives them)."""
    rows = list(run.per_query)
    return _union(rows, "metrics"), _union(rows, "counts")


def run_columns(run: RunRecord, metrics: Sequence[str] | None = None,
                counts: Sequence[str] | None = None) -> Columns:
    """One row per row of ``run`` (see the module docstring), in the run's order, or in
    natural order of the ids when they are stored in text order
    (:func:`evalkit.tables.columns.row_order`).

    Metric values are floats (``None`` where a row has no value: the metric or the call
    failed there); counts keep their stored type; ``latency_ms`` is ``None`` for rows of
    a precomputed run. ``metrics`` and ``counts`` choose those columns (default: every
    metric and count of the rows), as ``evalkit eval -m`` does.

    Raises:
        ValueError: a metric and a count share a name, a metric is named like one of the
            id or error columns, or a count of the rows is named in ``metrics`` (or a
            metric in ``counts``).
    """
    rows = list(run.per_query)
    rows = [rows[i] for i in row_order([str(r.query_id) for r in rows])]
    all_metrics, all_counts = column_names(run)
    metrics = all_metrics if metrics is None else list(metrics)
    counts = all_counts if counts is None else list(counts)
    clash = [n for n in metrics + counts if n in FIXED_COLUMNS] or sorted(
        set(metrics) & set(counts))
    if clash:
        raise ValueError(f"run {run.name!r}: {', '.join(clash)} would name two columns")
    for names, other, is_, held in ((metrics, all_counts, "a per-query count", "counts"),
                                    (counts, all_metrics, "a metric", "metrics")):
        swapped = [n for n in names if n in other]
        if swapped:
            raise ValueError(f"run {run.name!r}: {', '.join(map(repr, swapped))} is {is_}; "
                             f"name it in {held}=")
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


def run_frame(run: RunRecord, metrics: Sequence[str] | None = None,
              counts: Sequence[str] | None = None) -> pd.DataFrame:
    """``run`` as a ``pandas.DataFrame``, one row per query: :func:`run_columns`, with
    ``qid`` as text, one float column per metric (NaN where the metric or the call
    failed), the counts, ``error`` and ``latency_ms`` (float, NaN for a precomputed run);
    ``metrics`` and ``counts`` choose those columns (default: all).

    Raises:
        evalkit.tables.frames.MissingExtraError: pandas is not installed.
    """
    columns = run_columns(run, metrics, counts)
    floats = tuple(n for n in columns if n not in FIXED_COLUMNS
                   and any(isinstance(v, float) for v in columns[n]))
    df = frame(columns, (*floats, "latency_ms"))
    if "sample" in df.columns and df["sample"].isna().any():
        df["sample"] = df["sample"].astype("Int64")
    return df


def write_parquet(run: RunRecord, path: str | os.PathLike[str], *,
                  metrics: Sequence[str] | None = None,
                  counts: Sequence[str] | None = None) -> Path:
    """Write the per-query table of ``run`` (:func:`run_frame`, with ``metrics`` and
    ``counts`` chosen) to a Parquet file, as every output is written
    (:func:`evalkit.io.outputs.write_output`: missing folders created, a regular file
    replaced atomically, a symbolic link followed, a device or FIFO written directly).

    Raises:
        evalkit.tables.frames.MissingExtraError: pandas or pyarrow is not installed.
        evalkit.io.outputs.UnwritableError: the file cannot be written.
    """
    return write_parquet_frame(run_frame(run, metrics, counts), path)


def run_html(run: RunRecord) -> str:
    """``run`` as an HTML table: per metric its mean over the rows that have a value and
    how many rows that is; per count its total; and how many rows errored.
    ``run.to_pandas()`` holds every row."""
    rows = list(run.per_query)
    metrics, counts = column_names(run)
    errored = sum(1 for r in rows if getattr(r, "error", None) is not None)
    lines: list[list[str]] = []
    for m in metrics:
        values = run.available_scores(m)
        mean = number_cell(mean_value(list(values.values()), m)) if values else ""
        lines.append([m, "mean", mean, f"{len(values)} of {len(rows)}"])
    for c in counts:
        have = [float(r.counts[c]) for r in rows if c in (getattr(r, "counts", None) or {})]
        total = float(sum(have))
        lines.append([c, "total", str(int(total)) if total.is_integer() else number_cell(total),
                      f"{len(have)} of {len(rows)}"])
    noun = "query" if len(rows) == 1 else "queries"
    caption = f"<b>run {escape(run.name)}</b>: {len(rows)} {noun}"
    if errored:
        caption += f", {errored} errored"
    return ('<div class="evalkit">'
            + html_table(["metric", "", "value", "rows"], lines, {2, 3}, caption) + "</div>")


__all__ = ["FIXED_COLUMNS", "column_names", "run_columns", "run_frame", "run_html",
           "write_parquet"]
