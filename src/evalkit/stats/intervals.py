"""Bootstrap confidence intervals for a mean difference: percentile, BCa, bootstrap-t.

Inputs are the per-resample deviations ``dev_b = mean*_b - mean`` of a paired bootstrap
(shape ``(B,)``), in the metric's units.

* Percentile: Efron and Tibshirani (1993), ch. 13.
* BCa: Efron, "Better bootstrap confidence intervals", JASA 82 (1987); Efron and
  Tibshirani (1993), ch. 14. Acceleration from the jackknife, which for the mean is
  ``a = sum(e**3) / (6 * sum(e**2) ** 1.5)`` with ``e = d - mean`` (O(n)).
* Bootstrap-t (studentized): Efron and Tibshirani (1993), ch. 12; Hall, *The Bootstrap
  and Edgeworth Expansion* (1992). Endpoints are order statistics of ``t*`` chosen so
  the interval is exactly the set of means the bootstrap-t test does not reject.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import NDArray

Alternative = Literal["two-sided", "greater", "less"]
FloatArray = NDArray[np.float64]


def tail_count(alpha: float, n_resamples: int, two_sided: bool) -> int:
    """The ``k`` of the order-statistic bounds: a bound ``theta`` is accepted by a test
    with p ``(count + 1) / (B + 1)`` (doubled when two-sided) iff at least ``k``
    resampled statistics are at least as extreme. ``k = ceil(c) - 1`` with
    ``c = alpha * (B + 1) / 2`` (two-sided) or ``alpha * (B + 1)``."""
    c = alpha * (n_resamples + 1) / (2.0 if two_sided else 1.0)
    return max(0, math.ceil(c - 1e-9) - 1)


def percentile_ci(
    observed: float, dev: FloatArray, alpha: float, alternative: Alternative
) -> tuple[float, float]:
    """Percentile interval of ``observed + dev`` (numpy's linear quantile)."""
    means = observed + dev
    if alternative == "two-sided":
        lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
        return float(lo), float(hi)
    if alternative == "greater":
        return float(np.quantile(means, alpha)), math.inf
    return -math.inf, float(np.quantile(means, 1 - alpha))


def bca_ci(
    observed: float,
    dev: FloatArray,
    centred: FloatArray,
    alpha: float,
    alternative: Alternative,
    tol: float,
) -> tuple[float, float]:
    """BCa interval of the mean.

    ``z0 = Phi^-1(prop)`` with ``prop`` the share of resampled means below the
    observed one (ties, within ``tol``, count half), clipped to
    ``[1/(2B), 1 - 1/(2B)]`` so it stays finite; ``a`` from the jackknife of the mean.
    """
    from scipy.special import ndtr, ndtri

    B = dev.shape[0]
    below = np.count_nonzero(dev < -tol)
    tied = np.count_nonzero(np.abs(dev) <= tol)
    prop = (below + 0.5 * tied) / B
    prop = min(max(prop, 0.5 / B), 1 - 0.5 / B)
    z0 = float(ndtri(prop))
    s2 = math.fsum((centred * centred).tolist())
    s3 = math.fsum((centred * centred * centred).tolist())
    acc = s3 / (6.0 * s2**1.5) if s2 > 0 else 0.0

    def level(q: float) -> float:
        z = float(ndtri(q))
        den = 1.0 - acc * (z0 + z)
        if den <= 0:
            return 1.0 if z > 0 else 0.0
        return float(ndtr(z0 + (z0 + z) / den))

    means = observed + dev
    if alternative == "two-sided":
        lo, hi = np.quantile(means, [level(alpha / 2), level(1 - alpha / 2)])
        return float(lo), float(hi)
    if alternative == "greater":
        return float(np.quantile(means, level(alpha))), math.inf
    return -math.inf, float(np.quantile(means, level(1 - alpha)))


def safe_ratio(num: FloatArray, den: FloatArray, tol: float) -> FloatArray:
    """``num / den`` with ``0`` where both vanish and ``+-inf`` where only ``den`` does."""
    out = np.zeros_like(num)
    pos = den > 0
    np.divide(num, den, out=out, where=pos)
    zero_den = ~pos
    big = zero_den & (np.abs(num) > tol)
    out[big] = np.copysign(np.inf, num[big])
    return out


def studentized_stats(
    dev: FloatArray, squares_dev: FloatArray, n: int, var_obs: float, tol: float
) -> FloatArray:
    """``t*_b = dev_b / se*_b`` from a resample's centred sum and sum of squares.

    ``squares_dev`` holds ``sum(e*_i ** 2)`` per resample (``e = d - mean``); the
    resample's variance is ``(sum e*^2 - n * dev^2) / (n - 1)``. Variances below
    ``1e-14 * var_obs`` are treated as 0 (a resample of one repeated value).
    """
    var = (squares_dev - n * dev * dev) / (n - 1)
    var[var < 1e-14 * var_obs] = 0.0
    se = np.sqrt(var / n)
    return safe_ratio(dev, se, tol)


def studentized_p(
    t_obs: float, t_star: FloatArray, alternative: Alternative, tol: float
) -> float:
    """Bootstrap-t p-value with the ``+1`` rule; two-sided doubles the smaller tail."""
    B = int(t_star.shape[0])
    upper = int(np.count_nonzero(t_star >= t_obs - tol))
    lower = int(np.count_nonzero(t_star <= t_obs + tol))
    if alternative == "greater":
        return (upper + 1) / (B + 1)
    if alternative == "less":
        return (lower + 1) / (B + 1)
    return min(1.0, 2.0 * (min(upper, lower) + 1) / (B + 1))


def studentized_ci(
    observed: float, se: float, t_star: FloatArray, alpha: float, alternative: Alternative
) -> tuple[float, float]:
    """Bootstrap-t interval ``[mean - t*_(B-k+1) se, mean - t*_(k) se]`` (1-based order
    statistics, ``k`` from :func:`tail_count`); unbounded when ``k < 1``."""
    B = t_star.shape[0]
    srt = np.sort(t_star)
    k = tail_count(alpha, B, alternative == "two-sided")

    def bound(t: float) -> float:
        if math.isinf(t):
            return -math.copysign(math.inf, t)
        return observed - t * se

    lo = bound(float(srt[B - k])) if k >= 1 else -math.inf
    hi = bound(float(srt[k - 1])) if k >= 1 else math.inf
    if alternative == "greater":
        return lo, math.inf
    if alternative == "less":
        return -math.inf, hi
    return lo, hi
