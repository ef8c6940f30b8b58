"""The paired t-test (Student, "The probable error of a mean", Biometrika 6, 1908).

``t = mean(d) / (sd(d) / sqrt(n))`` with ``n - 1`` degrees of freedom; the interval is
``mean -+ t_{1-alpha/2, n-1} * se``. Distribution functions come from
``scipy.special.stdtr``/``stdtrit`` (Cephes). Zero-variance input never reaches this
module (see :mod:`evalkit.stats.degenerate`).
"""

from __future__ import annotations

import math

from evalkit.stats.intervals import Alternative

#: Smallest p reported, so that an overwhelming t never rounds to p = 0.
P_FLOOR = 2.2250738585072014e-308


def t_test(
    mean: float, se: float, n: int, alpha: float, alternative: Alternative
) -> tuple[float, float, float]:
    """``(p, ci_low, ci_high)`` of the paired t-test.

    Args:
        mean: mean difference; se: its standard error (> 0); n: pairs (>= 2).

    Raises:
        ValueError: ``se <= 0`` or ``n < 2``.
    """
    from scipy.special import stdtr, stdtrit

    if se <= 0 or n < 2:
        raise ValueError("the t-test needs n >= 2 and a positive standard error")
    df = n - 1
    t = mean / se
    if alternative == "two-sided":
        p = 2.0 * float(stdtr(df, -abs(t)))
        q = float(stdtrit(df, 1 - alpha / 2))
        lo, hi = mean - q * se, mean + q * se
    elif alternative == "greater":
        p = float(stdtr(df, -t))
        lo, hi = mean - float(stdtrit(df, 1 - alpha)) * se, math.inf
    else:
        p = float(stdtr(df, t))
        lo, hi = -math.inf, mean + float(stdtrit(df, 1 - alpha)) * se
    return min(1.0, max(p, P_FLOOR)), lo, hi
