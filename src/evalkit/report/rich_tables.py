"""The rich tables of the console output, made one way: no header or cell is ever cut.

rich shrinks a column that does not fit the console and cuts its text with ``…`` by
default, so two measures whose names share a prefix (``contains(text=a)``,
``contains(text=b)``) read the same (``conta…``). :func:`new_table` makes every column
fold instead: a long header or value continues on the next line, whole. Its headers and
cells are text, never markup: a ``str`` is shown as written, through
:func:`evalkit.report.escaping.terminal_text` (a run name or query id holding ``[bold]``,
a terminal escape or a bidirectional override prints as those characters). Only rich is
imported, when a table is made.
"""

from __future__ import annotations

from typing import Any


def new_table(*headers: Any, **options: Any) -> Any:
    """A :class:`rich.table.Table` with ``headers`` (and rich's ``options``: ``box``,
    ``title``...; ``box=None, pad_edge=False`` unless given) whose columns fold long text
    onto more lines instead of cutting it with an ellipsis, and whose ``str`` headers and
    cells (``add_row``, ``add_column``) are plain text, never markup
    (:func:`evalkit.report.escaping.rich_cell`)."""
    from rich.table import Table

    from evalkit.report.escaping import rich_cell

    def plain(value: Any) -> Any:
        return rich_cell(value) if isinstance(value, str) else value

    class _PlainTable(Table):
        def add_column(self, header: Any = "", *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("overflow", "fold")
            super().add_column(plain(header), *args, **kwargs)

        def add_row(self, *renderables: Any, **kwargs: Any) -> None:
            super().add_row(*map(plain, renderables), **kwargs)

    options.setdefault("box", None)
    options.setdefault("pad_edge", False)
    table = _PlainTable(**options)
    for header in headers:
        if isinstance(header, str):
            table.add_column(header)
        else:  # a rich Column
            table.columns.append(header)
    return fold_columns(table)


def fold_columns(table: Any) -> Any:
    """``table`` with every column folding instead of cutting (for a column added after
    :func:`new_table`); returns it."""
    for col in table.columns:
        col.overflow = "fold"
    return table


__all__ = ["fold_columns", "new_table"]
