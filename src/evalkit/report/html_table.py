"""Plain HTML tables for notebooks: ``_repr_html_`` of :class:`~evalkit.RunResult`,
:class:`~evalkit.Comparison` and :class:`~evalkit.GateReport`.

Jupyter shows an object's ``_repr_html_()``; these are small static tables (no script, no
style sheet, no plotting library), every text escaped with :func:`html.escape`. A
comparison or a gate shows the columns of the console and Markdown reports
(:func:`evalkit.report._table.columns`) under its description; a run shows each
metric's mean over the rows that have it. The interactive page is the ``html`` reporter's
(``Comparison.to_html(path)``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from evalkit.data.summaries import mean_value
from evalkit.report._table import columns, num
from evalkit.report.model import as_report

#: The columns of text in a report table (the others hold numbers: right-aligned).
_TEXT = {"check", "verdict", "level", "metric", "rule", "result"}


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[int],
           caption: str) -> str:
    out = ["<table>", f"<caption style=\"text-align:left\">{caption}</caption>", "<thead><tr>"]
    out += [f"<th style=\"text-align:{'right' if i in numeric else 'left'}\">{_e(h)}</th>"
            for i, h in enumerate(headers)]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(
            f"<td style=\"text-align:{'right' if i in numeric else 'left'}\">{_e(c)}</td>"
            for i, c in enumerate(row)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def report_html(obj: Any) -> str:
    """A comparison or gate (or a :class:`~evalkit.report.Report`) as an HTML table:
    the title, what was compared and how, the rows, the notes and the summary.

    Raises:
        TypeError: ``obj`` is not a report and has no ``to_report()``.
    """
    report = as_report(obj)
    headers, cells = columns(report)
    numeric = {i for i, h in enumerate(headers) if i > 0 and h not in _TEXT}
    against = " against baseline " if report.kind == "gate" else " vs "
    what = f"<b>{_e(report.subject)}</b>" + (
        f"{against}<b>{_e(report.reference)}</b>" if report.reference else "")
    caption = f"{_e(report.title)}: {what}"
    if report.description:
        caption += f"<br><i>{_e(report.description)}</i>"
    parts = ['<div class="evalkit">', _table(headers, cells, numeric, caption)]
    if report.notes:
        parts.append("<ul>" + "".join(f"<li>{_e(n)}</li>" for n in report.notes) + "</ul>")
    parts.append(f"<p>{_e(report.summary)}</p></div>")
    return "".join(parts)


def run_html(run: Any) -> str:
    """A :class:`~evalkit.RunResult` as an HTML table: per metric its mean over the rows
    that have a value and how many rows that is; per count its total; and how many rows
    errored. ``run.to_pandas()`` holds every row."""
    from evalkit.report.tables import column_names

    rows = list(run.per_query)
    metrics, counts = column_names(run)
    errored = sum(1 for r in rows if getattr(r, "error", None) is not None)
    lines: list[list[str]] = []
    for m in metrics:
        values = run.available_scores(m)
        mean = num(mean_value(list(values.values()), m)) if values else ""
        lines.append([m, "mean", mean, f"{len(values)} of {len(rows)}"])
    for c in counts:
        have = [float(r.counts[c]) for r in rows if c in (getattr(r, "counts", None) or {})]
        total = float(sum(have))
        lines.append([c, "total", str(int(total)) if total.is_integer() else num(total),
                      f"{len(have)} of {len(rows)}"])
    noun = "query" if len(rows) == 1 else "queries"
    caption = f"<b>run {_e(run.name)}</b>: {len(rows)} {noun}"
    if errored:
        caption += f", {errored} errored"
    return ('<div class="evalkit">'
            + _table(["metric", "", "value", "rows"], lines, {2, 3}, caption) + "</div>")


__all__ = ["report_html", "run_html"]
