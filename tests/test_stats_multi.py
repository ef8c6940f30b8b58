"""Many metrics and systems, multiplicity adjustments, aggregate bootstrap, power."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from evalkit.data.results import QueryResult, RunResult
from evalkit.stats import (
    aggregate_bootstrap,
    benjamini_hochberg,
    compare_runs,
    holm,
    minimum_detectable_effect,
    paired_bootstrap,
    paired_test,
    plan_from_pilot,
    required_n,
    simulate_power,
    t_power,
    westfall_young,
)


def make_runs(n: int = 40, seed: int = 0) -> list[RunResult]:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.7, size=n)
    runs = []
    for k, shift in enumerate([0.0, 0.04, 0.0, 0.02]):
        noise = rng.normal(0, 0.08, size=n)
        rows = [
            QueryResult(f"q{i}", [], {"ap": float(base[i] + shift + noise[i]),
                                      "ndcg": float(base[i] + shift + 0.5 * noise[i]),
                                      "latency_ms": float(50 + 10 * k + rng.exponential(20))})
            for i in range(n)
        ]
        runs.append(RunResult(f"sys{k}", rows))
    return runs


# ---------------------------------------------------------------------------
# adjustments: hand-computed values and scipy


def test_holm_and_bh_hand_values() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert benjamini_hochberg(p) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    rng = np.random.default_rng(1)
    q = rng.uniform(size=25) ** 3
    assert benjamini_hochberg(q.tolist()) == pytest.approx(
        stats.false_discovery_control(q, method="bh"))


def test_westfall_young_hand_values() -> None:
    p_obs = np.array([0.01, 0.04])
    null = np.array([[0.5, 0.02], [0.005, 0.9], [0.3, 0.04]])
    # step-down min-P: h1 alone: #{0.02, 0.9, 0.04 <= 0.04} = 2 -> (2+1)/4; h0 against
    # the smaller of both: #{0.02, 0.005, 0.04 <= 0.01} = 1 -> (1+1)/4
    assert westfall_young(p_obs, null) == pytest.approx([0.5, 0.75])
    assert westfall_young(p_obs, null, exact=True) == pytest.approx([1 / 3, 2 / 3])


# ---------------------------------------------------------------------------
# compare_runs


def test_compare_runs_shapes_signs_and_shared_resamples() -> None:
    runs = make_runs()
    cmp = compare_runs(runs[0], runs[1:], ["ap", "ndcg"])
    assert cmp.family_size == 6 and cmp.correction == "holm"
    r = cmp.get("sys1", "sys0", "ap")
    single = paired_test(runs[1], runs[0], "ap")
    assert (r.observed, r.ci_low, r.ci_high, r.p_value) == (
        single.observed, single.ci_low, single.ci_high, single.p_value)
    assert r.observed == pytest.approx(runs[1].mean("ap") - runs[0].mean("ap"))
    raw = [x.p_value for x in cmp.results]
    assert [x.p_adjusted for x in cmp.results] == pytest.approx(holm(raw))
    allp = compare_runs(runs[0], runs[1:], "ap", all_pairs=True)
    assert allp.family_size == 6
    assert {(x.name_a, x.name_b) for x in allp.results} == {
        ("sys1", "sys0"), ("sys2", "sys0"), ("sys3", "sys0"), ("sys2", "sys1"),
        ("sys3", "sys1"), ("sys3", "sys2")}


@pytest.mark.parametrize("method", ["randomization", "bootstrap-t", "t-test", "bootstrap"])
def test_westfall_young_in_compare(method: str) -> None:
    runs = make_runs(seed=3)
    cmp = compare_runs(runs[0], runs[1:], ["ap", "ndcg"], method=method,
                       correction="westfall-young", n_resamples=2000)
    holm_p = holm([x.p_value for x in cmp.results])
    for x, h in zip(cmp.results, holm_p, strict=True):
        assert x.p_adjusted is not None
        assert x.p_value <= x.p_adjusted <= 1.0
        # min-P uses the correlation of ap and ndcg; it never needs more than Bonferroni
        assert x.p_adjusted <= min(1.0, 6 * x.p_value) + 0.02
        assert h >= x.p_value


def test_auto_resolves_per_metric_in_one_family() -> None:
    rng = np.random.default_rng(31)
    n = 50
    base_ap = rng.uniform(0.2, 0.6, size=n)
    rows_b = [QueryResult(f"q{i}", [], {"ap": float(base_ap[i]),
                                        "hit": float(rng.uniform() < 0.5)}) for i in range(n)]
    rows_c = [QueryResult(f"q{i}", [], {"ap": float(base_ap[i] + rng.normal(0.02, 0.05)),
                                        "hit": float(rng.uniform() < 0.6)}) for i in range(n)]
    b, c = RunResult("b", rows_b), RunResult("c", rows_c)
    cmp = compare_runs(b, [c], ["ap", "hit"], correction="westfall-young", n_resamples=2000,
                       value_types={"hit": "binary", "ap": "continuous"})
    assert cmp.method == "auto"
    assert cmp.get("c", "b", "ap").method == "randomization"
    assert cmp.get("c", "b", "hit").method == "t-test"
    for metric in ("ap", "hit"):
        single = paired_test(c, b, metric, n_resamples=2000,
                             value_type="binary" if metric == "hit" else "continuous")
        got = cmp.get("c", "b", metric)
        assert (got.p_value, got.ci_low, got.ci_high) == (
            single.p_value, single.ci_low, single.ci_high)
        assert got.p_adjusted is not None and got.p_value <= got.p_adjusted <= 1


def test_compare_runs_names_unnamed_mappings() -> None:
    base = {"q1": 0.1, "q2": 0.4, "q3": 0.3}
    c1 = {"q1": 0.2, "q2": 0.5, "q3": 0.3}
    c2 = {"q1": 0.0, "q2": 0.4, "q3": 0.6}
    cmp = compare_runs(base, [c1, c2], "m", all_pairs=True, n_resamples=200)
    assert [(r.name_a, r.name_b) for r in cmp.results] == [
        ("run1", "run0"), ("run2", "run0"), ("run2", "run1")]
    # run2 - run1 = (-0.2, -0.1, +0.3): mean 0
    assert cmp.get("run2", "run1", "m").observed == pytest.approx(0.0, abs=1e-12)


def test_compare_runs_errors() -> None:
    runs = make_runs()
    short = RunResult("short", runs[1].per_query[:-1])
    with pytest.raises(ValueError, match="different query ids"):
        compare_runs(runs[0], [short], "ap")
    with pytest.raises(ValueError, match="correction"):
        compare_runs(runs[0], runs[1:], "ap", correction="bonferroni-ish")
    with pytest.raises(ValueError, match="candidate"):
        compare_runs(runs[0], [], "ap")


# ---------------------------------------------------------------------------
# aggregate bootstrap


def test_aggregate_bootstrap_of_the_mean_equals_paired_bootstrap() -> None:
    runs = make_runs()

    def mean_ap(rows: list[QueryResult]) -> float:
        return sum(r.metrics["ap"] for r in rows) / len(rows)

    r = aggregate_bootstrap(runs[1], runs[0], mean_ap, n_resamples=2000, seed=4)
    s = paired_bootstrap(runs[1], runs[0], "ap", n_resamples=2000, seed=4)
    assert r.observed == pytest.approx(s.observed, abs=1e-12)
    assert r.ci_low == pytest.approx(s.ci_low, abs=1e-9)
    assert r.ci_high == pytest.approx(s.ci_high, abs=1e-9)
    assert r.p_value == pytest.approx(s.p_value, abs=2 / 2001)


def test_aggregate_bootstrap_p95_latency() -> None:
    runs = make_runs()

    def latency_p95(rows: list[QueryResult]) -> float:
        return float(np.percentile([r.metrics["latency_ms"] for r in rows], 95))

    same = aggregate_bootstrap(runs[0], runs[0], latency_p95, n_resamples=500)
    assert (same.observed, same.ci_low, same.ci_high, same.p_value) == (0.0, 0.0, 0.0, 1.0)
    r = aggregate_bootstrap(runs[3], runs[0], latency_p95, n_resamples=1000)
    assert r.metric == "latency_p95" and r.ci_low <= r.observed <= r.ci_high
    assert r.observed == pytest.approx(latency_p95(runs[3].per_query)
                                       - latency_p95(runs[0].per_query))


# ---------------------------------------------------------------------------
# power


def test_noncentral_t_power_against_simulation() -> None:
    n, effect, sd, trials = 20, 0.5, 1.0, 40_000
    rng = np.random.default_rng(5)
    x = rng.normal(effect, sd, size=(trials, n))
    t = x.mean(axis=1) / (x.std(axis=1, ddof=1) / math.sqrt(n))
    crit = stats.t.ppf(0.975, n - 1)
    simulated = float(np.mean(np.abs(t) > crit))
    predicted = t_power(effect, sd, n)
    assert predicted == pytest.approx(simulated, abs=4 * math.sqrt(simulated * (1 - simulated)
                                                                   / trials))


def test_sample_size_and_mde_textbook_values() -> None:
    # one-sample/paired t, d = 0.5 and 0.2, alpha 0.05 two-sided, power 0.8:
    # 34 and 199 (Cohen 1988 tables; G*Power)
    assert required_n(0.5, 1.0) == 34
    assert required_n(0.2, 1.0) == 199
    mde = minimum_detectable_effect(34, 1.0)
    assert t_power(mde, 1.0, 34) == pytest.approx(0.8, abs=1e-9)
    assert mde < 0.5 < minimum_detectable_effect(33, 1.0) * 1.02


@pytest.mark.parametrize("n", [10, 80, 100, 200, 1000, 100_000])
def test_mde_at_common_sizes(n: int) -> None:
    # scipy's nctdtr is NaN far in a tail at some of these n; the MDE must still solve.
    # Reference: the normal approximation (z_{0.975} + z_{0.8}) / sqrt(n), which the
    # noncentral t approaches from above as n grows.
    mde = minimum_detectable_effect(n, 1.0)
    approx = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) / math.sqrt(n)
    assert approx <= mde <= approx * (1.02 if n >= 80 else 1.15)
    assert t_power(mde, 1.0, n) == pytest.approx(0.8, abs=1e-9)
    assert 0.0 <= t_power(50.0, 1.0, n) <= 1.0
    assert t_power(-mde, 1.0, n, alternative="less") == pytest.approx(
        t_power(mde, 1.0, n, alternative="greater"), abs=1e-12)


def test_simulated_power_from_normal_pilot_matches_prediction() -> None:
    pilot = np.random.default_rng(6).normal(0, 0.1, size=5000)
    sim = simulate_power(pilot, 0.05, 30, n_trials=4000, seed=2)
    predicted = t_power(0.05, float(pilot.std(ddof=1)), 30)
    assert sim.power == pytest.approx(predicted, abs=4 * sim.se + 0.005)


def test_plan_from_pilot() -> None:
    runs = make_runs(n=60)
    plan = plan_from_pilot(runs[1], runs[0], "ap", effect=0.03, n_trials=500)
    assert plan.n == 60 and plan.n_pilot == 60
    assert t_power(plan.mde, plan.sd_diff, 60) == pytest.approx(0.8, abs=1e-6)
    assert plan.n_required is not None and plan.n_required >= 2
    assert plan.simulated is not None and 0 <= plan.simulated.power <= 1
    same = RunResult("x", runs[0].per_query)
    with pytest.raises(ValueError, match="no spread"):
        plan_from_pilot(same, runs[0], "ap")


def test_a_two_sided_plan_does_not_depend_on_which_run_is_named_first() -> None:
    # skewed differences: a few large gains among many small losses, as AP's often are
    rng = np.random.default_rng(5)
    gains = np.where(rng.random(80) < 0.15, rng.exponential(0.3, 80), -rng.random(80) * 0.02)
    ids = [f"q{i}" for i in range(80)]
    a = RunResult("a", [QueryResult(q, [], {"ap": 0.5 + float(g)})
                        for q, g in zip(ids, gains, strict=True)])
    b = RunResult("b", [QueryResult(q, [], {"ap": 0.5}) for q in ids])
    ab = plan_from_pilot(a, b, "ap", effect=0.03, n_trials=2000)
    ba = plan_from_pilot(b, a, "ap", effect=0.03, n_trials=2000)
    assert ab.simulated is not None and ba.simulated is not None
    assert ab.simulated.power == ba.simulated.power
    assert ab.mde == ba.mde
    # the shift follows the pilot's direction: simulating -0.03 on a's differences gives
    # another power on these skewed data, which is what naming b first used to simulate
    diffs = np.array([0.5 + g for g in gains]) - 0.5
    diffs = diffs[np.argsort(ids)]  # the order plan_from_pilot pairs them in
    other = simulate_power(diffs, -0.03, 80, n_trials=2000, method="auto",
                           n_resamples=10_000)
    assert other.power != ab.simulated.power
    assert simulate_power(-diffs, -0.03, 80, n_trials=2000, method="auto",
                          n_resamples=10_000).power == ab.simulated.power
