"""Tables as CSV: what ``evalkit eval --csv`` writes, without pandas.

A table is columns of values (:data:`evalkit.tables.columns.Columns`); the run, the
comparison and the gate build theirs (:func:`evalkit.data.run_views.run_columns`,
:func:`evalkit.comparison.tables.comparison_columns`,
:func:`evalkit.gate.verdicts.gate_columns`), :func:`csv_text` writes any of them as CSV
text and :func:`write_csv` to a file.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalkit.tables.columns import Columns


def csv_text(columns: Columns, raw: bool = False) -> str:
    """The columns as CSV text (a header line, then one line per row; RFC 4180 quoting).

    Each cell, the header's included, is :func:`evalkit.report.escaping.csv_cell`: empty
    for None and NaN, floats as their ``repr`` (they read back exactly), and text that a
    spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab or carriage return
    first) with a leading ``'``, so that Excel and LibreOffice show it as text; with
    ``raw``, text as it is (``evalkit eval --csv-raw``)."""
    from evalkit.report.escaping import csv_cell

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    names = list(columns)
    writer.writerow([csv_cell(name, raw) for name in names])
    n = len(columns[names[0]]) if names else 0
    for i in range(n):
        writer.writerow([csv_cell(columns[name][i], raw) for name in names])
    return buf.getvalue()


def write_csv(columns: Columns, path: str | Path, raw: bool = False) -> Path:
    """Write :func:`csv_text` of ``columns`` (``raw``: text cells without the formula
    guard) to ``path``, atomically and with registered secrets masked
    (:func:`evalkit.io.outputs.write_output`).

    Raises:
        evalkit.io.outputs.UnwritableError: the file cannot be written.
    """
    from evalkit.io.outputs import write_output
    from evalkit.io.redaction import mask

    return write_output(Path(path), mask(csv_text(columns, raw)))


__all__ = ["csv_text", "write_csv"]
