"""Many metrics, many systems: one call, shared resamples, adjusted p-values.

:func:`compare_runs` is the statistics core of :func:`evalkit.compare`; its answer is a
:class:`PairedTestFamily`, which :class:`evalkit.comparison.Comparison` (the answer of
:func:`evalkit.compare`) is built on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evalkit.stats._kernels import EXACT_MAX_N, Backend
from evalkit.stats._rng import check_seed
from evalkit.stats.bootstrap import check_resamples
from evalkit.stats.effects import effect_sizes
from evalkit.stats.grouped import Family, analyse_family
from evalkit.stats.histogram import MAX_BINS
from evalkit.stats.methods import (
    BOTH,
    check_options,
    check_value_type,
    guard_skewness,
    sample_skewness,
    smallest_p,
)
from evalkit.stats.multiple import (
    CORRECTIONS,
    benjamini_hochberg,
    holm,
    holm_floor_note,
    westfall_young,
)
from evalkit.stats.numeric import real_number
from evalkit.stats.paired import DEFAULT_METHOD, clustered, make_result
from evalkit.stats.pairing import RunLike, Scores, pair_scores, run_scores
from evalkit.stats.results import PairedTestResult


@dataclass(frozen=True)
class PairedTestFamily:
    """A family of paired tests run together (the answer of :func:`compare_runs`).

    Attributes:
        results: one :class:`PairedTestResult` per (pair, metric), metrics in the given
            order and, within a metric, pairs in call order; each carries ``p_adjusted``
            and ``correction``.
        correction: the adjustment used ("holm", "bh", "westfall-young" or "none").
        method: the test requested ("auto" resolves per metric; each result names the
            test it ran).
        family_size: number of hypotheses adjusted together.
        query_ids: the paired query ids, sorted (the same for every result).
        differences: the per-query differences the tests ran on, shape
            ``(len(query_ids), len(results))``: column ``j`` is ``results[j]``'s
            ``a - b`` in ``query_ids`` order, after rounding noise is removed
            (:func:`evalkit.stats.pairing.snap_differences`).
        notes: what the family was computed on when it is not every case of every run
            (``allow_incomplete``: how many cases were paired and which were left out),
            and, with Holm's correction, that no result can be significant when the
            tests' smallest attainable p times the family size is at least alpha
            (:func:`evalkit.stats.multiple.holm_floor_note`, naming the fewest resamples
            with which one can); with Westfall-Young's, which results' adjusted p exceeds
            Holm's (:func:`above_holm_note`).
    """

    results: tuple[PairedTestResult, ...]
    correction: str
    method: str
    family_size: int
    query_ids: tuple[str, ...] = ()
    differences: NDArray[np.float64] | None = None
    notes: tuple[str, ...] = ()

    def table(self) -> list[dict[str, Any]]:
        """One JSON-ready dict per result (see :meth:`PairedTestResult.to_dict`)."""
        return [r.to_dict() for r in self.results]

    def get(self, name_a: str, name_b: str, metric: str) -> PairedTestResult:
        """The result for ``name_a - name_b`` on ``metric``. Raises KeyError."""
        for r in self.results:
            if (r.name_a, r.name_b, r.metric) == (name_a, name_b, metric):
                return r
        raise KeyError(f"no comparison {name_a!r} - {name_b!r} on {metric!r}")


def compare_runs(
    baseline: RunLike,
    candidates: Sequence[RunLike],
    metrics: str | Sequence[str],
    *,
    all_pairs: bool = False,
    method: str = DEFAULT_METHOD,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    ci: str | None = None,
    correction: str = "holm",
    n_resamples: int = 10_000,
    seed: int | None = 42,
    backend: Backend = "auto",
    distribution_bins: int = 0,
    allow_incomplete: bool = False,
    value_types: Mapping[str, str | None] | None = None,
    clusters: Mapping[str, Hashable] | None = None,
) -> PairedTestFamily:
    """Compare candidates with a baseline (or all pairs) on several metrics at once.

    Every comparison is ``candidate - baseline`` (with ``all_pairs``, for runs
    ``[baseline, *candidates]`` each later run minus each earlier one). All metrics and
    pairs share the same resamples, and p-values are adjusted over the whole family.

    Args:
        baseline: the reference run.
        candidates: one or more runs over the same query ids. Inputs without a name
            (plain mappings) are called ``run0`` (the baseline), ``run1``, ...
        metrics: a metric name or several.
        all_pairs: compare every pair instead of each candidate with the baseline.
        method, alpha, alternative, ci, n_resamples, seed, backend: as in
            :func:`evalkit.stats.paired_test`.
        correction: "holm" (default), "bh" (Benjamini-Hochberg), "westfall-young"
            (step-down min-P on the shared resamples, each test's own p; never below the
            raw p) or "none". With one hypothesis
            the adjusted p equals the raw one.
        distribution_bins: give each result the binned distribution of its test's
            statistic in this many bins (at most 200; see
            :class:`evalkit.stats.histogram.Histogram`); 0 (the default) gives none.
        allow_incomplete: compare runs that fail coverage (:meth:`RunResult.coverage`:
            cases without a row, a file cut short) or lack a metric on some case, on the
            cases every run has a value for, and say so in :attr:`PairedTestFamily.notes`.
            Without it such a run is refused.
        value_types: ``{metric: value type}``, what one case's value of each metric can
            be ("binary", "discrete", "continuous"; ``MetricSpec.value_type``); "auto"
            runs the t-test on a "binary" one when the cases are not clustered. A
            metric left out is undeclared.
            ``evalkit.compare`` passes the registered metrics'.
        clusters: ``{case id: cluster}``: every test of the family takes the cluster as
            its unit, as in :func:`evalkit.stats.paired_test` (each result's
            ``n_clusters`` is ``G``, ``effective_clusters`` ``G*``; "auto" runs the
            cluster sign-flip test on every metric). Every paired case needs a cluster;
            an id that no paired case has is refused, unless ``allow_incomplete`` (it
            may be a case left out).

    Returns:
        :class:`PairedTestFamily`.

    Raises:
        evalkit.data.coverage.IncompleteRunError: (a ``ValueError``) a run fails coverage and
            ``allow_incomplete`` is false.
        ValueError: bad options, no candidates, runs over different query ids, a
            metric missing from a run (unless ``allow_incomplete``), no case shared by
            every run; ``clusters`` that miss a paired case, name a case no run has or
            hold fewer than two clusters.
    """
    ci_checked = check_options(method, ci, alpha, alternative)
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; choose one of {CORRECTIONS}")
    B = check_resamples(n_resamples)
    s = check_seed(seed)
    if isinstance(distribution_bins, bool) or not isinstance(distribution_bins, int) or \
            not 0 <= distribution_bins <= MAX_BINS:
        raise ValueError(f"distribution_bins must be an integer from 0 to {MAX_BINS}, got "
                         f"{distribution_bins!r}")
    if not isinstance(candidates, Sequence) or isinstance(candidates, str | bytes):
        raise ValueError("candidates must be a sequence of runs")
    if len(candidates) == 0:
        raise ValueError("compare_runs needs at least one candidate run")
    metric_list = [metrics] if isinstance(metrics, str) else list(metrics)
    if not metric_list:
        raise ValueError("compare_runs needs at least one metric")
    declared = {m: check_value_type(t) for m, t in (value_types or {}).items()}
    runs: list[RunLike] = [baseline, *candidates]
    notes: tuple[str, ...] = ()
    for i, run in enumerate(runs):
        require = getattr(run, "require_complete", None)  # a RunResult (not a mapping)
        if callable(require):
            require("baseline" if i == 0 else "candidate", allow_incomplete=allow_incomplete)
    subsets: list[_Subset] | None = None
    if allow_incomplete:
        subsets, notes = paired_subset(runs, metric_list)
    if all_pairs:
        pairs = [(j, i) for j in range(1, len(runs)) for i in range(j)]
    else:
        pairs = [(j, 0) for j in range(1, len(runs))]

    # the differences go straight into their column of one matrix: a list of columns
    # stacked afterwards would hold them twice (84 MB each for 1,050 comparisons of
    # 10,000 queries), and the allocator keeps the freed columns' pages
    D: NDArray[np.float64] | None = None
    types: list[str | None] = []
    labels: list[tuple[str, str, str]] = []
    ids_ref: tuple[str, ...] | None = None
    read: dict[tuple[int, str], Scores] = {}

    def scores(j: int, metric: str) -> Scores:
        """Run ``j``'s values of ``metric``, read and checked once for every pair."""
        if (j, metric) not in read:
            like = next(iter(read.values()), None)  # ids most likely the same
            if subsets is not None:
                read[j, metric] = run_scores(subsets[j].scores[metric], metric,
                                             subsets[j].name, like)
            else:
                read[j, metric] = run_scores(runs[j], metric, f"run{j}", like)
        return read[j, metric]

    for metric in metric_list:
        for ja, jb in pairs:
            sa = scores(ja, metric)
            pair = pair_scores(sa, scores(jb, metric), metric)
            if ids_ref is None:
                ids_ref = pair.ids
            elif pair.ids != ids_ref:
                raise ValueError(
                    f"runs {pair.name_a!r} and {pair.name_b!r} cover other query ids than "
                    "the rest of the family; every run must cover the same queries"
                )
            if D is None:
                D = np.empty((len(pair.ids), len(metric_list) * len(pairs)))
            D[:, len(labels)] = pair.diffs
            types.append(declared.get(metric))
            labels.append((pair.name_a, pair.name_b, metric))
    assert D is not None  # at least one metric and one pair
    read.clear()  # the runs' values, read for the differences alone
    n = D.shape[0]
    units, flip, index = clustered(
        D, ids_ref or (), clusters, tuple(clusters or ()) if allow_incomplete else ())
    analysis = analyse_family(
        units,
        method=method,
        ci=ci_checked,
        alpha=float(alpha),
        alternative=alternative,  # type: ignore[arg-type]
        n_resamples=B,
        seed=s,
        want_null=correction == "westfall-young" and D.shape[1] > 1,
        backend=backend,
        bins=distribution_bins,
        value_types=types,
        flip=flip,
    )
    raw = [o.p_value for o in analysis.outcomes]
    if correction == "holm":
        adj = holm(raw)
    elif correction == "bh":
        adj = benjamini_hochberg(raw)
    elif correction == "westfall-young" and analysis.p_obs is not None and \
            analysis.p_null is not None:
        adj = westfall_young_family(analysis)
    else:
        adj = list(raw)
    results = []
    for j, (outcome, (name_a, name_b, metric)) in enumerate(
        zip(analysis.outcomes, labels, strict=True)
    ):
        r = make_result(
            outcome,
            analysis,
            j,
            effect=effect_sizes(D[:, j]),
            n=n,
            metric=metric,
            name_a=name_a,
            name_b=name_b,
            requested=method,
            alpha=float(alpha),
            alternative=alternative,
            seed=s,
            n_clusters=None if index is None else index.n_clusters,
            cluster_skewness=0.0 if flip is None else sample_skewness(flip[:, j]),
            effective_clusters=None if index is None else index.effective,
            guard_skew=guard_skewness(D[:, j]) if flip is None else None,
        )
        results.append(dataclasses.replace(r, p_adjusted=adj[j], correction=correction))
    floor = correction_floor_note(results, correction, float(alpha), B)
    above = above_holm_note(results)
    return PairedTestFamily(tuple(results), correction, method, len(results),
                            ids_ref or (), D, notes + tuple(x for x in (floor, above) if x))


def westfall_young_family(analysis: Family) -> list[float]:
    """Westfall-Young min-P adjusted p-values of a family analysed with ``want_null``
    (:func:`evalkit.stats.multiple.westfall_young` on each test's own p over the shared
    resamples), each at least its raw p. A randomization+bootstrap-t test rejects when
    both halves do, so each half is adjusted on its own resamples (the sign flips with
    every test, the bootstrap with the other randomization+bootstrap-t tests) and the
    larger counts.

    Raises:
        ValueError: ``analysis`` holds no resampled p-values.
    """
    if analysis.p_obs is None or analysis.p_null is None:
        raise ValueError("the family was analysed without want_null")
    raw = [o.p_value for o in analysis.outcomes]
    wy = westfall_young(analysis.p_obs, analysis.p_null, analysis.null_exact)
    if analysis.p_obs_t is not None and analysis.p_null_t is not None:
        wy_t = westfall_young(analysis.p_obs_t, analysis.p_null_t, False)
        wy = [max(a, b) if m == BOTH else a
              for a, b, m in zip(wy, wy_t, analysis.methods, strict=True)]
    return [max(w, p) for w, p in zip(wy, raw, strict=True)]


def above_holm_note(results: Sequence[PairedTestResult]) -> str | None:
    """With Westfall-Young's correction, which results' adjusted p exceeds Holm's on the
    same raw p-values; None when none does, or for another correction.

    Min-P is at most Holm when every test's p is read off its own resamples (the share
    of resamples at least as extreme is below ``c`` for at most a share ``c`` of them);
    the t-test's p (``t-test``, or auto on a binary metric) is the t distribution's,
    whose share of
    sign-flipped samples below ``c`` can exceed ``c``, and then so can min-P's answer.
    """
    if not results or results[0].correction != "westfall-young":
        return None
    bound = holm([r.p_value for r in results])
    over = [f"{r.metric} ({r.name_a} vs {r.name_b}: {r.p_adjusted:.4g} > {h:.4g})"
            for r, h in zip(results, bound, strict=True)
            if r.p_adjusted is not None and r.p_adjusted > h * (1 + 1e-12)]
    if not over:
        return None
    shown = "; ".join(over[:5]) + (f"; and {len(over) - 5} more" if len(over) > 5 else "")
    return ("Westfall-Young's adjusted p exceeds Holm's for "
            f"{len(over)} test{'s' if len(over) != 1 else ''}: {shown}; the t-test's p "
            "(--test t-test, or auto on a binary metric) is not calibrated on the "
            "sign-flipped samples the min-P step reads; correction 'holm' is valid here "
            "too")


def correction_floor_note(results: Sequence[PairedTestResult], correction: str,
                          alpha: float, n_resamples: int) -> str | None:
    """With Holm's correction, why none of ``results`` can be significant
    (:func:`evalkit.stats.multiple.holm_floor_note` on each test's smallest attainable p,
    :func:`evalkit.stats.methods.smallest_p`, naming the fewest queries or clusters when
    the tests share their number); None when one can, or for another correction
    (Benjamini-Hochberg's and Westfall-Young's smallest adjusted p do not grow with the
    family), or when no result pairs 2 queries (each says no test is possible)."""
    if correction != "holm" or not results or all(r.n_queries < 2 for r in results):
        return None
    sizes = {r.n_clusters or r.n_queries for r in results}
    clustered = any(r.n_clusters for r in results)

    def with_n(n: int) -> list[float]:
        return [smallest_p(r.method, n, n_resamples, r.alternative,
                           r.method == "randomization" and n <= EXACT_MAX_N)
                for r in results]

    return holm_floor_note(
        lambda b: [smallest_p(r.method, r.n_clusters or r.n_queries, b, r.alternative,
                              r.exact)
                   for r in results], alpha, n_resamples,
        floors_with_n=with_n if len(sizes) == 1 else None,
        n_units=next(iter(sizes)) if len(sizes) == 1 else None,
        unit="clusters" if clustered else "queries")


@dataclass(frozen=True)
class _Subset:
    """One run's values restricted to the cases every run of the family has."""

    name: str
    scores: dict[str, dict[str, float]]


def paired_subset(runs: Sequence[RunLike], metrics: Sequence[str]
                  ) -> tuple[list[_Subset], tuple[str, ...]]:
    """Each run restricted to the cases that have a value of every metric in every run,
    and a note saying how many were paired and which were left out.

    Raises:
        ValueError: no case has every value in every run.
    """
    names: list[str] = []
    tables: list[dict[str, dict[str, float]]] = []
    for i, run in enumerate(runs):
        available = getattr(run, "available_scores", None)
        names.append(str(getattr(run, "name", "") or f"run{i}"))
        if callable(available):
            raw = {m: dict(available(m)) for m in metrics}
        elif isinstance(run, Mapping):
            raw = {m: dict(run) for m in metrics}
        else:
            raise TypeError(f"expected a RunResult or a mapping, got {type(run).__name__}")
        tables.append({m: {str(k): real_number(
            v, f"run {names[-1]!r}: case {k!r}: the {m!r} score")
            for k, v in values.items()} for m, values in raw.items()})
    every = [set(t[m]) for t in tables for m in metrics]
    common = set.intersection(*every)
    union = set.union(*every)
    if not common:
        raise ValueError(f"runs {', '.join(repr(n) for n in names)} share no case with a "
                         f"value of {', '.join(metrics)}; there is nothing to pair")
    notes: tuple[str, ...] = ()
    if common != union:
        left = sorted(union - common)
        shown = ", ".join(repr(x) for x in left[:10]) + (
            f" and {len(left) - 10} more" if len(left) > 10 else "")
        notes = (f"incomplete runs allowed: paired on the {len(common)} case(s) every run "
                 f"has a value for; {len(left)} left out ({shown})",)
    subsets = [
        _Subset(name, {m: {k: v for k, v in t[m].items() if k in common} for m in metrics})
        for name, t in zip(names, tables, strict=True)]
    return subsets, notes

