"""Power and planning for paired comparisons.

Analytic: the paired t-test's power is a noncentral t probability (Cohen, *Statistical
Power Analysis for the Behavioral Sciences*, 2nd ed., 1988, ch. 2; Lehmann and Romano
2005, sec. 5.2): with ``delta = effect / sd`` and ``T ~ t'(n - 1, delta * sqrt(n))``,
two-sided power is ``P(T > t_c) + P(T < -t_c)``, ``t_c = t_{1 - alpha/2, n - 1}``
(``scipy.special.nctdtr``). The minimum detectable effect solves power = target for the
effect (Brent's method); the sample size is the smallest n reaching the target.

Simulation: when the pilot differences are skewed the noncentral t is only an
approximation, so :func:`simulate_power` resamples the pilot's centred differences,
shifted by the effect, at the planned n and counts rejections of the chosen test
(Efron and Tibshirani 1993, sec. 25.3).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from evalkit.stats._rng import bootstrap_indices, check_seed
from evalkit.stats.degenerate import constant_outcome
from evalkit.stats.effects import effect_sizes
from evalkit.stats.numeric import numbers_of, pow2_above
from evalkit.stats.pairing import SNAP_BITS, RunLike, align, snap_differences


def _real(value: object, name: str) -> float:
    """``value`` as a float when it is a real number (not a bool, str or None)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


def _check(alpha: float, alternative: str) -> None:
    a = _real(alpha, "alpha")
    if not 0.0 < a < 1.0:  # NaN fails too
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"unknown alternative {alternative!r}")


def check_effect(effect: float, name: str = "effect") -> float:
    """``effect`` as a finite float. Raises ValueError for NaN, an infinity or a
    non-number (a NaN effect would otherwise give power 1 and 2 queries)."""
    e = _real(effect, name)
    if not math.isfinite(e):
        raise ValueError(f"{name} must be a finite difference in metric units, got {effect!r}")
    return e


def check_sd(sd: float) -> float:
    """``sd`` as a positive finite float, else ValueError."""
    v = _real(sd, "sd")
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"sd must be positive and finite, got {sd!r}")
    return v


def check_n(n: int, name: str = "n", least: int = 2) -> int:
    """``n`` as an int: an integer (``int``, a numpy integer, or a float with an integral
    value such as ``20.0``) of at least ``least``. Raises ValueError for a fractional,
    non-finite or smaller ``n`` and for a bool."""
    if isinstance(n, bool) or not isinstance(n, numbers.Real):
        raise ValueError(f"{name} must be an integer >= {least}, got {n!r}")
    if not isinstance(n, numbers.Integral):
        f = float(n)
        if not (math.isfinite(f) and f == math.floor(f)):
            raise ValueError(f"{name} must be an integer >= {least}, got {n!r}")
    k = int(n)
    if k < least:
        raise ValueError(f"{name} must be >= {least}, got {n!r}")
    return k


def check_power(power: float, alpha: float) -> float:
    """``power`` as a float in ``(alpha, 1)``, else ValueError (a target power at or
    below ``alpha`` is met by a test that never looks at the data)."""
    pw = _real(power, "power")
    if not alpha < pw < 1.0:  # NaN fails too
        raise ValueError(f"power must be in (alpha, 1) = ({alpha:g}, 1), got {power!r}")
    return pw


def _nct_cdf(df: int, nc: float, x: float) -> float:
    """CDF of the noncentral t at ``x``. Cephes' ``nctdtr`` returns NaN far in a tail
    (e.g. df 99, nc 10, x -1.98); there the reflection
    ``F(x; nc) = 1 - F(-x; -nc)`` is used, and failing that the tail is taken as 0 or 1
    (it is then below 1e-30)."""
    from scipy.special import nctdtr

    v = float(nctdtr(df, nc, x))
    if not math.isfinite(v):
        v = 1.0 - float(nctdtr(df, -nc, -x))
    if not math.isfinite(v):
        v = 0.0 if x < nc else 1.0
    return min(1.0, max(0.0, v))


def t_power(
    effect: float, sd: float, n: int, alpha: float = 0.05, alternative: str = "two-sided"
) -> float:
    """Power of the paired t-test to detect a true mean difference ``effect``.

    Args:
        effect: true mean difference (metric units; sign matters for one-sided).
        sd: standard deviation of the per-query differences (> 0).
        n: number of queries (>= 2).
        alpha, alternative: the test's.

    Raises:
        ValueError: ``effect`` not finite, ``sd`` not positive and finite, ``n`` not an
            integer >= 2, ``alpha`` outside ``(0, 1)``, an unknown ``alternative``.
    """
    from scipy.special import stdtrit

    _check(alpha, alternative)
    effect = check_effect(effect)
    sd = check_sd(sd)
    n = check_n(n)
    df = n - 1
    nc = effect / sd * math.sqrt(n)
    if alternative == "two-sided":
        tc = float(stdtrit(df, 1 - alpha / 2))
        return 1.0 - _nct_cdf(df, nc, tc) + _nct_cdf(df, nc, -tc)
    tc = float(stdtrit(df, 1 - alpha))
    if alternative == "greater":
        return 1.0 - _nct_cdf(df, nc, tc)
    return _nct_cdf(df, nc, -tc)


def minimum_detectable_effect(
    n: int, sd: float, alpha: float = 0.05, power: float = 0.8, alternative: str = "two-sided"
) -> float:
    """Smallest true mean difference (>= 0, metric units) the paired t-test detects
    with probability ``power`` at ``n`` queries. For "less" the effect is negative:
    its magnitude is returned.

    Raises:
        ValueError: ``n`` not an integer >= 2, ``sd`` not positive and finite,
            ``alpha`` outside ``(0, 1)``, ``power`` outside ``(alpha, 1)`` (nothing to
            solve), an unknown ``alternative``.

    The effect is proportional to ``sd`` (power depends on ``effect / sd`` only), so it
    is solved in units of ``sd`` and scaled back: any positive finite ``sd`` works.
    """
    from scipy.optimize import brentq

    _check(alpha, alternative)
    power = check_power(power, alpha)
    sd = check_sd(sd)
    n = check_n(n)
    sign = -1.0 if alternative == "less" else 1.0

    def gap(e: float) -> float:
        return t_power(sign * e, 1.0, n, alpha, alternative) - power

    hi = 1.0
    while gap(hi) < 0:
        hi *= 2.0
    return sd * float(brentq(gap, 0.0, hi, xtol=1e-12, rtol=1e-12))


def required_n(
    effect: float,
    sd: float,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
    n_max: int = 10_000_000,
) -> int:
    """Smallest n at which the paired t-test reaches ``power`` for ``effect``.

    Raises:
        ValueError: ``effect`` not finite, 0 or pointing against a one-sided
            alternative; ``sd`` not positive and finite; ``alpha`` outside ``(0, 1)``;
            ``power`` outside ``(alpha, 1)``; ``n_max`` not an integer >= 2; more than
            ``n_max`` queries needed.
    """
    _check(alpha, alternative)
    power = check_power(power, alpha)
    effect = check_effect(effect)
    sd = check_sd(sd)
    n_max = check_n(n_max, "n_max")
    if effect == 0 or (alternative == "greater" and effect < 0) or (
        alternative == "less" and effect > 0
    ):
        raise ValueError("effect must be non-zero and point the way of the alternative")
    if t_power(effect, sd, 2, alpha, alternative) >= power:
        return 2
    lo, hi = 2, 4
    while t_power(effect, sd, hi, alpha, alternative) < power:
        lo, hi = hi, hi * 2
        if hi > 2 * n_max:
            raise ValueError(f"more than {n_max} queries would be needed")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if t_power(effect, sd, mid, alpha, alternative) >= power:
            hi = mid
        else:
            lo = mid
    if hi > n_max:
        raise ValueError(f"more than {n_max} queries would be needed")
    return hi


@dataclass(frozen=True)
class SimulatedPower:
    """Empirical power: ``power`` is the rejection share over ``n_trials``; ``se`` its
    binomial standard error."""

    power: float
    se: float
    n_trials: int
    n: int
    effect: float
    method: str


#: bounds of :func:`simulate_power`, so that a typo'd option ends in an error, not in a
#: run of days or an allocation of terabytes
MAX_TRIALS = 1_000_000
MAX_SIMULATED_N = 10_000_000

#: :func:`simulate_power`'s resamples per simulated comparison of a resampling test.
SIMULATED_RESAMPLES = 1000


def simulate_power(
    pilot_diffs: NDArray[np.float64] | list[float],
    effect: float,
    n: int,
    *,
    alpha: float = 0.05,
    alternative: str = "two-sided",
    method: str = "t-test",
    n_trials: int = 2000,
    n_resamples: int = SIMULATED_RESAMPLES,
    seed: int | None = 42,
    clusters: Sequence[Hashable] | None = None,
    value_type: str | None = None,
) -> SimulatedPower:
    """Power at ``n`` when the true differences look like the pilot's, shifted to mean
    ``effect``.

    Each trial draws ``n`` differences with replacement from ``pilot - mean(pilot) +
    effect`` and runs ``method`` ("t-test" is vectorised; any other method of
    :func:`evalkit.stats.paired_test` runs per trial with ``n_resamples``). A trial
    whose differences are all equal (up to rounding) is decided as ``paired_test``
    decides it, by the degenerate rule (docs/statistics.md), never as ``t = inf``.

    With ``clusters`` (the cluster of each pilot difference, shape ``(N,)``) the unit is
    the cluster and ``n`` counts clusters: each trial draws ``n`` of the pilot's clusters
    with replacement, each whole (all its cases' differences, centred and shifted as
    above, so a trial's number of cases varies with the clusters drawn), and runs
    ``method`` on them as ``paired_test(..., clusters=...)`` runs it: on the clusters'
    values of :func:`evalkit.stats.clusters.cluster_columns` (through the same
    :func:`~evalkit.stats.grouped.analyse_family` and decision rule), so "auto" is the
    cluster sign-flip test with its skew guard read per trial, as ``compare`` runs it
    by default with clusters. The trials run side by side with one seed, like
    ``paired_test`` calls with ``seed + 1``.

    Raises:
        ValueError: fewer than 2 pilot differences, ``effect`` not finite, ``n`` not an
            integer >= 2, ``n_trials`` not an integer >= 1, more than
            :data:`MAX_TRIALS` trials or :data:`MAX_SIMULATED_N` queries (clusters), bad
            options; ``clusters`` not one per pilot difference, or fewer than 2 of them.
    """
    _check(alpha, alternative)
    effect = check_effect(effect)
    n = check_n(n)
    n_trials = check_n(n_trials, "n_trials", least=1)
    if not (isinstance(pilot_diffs, np.ndarray) and pilot_diffs.dtype.kind in "iuf"):
        pilot_diffs = numbers_of(np.asarray(pilot_diffs, dtype=object).ravel().tolist()
                                 if isinstance(pilot_diffs, np.ndarray) else pilot_diffs,
                                 "pilot difference")
    pilot = np.asarray(pilot_diffs, dtype=np.float64)
    if pilot.ndim != 1 or pilot.size < 2:
        raise ValueError("need at least 2 pilot differences")
    if n_trials > MAX_TRIALS or n > MAX_SIMULATED_N:
        raise ValueError(
            f"simulate_power draws at most {MAX_TRIALS:,} trials of at most "
            f"{MAX_SIMULATED_N:,} queries (got {n_trials:,} trials of {n:,}): the power's "
            "standard error is already below 0.0005 at the first bound; for more queries "
            "the t-test's analytic power (t_power, evalkit power --no-simulate) needs no "
            "simulation")
    s = check_seed(seed)
    sc = pow2_above(max(float(np.max(np.abs(pilot))), abs(float(effect))))
    pop = (pilot / sc - (pilot / sc).mean() + effect / sc) * sc
    if clusters is not None or method != "t-test":
        rejections = _family_rejections(pop, clusters, n, n_trials, s, method=method,
                                        alpha=alpha, alternative=alternative,
                                        n_resamples=n_resamples, value_type=value_type)
        pw = rejections / n_trials
        return SimulatedPower(pw, math.sqrt(pw * (1 - pw) / n_trials), n_trials, n, effect,
                              method)
    rejections = 0
    chunk = max(1, 2_000_000 // n)
    for c0 in range(0, n_trials, chunk):
        c1 = min(n_trials, c0 + chunk)
        rejections += _t_rejections(_draw(pop, n, s, c0, c1), alpha, alternative,
                                    n_resamples)
    pw = rejections / n_trials
    return SimulatedPower(pw, math.sqrt(pw * (1 - pw) / n_trials), n_trials, n, effect, method)


def _family_rejections(pop: NDArray[np.float64], clusters: Sequence[Hashable] | None,
                       n: int, n_trials: int, seed: int, *, method: str, alpha: float,
                       alternative: str, n_resamples: int,
                       value_type: str | None = None) -> int:
    """Rejections of ``method`` over ``n_trials`` trials of ``n`` units drawn with
    replacement from ``pop`` (the centred, shifted pilot differences, shape ``(N,)``).
    Unclustered, a trial's differences are one column of
    :func:`~evalkit.stats.grouped.analyse_family` with ``value_type``, as
    ``paired_test`` runs them; with ``clusters`` (each difference's cluster) the units
    are whole clusters, whose sums and sizes go through
    :func:`~evalkit.stats.clusters.columns_from_sums` as ``paired_test``'s clusters do.
    Each trial is decided by :func:`~evalkit.stats.paired.decide`."""
    from evalkit.stats.bootstrap import check_resamples
    from evalkit.stats.clusters import cluster_index, cluster_sums, columns_from_sums
    from evalkit.stats.grouped import analyse_family
    from evalkit.stats.methods import check_options
    from evalkit.stats.paired import decide

    check_options(method, None, alpha, alternative)
    B = check_resamples(n_resamples)
    if clusters is None:
        positions = np.arange(pop.size, dtype=np.float64)
        sums = pop
        sizes = None
    else:
        labels = list(clusters)
        if len(labels) != pop.size:
            raise ValueError(f"clusters: expected one cluster per pilot difference "
                             f"({pop.size}), got {len(labels)}")
        ids = [str(i) for i in range(pop.size)]
        index = cluster_index(ids, dict(zip(ids, labels, strict=True)))
        sums = cluster_sums(pop[:, None], index)[:, 0]
        sizes = index.sizes
        positions = np.arange(index.n_clusters, dtype=np.float64)
    rejections = 0
    chunk = max(1, 200_000 // n)
    for c0 in range(0, n_trials, chunk):
        c1 = min(n_trials, c0 + chunk)
        drawn = _draw(positions, n, seed, c0, c1).astype(np.intp).T  # (n, trials)
        robust, flip = ((np.ascontiguousarray(sums[drawn]), None) if sizes is None
                        else columns_from_sums(sums[drawn], sizes[drawn]))
        family = analyse_family(robust, method=method, ci=None, alpha=alpha,
                                alternative=alternative,  # type: ignore[arg-type]
                                n_resamples=B, seed=seed + 1, flip=flip,
                                value_types=[value_type if sizes is None else None]
                                * robust.shape[1])
        for j, outcome in enumerate(family.outcomes):
            significant, _, _ = decide(outcome, family.methods[j], n,
                                       family.n_resamples[j], alpha, alternative)
            rejections += int(significant)
    return rejections


def simulated_effect(effect: float, pilot_mean: float, alternative: str) -> float:
    """The shift a simulation of power adds to the pilot's centred differences.

    A one-sided plan keeps ``effect`` as given (its sign is the alternative's). A
    two-sided plan asks about an effect of size ``|effect|``; it is simulated in the
    direction the pilot's mean difference points (``+`` when it is 0), so that naming the
    runs in the other order, which negates every difference, negates the simulated
    population too and leaves the power unchanged (with skewed differences, shifting
    them the other way would give another power).
    """
    if alternative != "two-sided":
        return effect
    return math.copysign(abs(effect), pilot_mean) if pilot_mean != 0 else abs(effect)


def _draw(pop: NDArray[np.float64], n: int, seed: int, t0: int, t1: int) -> NDArray[np.float64]:
    """Trials ``t0 .. t1-1``, shape ``(t1 - t0, n)``: ``n`` i.i.d. uniform draws each
    from ``pop``, taken from consecutive bootstrap resamples of ``range(pop.size)``."""
    rows = []
    m = pop.size
    per = -(-n // m)
    for t in range(t0, t1):
        idx = bootstrap_indices(seed, m, t * per, (t + 1) * per).reshape(-1)[:n]
        rows.append(pop[idx])
    return np.vstack(rows)


def _t_rejections(x: NDArray[np.float64], alpha: float, alternative: str,
                  n_resamples: int) -> int:
    """Rejections of the paired t-test over the rows of ``x``, each row decided as
    :func:`evalkit.stats.paired_test` decides it: a row whose differences are equal up
    to rounding (:func:`~evalkit.stats.pairing.snap_differences`) has no variance and
    follows the degenerate rule (:func:`~evalkit.stats.degenerate.constant_outcome`:
    the sign-flip p, so never for n <= 5), not ``t = inf, p = 0``."""
    from scipy.special import stdtr

    n = x.shape[1]
    x = x / pow2_above(float(np.max(np.abs(x))))  # exact; keeps squares in range
    top = np.maximum(np.max(np.abs(x), axis=1), 2.0**-1000)
    step = np.exp2(np.ceil(np.log2(top)) - SNAP_BITS)
    maybe = np.nonzero(np.ptp(x, axis=1) <= n * step)[0]
    degenerate = np.zeros(x.shape[0], dtype=bool)
    rejected = 0
    zeros = np.zeros(n)
    for i in maybe.tolist():
        snapped = snap_differences(x[i], x[i], zeros)
        if np.all(snapped == snapped[0]):
            degenerate[i] = True
            p_row, _, _ = constant_outcome(float(snapped[0]), n, n_resamples, "t-test",
                                           alpha, alternative)  # type: ignore[arg-type]
            rejected += int(p_row < alpha)
    live = x[~degenerate]
    mean = live.mean(axis=1)
    sd = live.std(axis=1, ddof=1)
    t = mean / (sd / math.sqrt(n))
    if alternative == "two-sided":
        p = 2 * stdtr(n - 1, -np.abs(t))
    elif alternative == "greater":
        p = stdtr(n - 1, -t)
    else:
        p = stdtr(n - 1, t)
    return rejected + int(np.count_nonzero(p < alpha))


#: The method an unclustered plan simulates, ``compare``'s default (:func:`resolve_method`:
#: the t-test for a binary metric, else the sign-flip test with its skew guard).
PLANNED_METHOD = "auto"

#: The method a clustered plan simulates: what ``compare``, ``paired_test`` and the gate
#: run by default with clusters, the cluster sign-flip test with its skew guard
#: (:func:`evalkit.stats.methods.resolve_method`).
CLUSTERED_METHOD = "auto"

#: The resamples per simulated clustered comparison: ``paired_test``'s and ``compare``'s
#: default (an exact enumeration replaces them at 16 clusters or fewer).
CLUSTERED_RESAMPLES = 10_000


@dataclass(frozen=True)
class PowerPlan:
    """Planning figures from a pilot run pair (see :func:`plan_from_pilot`).

    Attributes:
        metric, n_pilot: what the pilot measured (``n_pilot`` counts clusters when
            clustered).
        mean_diff, sd_diff, skewness: of the pilot's per-query differences; clustered,
            the mean and sd of the clusters' values ``r_g`` (``sd / sqrt(G)`` is the CR1
            standard error) and the skewness of the values the sign-flip test flips,
            ``f_g``, which its skew guard reads (:mod:`evalkit.stats.clusters`).
        n: planned number of queries (clusters); alpha, power: targets.
        mde: minimum detectable effect at ``n`` (noncentral t; clustered, the CR1 t-test's
            on ``n - 1`` df, an approximation to the cluster sign-flip test).
        effect: effect asked about (or None); n_required: queries (clusters, by the same
            t approximation) needed for it.
        simulated: simulated power at (``n``, ``effect`` or ``mde``) from the pilot: of the
            paired t-test, or clustered of :data:`CLUSTERED_METHOD` over whole clusters.
        skewness_warning: note when the pilot is small for a skewness estimate.
        n_clusters, effective_clusters: clustered, the pilot's ``G`` and ``G*``
            (:func:`evalkit.stats.clusters.effective_clusters`); None otherwise.
        method: the test the simulated power is for ("t-test", or clustered "auto").
        pilot_method: the test that method runs on the pilot itself (clustered:
            "randomization", or "randomization+bootstrap-t" when the guard fires).
    """

    metric: str
    n_pilot: int
    mean_diff: float
    sd_diff: float
    skewness: float
    n: int
    alpha: float
    power: float
    mde: float
    effect: float | None
    n_required: int | None
    simulated: SimulatedPower | None
    skewness_warning: str | None
    n_clusters: int | None = None
    effective_clusters: float | None = None
    method: str = "t-test"
    pilot_method: str = "t-test"


def plan_from_pilot(
    a: RunLike,
    b: RunLike,
    metric: str,
    *,
    n: int | None = None,
    effect: float | None = None,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: str = "two-sided",
    simulate: bool = True,
    n_trials: int = 2000,
    seed: int | None = 42,
    clusters: Mapping[str, Hashable] | None = None,
    n_resamples: int = CLUSTERED_RESAMPLES,
    value_type: str | None = None,
) -> PowerPlan:
    """Plan a comparison from a pilot pair of runs (what ``evalkit power`` prints).

    Args:
        a, b: pilot runs paired by query id (differences ``a - b``).
        metric: metric to plan for.
        n: planned queries (clusters with ``clusters``; default: the pilot's n).
        effect: a true difference of interest; gives ``n_required`` (default: none).
        alpha, power, alternative: targets.
        simulate: also simulate the power at ``(n, effect or mde)`` from the pilot's
            differences (recommended when they are skewed).
        n_trials, seed: of the simulation.
        clusters: ``{case id: cluster}``: the unit is the cluster. The analytic figures
            are the CR1 t-test's (the noncentral t on the clusters' values ``r_g``,
            ``n - 1`` df), an approximation; the simulated power is that of the test
            ``paired_test`` runs by default with clusters (:data:`CLUSTERED_METHOD`:
            the cluster sign-flip test with its skew guard), over whole clusters of the
            pilot drawn with replacement (:func:`simulate_power`).
        n_resamples: ``B`` of each simulated comparison that resamples.
        value_type: the metric's declared value type ("binary", "discrete",
            "continuous" or None): unclustered, the simulated power is that of the test
            ``paired_test(method="auto", value_type=...)`` runs, the paired t-test for a
            binary metric, else the sign-flip randomization test with its skew guard.

    Raises:
        ValueError: the pilot's differences have no spread (sd = 0), ``n`` not an
            integer >= 2, ``effect`` not finite, ``power`` outside ``(alpha, 1)``, or as
            :func:`paired_test` for the runs (and its ``clusters``).
    """
    from evalkit.stats.clusters import cluster_columns, cluster_index
    from evalkit.stats.methods import check_value_type, resolve_method, sample_skewness

    _check(alpha, alternative)
    check_value_type(value_type)
    check_power(power, alpha)
    if n is not None:
        n = check_n(n)
    if effect is not None:
        effect = check_effect(effect)
    pair = align(a, b, metric)
    d = pair.diffs
    labels: list[str] | None = None
    if clusters is None:
        eff = effect_sizes(d)
        skew, g, g_star, method = eff.skewness, None, None, PLANNED_METHOD
        pilot_method = resolve_method(method, np.asarray(d, dtype=np.float64), value_type)
        units = d
    else:
        index = cluster_index(pair.ids, clusters)
        robust, flip = cluster_columns(np.asarray(d)[:, None], index)
        units = robust[:, 0]
        eff = effect_sizes(units)
        skew = sample_skewness(flip[:, 0])
        g, g_star = index.n_clusters, index.effective
        method = CLUSTERED_METHOD
        pilot_method = resolve_method(method, flip[:, 0], None, clustered=True)
        labels = [index.labels[c] for c in index.codes.tolist()]
    if eff.sd_diff <= 0:
        raise ValueError(
            "the pilot's per-query differences have no spread (sd = 0); power cannot be "
            "planned from it. Use a pilot with more queries or give sd directly"
        )
    n_plan = int(n) if n is not None else units.size
    mde = minimum_detectable_effect(n_plan, eff.sd_diff, alpha, power, alternative)
    n_req = (
        required_n(effect, eff.sd_diff, alpha, power, alternative) if effect is not None else None
    )
    sim = None
    if simulate:
        target = effect if effect is not None else (-mde if alternative == "less" else mde)
        target = simulated_effect(target, eff.mean_diff, alternative)
        sim = simulate_power(
            d, target, n_plan, alpha=alpha, alternative=alternative, n_trials=n_trials,
            seed=seed, method=method, clusters=labels, n_resamples=n_resamples,
            value_type=value_type,
        )
    return PowerPlan(
        metric=metric,
        n_pilot=int(units.size),
        mean_diff=eff.mean_diff,
        sd_diff=eff.sd_diff,
        skewness=skew,
        n=n_plan,
        alpha=alpha,
        power=power,
        mde=mde,
        effect=effect,
        n_required=n_req,
        simulated=sim,
        skewness_warning=eff.skewness_warning,
        n_clusters=g,
        effective_clusters=g_star,
        method=method,
        pilot_method=pilot_method,
    )
