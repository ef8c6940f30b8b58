"""Numbers as a table cell or a line shows them: four decimals, a sign where a difference
has one, scientific notation for huge values, and an empty cell for a missing one.

:func:`decimal` writes a mean or any other value with 4 decimals and :func:`signed` a
difference or an interval bound with its sign (never ``-0.0000``); both switch to
scientific notation with 4 significant digits at :data:`LARGE` (1e6) and above, so a
huge value is ``1e+308``, not 309 digits cut by the table. :func:`number_cell` is either
in a cell: empty for None, whole numbers of 10 and more without decimals.
:mod:`evalkit.report.formatting` adds p-values, intervals and planning figures.
"""

from __future__ import annotations

import math

#: From this size on, values are written in scientific notation (``1.235e+06``).
LARGE = 1e6


def decimal(x: float, digits: int = 4) -> str:
    """A value for a table cell or a line: ``digits`` decimals (``0.2177``), ``NaN``,
    ``inf``/``-inf``; at :data:`LARGE` and above in size ``digits`` significant digits
    in scientific notation (``1e+308``, ``-2.5e+07``)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if abs(x) >= LARGE:
        return f"{x:.{digits}g}"
    return f"{x:.{digits}f}"


#: below this size a difference is floating-point residue (``0.3 - 0.1 - 0.2``), shown
#: as ``+0.0000`` by :func:`signed`
ZERO_RESIDUE = 1e-12


def signed(x: float, digits: int = 4) -> str:
    """``x`` with its sign, ``digits`` decimals: ``+0.0590``, ``-0.1278``, ``+inf``; a value
    that rounds to zero keeps the sign of its direction (``-0.0000`` for -1.2e-05, beside
    a W/T/L of 0/0/1), except a rounding residue under 1e-12 in size (and zero itself),
    which is ``+0.0000``; at :data:`LARGE` and above, scientific notation (``+1e+308``)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    if abs(x) >= LARGE:
        return f"{x:+.{digits}g}"
    if abs(x) < ZERO_RESIDUE:
        x = 0.0
    return f"{x:+.{digits}f}"


def number_cell(x: float | None, signed: bool = False) -> str:
    """A value for a table cell: 4 decimals (with its sign when ``signed``,
    :func:`signed`), ``NaN``, ``inf``/``-inf``, a whole number from 10 to 1e15 without
    decimals (``123``), or empty for ``None``."""
    if x is None:
        return ""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return ("+" if x > 0 and signed else "") + ("inf" if x > 0 else "-inf")
    if not signed and x == int(x) and 10 <= abs(x) < 1e15:
        return f"{x:.0f}"
    return _signed(x) if signed else decimal(x)


_signed = signed  # ``number_cell``'s argument ``signed`` hides the function

__all__ = ["LARGE", "decimal", "number_cell", "signed"]
