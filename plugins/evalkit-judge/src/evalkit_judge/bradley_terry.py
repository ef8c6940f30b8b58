"""Bradley-Terry strengths from pairwise win counts, by Newton's method on the penalised
log-likelihood, and their bootstrap intervals over cases.

The model (Bradley and Terry, Biometrika 39, 1952; Zermelo 1929): system ``i`` beats
system ``j`` with probability ``sigma(theta_i - theta_j) = 1 / (1 + exp(theta_j -
theta_i))``. Given ``W[i, j]``, the (possibly fractional: a tie is half a win for each)
number of times ``i`` beat ``j``, :func:`fit` minimises

    f(theta) = sum_{i,j} W[i, j] * log(1 + exp(theta_j - theta_i)) + alpha * sum_k theta_k**2

the negative log-likelihood plus an L2 penalty of weight ``alpha`` (:data:`BT_ALPHA` by
default), the objective of ``choix.opt_pairwise(n, data, alpha=alpha)`` (choix's
``PairwiseFcts``). ``f`` is strictly convex for ``alpha > 0``, so the minimum is unique
and finite even when a system won every comparison; at the minimum ``sum_k theta_k = 0``
(the likelihood's gradient sums to zero, so the penalty's must too), so the strengths are
centred without a constraint. Newton's method with backtracking converges to it
quadratically; strengths are in natural-log odds units.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

#: The L2 penalty weight of :func:`fit` (choix's ``alpha``): small next to one comparison,
#: so it moves strengths only where the data leave them unbounded (a system that won
#: every comparison).
BT_ALPHA = 0.01
#: Newton stops when the largest gradient component is below this.
_TOLERANCE = 1e-10
_MAX_ITERATIONS = 100

FloatArray = NDArray[np.float64]


def _objective(theta: FloatArray, wins: FloatArray, alpha: float) -> float:
    d = theta[:, None] - theta[None, :]
    return float(np.sum(wins * np.logaddexp(0.0, -d)) + alpha * np.sum(theta * theta))


def fit(wins: FloatArray, alpha: float = BT_ALPHA) -> FloatArray:
    """The Bradley-Terry strengths that minimise the penalised negative log-likelihood.

    Args:
        wins: an ``(m, m)`` array, ``wins[i, j]`` >= 0 the times system ``i`` beat ``j``
            (the diagonal is ignored).
        alpha: the L2 penalty weight, > 0.

    Returns:
        ``theta``, shape ``(m,)``, summing to zero (natural-log odds units):
        ``P(i beats j) = 1 / (1 + exp(theta[j] - theta[i]))``.

    Raises:
        ValueError: ``wins`` is not square, holds a negative or non-finite count, or
            ``alpha`` is not > 0.
    """
    w = np.array(wins, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"wins must be a square matrix, got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("wins must hold finite counts >= 0")
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, got {alpha!r}")
    np.fill_diagonal(w, 0.0)
    m = w.shape[0]
    n = w + w.T
    theta = np.zeros(m)
    for _ in range(_MAX_ITERATIONS):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j] = P(i beats j)
        grad = np.sum(n * p - w, axis=1) + 2.0 * alpha * theta
        if float(np.max(np.abs(grad))) < _TOLERANCE:
            break
        curvature = n * p * p.T
        hess = -curvature
        np.fill_diagonal(hess, np.sum(curvature, axis=1) + 2.0 * alpha)
        step = np.linalg.solve(hess, grad)
        before = _objective(theta, w, alpha)
        t = 1.0
        while t > 1e-12 and _objective(theta - t * step, w, alpha) > before - 1e-4 * t * float(
                grad @ step):
            t /= 2.0
        theta = theta - t * step
    return theta


@dataclass(frozen=True)
class Strengths:
    """Bradley-Terry strengths with percentile bootstrap intervals.

    Attributes:
        theta: the strengths of the full data, shape ``(m,)``, summing to zero.
        low, high: the ``alpha/2`` and ``1 - alpha/2`` percentiles of each strength over
            the bootstrap resamples.
        n_resamples: the resamples drawn; seed: their generator's seed (numpy's PCG64).
        penalty: the L2 weight used (choix's ``alpha``).
    """

    theta: FloatArray
    low: FloatArray
    high: FloatArray
    n_resamples: int
    seed: int
    penalty: float


def bootstrap(case_wins: FloatArray, *, penalty: float = BT_ALPHA, n_resamples: int = 1000,
              seed: int = 42, alpha: float = 0.05) -> Strengths:
    """Strengths of the summed win counts and their bootstrap intervals over cases.

    Each resample draws ``n`` cases with replacement (the case is the unit, so the
    comparisons of one case, every pair and sample, stay together), sums their win
    counts and refits (:func:`fit`); the interval is the percentile interval.

    Args:
        case_wins: ``(n, m, m)``: per case, ``[i, j]`` the wins of ``i`` over ``j``.
        penalty: the L2 weight of every fit.
        n_resamples: bootstrap resamples (>= 1).
        seed: the seed of ``numpy.random.default_rng``.
        alpha: the interval has confidence ``1 - alpha``.

    Raises:
        ValueError: a malformed array (see :func:`fit`), no case, ``n_resamples`` < 1.
    """
    s = np.asarray(case_wins, dtype=np.float64)
    if s.ndim != 3 or s.shape[1] != s.shape[2] or s.shape[0] == 0:
        raise ValueError(f"case_wins must have shape (n >= 1, m, m), got {s.shape}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    n, m, _ = s.shape
    theta = fit(s.sum(axis=0), penalty)
    rng = np.random.default_rng(seed)
    flat = s.reshape(n, m * m)
    draws = np.empty((n_resamples, m))
    for b in range(n_resamples):
        counts = np.bincount(rng.integers(0, n, size=n), minlength=n).astype(np.float64)
        draws[b] = fit((counts @ flat).reshape(m, m), penalty)
    low, high = np.quantile(draws, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    return Strengths(theta, low, high, n_resamples, seed, penalty)
