"""Random-effects meta-analysis: one pooled effect from the effects of several collections.

Each collection ``i`` contributes an effect ``y_i`` (for :func:`evalkit.meta_compare`, the
mean per-query difference of a metric, candidate minus baseline) and its sampling
variance ``v_i`` (the variance of that mean, ``s_i^2 / n_i``: the unit is the query, so
queries are the independent draws and ``v_i`` shrinks with the collection's size). The
random-effects model is ``y_i = mu + u_i + e_i`` with ``e_i ~ N(0, v_i)`` (``v_i`` taken
as known) and ``u_i ~ N(0, tau^2)``: each collection has its own true effect, spread
around ``mu`` by the between-collection variance ``tau^2``.

* :func:`paired_effect`: ``y_i``, ``v_i`` and the normal interval of one collection.
* :func:`dersimonian_laird`: ``tau^2`` by the method of moments, DerSimonian and Laird,
  "Meta-analysis in clinical trials", Controlled Clinical Trials 7 (1986), 177-188.
* :func:`paule_mandel`: ``tau^2`` solving the generalized Q equation, Paule and Mandel,
  "Consensus values and weighting factors", J. Res. Natl. Bur. Stand. 87 (1982),
  377-385 (as DerSimonian and Kacker, Contemporary Clinical Trials 28 (2007), 105-114,
  write it for meta-analysis).
* :func:`random_effects`: the pooled ``mu`` with weights ``1 / (v_i + tau^2)``, its
  standard error, a normal (z) interval and p, or the Hartung-Knapp-Sidik-Jonkman
  interval and p on ``k - 1`` degrees of freedom (Hartung and Knapp, Statistics in
  Medicine 20 (2001), 3875-3889; Sidik and Jonkman, Statistics in Medicine 21 (2002),
  3153-3159); Cochran's Q with its chi-square p (Cochran, Biometrics 10 (1954)), and
  ``I^2 = max(0, (Q - (k - 1)) / Q)`` (Higgins and Thompson, "Quantifying heterogeneity
  in a meta-analysis", Statistics in Medicine 21 (2002), 1539-1558).

The values agree with statsmodels' ``combine_effects`` (``method_re="dl"`` and ``"pm"``,
``use_t=True`` for Hartung-Knapp) to 1e-8 (tests/test_stats_meta.py, against values
statsmodels produced, stored beside the test with the script that made them).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.numeric import json_ready, numbers_of, pow2_above
from evalkit.stats.pairing import snap_differences

#: The estimators of the between-collection variance ``tau^2``: ``"pm"`` (Paule-Mandel)
#: and ``"dl"`` (DerSimonian-Laird).
TAU2_METHODS: tuple[str, ...] = ("pm", "dl")
#: The default estimator: Paule-Mandel, which Veroniki et al. (Research Synthesis Methods
#: 7 (2016), 55-79) recommend over DerSimonian-Laird, whose moment estimate is biased
#: downwards when the collections are few or their variances differ.
DEFAULT_TAU2 = "pm"
#: The names of the estimators and intervals as a sentence writes them.
TAU2_LABELS: dict[str, str] = {"pm": "Paule-Mandel", "dl": "DerSimonian-Laird"}
INTERVAL_LABELS: dict[str, str] = {"z": "normal (z)",
                                   "hartung-knapp": "Hartung-Knapp-Sidik-Jonkman (t, k-1 df)"}
#: The note (and warning) of a Hartung-Knapp interval whose effects agree exactly.
HARTUNG_KNAPP_DEGENERATE = (
    "the effects agree exactly, so the Hartung-Knapp variance estimate "
    "sum w_i (y_i - mu)^2 / (k - 1) is 0: its interval has width 0 and its p is 0 (or 1 "
    "for an effect of 0) whatever the collections' own variances; this interval is "
    "degenerate, read the normal (z) interval instead")
#: Relative tolerance of the Paule-Mandel root (of ``tau^2``, relative to its upper
#: bound, the sample variance of the effects).
PM_RTOL = 1e-14

FloatArray = NDArray[np.float64]


class MetaAnalysisError(ValueError):
    """Effects that cannot be pooled: none, a variance that is not positive, or a
    collection whose per-query differences have no variance."""


@dataclass(frozen=True)
class PairedEffect:
    """One collection's effect: the mean paired difference and its sampling variance.

    Attributes:
        n: paired queries.
        effect: mean of the differences (metric units).
        variance: ``s^2 / n``, ``s^2`` the sample variance of the differences (``n - 1``
            in the denominator): the variance of the mean with the query as the unit.
        std_error: ``sqrt(variance)``.
        ci_low, ci_high: ``effect -+ z_{1-alpha/2} * std_error``, the normal interval the
            random-effects model assumes for each collection.
    """

    n: int
    effect: float
    variance: float
    std_error: float
    ci_low: float
    ci_high: float


def _z(alpha: float) -> float:
    from scipy import stats

    return float(stats.norm.isf(alpha / 2))


def paired_effect(differences: Sequence[float] | FloatArray, alpha: float = 0.05
                  ) -> PairedEffect:
    """The effect of one collection from its per-query differences.

    Args:
        differences: candidate minus baseline per query, shape ``(n,)``.
        alpha: the interval has confidence ``1 - alpha``.

    Returns:
        :class:`PairedEffect`.

    Raises:
        MetaAnalysisError: fewer than two differences; every difference equal up to
            rounding (:func:`evalkit.stats.pairing.snap_differences`, the rule of the
            paired tests, each difference its own magnitude): the variance is then 0
            and the collection's weight infinite, so it cannot be pooled with the
            others; or a variance of the mean outside the float64 range (differences
            near 1e±154 and beyond, where ``s^2 / n`` overflows to inf or vanishes to
            0): the message says to rescale the metric.
    """
    d = np.asarray(numbers_of(list(np.asarray(differences, dtype=np.float64).ravel()),
                              "difference"), dtype=np.float64)
    n = int(d.size)
    if n < 2:
        raise MetaAnalysisError(
            f"{n} paired {'query' if n == 1 else 'queries'}: the variance of the mean "
            "difference needs at least two")
    if not np.all(np.isfinite(d)):
        raise MetaAnalysisError("a per-query difference is not finite")
    snapped = snap_differences(d, d, np.zeros(n))
    if bool(np.all(snapped == snapped[0])):
        raise MetaAnalysisError(
            f"every one of the {n} per-query differences is {float(snapped[0]):+.4g} (up "
            "to rounding), so the variance of the mean is 0 and the collection would take "
            "all the weight")
    # on d / 2**k (exact): no sum overflows, no square vanishes; scaled back below
    scale = pow2_above(float(np.max(np.abs(d))))
    x = d / scale
    mean = math.fsum(x.tolist()) / n
    e = x - mean
    scaled_variance = math.fsum((e * e).tolist()) / (n - 1) / n
    variance = scaled_variance * scale * scale
    if not 0.0 < variance < math.inf or variance < np.finfo(np.float64).tiny:
        raise MetaAnalysisError(
            f"the variance of the mean difference (about {_power_of_ten(scaled_variance, scale)}) "
            "is outside the float64 range, so the collection's weight cannot be "
            "computed; rescale the metric (multiply or divide both runs' scores by the same "
            "power of ten) before pooling")
    effect = mean * scale
    se = math.sqrt(scaled_variance) * scale
    z = _z(alpha)
    return PairedEffect(n=n, effect=effect, variance=variance, std_error=se,
                        ci_low=effect - z * se, ci_high=effect + z * se)


def _power_of_ten(scaled: float, scale: float) -> str:
    """``scaled * scale**2`` written as ``1e+600`` (rounded to a power of ten), for a
    value outside the float64 range."""
    exponent = math.log10(scaled) + 2 * math.log10(scale)
    return f"1e{round(exponent):+d}"


def _arrays(effects: Sequence[float] | FloatArray, variances: Sequence[float] | FloatArray
            ) -> tuple[FloatArray, FloatArray]:
    y = np.asarray(numbers_of(list(np.asarray(effects, dtype=np.float64).ravel()),
                              "effect"), dtype=np.float64)
    v = np.asarray(numbers_of(list(np.asarray(variances, dtype=np.float64).ravel()),
                              "variance"), dtype=np.float64)
    if y.size == 0:
        raise MetaAnalysisError("no effects to pool")
    if y.shape != v.shape:
        raise MetaAnalysisError(f"{y.size} effects but {v.size} variances")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(v))):
        raise MetaAnalysisError("an effect or a variance is not finite")
    bad = np.flatnonzero(v <= 0)
    if bad.size:
        raise MetaAnalysisError(f"variance {int(bad[0]) + 1} (of {v.size}) is "
                                f"{float(v[bad[0]]):g}; every variance must be positive")
    return y, v


def _scaled(y: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray, float]:
    """``(y / c, v / c^2, c)``, ``c`` the power of two that brings the larger of
    ``max |y_i|`` and ``sqrt(max v_i)`` into [1, 2) (exact): tau^2 scales with ``c^2``,
    ``mu`` and its standard error with ``c``, and Q and the weights' shares not at all, so
    effects of 1e-300 or 1e300 are pooled as the same effects near 1 are.

    Raises:
        MetaAnalysisError: a variance is so small beside the effects (by more than the
            float64 range) that its weight, or Q, overflows.
    """
    c = pow2_above(max(float(np.max(np.abs(y))), math.sqrt(float(np.max(v)))))
    ys = y / c
    vs = v / c / c
    small = np.flatnonzero(vs < np.finfo(np.float64).tiny)
    if small.size:
        i = int(small[0])
        raise MetaAnalysisError(
            f"variance {i + 1} (of {v.size}) is {float(v[i]):g}, more than the float64 "
            f"range below the effects' scale squared ({c:g}^2): its weight overflows, so "
            "these effects cannot be pooled; check that each variance is the squared "
            "standard error of its effect, in the same units")
    return ys, vs, c


def _unscaled_tau2(tau2: float, c: float) -> float:
    """``tau2 * c^2`` (:func:`_scaled`); refused when it leaves the float64 range."""
    out = tau2 * c * c
    if tau2 > 0 and not np.finfo(np.float64).tiny <= out < math.inf:
        exponent = round(math.log10(tau2) + 2 * math.log10(c))
        raise MetaAnalysisError(
            f"tau^2 (about 1e{exponent:+d}) is outside the float64 range; rescale the "
            "effects (multiply or divide them by the same power of ten, their variances by "
            "its square) before pooling")
    return out


def cochran_q(effects: Sequence[float] | FloatArray, variances: Sequence[float] | FloatArray
              ) -> float:
    """Cochran's ``Q = sum w_i (y_i - y_FE)^2`` with ``w_i = 1 / v_i`` and ``y_FE`` the
    inverse-variance (fixed-effect) mean (Cochran, Biometrics 10 (1954), 101-129).

    Raises:
        MetaAnalysisError: see :func:`random_effects`.
    """
    y, v, _ = _scaled(*_arrays(effects, variances))
    return _q(y, v)


def _q(y: FloatArray, v: FloatArray) -> float:
    """Cochran's Q of scaled effects (:func:`_scaled`)."""
    w = 1.0 / v
    mean = float(np.dot(w, y) / w.sum())
    q = float(np.dot(w, (y - mean) ** 2))
    if not math.isfinite(q):
        raise MetaAnalysisError(
            "the effects differ by more than 1e154 of their standard errors: Cochran's Q "
            "overflows float64, so these effects cannot be pooled; check that each variance "
            "is the squared standard error of its effect, in the same units")
    return q


def dersimonian_laird(effects: Sequence[float] | FloatArray,
                      variances: Sequence[float] | FloatArray) -> float:
    """DerSimonian-Laird's moment estimate of ``tau^2`` (1986, eq. 8-9):
    ``max(0, (Q - (k - 1)) / (sum w_i - sum w_i^2 / sum w_i))``, ``w_i = 1 / v_i``;
    0 for one collection.

    Raises:
        MetaAnalysisError: see :func:`random_effects`.
    """
    y, v, c = _scaled(*_arrays(effects, variances))
    return _unscaled_tau2(_dersimonian_laird(y, v), c)


def _dersimonian_laird(y: FloatArray, v: FloatArray) -> float:
    k = y.size
    if k < 2:
        return 0.0
    w = 1.0 / v
    c = float(w.sum() - np.dot(w, w) / w.sum())
    return max(0.0, (_q(y, v) - (k - 1)) / c)


def _generalized_q(tau2: float, y: FloatArray, v: FloatArray) -> float:
    w = 1.0 / (v + tau2)
    mean = float(np.dot(w, y) / w.sum())
    return float(np.dot(w, (y - mean) ** 2))


def paule_mandel(effects: Sequence[float] | FloatArray,
                 variances: Sequence[float] | FloatArray) -> float:
    """Paule-Mandel's ``tau^2``: the root of the generalized Q equation
    ``F(tau^2) = sum w_i (y_i - mu(tau^2))^2 - (k - 1) = 0`` with
    ``w_i = 1 / (v_i + tau^2)`` and ``mu`` their weighted mean (Paule and Mandel 1982;
    DerSimonian and Kacker 2007, section 3.2). ``F`` decreases in ``tau^2``; it is 0 when
    ``F(0) <= 0`` (and for one collection). Otherwise the root lies in ``(0, s_y^2]``,
    ``s_y^2`` the sample variance of the effects (there ``sum w_i (y_i - mu)^2 <
    sum (y_i - ybar)^2 / s_y^2 = k - 1``), and is found by Brent's method
    (``scipy.optimize.brentq``) to within ``PM_RTOL * s_y^2`` (1e-14, relative).

    Raises:
        MetaAnalysisError: see :func:`random_effects`.
    """
    y, v, c = _scaled(*_arrays(effects, variances))
    return _unscaled_tau2(_paule_mandel(y, v), c)


def _paule_mandel(y: FloatArray, v: FloatArray) -> float:
    from scipy import optimize

    k = y.size
    if k < 2 or _q(y, v) <= k - 1:
        return 0.0
    upper = float(np.var(y, ddof=1))

    def f(t: float) -> float:
        return _generalized_q(t, y, v) - (k - 1)

    if f(upper) >= 0:  # only by rounding: the bound is strict in exact arithmetic
        return upper
    root = optimize.brentq(f, 0.0, upper, xtol=max(PM_RTOL * upper, 5e-324), maxiter=500)
    return float(root)


@dataclass(frozen=True)
class RandomEffects:
    """A random-effects pooled estimate (:func:`random_effects`).

    Attributes:
        estimate: the pooled effect ``mu = sum w_i y_i / sum w_i``,
            ``w_i = 1 / (v_i + tau^2)``.
        std_error: ``1 / sqrt(sum w_i)``; with Hartung-Knapp
            ``sqrt(sum w_i (y_i - mu)^2 / ((k - 1) sum w_i))``.
        ci_low, ci_high: ``estimate -+ c * std_error``, ``c`` the ``1 - alpha/2`` quantile
            of the normal distribution, or of Student's t on ``k - 1`` df (Hartung-Knapp).
        statistic: ``estimate / std_error`` (z, or t).
        p_value: two-sided p of ``mu = 0``.
        df: the t's degrees of freedom (``k - 1``), or None for the normal interval.
        tau2: the between-collection variance; ``tau`` its square root (metric units).
        q: Cochran's Q (fixed-effect weights); ``q_df`` = ``k - 1``; ``q_p_value`` its
            chi-square p (None for one collection).
        i2: ``max(0, (Q - (k - 1)) / Q)``, the share of the spread of the effects not
            due to sampling error; None when undefined (one collection, or Q = 0).
        weights: each collection's share of the weight, ``w_i / sum w_j`` (sums to 1).
        k: the number of collections.
        method: the ``tau^2`` estimator, ``"pm"`` or ``"dl"``.
        interval: ``"z"`` or ``"hartung-knapp"``.
        alpha: the interval has confidence ``1 - alpha``.
        note: why the interval is degenerate (:data:`HARTUNG_KNAPP_DEGENERATE`), or None.
    """

    estimate: float
    std_error: float
    ci_low: float
    ci_high: float
    statistic: float
    p_value: float
    df: int | None
    tau2: float
    q: float
    q_df: int
    q_p_value: float | None
    i2: float | None
    weights: tuple[float, ...]
    k: int
    method: str
    interval: str
    alpha: float
    note: str | None = None

    @property
    def tau(self) -> float:
        """``sqrt(tau2)``, in the effects' units."""
        return math.sqrt(self.tau2)

    def to_dict(self) -> dict[str, Any]:
        """Every field and ``tau`` as JSON-ready values (non-finite numbers are None)."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["weights"] = list(self.weights)
        out["tau"] = self.tau
        return dict(json_ready(out))


def random_effects(
    effects: Sequence[float] | FloatArray,
    variances: Sequence[float] | FloatArray,
    *,
    method: str = DEFAULT_TAU2,
    alpha: float = 0.05,
    hartung_knapp: bool = False,
) -> RandomEffects:
    """Pool ``k`` effects with a random-effects model (see the module docstring).

    Args:
        effects: ``y_i``, shape ``(k,)``.
        variances: their sampling variances ``v_i``, shape ``(k,)``, each positive.
        method: the ``tau^2`` estimator, ``"pm"`` (:func:`paule_mandel`, the default) or
            ``"dl"`` (:func:`dersimonian_laird`).
        alpha: the interval has confidence ``1 - alpha``, in (0, 1).
        hartung_knapp: the Hartung-Knapp-Sidik-Jonkman interval and p (t on ``k - 1``
            df, with the variance scaled by ``sum w_i (y_i - mu)^2 / (k - 1)``, not
            truncated at 1) instead of the normal ones. When the effects agree exactly
            that variance is 0: the interval has width 0 and p is 0; the result's
            ``note`` says so and a ``RuntimeWarning`` is issued.

    Returns:
        :class:`RandomEffects`. With one collection the estimate is its effect with its
        own standard error, ``tau^2 = 0`` (it cannot be estimated), Q = 0 on 0 df, and
        ``i2`` and ``q_p_value`` are None. The computation runs on the effects divided
        by a power of two (and the variances by its square), exactly, so 1e-300 and
        1e300 are pooled as effects near 1 are.

    Raises:
        MetaAnalysisError: no effects, lengths that differ, a value that is not finite, a
            variance that is not positive, or ``hartung_knapp`` with one collection; a
            variance more than the float64 range below the effects' scale squared, or
            effects so far apart in standard errors that Q overflows (not poolable in
            float64); a tau^2 outside the float64 range (rescale the effects).
        ValueError: an unknown ``method``, or ``alpha`` outside (0, 1).
    """
    from scipy import stats

    if method not in TAU2_METHODS:
        raise ValueError(f"unknown tau^2 estimator {method!r}; use one of "
                         f"{', '.join(TAU2_METHODS)}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    y, v, c = _scaled(*_arrays(effects, variances))
    k = int(y.size)
    if hartung_knapp and k < 2:
        raise MetaAnalysisError("the Hartung-Knapp interval needs at least two collections "
                                "(its t has k - 1 degrees of freedom)")
    tau2 = (_paule_mandel if method == "pm" else _dersimonian_laird)(y, v)
    w = 1.0 / (v + tau2)
    total = float(w.sum())
    mu = float(np.dot(w, y) / total)
    q = _q(y, v) if k > 1 else 0.0
    note = None
    if hartung_knapp:
        df: int | None = k - 1
        spread = float(np.dot(w, (y - mu) ** 2))
        se = math.sqrt(spread / ((k - 1) * total))
        crit = float(stats.t.isf(alpha / 2, k - 1))
        if spread == 0.0:
            note = HARTUNG_KNAPP_DEGENERATE
            warnings.warn(note, RuntimeWarning, stacklevel=2)
    else:
        df = None
        se = math.sqrt(1.0 / total)
        crit = _z(alpha)
    statistic = mu / se if se > 0 else math.copysign(math.inf, mu) if mu else 0.0
    if df is None:
        p = float(2 * stats.norm.sf(abs(statistic)))
    else:
        p = float(2 * stats.t.sf(abs(statistic), df))
    i2 = max(0.0, (q - (k - 1)) / q) if k > 1 and q > 0 else None
    mu, se = mu * c, se * c
    return RandomEffects(
        estimate=mu, std_error=se, ci_low=mu - crit * se, ci_high=mu + crit * se,
        statistic=statistic, p_value=min(1.0, p), df=df, tau2=_unscaled_tau2(tau2, c),
        q=q, q_df=k - 1, q_p_value=float(stats.chi2.sf(q, k - 1)) if k > 1 else None,
        i2=i2, weights=tuple(float(x) for x in w / total), k=k, method=method,
        interval="hartung-knapp" if hartung_knapp else "z", alpha=alpha, note=note,
    )


__all__ = ["DEFAULT_TAU2", "HARTUNG_KNAPP_DEGENERATE", "INTERVAL_LABELS", "PM_RTOL",
           "TAU2_LABELS", "TAU2_METHODS", "MetaAnalysisError", "PairedEffect",
           "RandomEffects", "cochran_q",
           "dersimonian_laird", "paired_effect", "paule_mandel", "random_effects"]
