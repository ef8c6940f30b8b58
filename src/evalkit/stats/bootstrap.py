"""The paired bootstrap: percentile interval, centred-null p-value (``method="bootstrap"``).

Efron and Tibshirani, *An Introduction to the Bootstrap* (1993): resample query ids with
replacement, recompute the mean difference, read the 95% interval off the percentiles
of the resampled means (ch. 13) and the p-value off the resampled means shifted to the
null (the centred null, ch. 16: ``|mean* - observed| >= |observed|``), with the
``(count + 1) / (B + 1)`` rule of Davison and Hinkley, *Bootstrap Methods and their
Application* (1997), eq. 4.11, so p is never 0.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from evalkit.stats._kernels import bootstrap_sums
from evalkit.stats._rng import GENERATOR_NAME, check_seed
from evalkit.stats.degenerate import constant_p_floor
from evalkit.stats.numeric import pow2_above
from evalkit.stats.pairing import RunLike, align
from evalkit.stats.results import BootstrapResult

__all__ = ["BootstrapResult", "paired_bootstrap"]

#: Resampled means within this many machine epsilons times the rounding scale of their
#: sums (:func:`tie_tolerance`) of the observed mean count as ties, so rounding in a sum
#: never decides a p-value: twice the bound of the error actually made.
TIE_ULPS = 2.0


#: the most resamples a test draws: its p floor is then 1e-6, and the resampled sums of
#: a family (B x metrics doubles) stay in memory (8 MB per metric) instead of an
#: allocation of hundreds of GiB ending in a MemoryError
MAX_RESAMPLES = 1_000_000


def check_resamples(n_resamples: int) -> int:
    """Validate ``B``. Raises ValueError unless it is an integer from 1 to
    :data:`MAX_RESAMPLES`."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise ValueError(f"n_resamples must be a positive integer, not {n_resamples!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if n_resamples > MAX_RESAMPLES:
        raise ValueError(f"n_resamples {n_resamples:,} is more than the {MAX_RESAMPLES:,} "
                         "evalkit draws (p cannot go below 1/(B+1) = 1e-6 there already, "
                         "and the resampled sums must fit in memory); use at most "
                         f"{MAX_RESAMPLES:,}")
    return int(n_resamples)


def mean_and_centred(d: NDArray[np.float64]) -> tuple[float, NDArray[np.float64], bool]:
    """``(mean, d - mean, constant)``; exact zeros when every value is equal."""
    n = d.shape[0]
    if np.all(d == d[0]):
        return float(d[0]), np.zeros(n), True
    mean = math.fsum(d.tolist()) / n
    return mean, d - mean, False


def tie_tolerance(d: NDArray[np.float64], *, resampled: bool = False) -> float:
    """Absolute tolerance, in the units of the mean, for comparing a resampled mean of
    ``d`` (shape ``(n,)``) with the observed one: ``TIE_ULPS * eps * sum|x_k|``, where
    ``x_k`` are the ``n`` terms the resampled sum adds and ``eps = 2**-52``.

    Derivation (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed.,
    sec. 4.2): a sum of ``n`` floats added one after another is off by at most
    ``gamma_(n-1) sum|x_k| ~ (n - 1) u sum|x_k|`` (``u = eps / 2``) whatever the order,
    so a mean (the sum over ``n``) by at most ``u sum|x_k|``; the observed mean
    (``math.fsum`` over ``n``) by at most ``2u |mean|``. Two means equal in exact
    arithmetic thus differ by less than ``2u sum|x_k| = eps sum|x_k|``, and twice that
    is the tolerance. ``sum|x_k|`` is ``sum|d_i|`` for a sign flip (its terms are
    ``+-d_i``) and at most ``n max|d_i|`` for a bootstrap resample (``resampled``:
    any term may repeat). Values farther apart than this are never ties, so one query
    with a huge difference no longer makes every sign pattern "as extreme" (the former
    ``1e-10 max|d|`` did from ``max|d| ~ 1e9`` times the other queries' spread).
    """
    a = np.abs(d)
    total = float(a.shape[0]) * float(np.max(a)) if resampled else math.fsum(a.tolist())
    return TIE_ULPS * float(np.finfo(np.float64).eps) * max(total, 1e-300)


def paired_bootstrap(
    a: RunLike,
    b: RunLike,
    metric: str,
    n_resamples: int = 10_000,
    seed: int | None = 42,
) -> BootstrapResult:
    """Paired bootstrap of the mean difference ``a - b`` over query ids.

    Args:
        a, b: :class:`evalkit.RunResult` runs (or ``{query id: score}`` mappings) over
            the same query ids; rows are paired by id, never by position.
        metric: the metric to compare.
        n_resamples: ``B``, the number of bootstrap resamples.
        seed: seed of the counter-based SplitMix64 generator (``None`` draws one and
            records it in the result).

    Returns:
        :class:`BootstrapResult`: ``observed = mean(a - b)``; the percentile 95%
        interval of the resampled means (numpy's linear quantile); the two-sided p of
        the centred null, ``(#{|mean* - observed| >= |observed|} + 1) / (B + 1)``, in
        ``[1/(B+1), 1]``; ``significant`` iff the interval excludes 0.

    Raises:
        ValueError: a run is empty, lacks ``metric``, the runs cover different query
            ids (named in the message), or ``n_resamples``/``seed`` is invalid.

    Memory is ``O(B)``: resamples are drawn position by position and never stored as a
    ``(B x n)`` matrix. The result depends only on the data, ``B`` and ``seed``.
    """
    B = check_resamples(n_resamples)
    s = check_seed(seed)
    pair = align(a, b, metric)
    # every computation runs on d / 2**k (exact), so no sum overflows and no square
    # vanishes at extreme magnitudes; the figures are scaled back (bit for bit the same)
    raw = pair.diffs
    scale = pow2_above(float(np.max(np.abs(raw))))
    d = raw / scale
    n = d.shape[0]
    observed, centred, constant = mean_and_centred(d)
    if constant:
        dev = np.zeros(B)
    else:
        sums, _ = bootstrap_sums(centred, B, s)
        dev = sums[:, 0] / n
    means = observed + dev
    lo, hi = np.quantile(means, [0.025, 0.975])
    ci_low, ci_high = (observed, observed) if constant else (float(lo), float(hi))
    tol = 0.0 if constant else tie_tolerance(centred, resampled=True)
    # A bound that is zero up to rounding (resampled means are sums of n floats) is zero:
    # otherwise a 1e-17 lower bound would make "the interval excludes 0" true by accident.
    ci_low = 0.0 if abs(ci_low) <= tol else ci_low
    ci_high = 0.0 if abs(ci_high) <= tol else ci_high
    extreme = int(np.count_nonzero(np.abs(dev) >= abs(observed) - tol))
    p = (extreme + 1) / (B + 1)
    significant = bool(ci_low > 0.0 or ci_high < 0.0)
    note = None
    degenerate = None
    if constant:  # [c, c] excludes 0 mechanically: the sign-flip rule decides instead
        significant, note = constant_verdict(observed * scale, n, B)
        degenerate = "constant"
    else:  # and so does any interval from too few queries
        note = small_n_note(n, B)
        if note is not None:
            significant, degenerate = False, TOO_FEW
    return BootstrapResult(
        observed=observed * scale,
        ci_low=ci_low * scale,
        ci_high=ci_high * scale,
        p_value=p,
        significant=significant,
        metric=metric,
        name_a=pair.name_a,
        name_b=pair.name_b,
        n_queries=n,
        n_resamples=B,
        seed=s,
        generator=GENERATOR_NAME,
        degenerate=degenerate,
        note=note,
    )


#: ``degenerate`` of a bootstrap result on too few queries for any exact paired test to
#: reject (:func:`small_n_note`).
TOO_FEW = "small-n"


def small_n_note(n: int, n_resamples: int, alpha: float = 0.05,
                 alternative: str = "two-sided") -> str | None:
    """Why the paired bootstrap on ``n`` (not all equal) differences is not significant
    whatever its interval, or None when it may be: with ``n`` queries (clusters) no
    exact paired test can reject at ``alpha`` (the sign-flip test's smallest p,
    ``2**(1-n)`` two-sided, ``2**-n`` one-sided, is at least ``alpha``: n <= 5 two-sided,
    n <= 4 one-sided, at alpha = 0.05), while the bootstrap's percentile interval, drawn
    from only ``n**n`` resamples, excludes 0 as soon as the differences share a sign
    (p = 1/(B+1) for two positive differences). The degenerate-input rule of equal
    differences (:func:`constant_verdict`) extended to the class it stands for."""
    two = alternative == "two-sided"
    floor = constant_p_floor(n, n_resamples, two)
    if floor < alpha:
        return None
    sided = "two-sided" if two else "one-sided"
    queries = "query" if n == 1 else "queries"
    return (f"with {n} {queries} no exact paired test can reach p < {alpha:g} (the "
            f"sign-flip test's smallest {sided} p is {floor:.4g}), so the bootstrap, "
            "whose interval from so few queries excludes 0 whenever they share a sign, is "
            "not significant (docs/statistics.md, degenerate input)")


def constant_verdict(c: float, n: int, n_resamples: int, alpha: float = 0.05,
                     alternative: str = "two-sided") -> tuple[bool, str]:
    """``(significant, note)`` of the paired bootstrap on ``n`` differences all equal to
    ``c``: every resample has mean ``c``, so its interval ``[c, c]`` excludes 0 whatever
    the evidence; significance follows the sign-flip test's degenerate rule
    (:func:`evalkit.stats.degenerate.constant_p_floor`), as ``paired_test`` decides:
    two-sided, its smallest p ``2**(1-n)``; one-sided (``"greater"``, ``"less"``),
    ``2**-n`` when ``c`` lies in the alternative's direction, and never significant
    against it."""
    if c == 0:
        return False, ("every per-query difference is 0: the runs agree on every query, "
                       "so there is no difference to detect")
    two = alternative == "two-sided"
    sided = "two-sided" if two else "one-sided"
    if not two and (c > 0) != (alternative == "greater"):
        return False, (f"every per-query difference equals {c:.6g}, against the "
                       f"alternative ({alternative}), so this is not significant "
                       "(docs/statistics.md, degenerate input)")
    floor = constant_p_floor(n, n_resamples, two)
    if floor < alpha:
        return True, (f"every per-query difference equals {c:.6g}; significant by the "
                      f"sign-flip test's rule for constant differences (its smallest "
                      f"{sided} p at n = {n} is {floor:.4g} < {alpha:g})")
    queries = "query" if n == 1 else "queries"
    return False, (f"every per-query difference equals {c:.6g}, so the bootstrap interval "
                   f"[c, c] excludes 0 mechanically; with {n} {queries} the sign-flip test "
                   f"cannot reach p < {alpha:g} (its smallest {sided} p is {floor:.4g}), "
                   "so this is not significant (docs/statistics.md, degenerate input)")
