"""``paired_test``: one entry point for every paired test of a mean difference."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np

from evalkit.stats._kernels import Backend
from evalkit.stats._rng import GENERATOR_NAME, check_seed
from evalkit.stats.bootstrap import TOO_FEW, check_resamples, constant_verdict, small_n_note
from evalkit.stats.clusters import (
    ClusterIndex,
    cluster_columns,
    cluster_index,
    few_clusters_note,
)
from evalkit.stats.effects import effect_sizes
from evalkit.stats.engine import ColumnOutcome, FloatArray
from evalkit.stats.grouped import Family, analyse_family
from evalkit.stats.methods import (
    BOTH,
    SKEW_GUARD,
    check_options,
    check_value_type,
    guard_skewness,
    sample_skewness,
)
from evalkit.stats.pairing import RunLike, align
from evalkit.stats.results import MIN_N_FOR_P05, EffectSizes, PairedTestResult

#: The method ``paired_test``, ``compare_runs``, ``evalkit compare`` and the gate use
#: unless told otherwise, chosen from the calibration benchmark
#: (benchmarks/bench_calibration.py, docs/statistics.md): "auto" is the paired t-test on
#: a metric declared binary (a 0/1 metric, where the exact sign-flip test rejects far
#: less than alpha), and on any other metric the sign-flip randomization test, joined by
#: the bootstrap-t when the differences are skewed
#: (:func:`evalkit.stats.methods.resolve_method`).
DEFAULT_METHOD = "auto"

#: Fewer queries than this add a warning to the result.
SMALL_N = 20


def build_warnings(
    n: int, effect: EffectSizes, outcome: ColumnOutcome, method: str, requested: str,
    n_clusters: int | None = None,
    cluster_skewness: float = 0.0,
    effective_clusters: float | None = None,
    guard_skew: float | None = None,
) -> tuple[str, ...]:
    """The notes a reader of one result needs: which test "auto" chose and why, degenerate
    input, few queries or clusters (``G`` or its effective number ``effective_clusters``
    below 20), skewness (with clusters, ``cluster_skewness``, that of the clusters' sums,
    the values the tests take as their units and the skew guard of "auto" reads; without
    clusters the guard reads ``guard_skew``,
    :func:`evalkit.stats.methods.guard_skewness`, ``effect.skewness`` when None). A
    note never suggests the method ``requested``."""
    notes: list[str] = []
    if n_clusters is not None:
        few = few_clusters_note(n_clusters, effective_clusters, method)
        if few is not None:
            notes.append(few)
    if requested == "auto" and method == "t-test":
        notes.append(
            "method 'auto': the metric is binary (its declared value type), so the paired "
            "t-test was used; the exact sign-flip test is very conservative there"
        )
    if requested == "auto" and method == BOTH:
        what = "clusters' sums" if n_clusters is not None else "non-zero differences"
        notes.append(
            f"method 'auto': the {what} are skewed (sample skewness |G1| >= "
            f"{SKEW_GUARD:g}), where the sign-flip test alone rejects too often, so "
            "the bootstrap-t was run too and p is the larger of their two p-values: "
            "significant only if both tests reject (docs/statistics.md)"
        )
    if n < 2:  # nothing can be tested; the notes below would say less than this
        notes.append(
            f"only {n} {'query is' if n == 1 else 'queries are'} paired: no paired test is "
            f"possible (at least 2 are needed; {MIN_N_FOR_P05} for p < 0.05 two-sided)")
        return tuple(notes)
    if outcome.degenerate == "constant":
        notes.append(
            f"every per-query difference is equal ({effect.mean_diff:+.4g}); the answer "
            "follows the documented degenerate-input rule (docs/statistics.md)"
        )
    if n < SMALL_N:
        queries = "query" if n == 1 else "queries"
        notes.append(f"only {n} {queries}: power is low and intervals are wide or unbounded")
    if effect.skewness_warning is not None and n >= 3:
        notes.append(effect.skewness_warning)
    # with clusters every test runs on one value per cluster: the skewness that matters
    # (and the one the skew guard of "auto" read) is that of the clusters' sums
    skew = cluster_skewness if n_clusters is not None else effect.skewness
    guard = skew if n_clusters is not None or guard_skew is None else guard_skew
    units = n_clusters if n_clusters is not None else n
    if abs(skew) > 1.0 and units < 100 and method in ("t-test", "bootstrap", "randomization"):
        what = "clusters' sums are" if n_clusters is not None else "differences are"
        notes.append(
            f"{what} skewed (G1 = {skew:.2f}); at this n the {method}'s error rate can "
            "drift from alpha"
            + (" (method 'auto' would add the bootstrap-t)"
               if method == "randomization" and requested == "randomization"
               and abs(guard) >= SKEW_GUARD else "")
        )
    return tuple(notes)


def decide(outcome: ColumnOutcome, method: str, n_units: int, n_resamples: int,
           alpha: float, alternative: str) -> tuple[bool, str | None, str | None]:
    """``(significant, note, degenerate)`` of ``method``'s ``outcome`` on ``n_units``
    queries (clusters when clustered): ``p < alpha``, except for the bootstrap on
    constant differences (the sign-flip test's rule decides,
    :func:`~evalkit.stats.bootstrap.constant_verdict`) and on so few units that no
    exact test can reject (never significant,
    :func:`~evalkit.stats.bootstrap.small_n_note`). What :func:`paired_test` and
    :func:`evalkit.stats.simulate_power` decide by."""
    significant = bool(outcome.p_value < alpha)
    note = None
    degenerate = outcome.degenerate
    if outcome.degenerate == "constant" and method == "bootstrap":
        # the bootstrap's p (1/(B+1)) is mechanical here: the sign-flip rule decides, as for
        # every other method (and paired_bootstrap), on either alternative
        significant, note = constant_verdict(outcome.observed, n_units, n_resamples, alpha,
                                             alternative)
    elif method == "bootstrap" and n_units >= 2:
        # so is any interval from so few queries (clusters) that no exact test can reject
        note = small_n_note(n_units, n_resamples, alpha, alternative)
        if note is not None:
            significant, degenerate = False, TOO_FEW
    return significant, note, degenerate


def make_result(
    outcome: ColumnOutcome,
    family: Family,
    j: int,
    *,
    effect: EffectSizes,
    n: int,
    metric: str,
    name_a: str,
    name_b: str,
    requested: str,
    alpha: float,
    alternative: str,
    seed: int,
    n_clusters: int | None = None,
    cluster_skewness: float = 0.0,
    effective_clusters: float | None = None,
    guard_skew: float | None = None,
) -> PairedTestResult:
    """Column ``j`` of ``family`` as a :class:`PairedTestResult` over ``n`` cases (in
    ``n_clusters`` clusters when clustered: the unit of the degenerate-input rule; their
    sums' skewness ``cluster_skewness``, which the skew guard read; their effective
    number ``effective_clusters``, :func:`evalkit.stats.clusters.effective_clusters`;
    without clusters, ``guard_skew``, the skewness the skew guard of "auto" reads,
    :func:`evalkit.stats.methods.guard_skewness`)."""
    method = family.methods[j]
    used = family.used_generator[j]
    significant, note, degenerate = decide(outcome, method, n_clusters or n,
                                           family.n_resamples[j], alpha, alternative)
    return PairedTestResult(
        observed=outcome.observed,
        ci_low=outcome.ci_low,
        ci_high=outcome.ci_high,
        p_value=outcome.p_value,
        significant=significant,
        note=note,
        metric=metric,
        name_a=name_a,
        name_b=name_b,
        n_queries=n,
        n_clusters=n_clusters,
        effective_clusters=effective_clusters,
        n_resamples=family.n_resamples[j],
        seed=seed if used else None,
        generator=GENERATOR_NAME if used else None,
        method=method,
        ci_method=family.ci_methods[j],
        alpha=float(alpha),
        alternative=alternative,
        exact=outcome.exact,
        degenerate=degenerate,
        effect=effect,
        warnings=build_warnings(n, effect, outcome, method, requested, n_clusters,
                                cluster_skewness, effective_clusters, guard_skew),
        distribution=family.histograms[j] if family.histograms else None,
    )


def paired_test(
    a: RunLike,
    b: RunLike,
    metric: str,
    method: str = DEFAULT_METHOD,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    ci: str | None = None,
    n_resamples: int = 10_000,
    seed: int | None = 42,
    *,
    backend: Backend = "auto",
    value_type: str | None = None,
    clusters: Mapping[str, Hashable] | None = None,
) -> PairedTestResult:
    """Test whether ``a`` and ``b`` differ in mean ``metric``, paired by query id.

    Args:
        a, b: runs (:class:`evalkit.RunResult`) or ``{query id: score}`` mappings over
            the same ids. Differences are always ``a - b``.
        metric: metric name.
        method: "auto" (the default: "t-test" when ``value_type`` is "binary" and
            the cases are not clustered;
            otherwise "randomization", or "randomization+bootstrap-t" when the
            differences' sample skewness ``|G1|`` is at least 1:
            :func:`evalkit.stats.methods.resolve_method`), "randomization" (the
            sign-flip test, exact for n <= 16), "t-test" (paired Student t),
            "bootstrap-t" (studentized bootstrap, equal-tailed), "bootstrap" (the
            percentile paired bootstrap, as :func:`paired_bootstrap`) or
            "randomization+bootstrap-t" (significant only when both the sign-flip test
            and the bootstrap-t are: p is the larger of their p-values). The result's
            ``method`` names the test actually run.
        alpha: significance level; ``significant`` is ``p_value < alpha`` and the
            interval has confidence ``1 - alpha``.
        alternative: "two-sided", "greater" (mean of a exceeds b's) or "less".
        ci: interval method; None picks the method's own ("inversion" for
            randomization, "t", "bootstrap-t", "percentile"), whose interval excludes
            0 exactly when ``p < alpha`` (except "bootstrap"). Any method may
            ask for "percentile", "bca", "bootstrap-t" or "t"; "inversion" inverts the
            randomization test and goes only with ``method="randomization"`` (not
            "auto", which may run the t-test), "inversion+bootstrap-t" (the means
            either test accepts) only with "randomization+bootstrap-t":
            :data:`evalkit.stats.CI_OF_METHOD`.
        n_resamples: ``B`` for resampling methods (ignored by an exact enumeration).
        seed: generator seed (None draws one; it is recorded in the result).
        backend: "auto", "numpy" or "numba" (results are identical).
        value_type: what one case's value of ``metric`` can be ("binary",
            "discrete", "continuous"; ``MetricSpec.value_type``), or None when not
            declared; only "auto" reads it. ``evalkit.compare`` and the gate pass the
            registered metric's.
        clusters: ``{case id: cluster}`` for clustered cases (several questions about
            one passage, turns of one conversation), every paired id given one; the
            tests then take the cluster as their unit (:mod:`evalkit.stats.clusters`):
            the sign-flip test flips whole clusters' sums, the t-test uses the CR1
            cluster-robust standard error on ``G - 1`` degrees of freedom, the bootstrap
            resamples whole clusters, and the skew guard reads the skewness of the
            cluster-level values. With clusters "auto" runs the cluster sign-flip test
            on every metric, binary included (the CR1 t-test rejects true nulls too
            often when cluster sizes are unequal). ``n_clusters`` of the result is
            ``G``, ``effective_clusters`` the effective number ``G*``
            (:func:`evalkit.stats.clusters.effective_clusters`); either below 20 adds
            a warning. None: every case is its own cluster.

    Returns:
        :class:`PairedTestResult`; one-sided alternatives give one-sided intervals
        (``+-inf`` at the open end). Degenerate inputs (all differences equal, n = 1)
        follow :mod:`evalkit.stats.degenerate`: never NaN, never p = 0.

    Raises:
        ValueError: bad options (an unknown name or value type, or ``ci="inversion"``
            with a method other than "randomization"; the message lists the allowed
            combinations), empty runs, different query ids, a missing metric; with
            ``clusters``, a paired case without a cluster, an id no run has, or fewer
            than two clusters (:func:`evalkit.stats.clusters.cluster_index`).

    Sources: the sign-flip test, Fisher 1935; the CR1 standard error, Cameron and
    Miller, "A Practitioner's Guide to Cluster-Robust Inference", J. Human Resources
    50(2), 2015; clustered errors for evals, Miller, "Adding Error Bars to Evals",
    arXiv:2411.00640, 2024.
    """
    ci_checked = check_options(method, ci, alpha, alternative)
    check_value_type(value_type)
    B = check_resamples(n_resamples)
    s = check_seed(seed)
    pair = align(a, b, metric)
    d = pair.diffs
    n = d.shape[0]
    D, flip, index = clustered(d[:, None], pair.ids, clusters)
    family = analyse_family(
        D,
        method=method,
        ci=ci_checked,
        alpha=float(alpha),
        alternative=alternative,  # type: ignore[arg-type]
        n_resamples=B,
        seed=s,
        backend=backend,
        value_types=[value_type],
        flip=flip,
    )
    return make_result(
        family.outcomes[0],
        family,
        0,
        effect=effect_sizes(np.asarray(d)),
        n=n,
        metric=metric,
        name_a=pair.name_a,
        name_b=pair.name_b,
        requested=method,
        alpha=float(alpha),
        alternative=alternative,
        seed=s,
        n_clusters=None if index is None else index.n_clusters,
        cluster_skewness=0.0 if flip is None else sample_skewness(flip[:, 0]),
        effective_clusters=None if index is None else index.effective,
        guard_skew=guard_skewness(np.asarray(d)) if flip is None else None,
    )


def clustered(D: FloatArray, ids: Sequence[str], clusters: Mapping[str, Hashable] | None,
              unpaired_ok: Sequence[str] = ()
              ) -> tuple[FloatArray, FloatArray | None, ClusterIndex | None]:
    """``(D, None, None)`` without clusters; with them the cluster-level values
    ``(robust, flip)`` of :func:`evalkit.stats.clusters.cluster_columns` for the
    cases ``ids`` (the rows of ``D``, ``(N, m)``) and their :class:`ClusterIndex`
    (``G``, sizes, ``G*``). Raises ValueError as
    :func:`evalkit.stats.clusters.cluster_index`."""
    if clusters is None:
        return D, None, None
    index = cluster_index(ids, clusters, unpaired_ok=unpaired_ok)
    robust, flip = cluster_columns(D, index)
    return robust, flip, index
