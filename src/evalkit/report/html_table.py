"""Plain HTML tables of reports for notebooks: ``_repr_html_`` of
:class:`~evalkit.Comparison` and :class:`~evalkit.GateReport`.

Jupyter shows an object's ``_repr_html_()``; these are small static tables
(:func:`evalkit.tables.html.html_table`: no script, no style sheet, no plotting library,
every text escaped). A comparison or a gate shows the columns of the console and Markdown
reports (:func:`evalkit.report._table.columns`) under its description (a run's view is
:func:`evalkit.data.run_views.run_html`). The interactive page is the ``html`` reporter's
(``Comparison.to_html(path)``).
"""

from __future__ import annotations

from typing import Any

from evalkit.report._table import columns
from evalkit.report.model import as_report
from evalkit.tables.html import escape, html_table

#: The columns of text in a report table (the others hold numbers: right-aligned).
_TEXT = {"check", "verdict", "level", "metric", "rule", "result"}


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
    what = f"<b>{escape(report.subject)}</b>" + (
        f"{against}<b>{escape(report.reference)}</b>" if report.reference else "")
    caption = f"{escape(report.title)}: {what}"
    if report.description:
        caption += f"<br><i>{escape(report.description)}</i>"
    parts = ['<div class="evalkit">', html_table(headers, cells, numeric, caption)]
    if report.notes:
        parts.append("<ul>" + "".join(f"<li>{escape(n)}</li>" for n in report.notes)
                     + "</ul>")
    parts.append(f"<p>{escape(report.summary)}</p></div>")
    return "".join(parts)


__all__ = ["report_html"]
