"""Sums and means that stay exact at every magnitude a float64 can hold.

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
from collections.abc import Sequence

__all__ = ["exact_mean", "pow2_above", "pow2_scale"]


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
