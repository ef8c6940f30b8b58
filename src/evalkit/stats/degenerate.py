"""Defined answers for degenerate input: every per-query difference equal.

This covers ``sd = 0`` and ``n = 1`` (and ``n = 2`` with equal differences); ``n = 2`` with
different values is an ordinary input. ``c`` is the common difference.

* ``method="bootstrap"`` (:func:`~evalkit.stats.paired_bootstrap`): every resample has
  mean ``c``, so the interval is ``[c, c]``; p is 1 when ``c`` is on the null side (``c = 0``
  two-sided) and ``1/(B+1)`` otherwise.
* every other method answers with the exact sign-flip test, the only test whose null
  distribution is defined without a variance: two-sided ``p = 2**(1-n)`` (one-sided
  ``2**-n`` in the direction of ``c``, 1 against it; ``p = 1`` when ``c = 0``), floored at
  ``1/(B+1)`` for n > 16 as the Monte Carlo test would be. The interval inverts that
  test: ``[c, c]`` when ``p < alpha`` is attainable at this n (two-sided: n >= 6 at
  alpha = 0.05), otherwise unbounded, ``(-inf, inf)``: with so few queries no value can
  be excluded.

Never NaN, never p = 0, never an exception.
"""

from __future__ import annotations

import math

from evalkit.stats._kernels import EXACT_MAX_N as EXACT_LIMIT
from evalkit.stats.intervals import Alternative


def constant_p_floor(n: int, n_resamples: int, two_sided: bool) -> float:
    """Smallest p of the sign-flip test on ``n`` equal non-zero differences."""
    p = 2.0 ** ((1 - n) if two_sided else -n)
    if n > EXACT_LIMIT:
        p = max(p, 1.0 / (n_resamples + 1))
    return min(1.0, p)


def constant_outcome(
    c: float, n: int, n_resamples: int, method: str, alpha: float, alternative: Alternative
) -> tuple[float, float, float]:
    """``(p, ci_low, ci_high)`` for ``n`` differences all equal to ``c``."""
    two = alternative == "two-sided"
    if method == "bootstrap":
        floor = 1.0 / (n_resamples + 1)
        if alternative == "two-sided":
            p = 1.0 if c == 0 else floor
        elif alternative == "greater":
            p = 1.0 if c <= 0 else floor
        else:
            p = 1.0 if c >= 0 else floor
        return p, c, c
    p_min = constant_p_floor(n, n_resamples, two)
    if alternative == "two-sided":
        p = 1.0 if c == 0 else p_min
    elif alternative == "greater":
        p = p_min if c > 0 else 1.0
    else:
        p = p_min if c < 0 else 1.0
    bounded = p_min < alpha
    if alternative == "two-sided":
        lo, hi = (c, c) if bounded else (-math.inf, math.inf)
        return p, lo, hi
    if alternative == "greater":
        return p, (c if bounded else -math.inf), math.inf
    return p, -math.inf, (c if bounded else math.inf)
