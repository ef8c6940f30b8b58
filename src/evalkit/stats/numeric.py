"""Floats at their edges: sums and means exact at every magnitude a float64 can hold, and
non-finite values made ready for JSON (:func:`json_ready`).

``math.fsum`` is correctly rounded but raises ``OverflowError`` when a partial sum leaves
the float range (``fsum([1e308, 1e308])``), and squares of differences above 1e154
overflow while those below 1e-162 vanish. Dividing by a power of two is exact (the
mantissa is untouched), so :func:`pow2_scale` brings values near 1 first and the result
is scaled back: identical, bit for bit, to the plain computation whenever no scaled value
falls below the normal range (values within about 2**1000 of the largest), and defined
where the plain one would overflow.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["exact_mean", "finite_number", "finite_real", "json_ready", "numbers_of", "pow2_above",
           "pow2_scale", "real_number", "value_text"]


def pow2_above(top: float) -> float:
    """The power of two ``s`` with ``|top| / s`` in ``[1, 2)`` (``top`` non-zero and
    finite; so ``s`` itself is always a finite float); 1.0 for 0 or a non-finite ``top``."""
    if top == 0.0 or not math.isfinite(top):
        return 1.0
    return math.ldexp(1.0, math.frexp(abs(top))[1] - 1)


def pow2_scale(values: Sequence[float]) -> float:
    """The power of two ``s`` with ``max |v| / s`` in ``[1, 2)``; 1.0 when every value
    is 0 (or there are none). Non-finite values are ignored."""
    top = 0.0
    for v in values:
        a = abs(v)
        if a > top and math.isfinite(a):
            top = a
    return pow2_above(top)


def real_number(value: Any, what: str) -> float:
    """``float(value)`` for a real number (``int``, ``float``, a numpy integer or float,
    ``fractions.Fraction``); refuses what ``float()`` would also take but is no score.

    Raises:
        ValueError: ``value`` is a ``str`` or ``bytes`` (``"0.5"``), a ``bool`` (or
            ``numpy.bool_``), ``None`` or any other non-real object, or a number beyond
            the float range (an ``int`` such as ``10**400``, which ``float()`` refuses
            with ``OverflowError``); the message starts with ``what`` (``"run 'a': case
            'q1': the 'ap' score"``).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        kind = type(value).__name__
        raise ValueError(f"{what} must be a number (int or float), got {value!r} (a {kind}); "
                         "parse strings first, give booleans as 0/1")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{what} is beyond the float range (magnitude above about 1.8e308): "
                         f"got {value_text(value)}") from None


def value_text(value: Any) -> str:
    """``repr(value)`` for a message, at most 60 characters: an integer too long for that
    is named by its size (``"an integer of 401 digits"``; Python refuses to print one of
    more than ``sys.get_int_max_str_digits()`` digits), a numpy scalar as the Python
    number it holds (``5.0``, never ``np.float64(5.0)``), anything else cut."""
    if isinstance(value, numbers.Number) and type(value).__module__ == "numpy":
        value = value.item()  # type: ignore[attr-defined]
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        n = int(value)
        if n.bit_length() > 190:  # over about 57 digits
            return (f"an integer of {len(str(abs(n)))} digits" if n.bit_length() < 10_000
                    else f"an integer of {n.bit_length()} bits")
    try:
        text = repr(value)
    except ValueError:  # a Fraction of integers too long to print
        return f"a {type(value).__name__} too long to print"
    return text if len(text) <= 60 else f"{text[:40]}... (a {type(value).__name__})"


def finite_number(value: Any, what: str) -> float:
    """``value`` as a finite float: the rule a run, a gate and the conformance suite apply
    to what a plugin's metric or aggregate returned (:func:`real_number`, then finite).

    Args:
        value: what the code returned.
        what: names the code (``"aggregate 'cost_total'"``); every message starts with it.

    Raises:
        ValueError: ``"<what>: its value must be a number ..."`` (a str, a bool, None, an
            int beyond the float range: :func:`real_number`), or ``"<what> returned nan;
            expected a finite float"`` (NaN or an infinity).
    """
    v = real_number(value, f"{what}: its value")
    if not math.isfinite(v):
        raise ValueError(f"{what} returned {v}; expected a finite float")
    return v


def finite_real(value: Any) -> float | None:
    """``float(value)`` when ``value`` is a real number (not a bool) that a float holds
    finitely; else None (a str, a bool, None, NaN, an infinity, an int beyond the float
    range such as ``10**400``, on which ``math.isfinite`` itself raises
    ``OverflowError``). For checks that refuse such a value in their own words."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        v = float(value)
    except (OverflowError, ValueError, TypeError):
        return None
    return v if math.isfinite(v) else None


def numbers_of(values: Iterable[Any], what: str) -> list[float]:
    """:func:`real_number` of each value; ``what`` names the list (``"p-value"``) and the
    message the offending position (``"p-value 2 (of 3)"``)."""
    items = list(values)
    return [real_number(v, f"{what} {i} (of {len(items)})") for i, v in enumerate(items)]


def exact_mean(values: Sequence[float]) -> float:
    """The correctly rounded mean of ``values`` (``fsum(values) / n``), computed on the
    values divided by :func:`pow2_scale` so that no partial sum overflows.

    Raises:
        ValueError: ``values`` is empty.
    """
    n = len(values)
    if n == 0:
        raise ValueError("the mean of no values is undefined")
    s = pow2_scale(values)
    return math.fsum(v / s for v in values) / n * s


_FLOAT = frozenset({float})


def json_ready(value: Any) -> Any:
    """``value`` (nested dicts, lists, tuples) with every non-finite float as ``None``: JSON
    has no token for NaN or infinity (Python would write a bare ``NaN`` that parsers refuse).
    A list of finite floats is returned itself, not copied; tuples become lists."""
    if isinstance(value, dict):
        return {k: json_ready(x) for k, x in value.items()}
    if isinstance(value, list | tuple):
        if set(map(type, value)) <= _FLOAT and all(map(math.isfinite, value)):
            # finite floats (per-query values), checked in C; a list is returned as it is
            return value if type(value) is list else list(value)
        return [json_ready(x) for x in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
