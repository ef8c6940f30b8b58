"""Console reporter: a rich table, rendered to plain text (no colour codes).

Every text from the report goes through :func:`evalkit.report.escaping.terminal_text`
(and table cells are ``rich.text.Text``, never read as markup), so a name holding
``[bold]``, a terminal escape or a bidirectional override prints as written."""

from __future__ import annotations

import io
from typing import Any

from evalkit.report._table import columns, movers
from evalkit.report.model import Report, as_report

STYLES = {"pass": "green", "fail": "bold red", "warn": "yellow", "error": "bold magenta"}


def render_console(obj: Any, *, width: int = 200, color: bool = False) -> str:
    """The report as a rich table with a title and a summary line.

    Args:
        obj: a :class:`~evalkit.report.Report` or an object with ``to_report()``.
        width: the table width in characters.
        color: keep ANSI colour codes (off for files).
    """
    from rich.box import HEAVY_HEAD
    from rich.console import Console

    from evalkit.report.escaping import rich_cell, terminal_text
    from evalkit.report.rich_tables import new_table

    report = as_report(obj)
    if report.pooled:  # several collections: the forest tables of evalkit compare
        return _render_pooled(report, width=width, color=color)
    headers, cells = columns(report)
    title = report.title + (f": {report.subject}" if report.subject else "")
    if report.reference:
        title += f" vs {report.reference}"
    table = new_table(*headers, title=rich_cell(title), box=HEAVY_HEAD, pad_edge=True)
    for row, line in zip(report.rows, cells, strict=True):
        table.add_row(*line, style=STYLES.get(row.status) if color else None)
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=color, color_system=(
        "standard" if color else None), highlight=False, soft_wrap=False)
    if report.description:  # how a comparison was tested
        console.print(terminal_text(report.description), markup=False)
    console.print(table)
    for row in report.rows:
        if row.status not in ("pass", "no significant difference") and row.detail:
            console.print(terminal_text(f"{row.name}: {row.detail}"), markup=False)
    for row in report.rows:
        heads, lines = movers(row)
        if lines:
            console.print(terminal_text(f"queries that moved most ({row.name})"),
                          markup=False)
            moved = new_table(*heads)
            for line in lines:
                moved.add_row(*line)
            console.print(moved)
    if report.slices:
        from evalkit.report.compare_table import print_slice_table

        print_slice_table(report, console)
    for note in report.notes:
        console.print(terminal_text(f"note: {note}"), markup=False)
    console.print(terminal_text(report.summary), markup=False)
    return buf.getvalue()


def _render_pooled(report: Report, *, width: int, color: bool) -> str:
    """A report over several collections: its title, the tables ``evalkit compare
    --collections`` prints (:mod:`evalkit.report.pooled_table`), the warnings on the
    inputs and the summary."""
    from rich.console import Console

    from evalkit.report.pooled_table import print_pooled_table

    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=color, color_system=(
        "standard" if color else None), highlight=False, soft_wrap=False)
    console.print(f"{report.title}: {report.subject} vs {report.reference}", markup=False)
    print_pooled_table(report, console)
    for warning in report.warnings:
        console.print(f"warning: {warning}", markup=False)
    console.print(report.summary, markup=False)
    return buf.getvalue()
