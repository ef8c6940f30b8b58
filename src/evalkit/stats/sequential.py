"""Anytime-valid confidence sequences for the mean of bounded paired differences.

A confidence sequence (CS) is a sequence of intervals ``C_1, C_2, ...`` that cover the
mean at every ``t`` at once with probability ``1 - alpha``: ``P(for all t: mu in C_t) >=
1 - alpha``. So a run may look at ``C_t`` after every case and stop whenever it likes (as
soon as ``C_t`` excludes 0, say), and the interval at the stopping time still has
``1 - alpha`` coverage, which a fixed-n test's interval, looked at after every batch,
does not (Howard, Ramdas, McAuliffe and Sekhon, "Time-uniform, nonparametric,
nonasymptotic confidence sequences", Annals of Statistics 49(2), 2021).

This module implements the predictable plug-in empirical-Bernstein CS ("PrPl-EB") of
Waudby-Smith and Ramdas, "Estimating means of bounded random variables by betting",
JRSS-B 86(1), 2024 (arXiv:2010.09686), Theorem 2, for observations ``X_i`` in
``[0, 1]``, and its without-replacement form (their Section 6) for a finite population
of ``N`` values sampled in a uniformly random order, whose mean is the population's own
(in an evaluation: the golden set's mean difference, not a super-population's). With
``S_t = X_1 + ... + X_t``:

- running estimates, with one pseudo-observation (mean 1/2, variance 1/4)::

      mu_hat_t     = (1/2 + S_t) / (t + 1)
      sigma2_hat_t = (1/4 + sum_{i<=t} (X_i - mu_hat_i)^2) / (t + 1)

- the bets, predictable (each uses only ``X_1..X_{t-1}``), truncated at ``c``::

      lambda_t = min(c, sqrt(2 log(2 / alpha) / (sigma2_hat_{t-1} t log(1 + t))))

- the variance increments and the exponential ``psi``::

      v_i = 4 (X_i - mu_hat_{i-1})^2,     psi_E(lambda) = (-log(1 - lambda) - lambda) / 4

- with replacement (an infinite population, or i.i.d. draws)::

      C_t = ( sum lambda_i X_i / sum lambda_i
              +- (log(2 / alpha) + sum v_i psi_E(lambda_i)) / sum lambda_i )

- without replacement from ``N`` values (Section 6): the mean of what is left before
  draw ``i`` is ``(N mu - S_{i-1}) / (N - i + 1)``; solving the same supermartingale
  for ``mu`` gives weights ``w_i = 1 + (i - 1) / (N - i + 1) = N / (N - i + 1)``::

      C_t = ( sum lambda_i (X_i + S_{i-1} / (N - i + 1)) / sum lambda_i w_i
              +- (log(2 / alpha) + sum v_i psi_E(lambda_i)) / sum lambda_i w_i )

Each bound is clipped to ``[0, 1]`` and, by default, the running intersection is taken
(``max`` of the lower bounds so far, ``min`` of the upper ones), which is a CS too.

**Tuning.** ``c = 1/2`` (``truncation``; the paper suggests 1/2 or 3/4), the bets'
``t log(1 + t)`` schedule (tightest around no particular ``t``: the run does not know
when it will stop), one pseudo-observation. The two-sided CS is the intersection of two
one-sided CSs at ``alpha / 2`` each; since ``lambda`` and ``v`` are the same for ``X``
and ``1 - X`` it is the symmetric interval above. The ``confseq`` package's
``predmix_empbern_twosided_cs`` computes the same bounds except that it centres ``v_i``
on the plain running mean ``S_{i-1} / (i - 1)``, of ``X`` for the lower bound and of
``1 - X`` for the upper one (0 for ``i = 1`` on each side, so the two sides differ in
``v_1``); ``variance_centre="running"`` does the same, for comparison.

**The range is declared, never read from the data.** Paired differences of a metric
declared in ``[lo, hi]`` lie in ``[-r, r]`` with ``r = hi - lo``;
:func:`paired_confidence_sequence` maps them to ``X = (d + r) / (2 r)`` and back. A
range taken from the observed differences would depend on the data and void the
guarantee, so a value outside ``[-r, r]`` is refused.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from evalkit.stats.declared_values import RANGE_SLACK as RANGE_SLACK
from evalkit.stats.numeric import finite_real

FloatArray = NDArray[np.float64]
VarianceCentre = Literal["regularized", "running"]
#: What the sequence says about the mean difference at the last look: ``"differs"`` (the
#: interval excludes 0), ``"equivalent"`` (it lies inside ``[-margin, margin]``),
#: ``"undecided"`` (neither yet).
Decision = Literal["differs", "equivalent", "undecided"]

#: Truncation of the bets (``c``): Waudby-Smith and Ramdas suggest 1/2 or 3/4.
DEFAULT_TRUNCATION = 0.5

__all__ = ["DEFAULT_TRUNCATION", "ConfidenceSequence", "Decision", "decide",
           "eb_confidence_sequence", "paired_confidence_sequence", "random_order"]


@dataclass(frozen=True)
class ConfidenceSequence:
    """A confidence sequence for a mean, one interval per observation.

    Attributes:
        lower, upper: shape ``(t,)``: the interval after ``1..t`` observations, in the
            units of the values given (a mean difference of the metric).
        alpha: the sequence covers the mean at every ``t`` at once with probability at
            least ``1 - alpha``.
        population: ``N`` for the without-replacement form, else ``None``.
    """

    lower: FloatArray
    upper: FloatArray
    alpha: float
    population: int | None

    @property
    def n(self) -> int:
        """Observations seen."""
        return int(self.lower.size)

    @property
    def last(self) -> tuple[float, float]:
        """The interval after every observation (``(-inf, inf)`` before the first)."""
        if not self.n:
            return (-math.inf, math.inf)
        return (float(self.lower[-1]), float(self.upper[-1]))


def _check_alpha(alpha: float) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) \
            or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}")
    return float(alpha)


def eb_confidence_sequence(
    x: ArrayLike, *, alpha: float = 0.05, population: int | None = None,
    truncation: float = DEFAULT_TRUNCATION, running_intersection: bool = True,
    variance_centre: VarianceCentre = "regularized",
) -> tuple[FloatArray, FloatArray]:
    """The two-sided PrPl-EB confidence sequence for the mean of ``x`` in ``[0, 1]``.

    Waudby-Smith and Ramdas (JRSS-B 2024, arXiv:2010.09686), Theorem 2, and with
    ``population`` its without-replacement form (Section 6); the formulas are in the
    module docstring.

    Args:
        x: observations in ``[0, 1]``, shape ``(t,)``, in the order they were drawn.
        alpha: the miscoverage level, in ``(0, 1)``.
        population: ``N``, the size of the finite population ``x`` is drawn from
            without replacement in a uniformly random order (``t <= N``); ``None``:
            i.i.d. draws (with replacement).
        truncation: ``c`` in ``(0, 1)``, the largest bet.
        running_intersection: intersect each interval with the earlier ones.
        variance_centre: ``"regularized"`` (the paper: ``v_i`` centred on
            ``mu_hat_{i-1}`` with its pseudo-observation) or ``"running"`` (centred on
            each side's plain running mean, 0 at ``i = 1``, as the ``confseq`` package
            does).

    Returns:
        ``(lower, upper)``, each of shape ``(t,)``, inside ``[0, 1]``.

    Raises:
        ValueError: a value outside ``[0, 1]`` or not finite, ``alpha`` or
            ``truncation`` outside ``(0, 1)``, ``population`` smaller than ``t``.
    """
    alpha = _check_alpha(alpha)
    if not 0 < truncation < 1:
        raise ValueError(f"truncation must be strictly between 0 and 1, got {truncation!r}")
    values = np.asarray(x, dtype=np.float64).ravel()
    t_max = values.size
    if t_max and (not np.all(np.isfinite(values)) or values.min() < -RANGE_SLACK
                  or values.max() > 1 + RANGE_SLACK):
        raise ValueError("observations must lie in [0, 1]")
    values = np.clip(values, 0.0, 1.0)
    if population is not None and (isinstance(population, bool) or population < t_max):
        raise ValueError(f"population {population!r} is smaller than the {t_max} "
                         "observations drawn from it")
    if not t_max:
        return np.empty(0), np.empty(0)
    t = np.arange(1, t_max + 1, dtype=np.float64)
    sums = np.cumsum(values)
    sums_before = np.concatenate(([0.0], sums[:-1]))
    mu_hat = (0.5 + sums) / (t + 1)
    mu_before = np.concatenate(([0.5], mu_hat[:-1]))
    sigma2 = (0.25 + np.cumsum((values - mu_hat) ** 2)) / (t + 1)
    sigma2_before = np.concatenate(([0.25], sigma2[:-1]))
    log_term = math.log(2.0 / alpha)
    lambdas = np.minimum(truncation, np.sqrt(2.0 * log_term / (sigma2_before * t
                                                                 * np.log1p(t))))
    if variance_centre == "regularized":
        v_low = v_high = 4.0 * (values - mu_before) ** 2
    elif variance_centre == "running":  # each side's own running mean, 0 at i = 1
        running = np.concatenate(([0.0], sums[:-1] / t[:-1]))
        v_low = 4.0 * (values - running) ** 2
        v_high = 4.0 * ((1.0 - values) - np.concatenate(([0.0], 1.0 - running[1:]))) ** 2
    else:
        raise ValueError(f"variance_centre must be 'regularized' or 'running', got "
                         f"{variance_centre!r}")
    psi = (-np.log1p(-lambdas) - lambdas) / 4.0
    if population is None:
        shifted, weights = values, np.ones_like(values)
    else:
        left = population - t + 1.0  # values not yet drawn before draw t, itself included
        shifted = values + sums_before / left
        weights = 1.0 + (t - 1.0) / left
    denominator = np.cumsum(lambdas * weights)
    centre_t = np.cumsum(lambdas * shifted) / denominator
    lower = np.clip(centre_t - (log_term + np.cumsum(v_low * psi)) / denominator, 0.0, 1.0)
    upper = np.clip(centre_t + (log_term + np.cumsum(v_high * psi)) / denominator, 0.0, 1.0)
    if running_intersection:
        lower = np.maximum.accumulate(lower)
        upper = np.minimum.accumulate(upper)
        upper = np.maximum(upper, lower)  # never empty: rounding at t = N
    return lower, upper


def paired_confidence_sequence(
    differences: ArrayLike, radius: float, *, alpha: float = 0.05,
    population: int | None = None, truncation: float = DEFAULT_TRUNCATION,
) -> ConfidenceSequence:
    """The PrPl-EB confidence sequence of the mean of paired differences in
    ``[-radius, radius]`` (:func:`eb_confidence_sequence` of ``(d + r) / (2 r)``, mapped
    back to the differences' units).

    Args:
        differences: ``a_i - b_i`` per unit (case, or cluster), shape ``(t,)``, in the
            order the units were drawn (a uniformly random order fixed in advance).
        radius: ``r``, declared before any data: for a metric declared in ``[lo, hi]``,
            ``hi - lo``.
        alpha: the miscoverage level.
        population: ``N`` units the order draws from without replacement (the golden
            set): the sequence then covers their mean and narrows towards it as ``t``
            approaches ``N``, but does not reach a point at ``t = N``: the interval
            after all ``N`` units still has a width (differences ``[1, -1, 0, 0, 1, -1,
            0, 0, 0, 0]`` in ``[-1, 1]``, ``N = 10``: about ``[-0.53, 0.55]``), and the
            mean of all ``N``, then known exactly, is read off an ordinary paired test.
        truncation: ``c``, the largest bet.

    Returns:
        A :class:`ConfidenceSequence` in the differences' units.

    Raises:
        ValueError: a difference outside ``[-radius, radius]`` (the message says which
            and that the metric's declared range is wrong), ``radius`` not a positive
            finite number, or what :func:`eb_confidence_sequence` raises.
    """
    if (r := finite_real(radius)) is None or r <= 0:
        raise ValueError(f"radius must be a positive finite number, got {radius!r}")
    d = np.asarray(differences, dtype=np.float64).ravel()
    if d.size and not np.all(np.isfinite(d)):
        raise ValueError("paired differences must be finite numbers")
    outside = np.flatnonzero(np.abs(d) > radius * (1 + RANGE_SLACK))
    if outside.size:
        i = int(outside[0])
        raise ValueError(
            f"paired difference {float(d[i])!r} (unit {i + 1}) lies outside [-{radius:g}, "
            f"{radius:g}], the range the metric declares; the declared range is wrong, "
            "and a range read from the data would void the sequence's guarantee")
    lower, upper = eb_confidence_sequence((d + radius) / (2.0 * radius), alpha=alpha,
                                          population=population, truncation=truncation)
    scale = 2.0 * radius
    return ConfidenceSequence(lower * scale - radius, upper * scale - radius,
                              _check_alpha(alpha), population)


def decide(interval: Sequence[float], margin: float | None = None) -> Decision:
    """What an interval of the mean difference settles: ``"differs"`` when it excludes
    0, ``"equivalent"`` when it lies inside ``[-margin, margin]`` (``margin`` > 0), else
    ``"undecided"``. An interval touching 0 does not exclude it.

    Args:
        interval: ``(low, high)``, ``low <= high``; either end may be infinite.
        margin: the equivalence margin, a finite number > 0, or None (no equivalence).

    Raises:
        ValueError: ``interval`` is not two numbers, an end is NaN, ``low > high`` (an
            inverted interval: swapped ends, or an interval of another quantity), or
            ``margin`` is not a finite number > 0.
    """
    from evalkit.stats.numeric import real_number

    items = list(interval)
    if len(items) != 2:
        raise ValueError(f"interval must be two numbers (low, high), got {len(items)} values")
    low = real_number(items[0], "interval low")
    high = real_number(items[1], "interval high")
    if math.isnan(low) or math.isnan(high):
        raise ValueError(f"interval ({low!r}, {high!r}) has a NaN end; an interval that "
                         "failed to compute decides nothing")
    if low > high:
        raise ValueError(f"interval ({low!r}, {high!r}) is inverted (low > high); give "
                         "(low, high) with low <= high")
    if margin is not None:
        m = real_number(margin, "margin")
        if not (math.isfinite(m) and m > 0):
            raise ValueError(f"margin must be a finite number > 0, got {m!r}")
        margin = m
    if low > 0 or high < 0:
        return "differs"
    if margin is not None and -margin <= low and high <= margin:
        return "equivalent"
    return "undecided"


def random_order(n: int, seed: int) -> list[int]:
    """A uniformly random order of ``0..n-1`` that depends only on ``(n, seed)``: the
    Fisher-Yates shuffle (Knuth, TAOCP vol. 2, Algorithm 3.4.2 P) whose step ``k``
    (``i = n - 1 - k`` down to 1) swaps position ``i`` with ``j = floor(z_k (i + 1) /
    2**64)``, ``z_k`` the ``k``-th draw of SplitMix64 seeded with ``seed``
    (:mod:`evalkit.stats._rng`), so the order is the same on every machine and numpy
    version, and a resumed run calls the cases in the same order.

    Raises:
        ValueError: ``n`` negative or ``seed`` not an integer in ``[0, 2**64)``.
    """
    from evalkit.stats._rng import check_seed, splitmix64_draw

    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    seed = check_seed(seed)
    order = list(range(n))
    for k, i in enumerate(range(n - 1, 0, -1)):
        j = (splitmix64_draw(seed, k) * (i + 1)) >> 64
        order[i], order[j] = order[j], order[i]
    return order
