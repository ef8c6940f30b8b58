"""The paired (sign-flip) randomization test and its confidence interval.

Fisher, *The Design of Experiments* (1935), sec. 21; for IR, Smucker, Allan and
Carterette, "A comparison of statistical significance tests for information retrieval
evaluation", CIKM 2007. Under H0 each per-query difference is as likely to have either
sign, so the observed mean is compared with the means of ``s_i * d_i`` over random sign
vectors ``s`` (all ``2**n`` of them when ``n <= 16``: the exact test). The statistic is
the mean; with fixed ``sum(d_i**2)`` the paired t statistic is a monotone function of
it, so the test is the same on either.

p-value: exact ``#{extreme}/2**n`` (the identity is among the patterns), or Monte Carlo
``(#{extreme} + 1)/(B + 1)`` (Phipson and Smyth, "Permutation p-values should never be
zero", SAGMB 2010).

Interval: test inversion (Lehmann and Romano, *Testing Statistical Hypotheses*, 3rd ed.,
sec. 3.5): the set of ``theta`` for which testing ``d - theta`` keeps ``p >= alpha``.
With the sign patterns fixed, the flipped mean of ``d - theta`` is
``(A_b - theta * S_b) / n`` (``A_b = sum s_bi d_i``, ``S_b = sum s_bi``), so each
candidate ``theta`` costs O(B); the endpoints are found by bisection to 1e-12 of the
data's scale.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.intervals import Alternative

FloatArray = NDArray[np.float64]


def signflip_p(
    flipped_sums: FloatArray,
    sign_sums: FloatArray,
    n: int,
    mean: float,
    theta: float,
    alternative: Alternative,
    exact: bool,
    tol: float,
    gaps: Gaps | None = None,
) -> float:
    """p of the sign-flip test of ``H0: mean(d) = theta``.

    Args:
        flipped_sums: ``A_b`` per pattern, shape ``(B,)``.
        sign_sums: ``S_b`` per pattern, shape ``(B,)``.
        n: number of differences.
        mean: observed mean of ``d``.
        theta: the null value.
        alternative: "two-sided", "greater" or "less".
        exact: the patterns are all ``2**n`` (no ``+1``).
        tol: tie tolerance, in the units of the mean (with ``gaps``: theirs).
        gaps: ``(A_b - T, A_b + T)`` (``T = sum d_i``), each ``(B,)``, computed without
            the rounding of ``A_b`` itself (:func:`precise_gaps`), or None. With them,
            ``stat - obs`` and ``stat + obs`` are read off these differences, so a pattern
            whose mean differs from the observed one by less than the rounding of a sum
            of huge values (one difference of 1e15 among differences of 0.1) is still
            told apart.
    """
    if gaps is not None:
        return _gap_p(gaps, sign_sums, n, mean, theta, alternative, exact, tol)
    stat = (flipped_sums - theta * sign_sums) / n
    obs = mean - theta
    if alternative == "two-sided":
        count = int(np.count_nonzero(np.abs(stat) >= abs(obs) - tol))
    elif alternative == "greater":
        count = int(np.count_nonzero(stat >= obs - tol))
    else:
        count = int(np.count_nonzero(stat <= obs + tol))
    B = int(stat.shape[0])
    return count / B if exact else (count + 1) / (B + 1)


#: ``(A_b - T, A_b + T)`` of every sign pattern (:func:`precise_gaps`).
Gaps = tuple[FloatArray, FloatArray]


def _gap_p(gaps: Gaps, sign_sums: FloatArray, n: int, mean: float, theta: float,
           alternative: Alternative, exact: bool, tol: float) -> float:
    """:func:`signflip_p` from the patterns' gaps to the observed sum: ``stat - obs =
    (A_b - T - theta (S_b - n)) / n`` and ``stat + obs = (A_b + T - theta (S_b + n)) / n``;
    two-sided, ``|stat| - |obs|`` is the one of the two smaller in magnitude, signed by
    the other (``(stat - obs)(stat + obs) = (|stat| - |obs|)(|stat| + |obs|)``)."""
    below, above = gaps
    minus = (below - theta * (sign_sums - n)) / n
    if alternative == "greater":
        count = int(np.count_nonzero(minus >= -tol))
    elif alternative == "less":
        count = int(np.count_nonzero(minus <= tol))
    else:
        plus = (above - theta * (sign_sums + n)) / n
        diff = np.where(np.abs(minus) <= np.abs(plus), minus * np.sign(plus),
                        plus * np.sign(minus))
        count = int(np.count_nonzero(diff >= -tol))
    B = int(sign_sums.shape[0])
    return count / B if exact else (count + 1) / (B + 1)


def split_exact(d: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(hi, lo)`` with ``d = hi + lo`` exactly: ``hi`` is ``d`` rounded to the grid
    ``g = 2**(E + ceil(log2 n) + 2 - 53)`` (``2**E > max|d|``), so every signed sum of the
    ``hi`` (and the difference of two such sums) is a multiple of ``g`` below
    ``2**52 g``: exact in float64, whatever the order; ``|lo| <= g / 2``."""
    n = d.shape[0]
    top = float(np.max(np.abs(d)))
    if top == 0.0:
        return d.copy(), np.zeros_like(d)
    e = math.frexp(top)[1]  # 2**(e-1) <= top < 2**e
    g = math.ldexp(1.0, e + max(1, n - 1).bit_length() + 2 - 53)
    hi = np.round(d / g) * g
    return hi, d - hi


def precise_gaps(hi_sums: FloatArray, lo_sums: FloatArray, hi: FloatArray,
                 lo: FloatArray) -> Gaps:
    """``(A_b - T, A_b + T)`` from the sign-flip sums of the two parts of
    :func:`split_exact` (``hi_sums``, ``lo_sums``, shape ``(B,)``): the ``hi`` parts
    subtract exactly, so the only rounding is that of the ``lo`` sums, at most
    ``(n - 1) u sum|lo|`` (:func:`gap_tolerance`)."""
    h_t = float(np.sum(hi))  # exact: a multiple of the grid below 2**52 of it
    l_t = math.fsum(lo.tolist())
    return (hi_sums - h_t) + (lo_sums - l_t), (hi_sums + h_t) + (lo_sums + l_t)


def gap_tolerance(lo: FloatArray) -> float:
    """Tie tolerance (units of the mean) of :func:`precise_gaps`: twice the rounding of
    the ``lo`` parts' sums over ``n`` and of the two final additions' small terms,
    ``TIE_ULPS eps (sum|lo| + max|lo|)``, at least the smallest normal double."""
    from evalkit.stats.bootstrap import TIE_ULPS

    a = np.abs(lo)
    eps = float(np.finfo(np.float64).eps)
    return max(TIE_ULPS * eps * (math.fsum(a.tolist()) + float(np.max(a, initial=0.0))),
               float(np.finfo(np.float64).tiny))


def inversion_ci(
    flipped_sums: FloatArray,
    sign_sums: FloatArray,
    n: int,
    mean: float,
    scale: float,
    alpha: float,
    alternative: Alternative,
    exact: bool,
    tol: float,
    gaps: Gaps | None = None,
) -> tuple[float, float]:
    """Interval ``{theta : p(theta) >= alpha}`` by bisection from the observed mean
    (``gaps``: as in :func:`signflip_p`).

    Each side is unbounded when even ``theta -> +-inf`` is not rejected (small n: only
    the two constant patterns can match, so ``p(+-inf)`` is ``2/2**n`` or
    ``(#{|S_b| = n} + 1)/(B + 1)``). With too few resamples to reject at all
    (``B + 1 <= 1/alpha``: every p is at least ``1/(B+1) >= alpha``) it is
    ``(-inf, inf)``. ``scale`` (> 0) sets the first step and the
    bisection's precision.
    """

    def accepted(theta: float) -> bool:
        p = signflip_p(flipped_sums, sign_sums, n, mean, theta, alternative, exact, tol,
                       gaps)
        return p >= alpha

    def edge(direction: float) -> float:
        step = scale
        inside = mean
        outside = math.nan
        for _ in range(80):
            cand = mean + direction * step
            if not accepted(cand):
                outside = cand
                break
            inside = cand
            step *= 2.0
        if math.isnan(outside):
            return direction * math.inf
        for _ in range(200):
            if abs(outside - inside) <= 1e-12 * (scale + abs(inside)):
                break
            mid = 0.5 * (inside + outside)
            if accepted(mid):
                inside = mid
            else:
                outside = mid
        return inside

    closed = _closed_form_ci(flipped_sums, sign_sums, n, mean, alpha, alternative, exact,
                             gaps)
    if closed is not None:
        return closed
    lo = -math.inf if alternative == "less" else edge(-1.0)
    hi = math.inf if alternative == "greater" else edge(1.0)
    return lo, hi


def _closed_form_ci(
    flipped_sums: FloatArray,
    sign_sums: FloatArray,
    n: int,
    mean: float,
    alpha: float,
    alternative: Alternative,
    exact: bool,
    gaps: Gaps | None = None,
) -> tuple[float, float] | None:
    """The inversion interval in one pass over the patterns (no bisection).

    For pattern ``b`` the two-sided condition ``|A_b - theta*S_b| >= |T - n*theta|``
    (``T = n*mean``) is a concave quadratic in ``theta`` when ``|S_b| < n``, so it holds
    exactly on ``[l_b, u_b]`` between its roots ``(T - A_b)/(n - S_b)`` and
    ``(A_b + T)/(S_b + n)``, an interval that contains the mean; the constant patterns
    (``|S_b| = n``) hold for every ``theta``. ``p(theta) >= alpha`` needs at least ``k``
    patterns to hold, so the upper end is the ``k``-th largest ``u_b`` and the lower end
    the ``k``-th smallest ``l_b``. One-sided tests have one root each. Returns ``None``
    when the sums are not integral sign sums (the caller then bisects).
    """
    A = np.asarray(flipped_sums, dtype=np.float64)
    S = np.asarray(sign_sums, dtype=np.float64)
    B = int(A.shape[0])
    if B == 0 or not np.all(np.abs(S - np.round(S)) < 1e-6):
        return None
    need = alpha * B if exact else alpha * (B + 1) - 1.0
    if need <= 1e-9:  # B + 1 <= 1/alpha: p >= 1/(B+1) >= alpha rejects no theta at all
        return -math.inf, math.inf
    k = max(1, math.ceil(need - 1e-9))
    if k > B:
        return None
    T = n * mean
    t_minus_a, a_plus_t = (T - A, A + T) if gaps is None else (-gaps[0], gaps[1])
    identity = n - 0.5 < S
    with np.errstate(divide="ignore", invalid="ignore"):
        root = np.where(identity, 0.0, t_minus_a / (n - S))  # one-sided boundary, S_b < n
    if alternative == "two-sided":
        free = np.abs(S) > n - 0.5  # the identity and the all-flipped pattern
        with np.errstate(divide="ignore", invalid="ignore"):
            other = np.where(free, 0.0, a_plus_t / (S + n))
        lower = np.where(free, -math.inf, np.minimum(root, other))
        upper = np.where(free, math.inf, np.maximum(root, other))
    elif alternative == "greater":  # holds for theta >= (T - A_b) / (n - S_b)
        lower = np.where(identity, -math.inf, root)
        upper = np.full(B, math.inf)
    else:  # "less": holds for theta <= (T - A_b) / (n - S_b)
        upper = np.where(identity, math.inf, root)
        lower = np.full(B, -math.inf)
    if np.isnan(lower).any() or np.isnan(upper).any():
        return None
    lo = -math.inf if alternative == "less" else float(np.partition(lower, k - 1)[k - 1])
    hi = math.inf if alternative == "greater" else float(-np.partition(-upper, k - 1)[k - 1])
    return lo, hi
