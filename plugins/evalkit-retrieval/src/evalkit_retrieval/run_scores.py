"""A scored run as ``evalkit eval`` shows it: which measures, one summary sentence, the
table for people, the JSON for scripts, and the run formats plugins register
(:mod:`evalkit.report.run_formats`).

Means and totals are each measure's summary as its record declares it
(:mod:`evalkit.data.summaries`: a mean, a count's sum, trec_eval's geometric means);
per-query values are printed with 4 decimals, counts as integers. Any other
``--format NAME`` is a :class:`~evalkit.core.specs.RunFormatSpec` found in the registry
by name (:func:`evalkit.report.run_formats.run_format`; this plugin registers ``trec``,
trec_eval's own layout), which renders a :class:`~evalkit.report.run_formats.ScoredRun`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.data import summaries
from evalkit.data.coverage import notes_of
from evalkit.data.metric_info import canonical_metric, is_count
from evalkit.report.formatting import decimal
from evalkit.report.run_formats import MeasureSelectionError

if TYPE_CHECKING:
    from evalkit.data.results import RunResult


def count_names(result: RunResult) -> list[str]:
    """Counts present on every row, in first-row order."""
    if not result.per_query:
        return []
    first = list(getattr(result.per_query[0], "counts", {}) or {})
    return [c for c in first
            if all(c in (getattr(r, "counts", {}) or {}) for r in result.per_query)]


def select_measures(
    result: RunResult, requested: Sequence[str] | Any, path: Path
) -> tuple[list[str], list[str]]:
    """``(metrics, counts)`` to show: the requested ones (resolved to the run's stored
    names), or every metric the run has (and no count); none for a
    :class:`~evalkit.core.metric_names.MeasureRequest` of a run format's lines only
    (trec_eval's ``runid``, ``num_q``, ``relstring``; ``requested`` may be a request).

    Raises:
        MeasureSelectionError: a requested measure the run lacks, or a run with no metric
            present on every row.
        evalkit.data.results.MetricFailedError: a requested metric that failed on some
            case (names the run, the metric and the cases).
    """
    if getattr(requested, "lines_only", False):
        return [], []
    requested = getattr(requested, "names", requested)
    have = result.metric_names()
    counts_have = count_names(result)
    if not requested:
        if not have:
            raise MeasureSelectionError(
                f"{path}: the run has no metric present on every row"
                + (f" (it has the counts {', '.join(counts_have)}; name one with -m)"
                   if counts_have else ""))
        return have, []
    metrics: list[str] = []
    counts: list[str] = []
    for name in requested:
        canon = canonical_metric(name)
        if canon not in have and name in have:
            canon = name
        if canon in have:
            if canon not in metrics:
                metrics.append(canon)
            continue
        if is_count(canon) or canon in counts_have:
            if canon not in counts_have:
                raise MeasureSelectionError(
                    f"{path}: {name!r} is a per-query count, and this run stores no "
                    f"{canon} (it has: {', '.join(counts_have) or 'no counts'})")
            if canon not in counts:
                counts.append(canon)
            continue
        if canon in result.metric_failures():
            result.mean(canon)  # MetricFailedError: names the run, the metric, the cases
        from evalkit.core.metric_lookup import suggestion

        known = have + counts_have
        raise MeasureSelectionError(
            f"{path}: no metric {name!r} in this run{suggestion(name, known)} (it has: "
            f"{', '.join(known) or 'none'})")
    return metrics, counts


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def summary_line(result: RunResult) -> str:
    """One sentence: queries (a target run's cases) evaluated, unjudged topics ignored,
    judged queries missing."""
    n = notes_of(result)
    parts = [f"{_count(len(result.per_query), *result.row_nouns)} evaluated"]
    if result.epochs > 1:  # repeated samples: each case's values are its samples reduced
        how = (result.header.get("samples") or {}).get("reduce", "mean")
        parts[0] += f" ({result.epochs} samples each, reduced by {how})"
    if n["unjudged_ignored"] is not None:
        parts.append(f"{_count(n['unjudged_ignored'], 'run topic', 'run topics')} without "
                     "judgments ignored")
    if n["missing_count"] is not None:
        how = "scored 0" if n["missing"] == "zero" else "skipped"
        parts.append(f"{_count(n['missing_count'], 'judged query', 'judged queries')} "
                     f"missing from the run ({how})")
    if n["empty_rankings"]:
        shown = ", ".join(repr(i) for i in n["empty_ranking_ids"][:5])
        parts.append(f"{_count(n['empty_rankings'], 'judged query', 'judged queries')} with "
                     f"an empty ranking ({shown}{', ...' if n['empty_rankings'] > 5 else ''};"
                     " scored 0)")
    return "; ".join(parts)


def format_remark(result: RunResult) -> str | None:
    """:func:`summary_line` when it has something to say beside a run format's output,
    which alone goes to standard output (unjudged topics ignored, judged queries missing
    or with an empty ranking)."""
    n = notes_of(result)
    if any(n[k] for k in ("unjudged_ignored", "missing_count", "empty_rankings")):
        return summary_line(result)
    return None


def fmt(value: float) -> str:
    return decimal(value)


def _count_cell(value: float) -> str:
    return str(int(value)) if value.is_integer() else fmt(value)


def _summary(result: RunResult, name: str, *, count: bool = False) -> float:
    return summaries.summary_value(result, name, count=count)


def count_total(result: RunResult, name: str) -> int | float:
    """The total of count ``name`` over the queries: an ``int`` when the count sums
    (``num_rel``, ``num_ret``, ``num_rel_ret``: what the per-query rows hold), else its
    summary (a float, such as a mean a count's record declares)."""
    total = _summary(result, name, count=True)
    summed = summaries.summary_kind(name, count=True) == "sum" and total.is_integer()
    return int(total) if summed else total


def total_cell(result: RunResult, name: str) -> str:
    """The total of count ``name`` as the table prints it (:func:`count_total`)."""
    total = count_total(result, name)
    return str(total) if isinstance(total, int) else fmt(total)


def ln_label(name: str) -> str:
    """The per-query column name of metric ``name``: ``gm_map (ln)`` for a measure whose
    per-query values are natural logarithms and whose summary is ``exp`` of their mean
    (gm_map, gm_bpref: :func:`evalkit.data.summaries.is_log_scale`), else ``name``."""
    return f"{name} (ln)" if summaries.is_log_scale(name) else name


#: printed under a per-query table that has a ``(ln)`` column
LN_NOTE = ("(ln): each query's value is the natural log of the measure, floored at "
           "ln 0.00001 as trec_eval does; the mean line is exp of their mean, the "
           "geometric mean")


def as_json(result: RunResult, metrics: Sequence[str], per_query: bool, source: Path,
            counts: Sequence[str] = ()) -> dict[str, Any]:
    """The machine-readable form of an evaluation (``counts``: totals over queries).
    With ``per_query``, ``per_query_ln`` lists the metrics whose per-query values are
    natural logarithms (:func:`ln_label`), when there are any."""
    header = result.header
    out: dict[str, Any] = {
        "run": result.name,
        "source": str(source),
        "metrics": list(metrics),
        "means": {m: _summary(result, m) for m in metrics},
        "counts": {c: count_total(result, c) for c in counts},
        "num_queries": len(result.per_query),
        **notes_of(result),
        "relevance_level": header.get("relevance_level"),
        "depth": header.get("depth"),
        "qrels": header.get("qrels"),
    }
    if per_query:
        logs = [m for m in metrics if summaries.is_log_scale(m)]
        if logs:  # per-query values on the log scale; their means above are exp(mean)
            out["per_query_ln"] = logs
        out["per_query"] = [
            {"id": r.query_id, "metrics": {m: float(r.metrics[m]) for m in metrics},
             "counts": dict(getattr(r, "counts", {}) or {})}
            for r in result.per_query
        ]
    return out


def print_table(console: Any, result: RunResult, metrics: Sequence[str], per_query: bool,
                source: Path, counts: Sequence[str] = ()) -> None:
    """Means (and with ``per_query`` every query's values, in the order of the command's
    CSV: the run's own, or natural order for ids kept in text order,
    :func:`evalkit.tables.row_order`) on a rich ``console``; counts as integers, summed
    over the queries in the total line."""
    from evalkit.report.escaping import rich_markup, terminal_text
    from evalkit.report.rich_tables import new_table as Table

    console.print(f"run [bold]{rich_markup(result.name)}[/bold] ({rich_markup(source)})")
    console.print(terminal_text(summary_line(result)), soft_wrap=True, markup=False)
    if per_query:
        table = Table(result.row_nouns[0], *map(ln_label, metrics), *counts, box=None,
                      pad_edge=False)
        for col in table.columns[1:]:
            col.justify = "right"
        from evalkit.tables.columns import row_order

        rows = result.per_query  # in the order of the CSV and frames (docs/tables.md)
        for i in row_order([str(r.query_id) for r in rows]):
            r = rows[i]
            table.add_row(str(r.query_id), *(fmt(float(r.metrics[m])) for m in metrics),
                          *(_count_cell(float(r.counts[c])) for c in counts))
        table.add_section()
        label = "mean" if not counts else ("total" if not metrics else "mean / total")
        table.add_row(label, *(fmt(_summary(result, m)) for m in metrics),
                      *(total_cell(result, c) for c in counts), style="bold")
        console.print(table)
        if any(summaries.is_log_scale(m) for m in metrics):
            console.print(LN_NOTE, soft_wrap=True, markup=False)
        return
    if metrics:
        table = Table("metric", "mean", box=None, pad_edge=False)
        table.columns[1].justify = "right"
        for m in metrics:
            table.add_row(m, fmt(_summary(result, m)))
        console.print(table)
    if counts:
        table = Table("count", "total", "per query", box=None, pad_edge=False)
        table.columns[1].justify = table.columns[2].justify = "right"
        n = len(result.per_query)
        for c in counts:
            total = _summary(result, c, count=True)
            if summaries.summary_kind(c, count=True) == "sum":
                table.add_row(c, str(int(total)), f"{total / n:.2f}")
            else:
                table.add_row(c, fmt(total) + " (mean)", fmt(total))
        console.print(table)
