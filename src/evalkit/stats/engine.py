"""One pass of a paired method over many columns of differences sharing resamples.

Column ``j`` of ``D`` (shape ``(n, m)``) holds one comparison's per-query differences
(one metric of one run pair). Every column sees the same bootstrap index draws and the
same sign patterns, because both are functions of ``(seed, resample, position)`` only;
so all metrics and all systems of one comparison share resamples, and the resampled
studentized statistics feed Westfall-Young's max-T.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from evalkit.numeric import pow2_above
from evalkit.stats._kernels import (
    EXACT_MAX_N,
    Backend,
    bootstrap_sums,
    exact_signflip_sums,
    signflip_sums,
)
from evalkit.stats.bootstrap import tie_tolerance
from evalkit.stats.degenerate import constant_outcome
from evalkit.stats.histogram import Histogram, distribution
from evalkit.stats.intervals import (
    Alternative,
    bca_ci,
    percentile_ci,
    safe_ratio,
    studentized_ci,
    studentized_p,
    studentized_stats,
)
from evalkit.stats.randomization import inversion_ci, signflip_p
from evalkit.stats.ttest import t_test

Method = Literal["auto", "bootstrap-t", "bootstrap", "randomization", "t-test"]
CIMethod = Literal["percentile", "bca", "bootstrap-t", "inversion", "t"]
FloatArray = NDArray[np.float64]

#: The paired tests ``method=`` accepts (``auto`` picks one per metric).
METHODS: tuple[str, ...] = ("auto", "randomization", "t-test", "bootstrap-t", "bootstrap")
#: The interval methods ``ci=`` accepts.
CI_METHODS: tuple[str, ...] = ("percentile", "bca", "bootstrap-t", "inversion", "t")
ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")
#: The interval each method reports unless ``ci=`` says otherwise; with these the
#: interval excludes 0 exactly when ``p < alpha`` (the seed's bootstrap excepted).
DEFAULT_CI: dict[str, str] = {
    "bootstrap-t": "bootstrap-t",
    "bootstrap": "percentile",
    "randomization": "inversion",
    "t-test": "t",
}
#: Interval methods that belong to one test: ``inversion`` is the set of means the
#: sign-flip randomization test does not reject, so it goes only with
#: ``method="randomization"`` (whose default it is; not with "auto", which may run the
#: t-test). Every other interval goes with every method.
CI_OF_METHOD: dict[str, str] = {"inversion": "randomization"}
#: Intervals whose ends within rounding of 0 (:func:`evalkit.stats.bootstrap.tie_tolerance`)
#: are set to 0: those read off resampled sums, whose rounding can put an end at 1e-17.
SNAPPED_CI: frozenset[str] = frozenset({"inversion", "bootstrap-t", "percentile", "bca"})


@dataclass(frozen=True)
class ColumnOutcome:
    """What one column's test found (see :class:`evalkit.stats.PairedTestResult`)."""

    observed: float
    ci_low: float
    ci_high: float
    p_value: float
    exact: bool
    degenerate: str | None


@dataclass(frozen=True)
class Analysis:
    """Outcomes per column, plus what max-T needs.

    Attributes:
        outcomes: one per column.
        t_obs: observed studentized statistics, shape ``(m,)`` (``+-inf`` / 0 for
            constant columns).
        null_t: resampled studentized statistics under H0, ``(R, m)``, or None.
        null_exact: ``null_t`` enumerates every sign pattern (no ``+1`` rule).
        n_resamples: resamples (or sign patterns) behind the p-values; 0 if none.
        used_generator: any random draw was made.
        histograms: per column, the binned distribution of the test's statistic
            (:func:`evalkit.stats.histogram.distribution`) when ``bins`` was asked for;
            else empty.
    """

    outcomes: list[ColumnOutcome]
    t_obs: FloatArray
    null_t: FloatArray | None
    null_exact: bool
    n_resamples: int
    used_generator: bool
    histograms: tuple[Histogram | None, ...] = ()


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


def is_binary(d: FloatArray) -> bool:
    """Whether the non-zero differences all have one magnitude (a 0/1 metric, pass/fail),
    not all differences being equal."""
    nz = np.abs(d[d != 0.0])
    return bool(nz.size > 0 and np.all(nz == nz[0]) and not np.all(d == d[0]))


def resolve_method(method: str, d: FloatArray) -> str:
    """The test ``method`` runs on differences ``d``: "auto" is the sign-flip
    randomization test, or the paired t-test when ``d`` is binary (:func:`is_binary`)."""
    if method != "auto":
        return method
    return "t-test" if is_binary(d) else "randomization"


def _fsum_cols(x: FloatArray) -> FloatArray:
    return np.array([math.fsum(x[:, j].tolist()) for j in range(x.shape[1])])


def analyse(
    D: FloatArray,
    *,
    method: str,
    ci_method: str,
    alpha: float,
    alternative: Alternative,
    n_resamples: int,
    seed: int,
    want_null: bool = False,
    backend: Backend = "auto",
    bins: int = 0,
) -> Analysis:
    """Run ``method`` (with interval ``ci_method``) on every column of ``D``.

    Args:
        D: differences, shape ``(n, m)``, finite.
        method, ci_method, alpha, alternative: as in :func:`evalkit.stats.paired_test`.
        n_resamples: ``B``.
        seed: generator seed.
        want_null: also return resampled studentized statistics for max-T.
        backend: kernel backend.
        bins: also bin each column's resampled statistic into this many bins (0: no).
    """
    n, m = D.shape
    constant = np.all(D[0:1, :] == D, axis=0)
    means = np.where(constant, D[0, :], _fsum_cols(D) / n)
    centred = np.where(constant[None, :], 0.0, D - means[None, :])
    sq = _fsum_cols(centred * centred)
    var = sq / (n - 1) if n > 1 else np.zeros(m)
    var = np.where(constant, 0.0, var)
    se = np.sqrt(var / n)
    t_obs = safe_ratio(means, se, 0.0)
    tols = np.array([tie_tolerance(D[:, j]) for j in range(m)])
    live = not bool(np.all(constant))

    boot_family = method in ("bootstrap", "bootstrap-t")
    need_boot = live and (boot_family or ci_method in ("percentile", "bca", "bootstrap-t"))
    need_sq = live and (
        method == "bootstrap-t" or ci_method == "bootstrap-t" or (want_null and boot_family)
    )
    need_flip = live and (
        method == "randomization"
        or ci_method == "inversion"
        or (want_null and not boot_family)
    )
    exact = n <= EXACT_MAX_N

    dev: FloatArray | None = None
    sqdev: FloatArray | None = None
    if need_boot or need_sq:
        sums, squares = bootstrap_sums(
            centred, n_resamples, seed, want_squares=need_sq, backend=backend
        )
        dev = sums / n
        sqdev = squares
    flips: FloatArray | None = None
    signs: FloatArray | None = None
    if need_flip:
        if exact:
            flips, signs = exact_signflip_sums(D)
        else:
            flips, signs = signflip_sums(D, n_resamples, seed, backend=backend)

    tstar: FloatArray | None = None
    wants_t = method == "bootstrap-t" or ci_method == "bootstrap-t" or want_null
    if wants_t and dev is not None and sqdev is not None:
        tstar = np.empty_like(dev)
        for j in range(m):
            tstar[:, j] = studentized_stats(
                dev[:, j], sqdev[:, j], n, float(var[j]), float(tols[j])
            )

    outcomes: list[ColumnOutcome] = []
    for j in range(m):
        mean = float(means[j])
        if constant[j]:
            p, lo, hi = constant_outcome(mean, n, n_resamples, method, alpha, alternative)
            outcomes.append(
                ColumnOutcome(mean, lo, hi, p, method != "bootstrap" and exact, "constant")
            )
            continue
        tol = float(tols[j])
        sej = float(se[j])
        t_j = float(t_obs[j])
        t_tol = 1e-10 * max(1.0, abs(t_j))
        col_exact = False
        if method == "t-test":
            p, _, _ = t_test(mean, sej, n, alpha, alternative)
        elif method == "bootstrap":
            assert dev is not None
            dj = dev[:, j]
            if alternative == "two-sided":
                count = np.count_nonzero(np.abs(dj) >= abs(mean) - tol)
            elif alternative == "greater":
                count = np.count_nonzero(dj >= mean - tol)
            else:
                count = np.count_nonzero(dj <= mean + tol)
            p = (int(count) + 1) / (n_resamples + 1)
        elif method == "bootstrap-t":
            assert tstar is not None
            p = studentized_p(t_j, tstar[:, j], alternative, t_tol)
        else:
            assert flips is not None and signs is not None
            p = signflip_p(flips[:, j], signs, n, mean, 0.0, alternative, exact, tol)
            col_exact = exact

        if ci_method == "t":
            _, lo, hi = t_test(mean, sej, n, alpha, alternative)
        elif ci_method == "percentile":
            assert dev is not None
            lo, hi = percentile_ci(mean, dev[:, j], alpha, alternative)
        elif ci_method == "bca":
            assert dev is not None
            lo, hi = bca_ci(mean, dev[:, j], centred[:, j], alpha, alternative, tol)
        elif ci_method == "bootstrap-t":
            assert tstar is not None
            lo, hi = studentized_ci(mean, sej, tstar[:, j], alpha, alternative)
        else:
            assert flips is not None and signs is not None
            scale = max(sej, tol, 1e-300)
            lo, hi = inversion_ci(
                flips[:, j], signs, n, mean, scale, alpha, alternative, exact, tol
            )
        if ci_method in SNAPPED_CI:
            # an end within rounding of 0 is 0, so the interval agrees with the test's own
            # p, which counts ties within the same tolerance
            lo = 0.0 if abs(lo) <= tol else lo
            hi = 0.0 if abs(hi) <= tol else hi
        outcomes.append(ColumnOutcome(mean, lo, hi, p, col_exact, None))

    null_t: FloatArray | None = None
    null_exact = False
    if want_null:
        if boot_family:
            null_t = tstar if tstar is not None else np.zeros((n_resamples, m))
        elif flips is not None and signs is not None:
            fm = flips / n
            sumsq = _fsum_cols(D * D)
            if n > 1:
                v = (sumsq[None, :] - n * fm * fm) / (n - 1)
                v[v < 1e-14 * np.maximum(var, 1e-300)[None, :]] = 0.0
                null_t = np.empty_like(fm)
                for j in range(m):
                    null_t[:, j] = safe_ratio(fm[:, j], np.sqrt(v[:, j] / n), float(tols[j]))
            else:
                null_t = np.zeros_like(fm)
            null_exact = exact
        else:
            null_t = np.zeros((n_resamples, m))

    hists: tuple[Histogram | None, ...] = ()
    if bins:
        hists = tuple(
            None if constant[j] else distribution(
                method, j, n, float(means[j]), float(t_obs[j]), flips, dev, tstar, exact, bins)
            for j in range(m)
        )
    used = need_boot or need_sq or (need_flip and not exact)
    if method == "randomization" and exact and live:
        reported = 1 << n
    elif method == "t-test" and not (need_boot or need_sq):
        reported = 0
    else:
        reported = n_resamples
    return Analysis(outcomes, t_obs, null_t, null_exact, reported, used, hists)


@dataclass(frozen=True)
class Family:
    """:func:`analyse_family`'s answer: per column the outcome, the test and interval
    actually used and the resamples behind it, plus what max-T needs."""

    outcomes: list[ColumnOutcome]
    methods: list[str]
    ci_methods: list[str]
    n_resamples: list[int]
    used_generator: list[bool]
    t_obs: FloatArray
    null_t: FloatArray | None
    null_exact: bool
    histograms: tuple[Histogram | None, ...] = ()


def analyse_family(
    D: FloatArray,
    *,
    method: str,
    ci: str | None,
    alpha: float,
    alternative: Alternative,
    n_resamples: int,
    seed: int,
    want_null: bool = False,
    backend: Backend = "auto",
    bins: int = 0,
) -> Family:
    """:func:`analyse` with "auto" resolved per column (:func:`resolve_method`).

    Columns resolved to the same test run together; all groups draw from the same
    generator streams, so the sign patterns (and bootstrap indices) are shared across
    groups and the max-T null rows line up.

    Each column is divided by a power of two that brings its largest magnitude into
    ``[1, 2)`` (exact: :mod:`evalkit.numeric`) and the means and intervals are scaled
    back, so differences of any magnitude a float holds (1e-300 to 1e300) give the same
    answer as the same differences near 1: no sum overflows, no square vanishes.
    """
    m = D.shape[1]
    scales = np.array([pow2_above(float(x)) for x in np.max(np.abs(D), axis=0)])
    D = D / scales[None, :]
    resolved = [resolve_method(method, D[:, j]) for j in range(m)]
    groups: dict[str, list[int]] = {}
    for j, r in enumerate(resolved):
        groups.setdefault(r, []).append(j)
    outcomes: list[ColumnOutcome | None] = [None] * m
    ci_methods = [""] * m
    reported = [0] * m
    used = [False] * m
    t_obs = np.zeros(m)
    hists: list[Histogram | None] = [None] * m
    parts: list[tuple[list[int], Analysis]] = []
    for g, cols in groups.items():
        ci_g = ci if ci is not None else DEFAULT_CI[g]
        an = analyse(
            D[:, cols],
            method=g,
            ci_method=ci_g,
            alpha=alpha,
            alternative=alternative,
            n_resamples=n_resamples,
            seed=seed,
            want_null=want_null,
            backend=backend,
            bins=bins,
        )
        parts.append((cols, an))
        for k, j in enumerate(cols):
            outcomes[j] = an.outcomes[k]
            ci_methods[j] = ci_g
            reported[j] = an.n_resamples
            used[j] = an.used_generator
            t_obs[j] = an.t_obs[k]
            if an.histograms:
                hists[j] = an.histograms[k]
    null_t: FloatArray | None = None
    null_exact = False
    if want_null:
        rows = max(an.null_t.shape[0] for _, an in parts if an.null_t is not None)
        null_t = np.zeros((rows, m))
        for cols, an in parts:
            if an.null_t is not None and an.null_t.shape[0] == rows:
                null_t[:, cols] = an.null_t
                null_exact = null_exact or an.null_exact
    final = [ColumnOutcome(o.observed * sc, o.ci_low * sc, o.ci_high * sc, o.p_value,
                           o.exact, o.degenerate)
             for o, sc in zip(outcomes, scales.tolist(), strict=True) if o is not None]
    return Family(final, resolved, ci_methods, reported, used, t_obs, null_t, null_exact,
                  tuple(None if h is None else h.scaled(sc)
                        for h, sc in zip(hists, scales.tolist(), strict=True))
                  if bins else ())
