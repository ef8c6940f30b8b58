"""The tables ``evalkit compare --collections`` prints, and the console reporter with it:
a report's pooled metrics (``Report.pooled``) as a reader scans them.

:func:`print_pooled_table` writes the collections and their runs, how the effects were
pooled, a summary line per metric (pooled difference, interval, p and adjusted p, the
verdict, tau^2, I^2, Q), then per metric its forest table (a line per collection: queries,
both means, the effect, its interval and standard error, its weight; and the pooled
line) with its heterogeneity under it. Every number is a field of the report's
:class:`~evalkit.report.pooled.PooledEffect` records.
"""

from __future__ import annotations

from typing import Any

from evalkit.report.model import Report
from evalkit.report.pooled import collection_cells, heterogeneity, pooled_cells

#: columns of the tables printed left-aligned (the others are numbers)
_LEFT = {"metric", "collection", "scored", "significant"}


def _table(headers: list[str], cells: list[list[str]], bold: list[bool]) -> Any:
    from evalkit.report.rich_tables import new_table

    table = new_table(*headers)
    for col, header in zip(table.columns, headers, strict=True):
        col.justify = "left" if header in _LEFT else "right"
    for line, strong in zip(cells, bold, strict=True):
        table.add_row(*line, style="bold" if strong else None)
    return table


def print_pooled_table(report: Report, console: Any) -> None:
    """Print ``report``'s pooled metrics on ``console`` (a :class:`rich.console.Console`;
    one that is not a terminal is widened to 160 columns so that rows never wrap).
    Significant pooled differences and the pooled lines are bold."""
    if not console.is_terminal:
        console.width = max(console.width, 160)
    pooled = report.pooled
    first = pooled[0] if pooled else None
    if first is not None:
        for c in first.collections:
            console.print(f"collection {c.collection}: baseline {c.baseline}, candidate "
                          f"{c.candidate}, {c.n_queries} queries"
                          + (f", scored at {c.scoring}" if c.scoring else ""),
                          soft_wrap=True, markup=False)
    console.print("diff = candidate - baseline, queries paired by id within each "
                  "collection", soft_wrap=True)
    if report.description:
        console.print(report.description, soft_wrap=True, markup=False)
    headers, cells = pooled_cells(pooled, report.correction)
    console.print(_table(headers, cells, [p.significant for p in pooled]))
    rule = "adjusted p" if any(p.p_adjusted is not None for p in pooled) else "p"
    alpha = first.alpha if first is not None else 0.05
    console.print(f"significant: {rule} < {alpha:g}. Weights: 1 / (SE^2 + tau^2) of each "
                  "collection.", soft_wrap=True)
    for p in pooled:
        console.print(f"{p.metric}: each collection and the pooled difference", soft_wrap=True,
                      markup=False)
        heads, lines = collection_cells(p)
        console.print(_table(heads, lines, [False] * (len(lines) - 1) + [True]))
        console.print(f"  {heterogeneity(p)}", soft_wrap=True, markup=False)
    for note in report.notes:
        if note not in report.warnings and not any(
                note == f"{p.metric}: {heterogeneity(p)}" for p in pooled):
            console.print(f"note: {note}", soft_wrap=True, markup=False)


__all__ = ["print_pooled_table"]
