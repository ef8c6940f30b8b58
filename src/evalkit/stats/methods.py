"""The paired tests and intervals by name, which go together, and which test "auto" runs.

:data:`METHODS` and :data:`CI_METHODS` are the names the library and the command line
accept; :data:`DEFAULT_CI` is each test's own interval (with it the interval excludes 0
exactly when ``p < alpha``); :func:`check_options` refuses a combination no test runs;
:func:`resolve_method` is the choice of "auto" (docs/statistics.md, "Which method when");
:func:`smallest_p` the floor under each test's p-values, :func:`strongest_evidence_p` the
p each test gives on its strongest evidence (every difference equal).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal, cast

import numpy as np
from numpy.typing import NDArray

from evalkit.stats._kernels import EXACT_MAX_N
from evalkit.stats.numeric import pow2_above

if TYPE_CHECKING:
    from evalkit.stats.intervals import Alternative

FloatArray = NDArray[np.float64]


Method = Literal["auto", "bootstrap-t", "bootstrap", "randomization", "t-test",
                 "randomization+bootstrap-t"]


CIMethod = Literal["percentile", "bca", "bootstrap-t", "inversion", "t",
                   "inversion+bootstrap-t"]

#: The sign-flip test and the equal-tailed bootstrap-t together: significant only when
#: both are (p is the larger of their two p-values). "auto" runs it on skewed differences.
#: Both condition on the ties: the sign-flip test because a zero has no sign, the
#: bootstrap-t because it runs over the non-zero differences only
#: (:func:`evalkit.stats.ties.nonzero_studentized`; with clusters, over all of them).
BOTH = "randomization+bootstrap-t"

#: The paired tests ``method=`` accepts (``auto`` picks one per metric).
METHODS: tuple[str, ...] = ("auto", "randomization", "t-test", "bootstrap-t", "bootstrap",
                            BOTH)


#: The interval methods ``ci=`` accepts.
CI_METHODS: tuple[str, ...] = ("percentile", "bca", "bootstrap-t", "inversion", "t",
                               "inversion+bootstrap-t")

#: What one case's value of a metric can be, as a metric declares it
#: (``evalkit.core.specs.VALUE_TYPES``; a test keeps the two equal): "auto" runs the paired
#: t-test on a "binary" metric.
VALUE_TYPES: tuple[str, ...] = ("binary", "discrete", "continuous")

#: "auto" adds the bootstrap-t to the sign-flip test when the non-zero differences'
#: sample skewness ``|G1|`` (:func:`sample_skewness`, :func:`guard_skewness`) is at least
#: this ("highly skewed" by the usual rule
#: of thumb, Bulmer, *Principles of Statistics*, 1979); the calibration of the
#: whole procedure is in docs/statistics.md.
SKEW_GUARD = 1.0


ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")


#: The interval each method reports unless ``ci=`` says otherwise; with these the
#: interval excludes 0 exactly when ``p < alpha`` (``"bootstrap"`` excepted).
DEFAULT_CI: dict[str, str] = {
    "bootstrap-t": "bootstrap-t",
    "bootstrap": "percentile",
    "randomization": "inversion",
    "t-test": "t",
    BOTH: "inversion+bootstrap-t",
}


#: Interval methods that belong to one test: ``inversion`` is the set of means the
#: sign-flip randomization test does not reject, so it goes only with
#: ``method="randomization"`` (whose default it is; not with "auto", which may run the
#: t-test); ``inversion+bootstrap-t``, the means that either of the two tests does not
#: reject, only with ``method="randomization+bootstrap-t"``. Every other interval goes
#: with every method.
CI_OF_METHOD: dict[str, str] = {"inversion": "randomization",
                                "inversion+bootstrap-t": BOTH}


def check_options(method: str, ci: str | None, alpha: float, alternative: str) -> str | None:
    """Validate the options; return ``ci`` (None: each method's own). Raises ValueError,
    for an unknown name and for an interval that belongs to another test
    (:data:`CI_OF_METHOD`)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if ci is not None and ci not in CI_METHODS:
        raise ValueError(f"unknown ci {ci!r}; choose one of {', '.join(CI_METHODS)}")
    owner = CI_OF_METHOD.get(ci or "")
    if owner is not None and method != owner:
        shared = ", ".join(repr(c) for c in CI_METHODS if c not in CI_OF_METHOD)
        raise ValueError(
            f"ci={ci!r} inverts the {owner} test, so it goes only with method={owner!r}, "
            f"not method={method!r}. Allowed combinations: method={owner!r} with ci=None "
            f"(its own interval, {ci!r}) or any ci; every other method with ci=None (the "
            f"test's own interval) or one of {shared}"
        )
    if not (isinstance(alpha, float | int) and 0.0 < float(alpha) < 1.0):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if alternative not in ALTERNATIVES:
        raise ValueError(
            f"unknown alternative {alternative!r}; choose one of {', '.join(ALTERNATIVES)}"
        )
    return ci


def check_value_type(value_type: str | None) -> str | None:
    """``value_type`` itself. Raises ValueError unless it is one of :data:`VALUE_TYPES`
    or None."""
    if value_type is not None and value_type not in VALUE_TYPES:
        raise ValueError(f"unknown value type {value_type!r}; choose one of "
                         f"{', '.join(VALUE_TYPES)} (or None: not declared)")
    return value_type


def sample_skewness(d: FloatArray) -> float:
    """The adjusted Fisher-Pearson sample skewness ``G1 = g1 sqrt(n (n - 1)) / (n - 2)``,
    ``g1 = m3 / m2**1.5`` with ``m_k`` the central moments with divisor ``n`` (Joanes and
    Gill, "Comparing measures of sample skewness and kurtosis", The Statistician 47,
    1998; ``scipy.stats.skew(d, bias=False)``). 0 when ``n < 3`` or every value is
    equal. ``d`` has shape ``(n,)``; the sums are exact (``math.fsum``)."""
    n = int(d.shape[0])
    if n < 3 or bool(np.all(d == d[0])):
        return 0.0
    mean = math.fsum(d.tolist()) / n
    e = d - mean
    m2 = math.fsum((e * e).tolist()) / n
    if m2 <= 0.0:
        return 0.0
    m3 = math.fsum((e * e * e).tolist()) / n
    return float(m3 / m2**1.5 * math.sqrt(n * (n - 1)) / (n - 2))


def guard_skewness(d: FloatArray, clustered: bool = False) -> float:
    """The skewness the skew guard of "auto" reads on differences ``d`` (shape ``(n,)``):
    :func:`sample_skewness` of the non-zero values, the ones the sign-flip test flips (a
    zero has no sign); 0 when they are all of one magnitude (``+-c``: a 0/1 metric, or
    differences one step up or down), where a null with mean 0 is symmetric, so the
    sign-flip test is the exact sign test and needs no guard, and where ``G1`` is a
    function of the wins and losses, the test's own statistic. With ``clustered``,
    ``d`` holds the clusters' flipped values and every one counts."""
    if clustered:
        return sample_skewness(d)
    live = d[d != 0.0]
    if live.size == 0 or bool(np.all(np.abs(live) == abs(float(live[0])))):
        return 0.0
    # G1 does not depend on the scale: divided by a power of two (exact), no moment of
    # differences near 1e300 overflows
    return sample_skewness(live / pow2_above(float(np.max(np.abs(live)))))


def resolve_method(method: str, d: FloatArray, value_type: str | None = None,
                   clustered: bool = False) -> str:
    """The test ``method`` runs on differences ``d`` of a metric of ``value_type``.

    "auto" is decided by what the metric is and whether the cases are clustered, never
    by the values ``d`` happens to take:

    - unclustered, a ``"binary"`` metric: the paired t-test (its differences are -1, 0
      or 1, where the exact sign-flip test is far below alpha);
    - unclustered, every other metric and an undeclared one, and with clusters
      (``clustered``, ``d`` then the clusters' flipped values) **every** metric,
      binary included: the sign-flip randomization test with a skew guard: when
      ``|G1| >=`` :data:`SKEW_GUARD` (:func:`guard_skewness`: the sample skewness of the
      non-zero values of ``d``, the ones whose signs the test flips; with clusters, of
      every cluster's value), the sign-flip test together with the equal-tailed
      bootstrap-t (:data:`BOTH`), since under skew the sign-flip test's error rate
      exceeds alpha (docs/statistics.md, Calibration).
      With clusters of unequal sizes the CR1 t-test rejects true nulls far too often
      (9-23% at alpha 0.05, also with 30 clusters and on binary metrics) while the
      cluster sign-flip test holds (docs/statistics.md, Clustered cases).

    Any other method is returned as it is.
    """
    if method != "auto":
        return method
    if value_type == "binary" and not clustered:
        return "t-test"
    return BOTH if abs(guard_skewness(d, clustered)) >= SKEW_GUARD else "randomization"


def smallest_p(method: str, n_queries: int, n_resamples: int, alternative: str,
               exact: bool) -> float:
    """The smallest p-value ``method`` can return with these settings (0 for the t-test,
    whose p has no floor): ``1/(B+1)`` for a Monte Carlo test (Davison and Hinkley 1997,
    eq. 4.11), ``2/(B+1)`` for the two-sided bootstrap-t (it doubles a tail), ``2/2**n``
    for the exact two-sided sign-flip test (the observed pattern and its mirror; one-sided
    ``1/2**n``), and the larger of the two floors for :data:`BOTH`."""
    two = 2.0 if alternative == "two-sided" else 1.0
    if method == "t-test":
        return 0.0
    if method == "bootstrap-t":
        return min(1.0, two / (n_resamples + 1))
    if method == "randomization":
        return min(1.0, two / 2.0**n_queries) if exact else 1.0 / (n_resamples + 1)
    if method == BOTH:
        flip = (min(1.0, two / 2.0**n_queries) if n_queries <= EXACT_MAX_N
                else 1.0 / (n_resamples + 1))
        return max(flip, min(1.0, two / (n_resamples + 1)))
    return 1.0 / (n_resamples + 1)


def strongest_evidence_p(method: str, n_queries: int, n_resamples: int, alternative: str,
                         exact: bool) -> float:
    """The p ``method`` gives on ``n`` equal non-zero differences in the alternative's
    direction (two-sided: either), or its floor (:func:`smallest_p`) when that is larger:
    the smallest p it can give on its strongest evidence, in ``(0, 1]``.

    Equal differences have no variance, so every test but the bootstrap answers them by
    the exact sign-flip test (the degenerate-input rule,
    :func:`evalkit.stats.degenerate.constant_outcome`): ``2**(1-n)`` two-sided
    (``2**-n`` one-sided), floored at ``1/(B+1)`` above 16 queries; the bootstrap gives
    ``1/(B+1)``. The t-test, whose p has no floor on varied differences, thus gives
    0.0625 when all of 5 cases regressed alike and 0.0161 when 4 of them did
    (``scipy.stats.ttest_1samp([-1, -1, -1, -1, 0], 0)``): a decision at a level this
    value does not reach is not monotone in the evidence (more regressions can turn a
    fail into a pass). ``n_queries`` counts the test's units (clusters when clustered).
    """
    from evalkit.stats.degenerate import constant_outcome

    c = -1.0 if alternative == "less" else 1.0
    equal, _, _ = constant_outcome(c, n_queries, n_resamples, method, 0.5,
                                   cast("Alternative", alternative))
    return max(equal, smallest_p(method, n_queries, n_resamples, alternative, exact))
