"""Planning a comparison: the smallest difference n queries can detect, and the queries a
given difference needs (what ``evalkit power`` prints).

:func:`plan_power` works from a pilot pair of runs (the spread of their per-query
differences, read and checked as :func:`evalkit.compare` reads its inputs) or from a
given standard deviation of those differences. Analytic figures use the paired t-test's
noncentral t (:mod:`evalkit.stats.power`); with a pilot the power is also simulated by
resampling the pilot's own differences, which holds when they are skewed.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from evalkit.comparison.inputs import RunInput, load_inputs
from evalkit.comparison.options import check_alpha
from evalkit.comparison.records import ComparisonError
from evalkit.data.case_clusters import ClustersArg
from evalkit.execute.run_files import QrelsArg
from evalkit.io.setting_names import Setting


@dataclass
class Detectable:
    """The minimum detectable effect at ``n`` queries (and, with a pilot, the simulated
    power at that effect and its standard error). ``mde`` is signed as the alternative:
    negative for "less", the direction the difference must take (:func:`signed_mde`)."""

    n: int
    mde: float
    simulated_power: float | None = None
    simulated_se: float | None = None


def signed_mde(magnitude: float, alternative: str) -> float:
    """A minimum detectable effect in the direction of ``alternative``: ``-magnitude``
    for "less" (the candidate must be lower), else ``magnitude``
    (:func:`evalkit.stats.minimum_detectable_effect` returns the magnitude)."""
    return -magnitude if alternative == "less" else magnitude


@dataclass
class Needed:
    """The queries needed to detect ``effect``, and the power at ``n`` queries; ``error``
    says why no n detects it."""

    effect: float
    n_required: int | None
    power_at_n: float | None
    n: int | None
    simulated_power: float | None = None
    simulated_se: float | None = None
    error: str | None = None


@dataclass
class SamplesPlan:
    """How n cases and K samples per case trade off, from a pilot with K >= 2 in both
    runs (:mod:`evalkit.stats.power_samples`).

    Attributes:
        k_baseline, k_candidate: the pilot's samples per case.
        within_share: the share of the pilot's per-case variance from resampling.
        between_var, within_baseline, within_candidate: the variance parts.
        enough_k: the K beyond which more samples stop helping (MDE within
            ``tolerance`` of the unlimited-samples MDE); None: more always help.
        tolerance: that closeness (0.05).
        detectable: the MDE at every planned (n, K).
    """

    k_baseline: int
    k_candidate: int
    within_share: float
    between_var: float
    within_baseline: float
    within_candidate: float
    enough_k: int | None
    tolerance: float
    detectable: list[Any] = field(default_factory=list)


@dataclass
class Plan:
    """Planning figures for one metric of a pilot (or for a given sd: ``metric`` None);
    ``samples`` with a pilot of K >= 2 samples per case in both runs. With clusters
    (``n_clusters`` and ``effective_clusters``, the pilot's ``G`` and ``G*``), every n
    counts clusters, ``sd_diff`` is the sd of the clusters' values ``r_g`` and
    ``skewness`` that of the values the sign-flip test flips
    (:mod:`evalkit.stats.clusters`). ``test`` is the test the simulated power is for
    (``"auto"``: unclustered, the sign-flip test with its skew guard, or the paired
    t-test for a binary metric; clustered, the cluster sign-flip test with its skew
    guard; ``"t-test"`` for a plan from an sd), ``pilot_test`` the test it runs on the
    pilot itself."""

    metric: str | None
    sd_diff: float
    n_pilot: int | None = None
    mean_diff: float | None = None
    skewness: float | None = None
    skewness_warning: str | None = None
    detectable: list[Detectable] = field(default_factory=list)
    needed: list[Needed] = field(default_factory=list)
    samples: SamplesPlan | None = None
    n_clusters: int | None = None
    effective_clusters: float | None = None
    test: str = "t-test"
    pilot_test: str | None = None


@dataclass
class PowerPlan:
    """What :func:`plan_power` found.

    Attributes:
        plans: one :class:`Plan` per metric (one without a metric for ``sd=``).
        alpha, power, alternative: the planning's settings.
        clustered: the unit is the cluster: the simulated power (the primary figure) is
            that of the cluster sign-flip test with its skew guard, the analytic figures
            the CR1 t-test's, an approximation (:func:`described_test`).
        n_resamples: the resamples of each simulated comparison that resamples (None
            when nothing resamples).
        pilot: where the pilot runs came from (paths, or names of runs passed in), or
            None for ``sd=``.
        seed: the simulation's seed (None without a pilot).
        header: one line naming the pilot or the sd.
        warnings: notes on the pilot runs (judged queries a run lacks...).
    """

    plans: list[Plan]
    alpha: float
    power: float
    alternative: str
    pilot: list[str] | None
    seed: int | None
    header: str
    warnings: list[str] = field(default_factory=list)
    clustered: bool = False
    n_resamples: int | None = None

    @property
    def simulated(self) -> bool:
        """Whether any figure was simulated."""
        return any(d.simulated_se is not None for p in self.plans for d in p.detectable) \
            or any(x.simulated_se is not None for p in self.plans for x in p.needed)

    def to_json(self) -> dict[str, Any]:
        """The document ``evalkit power --json`` prints (non-finite numbers as None):
        the settings, ``test`` (the method the simulated power is for, as ``compare``
        names it), ``test_description``, ``analytic`` (what the minimum detectable
        effects and the n needed are computed for), ``primary`` ("simulated" or
        "analytic": which power figure describes the test that will run),
        ``clustered``, ``n_resamples`` and the plans (with ``n_clusters`` and
        ``effective_clusters`` when clustered)."""
        from evalkit.stats.numeric import json_ready

        test, described, analytic, primary = described_test(
            self.clustered, self.simulated, self.pilot is not None)
        doc = {"alpha": self.alpha, "power": self.power, "alternative": self.alternative,
               "test": test, "test_description": described, "analytic": analytic,
               "primary": primary, "clustered": self.clustered,
               "n_resamples": self.n_resamples, "pilot": self.pilot, "seed": self.seed,
               "warnings": self.warnings, "plans": [asdict(p) for p in self.plans]}
        return json_ready(doc)  # type: ignore[no-any-return]


def described_test(clustered: bool, simulated: bool, pilot: bool = True
                   ) -> tuple[str, str, str, str]:
    """``(test, description, analytic, primary)`` of a plan: the method whose power is
    simulated (as ``--test`` names it), what it is, what the analytic figures are for,
    and which power figure describes the test ``compare`` runs ("simulated" only for a
    plan from a pilot that simulated; else "analytic"). A plan from an sd (no ``pilot``)
    is the paired t-test's."""
    if not pilot:
        return ("t-test", "the paired t-test",
                "the paired t-test (noncentral t; Cohen 1988)", "analytic")
    if not clustered:
        return ("auto",
                "the sign-flip randomization test, joined by the bootstrap-t when the "
                "differences are skewed (|G1| >= 1), or the paired t-test for a metric "
                "declared binary: what compare, paired_test and the gate run by default",
                "the paired t-test (noncentral t; Cohen 1988): a t-based approximation to "
                "the sign-flip test",
                "simulated" if simulated else "analytic")
    return ("auto",
            "the cluster sign-flip randomization test over whole clusters, joined by the "
            "cluster bootstrap-t when the clusters' values are skewed (|G1| >= 1): what "
            "compare, paired_test and the gate run by default with clusters",
            "the CR1 cluster-robust t-test on n - 1 df (noncentral t): a t-based "
            "approximation to the cluster sign-flip test",
            "simulated" if simulated else "analytic")


def check_effects(effects: Sequence[float], alternative: str) -> None:
    """Refuse an effect no test can be planned for: 0 (no sample size detects it), not a
    number, or one pointing against a one-sided alternative.

    Raises:
        ComparisonError: naming the effect and what to give instead.
    """
    for e in effects:
        if not math.isfinite(e):
            raise ComparisonError(f"--effect {e:g}: give a finite difference in metric units")
        if e == 0:
            raise ComparisonError(
                "--effect 0: a difference of 0 cannot be detected at any number of queries; "
                "give the smallest true difference worth detecting, e.g. -e 0.02"
            )
        if (alternative == "greater" and e < 0) or (alternative == "less" and e > 0):
            sign, side = ("positive", "greater") if alternative == "greater" else (
                "negative", "less")
            raise ComparisonError(
                f"--effect {e:g} points against --alternative {side}, which tests for a "
                f"{sign} difference (candidate - baseline); give a {sign} effect, or use "
                "--alternative two-sided"
            )


def _needed(effect: float, sd: float, n: int | None, *, alpha: float, power: float,
            alternative: str) -> Needed:
    from evalkit.stats import required_n, t_power

    try:
        n_req: int | None = int(required_n(effect, sd, alpha=alpha, power=power,
                                           alternative=alternative))
        error = None
    except ValueError as exc:  # e.g. an effect against a one-sided alternative
        n_req, error = None, str(exc)
    at_n = float(t_power(effect, sd, n, alpha, alternative)) if n is not None and n >= 2 else None
    return Needed(effect=effect, n_required=n_req, power_at_n=at_n, n=n, error=error)


def plan_from_sd(sd: float, ns: Sequence[int], effects: Sequence[float], *, alpha: float,
                 power: float, alternative: str) -> Plan:
    """The plan for per-query differences of standard deviation ``sd``."""
    from evalkit.stats import minimum_detectable_effect

    plan = Plan(metric=None, sd_diff=sd)
    for n in ns:
        plan.detectable.append(Detectable(n, signed_mde(minimum_detectable_effect(
            n, sd, alpha=alpha, power=power, alternative=alternative), alternative)))
    for e in effects:
        plan.needed.append(_needed(e, sd, ns[0] if ns else None, alpha=alpha, power=power,
                                   alternative=alternative))
    return plan


def check_simulation(simulate: bool, trials: int, ns: Sequence[int]) -> None:
    """Refuse a number of simulated trials outside 100 to
    :data:`~evalkit.stats.power.MAX_TRIALS`, or (when simulating) a planned n above
    :data:`~evalkit.stats.power.MAX_SIMULATED_N`, naming the setting as the reader spells
    it (``--trials``/``trials=``, ``--no-simulate``/``simulate=False``).

    Raises:
        ComparisonError: as above.
    """
    from evalkit.stats.power import MAX_SIMULATED_N, MAX_TRIALS

    if isinstance(trials, bool) or not isinstance(trials, int) \
            or not 100 <= trials <= MAX_TRIALS:
        raise ComparisonError("", Setting("trials", trials), f": expected an integer from "
                              f"100 to {MAX_TRIALS:,} (the simulated power's standard error "
                              "is below 0.0005 at the upper end)")
    big = [n for n in ns if n > MAX_SIMULATED_N]
    if simulate and big:
        raise ComparisonError(
            f"the power is simulated with at most {MAX_SIMULATED_N:,} queries per trial "
            f"(got {big[0]:,}); plan that n without the simulation (",
            Setting("simulate", False), "): the t-test's analytic power needs none")


def plans_from_pilot(
    baseline: Any, candidate: Any, metrics: Sequence[str], ns: Sequence[int],
    effects: Sequence[float], *, alpha: float, power: float, alternative: str,
    simulate: bool, trials: int, seed: int, ks: Sequence[int] = (),
    clusters: Mapping[str, Hashable] | None = None,
    value_types: Mapping[str, str | None] | None = None,
) -> list[Plan]:
    """One plan per metric from a pilot pair of runs (``candidate - baseline``); with
    K >= 2 samples per case in both, also the n x K plan at ``ks`` (default 1, 2, 5,
    10, 20 and the pilot's K). With ``clusters`` the unit is the cluster and every n
    counts clusters (no n x K plan): the analytic figures are the CR1 t-test's on the
    clusters' values, an approximation, and the simulated power, the primary figure, is
    that of the cluster sign-flip test with its skew guard, which ``compare`` runs by
    default with clusters (:func:`evalkit.stats.plan_from_pilot`)."""
    from evalkit.stats import plan_from_pilot, simulate_power
    from evalkit.stats.pairing import align
    from evalkit.stats.power import CLUSTERED_RESAMPLES, simulated_effect

    plans: list[Plan] = []
    for metric in metrics:
        value_type = (value_types or {}).get(metric)
        labels: list[Hashable] | None = None
        if clusters is None:
            base, cand = baseline.scores(metric), candidate.scores(metric)
            diffs: Any = [cand[q] - base[q] for q in base]
        else:  # the cases as plan_from_pilot pairs them, each with its cluster
            pair = align(candidate, baseline, metric)
            diffs, labels = pair.diffs, [clusters[i] for i in pair.ids]
        plan: Plan | None = None
        p = None
        planned: list[int | None] = [*ns] or [None]
        for n in planned:
            p = plan_from_pilot(candidate, baseline, metric, n=n, alpha=alpha, power=power,
                                alternative=alternative, simulate=simulate, n_trials=trials,
                                seed=seed, clusters=clusters, value_type=value_type)
            if plan is None:
                plan = Plan(metric=metric, sd_diff=p.sd_diff, n_pilot=p.n_pilot,
                            mean_diff=p.mean_diff, skewness=p.skewness,
                            skewness_warning=p.skewness_warning,
                            n_clusters=p.n_clusters, effective_clusters=p.effective_clusters,
                            test=p.method, pilot_test=p.pilot_method)
            sim = p.simulated
            plan.detectable.append(Detectable(
                p.n, signed_mde(p.mde, alternative), sim.power if sim else None,
                sim.se if sim else None))
        assert plan is not None and p is not None
        n_at = ns[0] if ns else plan.n_pilot
        for e in effects:
            need = _needed(e, plan.sd_diff, n_at, alpha=alpha, power=power,
                           alternative=alternative)
            if simulate and n_at is not None and n_at >= 2:
                shift = simulated_effect(e, plan.mean_diff or 0.0, alternative)
                sim = simulate_power(diffs, shift, n_at, alpha=alpha, alternative=alternative,
                                     n_trials=trials, seed=seed, method=p.method,
                                     clusters=labels, n_resamples=CLUSTERED_RESAMPLES,
                                     value_type=value_type)
                need.simulated_power, need.simulated_se = sim.power, sim.se
            plan.needed.append(need)
        if clusters is None:
            plan.samples = _samples_plan(baseline, candidate, metric, sorted(base),
                                         ns or [plan.n_pilot or 2], ks, alpha=alpha,
                                         power=power, alternative=alternative)
        plans.append(plan)
    return plans


def _samples_plan(baseline: Any, candidate: Any, metric: str, ids: Sequence[str],
                  ns: Sequence[int], ks: Sequence[int], **targets: Any) -> SamplesPlan | None:
    from evalkit.comparison.spread import spread_of
    from evalkit.stats.power_samples import (
        DEFAULT_PLAN_SAMPLES,
        ENOUGH_TOLERANCE,
        enough_samples,
        samples_table,
    )

    spread = spread_of(baseline, candidate, metric, ids)
    if spread is None or spread.var_diff <= 0:
        return None
    wanted = sorted(set(ks)) if ks else sorted(
        {*DEFAULT_PLAN_SAMPLES, spread.k_baseline, spread.k_candidate})
    return SamplesPlan(
        k_baseline=spread.k_baseline, k_candidate=spread.k_candidate,
        within_share=spread.within_share, between_var=spread.between_var,
        within_baseline=spread.within_baseline, within_candidate=spread.within_candidate,
        enough_k=enough_samples(spread), tolerance=ENOUGH_TOLERANCE,
        detectable=[replace(d, mde=signed_mde(
            d.mde, targets.get("alternative", "two-sided")))
            for d in samples_table(spread, ns, wanted, **targets)])


def plan_power(
    *pilot: RunInput,
    sd: float | None = None,
    n: Sequence[int] = (),
    effects: Sequence[float] = (),
    metrics: Sequence[str] | str | None = None,
    qrels: QrelsArg | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
    simulate: bool = True,
    trials: int = 2000,
    seed: int = 42,
    relevance_level: int | None = None,
    missing: str | None = None,
    depth: int | None = None,
    epochs: Sequence[int] = (),
    clusters: ClustersArg | bool | None = None,
    allow_incomplete: bool = False,
) -> PowerPlan:
    """Plan a comparison from a pilot pair of runs (``baseline, candidate``) or from
    ``sd``, the standard deviation of the per-query differences.

    Args:
        pilot: two runs, as :func:`evalkit.compare` takes them (artifacts, TREC run files
            with ``qrels``, :class:`~evalkit.RunResult`).
        sd: instead of a pilot.
        n: planned numbers of queries (default: the pilot's); each gets its minimum
            detectable effect.
        effects: true differences to plan for: each gets the queries it needs and the
            power at the first planned n (or the pilot's).
        metrics, qrels, relevance_level, missing, depth: as for :func:`evalkit.compare`.
        alpha, power, alternative: the test's settings.
        simulate, trials, seed: with a pilot, also simulate the power from its own
            differences (``trials`` comparisons per figure).
        epochs: planned samples per case K; with a pilot of K >= 2 samples per case in
            both runs each (n, K) gets its minimum detectable effect, and the plan says
            beyond which K more samples stop helping (``Plan.samples``).
        clusters: with a pilot, clustered cases (``{case id: cluster}``, the path of a
            clusters file or golden set, or True for the golden sets the runs were made
            from, as for :func:`evalkit.compare`): ``n`` and every figure count
            clusters (of the pilot's sizes). The simulated power, the primary figure, is
            that of the test ``compare`` runs by default with clusters, the cluster
            sign-flip test with its skew guard, over whole clusters of the pilot drawn
            with replacement (:func:`evalkit.stats.simulate_power`); the minimum
            detectable effects and the clusters needed are the CR1 t-test's on
            ``G - 1`` degrees of freedom (one cluster-level value per cluster), a
            t-based approximation. Fewer than 20 clusters (pilot or planned) add the
            warning ``compare`` gives.
        allow_incomplete: as for :func:`evalkit.compare`: plan from the queries both
            pilot runs have instead of refusing an incomplete run.

    Raises:
        ComparisonError: both or neither of a pilot and ``sd``; a pilot that is not two
            runs; ``alpha`` or ``power`` out of range; an effect of 0, not finite or
            against a one-sided ``alternative``; ``sd`` without ``n`` or ``effects``;
            ``epochs`` with ``sd`` (only a pilot's samples split the spread by K); and
            every refusal of :func:`evalkit.compare`'s inputs; ``trials`` outside 100 to
            1,000,000, or a planned n above 10,000,000 with ``simulate``.
    """
    ns = list(dict.fromkeys(n))
    wanted = list(dict.fromkeys(effects))
    check_alpha(alpha)
    if not alpha < power < 1.0:
        raise ComparisonError(f"--power must be between alpha ({alpha:g}) and 1, got "
                              f"{power:g}")
    if pilot and sd is not None:
        raise ComparisonError("give a pilot pair of runs or --sd, not both")
    if pilot:
        if len(pilot) != 2:
            raise ComparisonError("a pilot is two runs: BASELINE CANDIDATE")
        check_effects(wanted, alternative)
        check_simulation(simulate, trials, ns)
        loaded = load_inputs(list(pilot), qrels=qrels, metrics=metrics,
                             relevance_level=relevance_level, missing=missing, depth=depth,
                             allow_incomplete=allow_incomplete)
        base, cand = loaded.runs
        given = _pilot_clusters(clusters, loaded.runs)
        _, value_types, definition_notes = loaded.definitions()
        plans = plans_from_pilot(base, cand, loaded.metrics, ns, wanted, alpha=alpha,
                                 power=power, alternative=alternative, simulate=simulate,
                                 trials=trials, seed=seed, ks=list(epochs), clusters=given,
                                 value_types=value_types)
        notes = [*loaded.left_out, *(w for ws in loaded.notes for w in ws),
                 *definition_notes]
        if given is not None:
            notes.extend(cluster_notes(plans[0], len(base.ids()), ns, alpha=alpha,
                                       alternative=alternative, simulate=simulate))
        if epochs and not any(p.samples for p in plans):
            notes.append("--epochs plans samples per case only from a pilot whose runs "
                         "both have K >= 2 samples per case (evalkit run --epochs 2 or "
                         "more), reduced by the mean")
        where = [loaded.paths[i] for i in (1, 0)]
        names = f" ({where[0]} vs {where[1]})" if all(where) else ""
        from evalkit.stats.power import CLUSTERED_RESAMPLES

        return PowerPlan(
            plans, alpha, power, alternative,
            [str(p) if p is not None else r.name for p, r in zip(loaded.paths, loaded.runs,
                                                                  strict=True)],
            seed, f"pilot: {cand.name} - {base.name}{names}, paired by query id", notes,
            clustered=given is not None,
            n_resamples=CLUSTERED_RESAMPLES if simulate and (
                given is not None
                or any(value_types.get(m) != "binary" for m in loaded.metrics)) else None)
    if sd is None:
        raise ComparisonError("give a pilot pair of runs (BASELINE CANDIDATE) or --sd")
    if clusters is not None and clusters is not False:
        raise ComparisonError("clusters go with a pilot pair of runs; with --sd give the sd "
                              "of one cluster-level difference and count n in clusters")
    if epochs:
        raise ComparisonError(
            "-k/--epochs plans samples per case from a pilot pair of runs with K >= 2 "
            "samples per case (it splits their spread into within- and between-case "
            "parts); --sd is the spread of one difference per case, so it has no K")
    if not (sd > 0 and math.isfinite(sd)):
        raise ComparisonError(f"--sd must be a positive number, got {sd:g}")
    check_effects(wanted, alternative)
    if not ns and not wanted:
        raise ComparisonError("with --sd, give the planned queries (-n) or an effect (-e)")
    plan = plan_from_sd(sd, ns, wanted, alpha=alpha, power=power, alternative=alternative)
    return PowerPlan([plan], alpha, power, alternative, None, None,
                     f"sd of the per-query differences: {sd:g}")


def cluster_notes(plan: Plan, n_cases: int, ns: Sequence[int], *, alpha: float,
                  alternative: str, simulate: bool) -> list[str]:
    """The notes of a clustered plan (``plan`` the first metric's, ``n_cases`` the
    pilot's cases): which test its figures are for, the pilot's ``G`` and ``G*``; the
    warning ``compare`` gives below 20 clusters (or ``G*`` below 20), for the pilot and
    for a planned n of fewer than 20 clusters; and each planned n at which the cluster
    sign-flip test cannot reach ``p < alpha`` at all (its smallest p,
    :func:`evalkit.stats.methods.smallest_p`), whatever the t approximation says."""
    from evalkit.stats._kernels import EXACT_MAX_N
    from evalkit.stats.clusters import FEW_CLUSTERS, few_clusters_note
    from evalkit.stats.methods import smallest_p
    from evalkit.stats.power import CLUSTERED_RESAMPLES

    g = plan.n_clusters or 0
    eff = plan.effective_clusters
    star = "" if eff is None else f", effective number G* = {eff:.1f}"
    power_of = ("the simulated power is that of the cluster sign-flip test with its skew "
                "guard (what compare runs by default with clusters), drawing whole "
                "clusters of the pilot" if simulate else "nothing is simulated: every "
                "figure is the t approximation; leave out --no-simulate for the power of "
                "the cluster sign-flip test compare runs")
    notes = [f"clustered: every n counts clusters (the pilot has {g} clusters of "
             f"{n_cases / g:.3g} cases on average{star}); {power_of}; the smallest "
             "detectable diffs and the clusters needed are the CR1 t-test's (noncentral "
             "t on G - 1 df, sd of one cluster-level difference), a t-based "
             "approximation"]
    few = few_clusters_note(g, eff)
    notes.extend([few] if few else [])
    small = sorted(k for k in ns if k < FEW_CLUSTERS and k != g)
    if small:
        notes.append(f"planned n of {', '.join(map(str, small))} clusters: fewer than "
                     f"{FEW_CLUSTERS}, where compare warns that cluster-robust tests are "
                     "unreliable (Cameron and Miller 2015); treat p-values and intervals "
                     "as rough")
    for k in sorted({*ns, g}):
        floor = smallest_p("randomization", k, CLUSTERED_RESAMPLES, alternative,
                           k <= EXACT_MAX_N)
        if floor >= alpha:
            notes.append(f"with {k} clusters the cluster sign-flip test cannot reach "
                         f"p < {alpha:g} (its smallest p is {floor:.4g}): its power there "
                         "is 0, whatever the t approximation says")
    return notes


def _pilot_clusters(clusters: ClustersArg | bool | None, runs: Sequence[Any]
                    ) -> Mapping[str, Hashable] | None:
    """``clusters`` as ``{case id: cluster}`` (True: the runs' golden sets'), or None."""
    if clusters is None or clusters is False:
        return None
    from evalkit.data.case_clusters import as_case_clusters, clusters_from_runs

    if clusters is True:
        return clusters_from_runs([r.header for r in runs])
    return as_case_clusters(clusters)


__all__ = [
    "Detectable",
    "Needed",
    "Plan",
    "PowerPlan",
    "SamplesPlan",
    "check_effects",
    "plan_from_sd",
    "plan_power",
    "plans_from_pilot",
]
