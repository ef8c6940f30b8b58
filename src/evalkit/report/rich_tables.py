"""The rich tables of the console output, made one way: no header or cell is ever cut.

rich shrinks a column that does not fit the console and cuts its text with ``…`` by
default, so two measures whose names share a prefix (``contains(text=a)``,
``contains(text=b)``) read the same (``conta…``). :func:`new_table` makes every column
fold instead: a long header or value continues on the next line, whole. Only rich is
imported, when a table is made.
"""

from __future__ import annotations

from typing import Any


def new_table(*headers: str, **options: Any) -> Any:
    """A :class:`rich.table.Table` with ``headers`` (and rich's ``options``: ``box``,
    ``title``...; ``box=None, pad_edge=False`` unless given) whose columns fold long text
    onto more lines instead of cutting it with an ellipsis."""
    from rich.table import Table

    options.setdefault("box", None)
    options.setdefault("pad_edge", False)
    table = Table(*headers, **options)
    for col in table.columns:
        col.overflow = "fold"
    return table


def fold_columns(table: Any) -> Any:
    """``table`` with every column folding instead of cutting (for a column added after
    :func:`new_table`); returns it."""
    for col in table.columns:
        col.overflow = "fold"
    return table


__all__ = ["fold_columns", "new_table"]
