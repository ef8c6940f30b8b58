"""The columns shared by the console and Markdown reporters: the main table, and the
table of the queries that moved most in a comparison."""

from __future__ import annotations

from evalkit.report.model import Report, ReportRow
from evalkit.report.samples_cells import (
    SAMPLES_HEADERS,
    has_samples,
    samples_cells,
    samples_per_run,
)
from evalkit.tables.cells import number_cell as num


def ci(row: ReportRow) -> str:
    if row.ci_low is None or row.ci_high is None:
        return ""
    return f"[{num(row.ci_low, True)}, {num(row.ci_high, True)}]"


def columns(report: Report) -> tuple[list[str], list[list[str]]]:
    """``(headers, cells)`` of the report's table; comparison columns only when some row
    has a comparison; a comparison with repeated samples (K > 1 in some run) adds K and
    the within-case spread (:mod:`evalkit.report.samples_cells`)."""
    stats = any(r.has_comparison for r in report.rows)
    adjusted = any(r.p_adjusted is not None for r in report.rows)
    if report.kind == "gate":
        headers = ["check", "verdict", "level", "metric", "value", "rule"]
        if stats:
            headers += ["baseline", "difference", "CI", "p"]
            if adjusted:
                headers.append(f"p ({report.correction or 'Holm'})")
        headers.append("coverage")
        cells: list[list[str]] = []
        for r in report.rows:
            line = [r.name, r.status, r.level, r.metric, num(r.value), r.rule]
            if stats:
                line += [num(r.reference_value), num(r.difference, True), ci(r),
                         r.p_display()]
                if adjusted:
                    line.append(r.p_display(adjusted=True))
            line.append(r.coverage)
            cells.append(line)
        return headers, cells
    several = any(r.name != r.metric for r in report.rows)
    headers = ["metric", "candidate" if several else report.subject,
               report.reference or "reference", "difference", "CI", "p"]
    if adjusted:
        # name the correction: "p (Holm)", "p (Benjamini-Hochberg)"
        headers.append(f"p ({report.correction})" if report.correction else "p (adjusted)")
    headers += ["result", "n"]
    counts = any(r.wins_ties_losses for r in report.rows)
    if counts:
        headers.append("W/T/L")
    samples = has_samples(report)  # K > 1 in some run: K and the within-case spread
    k = samples_per_run(report) if samples else {}
    if samples:
        headers += SAMPLES_HEADERS
    cells = []
    for r in report.rows:
        line = [r.name, num(r.value), num(r.reference_value), num(r.difference, True), ci(r),
                r.p_display()]
        if adjusted:
            line.append(r.p_display(adjusted=True))
        line += [r.status, r.coverage]
        if counts:
            line.append(r.wins_ties_losses)
        if samples:
            line += samples_cells(r, k)
        cells.append(line)
    return headers, cells


def movers(row: ReportRow) -> tuple[list[str], list[list[str]]]:
    """``(headers, cells)`` of the queries that moved most in a comparison row: direction,
    query id, both values, the difference, and the query's text and the runs' per-case
    reasons (an LLM judge's) when any of them is known. No cells when nothing moved."""
    items = [("up", m) for m in row.top_gains] + [("down", m) for m in row.top_losses]
    texts = any(m.text for _, m in items)
    reasons = any(m.reason("baseline") or m.reason("candidate") for _, m in items)
    headers = ["", "query", "baseline", "candidate", "diff"]
    headers += ["text"] if texts else []
    headers += ["baseline reason", "candidate reason"] if reasons else []
    cells: list[list[str]] = []
    for label, m in items:
        line = [label, m.id, num(m.baseline), num(m.candidate), num(m.diff, True)]
        if texts:
            line.append(m.text or "")
        if reasons:
            line += [m.reason("baseline") or "", m.reason("candidate") or ""]
        cells.append(line)
    return headers, cells
