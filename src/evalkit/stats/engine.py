"""One pass of a paired method over many columns of differences sharing resamples.

Column ``j`` of ``D`` (shape ``(n, m)``) holds one comparison's per-query differences
(one metric of one run pair). Every column sees the same bootstrap index draws and the
same sign patterns, because both are functions of ``(seed, resample, position)`` only;
so all metrics and all systems of one comparison share resamples, and each test's p of
every resample feeds Westfall-Young's min-P.

:func:`analyse` runs in named steps: the columns' moments (:func:`column_moments`), what
the method and interval need drawn (:func:`needs_of`), the draws
(:func:`draw_resamples`; for :data:`BOTH` its bootstrap-t half over each column's
non-zero differences, :func:`evalkit.stats.ties.nonzero_studentized`), then per column the p-value
(:func:`column_p`) and the interval (:func:`column_ci`), and each column's p of every
resample for min-P (:func:`null_pvalues`). :mod:`evalkit.stats.grouped` resolves "auto"
per column and runs each test on its columns.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

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
from evalkit.stats.methods import BOTH
from evalkit.stats.moments import Moments, column_moments, fsum_cols
from evalkit.stats.randomization import (
    Gaps,
    gap_tolerance,
    inversion_ci,
    precise_gaps,
    signflip_p,
    split_exact,
)
from evalkit.stats.ties import NonZeroT, nonzero_studentized
from evalkit.stats.ttest import t_test

FloatArray = NDArray[np.float64]

#: Intervals whose ends within rounding of 0 (:func:`evalkit.stats.bootstrap.tie_tolerance`)
#: are set to 0: those read off resampled sums, whose rounding can put an end at 1e-17.
SNAPPED_CI: frozenset[str] = frozenset(
    {"inversion", "bootstrap-t", "percentile", "bca", "inversion+bootstrap-t"})

#: Methods whose resamples for min-P are bootstrap ones (the others: sign flips).
BOOTSTRAP_METHODS: frozenset[str] = frozenset({"bootstrap", "bootstrap-t"})


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
    """Outcomes per column, plus what min-P needs.

    Attributes:
        outcomes: one per column.
        p_obs: each column's p of the observed data as the min-P step of Westfall and
            Young reads it (:func:`null_pvalues`), shape ``(m,)``, or None.
        p_null: the same p of every shared resample, ``(R, m)``, or None.
        null_exact: ``p_null``'s rows enumerate every sign pattern (no ``+1`` rule).
        p_obs_t, p_null_t: for :data:`BOTH`, the same of its bootstrap-t half on the
            shared bootstrap resamples (:func:`studentized_pvalues`); else None.
        n_resamples: resamples (or sign patterns) behind the p-values; 0 if none.
        used_generator: any random draw was made.
        histograms: per column, the binned distribution of the test's statistic
            (:func:`evalkit.stats.histogram.distribution`) when ``bins`` was asked for;
            else empty.
    """

    outcomes: list[ColumnOutcome]
    p_obs: FloatArray | None
    p_null: FloatArray | None
    null_exact: bool
    n_resamples: int
    used_generator: bool
    histograms: tuple[Histogram | None, ...] = ()
    p_obs_t: FloatArray | None = None
    p_null_t: FloatArray | None = None


@dataclass(frozen=True)
class Needs:
    """Which resamples a method and interval need: bootstrap sums, their squares, sign
    flips."""

    boot: bool
    squares: bool
    flips: bool


@dataclass(frozen=True)
class Draws:
    """The resampled quantities every column shares: bootstrap deviations of the mean
    ``dev`` and sums of squares ``sqdev`` (``(B, m)``), sign-flip sums ``flips``
    (``(B, m)``) and their sign sums ``signs`` (``(B,)``), studentized bootstrap statistics
    ``tstar``; None where not drawn. ``exact``: the sign patterns are all ``2**n``.
    ``nonzero``: :data:`BOTH`'s bootstrap-t half over each column's non-zero differences
    (:func:`evalkit.stats.ties.nonzero_studentized`), or None.
    ``gaps``: per column whose sign-flip sums round too coarsely for its differences
    (:func:`precise_flip_gaps`), the patterns' exact gaps to the observed sum and their
    tie tolerance."""

    dev: FloatArray | None
    sqdev: FloatArray | None
    flips: FloatArray | None
    signs: FloatArray | None
    tstar: FloatArray | None
    exact: bool
    gaps: dict[int, tuple[Gaps, float]] = field(default_factory=dict)
    nonzero: NonZeroT | None = None


def needs_of(method: str, ci_method: str, want_null: bool, live: bool,
             nonzero: bool = False) -> Needs:
    """What ``method`` with interval ``ci_method`` (and min-P, when ``want_null``) must
    draw over all ``n`` differences; nothing when no column is ``live`` (every column
    constant). With ``nonzero``, :data:`BOTH`'s bootstrap-t half and the
    ``inversion+bootstrap-t`` interval are drawn apart, over the non-zero differences
    (:func:`evalkit.stats.ties.nonzero_studentized`), so they need nothing here."""
    if not live:
        return Needs(False, False, False)
    boot_null = want_null and method in BOOTSTRAP_METHODS
    both_t = not nonzero
    studentized = (method == "bootstrap-t" or (method == BOTH and both_t)
                   or ci_method == "bootstrap-t"
                   or (ci_method == "inversion+bootstrap-t" and both_t))
    boot = (method in BOOTSTRAP_METHODS or (method == BOTH and both_t)
            or ci_method in ("percentile", "bca", "bootstrap-t")
            or (ci_method == "inversion+bootstrap-t" and both_t))
    flips = (method in ("randomization", BOTH)
             or ci_method in ("inversion", "inversion+bootstrap-t")
             or (want_null and not boot_null))
    return Needs(boot or studentized or boot_null, studentized or boot_null, flips)


def draw_signflips(D: FloatArray, *, n_resamples: int, seed: int, backend: Backend
                   ) -> tuple[FloatArray, FloatArray]:
    """The sign-flip sums of every column of ``D`` and the sums of the signs
    (:func:`evalkit.stats._kernels.signflip_sums`; every pattern when
    ``n <= EXACT_MAX_N``). Each column's sums depend on that column alone (the same
    patterns, added in row order), so the columns of several tests may be drawn in one
    call and split."""
    if D.shape[0] <= EXACT_MAX_N:
        return exact_signflip_sums(D)
    return signflip_sums(D, n_resamples, seed, backend=backend)


#: A column's sign-flip sums are recomputed from exact parts (:func:`precise_flip_gaps`)
#: when their tie tolerance exceeds this share of the smallest change one query's sign
#: makes to the mean (``2 min|d_i| / n``, ``d_i != 0``).
PRECISE_SHARE = 1.0 / 1024


def precise_flip_gaps(D: FloatArray, *, n_resamples: int, seed: int, backend: Backend
                      ) -> dict[int, tuple[Gaps, float]]:
    """For each column of ``D`` whose sign-flip means round by more than
    :data:`PRECISE_SHARE` of a single query's weight (a difference of 1e15 among
    differences of 0.1: ``1e15 + 0.1`` is ``1e15`` in floats), the patterns' gaps to the
    observed sum computed from :func:`evalkit.stats.randomization.split_exact`'s parts
    (the same sign patterns: each column's sums depend on that column alone), with their
    tie tolerance (:func:`evalkit.stats.randomization.gap_tolerance`). Other columns are
    left out: their sums are precise enough as drawn."""
    n, m = D.shape
    picked: list[int] = []
    for j in range(m):
        col = D[:, j]
        live = np.abs(col[col != 0.0])
        if live.size == 0 or bool(np.all(col == col[0])):
            continue
        if tie_tolerance(col) > PRECISE_SHARE * 2.0 * float(live.min()) / n:
            picked.append(j)
    if not picked:
        return {}
    parts = [split_exact(np.ascontiguousarray(D[:, j])) for j in picked]
    P = np.column_stack([x for hi_lo in parts for x in hi_lo])
    sums, _ = draw_signflips(P, n_resamples=n_resamples, seed=seed, backend=backend)
    return {j: (precise_gaps(sums[:, 2 * k], sums[:, 2 * k + 1], *parts[k]),
                gap_tolerance(parts[k][1]))
            for k, j in enumerate(picked)}


def draw_resamples(D: FloatArray, mo: Moments, needs: Needs, *, n_resamples: int,
                   seed: int, backend: Backend, want_t: bool,
                   drawn_flips: tuple[FloatArray, FloatArray] | None = None,
                   precise: bool = True) -> Draws:
    """Draw what ``needs`` asks for (the sign flips of ``D`` exactly when
    ``n <= EXACT_MAX_N``, unless ``drawn_flips`` holds them, :func:`draw_signflips` of
    ``D``; the bootstrap from ``mo.centred``), and the studentized bootstrap statistics
    when ``want_t`` and the squares were drawn; with ``precise``, the exact gaps of the
    columns whose sign-flip sums round too coarsely (:func:`precise_flip_gaps`)."""
    n = mo.n
    exact = n <= EXACT_MAX_N
    dev = sqdev = flips = signs = tstar = None
    if needs.boot or needs.squares:
        sums, sqdev = bootstrap_sums(mo.centred, n_resamples, seed,
                                     want_squares=needs.squares, backend=backend)
        dev = np.divide(sums, n, out=sums)  # in place: one (B, m) array, not two
    gaps: dict[int, tuple[Gaps, float]] = {}
    if needs.flips:
        flips, signs = drawn_flips if drawn_flips is not None else draw_signflips(
            D, n_resamples=n_resamples, seed=seed, backend=backend)
        if precise:
            gaps = precise_flip_gaps(D, n_resamples=n_resamples, seed=seed, backend=backend)
    if want_t and dev is not None and sqdev is not None:
        tstar = np.empty_like(dev)
        for j in range(D.shape[1]):
            tstar[:, j] = studentized_stats(dev[:, j], sqdev[:, j], n, float(mo.var[j]),
                                            float(mo.btols[j]))
    return Draws(dev, sqdev, flips, signs, tstar, exact, gaps)


def column_p(method: str, j: int, mo: Moments, dr: Draws, alpha: float,
             alternative: Alternative) -> tuple[float, bool]:
    """``(p, exact)`` of ``method`` on live column ``j``; :data:`BOTH`'s p is the larger
    of the sign-flip test's and the bootstrap-t's (over the non-zero differences when
    ``dr.nonzero`` holds them, :func:`evalkit.stats.ties.nonzero_studentized`), so it
    is below ``alpha`` only when both are."""
    mean, tol, sej = float(mo.means[j]), float(mo.tols[j]), float(mo.se[j])
    n = mo.n
    if method == "t-test":
        return t_test(mean, sej, n, alpha, alternative)[0], False
    if method == "bootstrap":
        assert dr.dev is not None
        dj = dr.dev[:, j]
        tol = float(mo.btols[j])
        if alternative == "two-sided":
            count = np.count_nonzero(np.abs(dj) >= abs(mean) - tol)
        elif alternative == "greater":
            count = np.count_nonzero(dj >= mean - tol)
        else:
            count = np.count_nonzero(dj <= mean + tol)
        return (int(count) + 1) / (dr.dev.shape[0] + 1), False
    p_t = 0.0
    if method == BOTH and dr.nonzero is not None:
        t_j = float(dr.nonzero.t_obs[j])
        p_t = studentized_p(t_j, dr.nonzero.tstar[:, j], alternative,
                            1e-10 * max(1.0, abs(t_j)))
    elif method in ("bootstrap-t", BOTH):
        assert dr.tstar is not None
        t_j = float(mo.t_obs[j])
        p_t = studentized_p(t_j, dr.tstar[:, j], alternative, 1e-10 * max(1.0, abs(t_j)))
        if method == "bootstrap-t":
            return p_t, False
    assert dr.flips is not None and dr.signs is not None
    gap = dr.gaps.get(j)
    p_f = signflip_p(dr.flips[:, j], dr.signs, n, mean, 0.0, alternative, dr.exact,
                     tol if gap is None else gap[1], None if gap is None else gap[0])
    if method == BOTH:
        return max(p_f, p_t), False
    return p_f, dr.exact


def column_ci(ci_method: str, j: int, mo: Moments, dr: Draws, alpha: float,
              alternative: Alternative) -> tuple[float, float]:
    """The ``ci_method`` interval of live column ``j``, ends within rounding of 0 set to 0
    (:data:`SNAPPED_CI`). ``inversion+bootstrap-t`` is the smallest interval holding both
    the inversion and the bootstrap-t intervals: the means that either test does not
    reject, so it excludes 0 exactly when both tests reject. With ``dr.nonzero`` its
    bootstrap-t part is the non-zero mean's bootstrap-t interval times ``k / n``
    (:func:`evalkit.stats.ties.nonzero_studentized`): the means of all ``n``
    differences, with the ties held at 0, whose non-zero part that bootstrap-t does not
    reject (a positive factor, so it excludes 0 exactly when that test's p is below
    ``alpha``)."""
    mean, tol, sej = float(mo.means[j]), float(mo.tols[j]), float(mo.se[j])
    btol = float(mo.btols[j])
    n = mo.n
    if ci_method == "t":
        _, lo, hi = t_test(mean, sej, n, alpha, alternative)
        return lo, hi
    if ci_method == "percentile":
        assert dr.dev is not None
        lo, hi = percentile_ci(mean, dr.dev[:, j], alpha, alternative)
    elif ci_method == "bca":
        assert dr.dev is not None
        lo, hi = bca_ci(mean, dr.dev[:, j], mo.centred[:, j], alpha, alternative, btol)
    elif ci_method == "bootstrap-t":
        assert dr.tstar is not None
        lo, hi = studentized_ci(mean, sej, dr.tstar[:, j], alpha, alternative)
    else:
        assert dr.flips is not None and dr.signs is not None
        gap = dr.gaps.get(j)
        if gap is not None:  # the sums' own rounding is too coarse here: their exact gaps
            tol = gap[1]
        lo, hi = inversion_ci(dr.flips[:, j], dr.signs, n, mean, max(sej, tol, 1e-300),
                              alpha, alternative, dr.exact, tol,
                              None if gap is None else gap[0])
        if ci_method == "inversion+bootstrap-t":
            if dr.nonzero is not None:
                nz = dr.nonzero
                lo_t, hi_t = studentized_ci(float(nz.means[j]), float(nz.se[j]),
                                            nz.tstar[:, j], alpha, alternative)
                lo_t, hi_t = lo_t * float(nz.share[j]), hi_t * float(nz.share[j])
            else:
                assert dr.tstar is not None
                lo_t, hi_t = studentized_ci(mean, sej, dr.tstar[:, j], alpha, alternative)
            lo, hi = min(lo, lo_t), max(hi, hi_t)
    # an end within rounding of 0 is 0, so the interval agrees with the test's own p,
    # which counts ties within the same tolerance (the larger one when the interval is
    # read off bootstrap means)
    if ci_method in ("percentile", "bca", "bootstrap-t", "inversion+bootstrap-t"):
        tol = max(tol, btol)
    return (0.0 if abs(lo) <= tol else lo), (0.0 if abs(hi) <= tol else hi)


def rank_pvalues(obs: FloatArray, null: FloatArray, tol: FloatArray, exact: bool,
                 two_tailed: bool = False) -> tuple[FloatArray, FloatArray]:
    """Each column's p-value of its observed statistic and of every resampled one, read
    off the column's own resampled distribution, as its test reads its p.

    Args:
        obs: observed statistics, shape ``(m,)``; larger is more extreme.
        null: resampled statistics, shape ``(R, m)``.
        tol: tie tolerance per column, shape ``(m,)``: ``x`` counts as at least ``y``
            when ``x >= y - tol``.
        exact: the rows are the whole null distribution (every sign pattern, the
            identity among them); else they are ``R`` Monte Carlo draws and the observed
            statistic joins them (``R + 1`` values, the ``+1`` rule).
        two_tailed: the p doubles the smaller tail, capped at 1 (the two-sided
            bootstrap-t, :func:`evalkit.stats.intervals.studentized_p`); else the upper
            tail.

    Returns:
        ``(p_obs, p_null)``, shapes ``(m,)`` and ``(R, m)``: the share of the reference
        values (the rows, plus the observed value unless ``exact``) at least as extreme
        as the observed value, and as each row's value. ``p_obs`` is the test's own p.
    """
    R, m = null.shape
    p_obs = np.empty(m)
    p_null = np.empty((R, m))
    for j in range(m):
        col = null[:, j]
        ref = np.sort(col if exact else np.append(col, obs[j]))
        size = ref.shape[0]
        for target, x in ((p_null[:, j], col), (p_obs[j:j + 1], obs[j:j + 1])):
            upper = size - np.searchsorted(ref, x - tol[j], side="left")
            if two_tailed:
                lower = np.searchsorted(ref, x + tol[j], side="right")
                target[:] = np.minimum(1.0, 2.0 * np.minimum(upper, lower) / size)
            else:
                target[:] = upper / size
    return p_obs, p_null


def studentized_pvalues(alternative: Alternative, t_obs: FloatArray, tstar: FloatArray
                        ) -> tuple[FloatArray, FloatArray]:
    """The bootstrap-t's p (:func:`evalkit.stats.intervals.studentized_p`) of the observed
    t (``t_obs``, ``(m,)``) and of every resample's ``t*`` (``tstar``, ``(B, m)``), read
    off the ``B`` resampled statistics and the observed one (:func:`rank_pvalues`):
    ``(p_obs, p_null)``."""
    tol = 1e-10 * np.maximum(1.0, np.abs(np.where(np.isfinite(t_obs), t_obs, 0.0)))
    if alternative == "two-sided":
        return rank_pvalues(t_obs, tstar, tol, False, two_tailed=True)
    sign = 1.0 if alternative == "greater" else -1.0
    return rank_pvalues(sign * t_obs, sign * tstar, tol, False)


def null_pvalues(method: str, alternative: Alternative, D: FloatArray, mo: Moments,
                 dr: Draws, n_resamples: int) -> tuple[FloatArray, FloatArray, bool]:
    """What Westfall and Young's min-P needs (:func:`evalkit.stats.multiple.westfall_young`):
    ``(p_obs, p_null, exact)``, each column's p of the observed data (``(m,)``) and of
    every shared resample (``(R, m)``), computed from the statistic its test uses:

    * randomization and :data:`BOTH`: the sign-flip mean (:func:`rank_pvalues` on the
      flipped means, the test's own p; for :data:`BOTH` this is its sign-flip half, the
      bootstrap-t half is :func:`studentized_pvalues`);
    * t-test: the t distribution's p of the studentized sign-flip means (the same
      function of the data as the test's p, applied to each flipped sample);
    * bootstrap: the bootstrap mean deviations; bootstrap-t: the studentized bootstrap
      statistics (its two-sided p doubles the smaller tail).

    ``exact``: the rows enumerate every sign pattern. Columns nothing was drawn for (every
    column constant) get p 1 in every row.
    """
    m = D.shape[1]
    n = mo.n
    sign = {"two-sided": None, "greater": 1.0, "less": -1.0}[alternative]

    def oriented(x: FloatArray) -> FloatArray:
        return np.abs(x) if sign is None else sign * x

    if method in BOOTSTRAP_METHODS:
        if method == "bootstrap" and dr.dev is not None:
            return (*rank_pvalues(oriented(mo.means), oriented(dr.dev), mo.btols, False),
                    False)
        if method == "bootstrap-t" and dr.tstar is not None:
            return (*studentized_pvalues(alternative, mo.t_obs, dr.tstar), False)
        return np.ones(m), np.ones((n_resamples, m)), False
    if dr.flips is None or dr.signs is None:
        return np.ones(m), np.ones((n_resamples, m)), False
    fm = dr.flips / n
    if method != "t-test":
        p_obs, p_null = rank_pvalues(oriented(mo.means), oriented(fm), mo.tols, dr.exact)
        for j, (gap, tol) in dr.gaps.items():  # the test's own p (see column_p)
            p_obs[j] = signflip_p(dr.flips[:, j], dr.signs, n, float(mo.means[j]), 0.0,
                                  alternative, dr.exact, tol, gap)
        return p_obs, p_null, dr.exact
    from scipy.special import stdtr

    sumsq = fsum_cols(D * D)
    v = (sumsq[None, :] - n * fm * fm) / (n - 1)
    v[v < 1e-14 * np.maximum(mo.var, 1e-300)[None, :]] = 0.0
    null_t = np.empty_like(fm)
    for j in range(m):
        null_t[:, j] = safe_ratio(fm[:, j], np.sqrt(v[:, j] / n), float(mo.tols[j]))

    def t_p(t: FloatArray) -> FloatArray:
        if sign is None:
            return np.asarray(np.minimum(1.0, 2.0 * stdtr(n - 1, -np.abs(t))),
                              dtype=np.float64)
        return np.asarray(stdtr(n - 1, -sign * t), dtype=np.float64)

    return t_p(mo.t_obs), t_p(null_t), dr.exact


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
    flip: FloatArray | None = None,
    drawn_flips: tuple[FloatArray, FloatArray] | None = None,
) -> Analysis:
    """Run ``method`` (with interval ``ci_method``) on every column of ``D``.

    Args:
        D: differences, shape ``(n, m)``, finite.
        method, ci_method, alpha, alternative: as in :func:`evalkit.stats.paired_test`
            ("auto" resolved).
        n_resamples: ``B``.
        seed: generator seed.
        want_null: also return each column's p of the observed data and of every
            resample, for Westfall and Young's min-P (:func:`null_pvalues`).
        backend: kernel backend.
        bins: also bin each column's resampled statistic into this many bins (0: no).
        flip: the values the sign-flip test flips, ``(n, m)`` with ``D``'s column means,
            when they are not ``D`` itself: clustered cases, where ``D`` holds the
            clusters' residual totals and ``flip`` their sums
            (:func:`evalkit.stats.clusters.cluster_columns`). None: ``D``; then
            :data:`BOTH`'s bootstrap-t half runs over each column's non-zero
            differences (:func:`evalkit.stats.ties.nonzero_studentized`); with
            clusters, over all of ``D``.
        drawn_flips: the sign flips of these columns, already drawn with this seed
            (:func:`draw_signflips`; used when the test needs them), or None.
    """
    n, m = D.shape
    F = D if flip is None else flip
    mo = column_moments(D)
    if flip is not None:
        mo = dataclasses.replace(mo, tols=np.maximum(mo.tols, np.array(
            [tie_tolerance(F[:, j]) for j in range(m)])))
    live = not bool(np.all(mo.constant))
    nonzero = flip is None and live and (method == BOTH
                                         or ci_method == "inversion+bootstrap-t")
    needs = needs_of(method, ci_method, want_null, live, nonzero)
    # cluster values carry their own rounding (sums of cases): their ties need the
    # tolerance of their magnitude, so their sign-flip sums are read as drawn
    dr = draw_resamples(F, mo, needs, n_resamples=n_resamples, seed=seed, backend=backend,
                        want_t=needs.squares, drawn_flips=drawn_flips,
                        precise=flip is None)
    if nonzero:
        dr = dataclasses.replace(dr, nonzero=nonzero_studentized(
            D, n_resamples=n_resamples, seed=seed, backend=backend))
    outcomes: list[ColumnOutcome] = []
    for j in range(m):
        mean = float(mo.means[j])
        if mo.constant[j]:
            p, lo, hi = constant_outcome(mean, n, n_resamples, method, alpha, alternative)
            exact = method != "bootstrap" and dr.exact
            outcomes.append(ColumnOutcome(mean, lo, hi, p, exact, "constant"))
            continue
        p, exact = column_p(method, j, mo, dr, alpha, alternative)
        lo, hi = column_ci(ci_method, j, mo, dr, alpha, alternative)
        outcomes.append(ColumnOutcome(mean, lo, hi, p, exact, None))
    p_obs: FloatArray | None = None
    p_null: FloatArray | None = None
    null_exact = False
    p_obs_t: FloatArray | None = None
    p_null_t: FloatArray | None = None
    if want_null:
        p_obs, p_null, null_exact = null_pvalues(method, alternative, F, mo, dr, n_resamples)
        if method == BOTH and dr.nonzero is not None:
            p_obs_t, p_null_t = studentized_pvalues(alternative, dr.nonzero.t_obs,
                                                    dr.nonzero.tstar)
        elif method == BOTH and dr.tstar is not None:
            p_obs_t, p_null_t = studentized_pvalues(alternative, mo.t_obs, dr.tstar)
    hists: tuple[Histogram | None, ...] = ()
    if bins:
        hists = tuple(
            None if mo.constant[j] else distribution(
                method, j, n, float(mo.means[j]), float(mo.t_obs[j]), dr.flips, dr.dev,
                dr.tstar, dr.exact, bins)
            for j in range(m))
    used = needs.boot or needs.squares or (needs.flips and not dr.exact) or nonzero
    return Analysis(outcomes, p_obs, p_null, null_exact,
                    _reported_resamples(method, needs, dr.exact, live, n, n_resamples),
                    used, hists, p_obs_t, p_null_t)


def _reported_resamples(method: str, needs: Needs, exact: bool, live: bool, n: int,
                        n_resamples: int) -> int:
    """The resamples (or sign patterns) behind the p-values: ``2**n`` for the exact
    sign-flip test, 0 for a t-test that drew nothing, else ``B``."""
    if method == "randomization" and exact and live:
        return 1 << n
    if method == "t-test" and not (needs.boot or needs.squares):
        return 0
    return n_resamples
