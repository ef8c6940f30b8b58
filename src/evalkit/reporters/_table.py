"""The columns shared by the console and Markdown reporters."""

from __future__ import annotations

import math

from evalkit.formatting import p_cell
from evalkit.formatting import signed as signed_text
from evalkit.reporters.model import Report, ReportRow


def num(x: float | None, signed: bool = False) -> str:
    """A value for a table cell: 4 decimals (``+`` sign when ``signed``), ``NaN``, or
    empty for ``None``."""
    if x is None:
        return ""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return ("+" if x > 0 and signed else "") + ("inf" if x > 0 else "-inf")
    if not signed and x == int(x) and abs(x) >= 10:
        return f"{x:g}"
    return signed_text(x) if signed else f"{x:.4f}"


def pval(x: float | None, n_resamples: int | None = None) -> str:
    """A p-value cell: ``0.0123``, or ``< 0.0001`` at the floor of ``n_resamples``."""
    return p_cell(x, n_resamples)


def ci(row: ReportRow) -> str:
    if row.ci_low is None or row.ci_high is None:
        return ""
    return f"[{num(row.ci_low, True)}, {num(row.ci_high, True)}]"


def columns(report: Report) -> tuple[list[str], list[list[str]]]:
    """``(headers, cells)`` of the report's table; comparison columns only when some row
    has a comparison."""
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
                         pval(r.p_value, r.n_resamples)]
                if adjusted:
                    line.append(pval(r.p_adjusted, r.n_resamples))
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
    cells = []
    for r in report.rows:
        line = [r.name, num(r.value), num(r.reference_value), num(r.difference, True), ci(r),
                pval(r.p_value, r.n_resamples)]
        if adjusted:
            line.append(pval(r.p_adjusted, r.n_resamples))
        line += [r.status, r.coverage]
        cells.append(line)
    return headers, cells
