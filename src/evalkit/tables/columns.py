"""A table as columns of values, and the order its rows are listed in.

A table is ``{column name: [value, ...]}`` (:data:`Columns`: insertion-ordered, every list
of one length), with ``None`` where a value is missing. :mod:`evalkit.tables.frames` makes
DataFrames of them and :func:`evalkit.report.tables.write_csv` writes them as CSV.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

#: A table as ``{column name: [value, ...]}``, every list of one length.
Columns = dict[str, list[Any]]


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key of an id in natural order: its runs of digits compare as numbers
    (``"2"`` before ``"10"``, ``"q2"`` before ``"q10"``), the rest as text; ids equal
    as numbers (``"7"``, ``"007"``) fall back to the text."""
    parts = re.split(r"(\d+)", text)
    return (*((int(p) if i % 2 else p) for i, p in enumerate(parts)), text)


def row_order(ids: Sequence[str]) -> list[int]:
    """The positions of ``ids`` in the order a table lists them: the run's own order, or,
    when the ids are in text order (``"1", "10", "100", "2"``: how evalkit keeps a TREC
    run's or a DataFrame's rows, as trec_eval prints them), natural order (``"1", "2",
    "10", "100"``, :func:`natural_key`)."""
    positions = list(range(len(ids)))
    if all(ids[i] <= ids[i + 1] for i in range(len(ids) - 1)):
        positions.sort(key=lambda i: natural_key(ids[i]))
    return positions


__all__ = ["Columns", "natural_key", "row_order"]
