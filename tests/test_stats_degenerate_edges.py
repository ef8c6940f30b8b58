"""Degenerate input and intervals near zero: constant differences are never
significant on too few queries, each method's interval agrees with its own p near 0,
too few resamples give an unbounded interval, simulate_power decides zero variance as
paired_test does, and extreme magnitudes give defined answers. Expected values come
from hand calculation and exact arithmetic (fractions, 60-digit decimals)."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import ndtr, ndtri

from evalkit.data.results import QueryResult, RunResult
from evalkit.stats import paired_bootstrap, paired_test, simulate_power
from evalkit.stats._rng import bootstrap_indices
from evalkit.stats.pairing import SNAP_BITS, snap_differences


def diffs(values: list[float]) -> tuple[dict[str, float], dict[str, float]]:
    ids = [f"q{i:02d}" for i in range(len(values))]
    return dict(zip(ids, values, strict=True)), dict.fromkeys(ids, 0.0)


# ------------------------------------------------------------ constant differences
@pytest.mark.parametrize("n", range(1, 9))
def test_paired_bootstrap_on_constant_differences_follows_the_sign_flip_rule(n: int) -> None:
    a, b = diffs([0.125] * n)
    r = paired_bootstrap(a, b, "m", n_resamples=999, seed=1)
    # the seed's numbers are kept: every resample has mean c
    assert (r.observed, r.ci_low, r.ci_high, r.p_value) == (0.125, 0.125, 0.125, 1 / 1000)
    # significance: the sign-flip test's smallest two-sided p, 2**(1-n), below 0.05?
    # 2**-4 = 0.0625 (n = 5) is not, 2**-5 = 0.03125 (n = 6) is; n = 1 never
    assert r.significant is (n >= 6)
    assert r.degenerate == "constant" and r.note is not None
    assert f"{2.0 ** (1 - n):.4g}" in r.note
    same = paired_test(a, b, "m", method="randomization", n_resamples=999)
    assert same.significant is r.significant and same.degenerate == "constant"


def test_zero_differences_and_many_queries_with_few_resamples() -> None:
    a, b = diffs([0.3] * 8)
    r = paired_bootstrap(a, a, "m")
    assert not r.significant and r.p_value == 1.0 and r.degenerate == "constant"
    assert r.note is not None and "agree on every query" in r.note
    a, b = diffs([0.5] * 20)  # n > 16: the floor is max(2**-19, 1/(B+1))
    assert not paired_bootstrap(a, b, "m", n_resamples=10).significant  # 1/11 > 0.05
    assert paired_bootstrap(a, b, "m", n_resamples=100).significant  # 1/101 < 0.05
    assert paired_test(a, b, "m", method="bootstrap", n_resamples=10).significant is False
    ordinary = paired_bootstrap(*diffs([0.1, 0.2, 0.3, 0.25, 0.15, 0.3]), "m")
    assert ordinary.degenerate is None and ordinary.note is None


def test_differences_equal_up_to_rounding_are_constant() -> None:
    a = {"q1": 0.7, "q2": 0.4, "q3": 0.9, "q4": 0.3, "q5": 0.6}
    b = {"q1": 0.5, "q2": 0.2, "q3": 0.7, "q4": 0.1, "q5": 0.4}
    raw = [a[q] - b[q] for q in a]
    assert len(set(raw)) > 1  # 0.19999999999999996, 0.2, 0.20000000000000007, ...
    r = paired_bootstrap(a, b, "m")
    assert r.degenerate == "constant" and not r.significant  # n = 5


def test_equal_differences_straddling_an_edge_of_the_rounding_grid_are_merged() -> None:
    # scores below 0.5 (largest 0.25...): step = 2**(ceil(log2 0.25) - 40) = 2**-42; a
    # fixed grid would put its edge at 0.25 + step/2, between these two differences
    step = 2.0 ** (-2 - SNAP_BITS)
    edge = 0.25 + step / 2
    ulp = math.ulp(0.25)
    lo, hi = edge - ulp, edge + ulp
    assert round(lo / step) != round(hi / step)  # a grid splits them...
    values = [lo, hi, lo, hi, hi, lo]
    a, b = diffs(values)
    arr = np.array(values)
    snapped = snap_differences(arr, arr, np.zeros(6))
    assert set(snapped.tolist()) == {edge}  # ...the merge does not (the ends' midpoint)
    r = paired_test(a, b, "m", method="randomization")
    assert r.degenerate == "constant" and r.effect is not None and r.effect.sd_diff == 0.0


# ------------------------------------------------------------ intervals near zero
def test_the_inversion_interval_agrees_with_the_exact_p_near_zero() -> None:
    d = [0.7, -0.2, 0.2, 0.3, 0.4, 0.2, 0.3, -0.1]
    a, b = diffs(d)
    r = paired_test(a, b, "m", method="randomization")
    # exact p: sign patterns whose |sum| reaches the observed |sum|, in exact decimals
    x = [Fraction(str(v)) for v in d]
    total = abs(sum(x, Fraction(0)))
    count = sum(1 for s in itertools.product((1, -1), repeat=8)
                if abs(sum((si * xi for si, xi in zip(s, x, strict=True)), Fraction(0)))
                >= total)
    assert r.exact and r.p_value == count / 256 == 0.078125
    # p >= alpha, so 0 is inside the interval: its lower end, 0 in exact arithmetic
    # (flipping {-0.2, 0.2} gives mean 0) and 3.7e-17 in floats, is exactly 0
    assert r.ci_low == 0.0 and r.ci_high > 0.4
    assert (r.ci_low > 0 or r.ci_high < 0) == (r.p_value < 0.05)


def exact_means(d: list[float], seed: int, B: int) -> list[Fraction]:
    x = [Fraction(str(v)) for v in d]
    idx = bootstrap_indices(seed, len(d), 0, B).reshape(B, len(d))
    return sorted(sum(x[i] for i in row) / len(d) for row in idx)


def linear_quantile(values: list[Fraction], q: float) -> Fraction:
    """numpy's default ('linear') quantile, in exact arithmetic."""
    h = (len(values) - 1) * Fraction(q)
    lo = math.floor(h)
    return values[lo] + (h - lo) * (values[min(lo + 1, len(values) - 1)] - values[lo])


def test_the_percentile_interval_end_within_rounding_of_zero_is_zero() -> None:
    d = [0.4, 0.3, 0.1, -0.1]
    r = paired_test(*diffs(d), "m", method="bootstrap", ci="percentile", n_resamples=999,
                    seed=3)
    means = exact_means(d, 3, 999)
    assert linear_quantile(means, 0.025) == 0  # the float computation gives -2.8e-17
    assert r.ci_low == 0.0
    assert float(linear_quantile(means, 0.975)) == pytest.approx(r.ci_high, rel=1e-12)


def test_the_bca_interval_end_within_rounding_of_zero_is_zero() -> None:
    d = [0.3, 0.7, 0.6, -0.2, 0.3]
    B, n = 199, 5
    r = paired_test(*diffs(d), "m", method="bootstrap", ci="bca", n_resamples=B, seed=5)
    means = exact_means(d, 5, B)
    x = [Fraction(str(v)) for v in d]
    mean = sum(x) / n
    # Efron (1987): z0 from the share below the mean (ties half), a from the jackknife
    prop = (sum(1 for m in means if m < mean) + Fraction(1, 2) * sum(
        1 for m in means if m == mean)) / B
    e = [v - mean for v in x]
    acc = float(sum(v ** 3 for v in e)) / (6 * float(sum(v ** 2 for v in e)) ** 1.5)
    z0 = float(ndtri(float(prop)))
    z = float(ndtri(0.025))
    level = float(ndtr(z0 + (z0 + z) / (1 - acc * (z0 + z))))
    assert linear_quantile(means, level) == 0  # in floats: -5.6e-17
    assert r.ci_low == 0.0 and r.ci_high > 0.5


def test_the_bootstrap_t_interval_end_within_rounding_of_zero_is_zero() -> None:
    d = [0.3, 0.4, 0.1, 0.1, 0.6]
    B, n = 199, 5
    r = paired_test(*diffs(d), "m", method="bootstrap-t", n_resamples=B, seed=5)
    getcontext().prec = 60
    x = [Decimal(str(v)) for v in d]
    mean = sum(x, Decimal(0)) / n
    se = (sum(((v - mean) ** 2 for v in x), Decimal(0)) / (n - 1) / n).sqrt()
    t_star: list[Decimal] = []
    for row in bootstrap_indices(5, n, 0, B).reshape(B, n):
        xs = [x[i] for i in row]
        m = sum(xs, Decimal(0)) / n
        var = sum(((v - m) ** 2 for v in xs), Decimal(0)) / (n - 1)
        dev = m - mean
        if var:
            t_star.append(dev / (var / n).sqrt())
        else:  # a resample of one repeated value: se* = 0
            t_star.append(Decimal("Infinity") * (1 if dev > 0 else -1) if dev else Decimal(0))
    t_star.sort()
    k = math.ceil(0.05 * (B + 1) / 2) - 1  # Efron and Tibshirani (1993), ch. 12
    assert abs(mean - t_star[B - k] * se) < Decimal("1e-50")  # exactly 0; in floats 5.6e-17
    # p = 0.05 is not below alpha, and now the interval does not exclude 0 either
    assert r.p_value == 0.05 and r.ci_low == 0.0
    assert (r.ci_low > 0 or r.ci_high < 0) == (r.p_value < 0.05)


def test_too_few_resamples_to_reject_give_an_unbounded_interval() -> None:
    rng = np.random.default_rng(4)
    a, b = diffs(list(rng.normal(1.0, 0.2, 30)))  # every difference far above 0
    for B in (1, 5, 19):  # B + 1 <= 1/alpha = 20: p >= 1/(B+1) >= 0.05 always
        r = paired_test(a, b, "m", method="randomization", n_resamples=B)
        assert (r.ci_low, r.ci_high) == (-math.inf, math.inf)
        assert r.p_value == 1 / (B + 1) and not r.significant
    r = paired_test(a, b, "m", method="randomization", n_resamples=20)  # 1/21 < 0.05
    assert r.significant and r.ci_low > 0


# ------------------------------------------------------------ power
@pytest.mark.parametrize(("n", "power"), [(5, 0.0), (6, 1.0)])
def test_simulate_power_decides_zero_variance_as_paired_test(n: int, power: float) -> None:
    # every drawn difference is 0.1: paired_test says significant iff 2**(1-n) < 0.05
    pilot = [0.1] * 10
    sim = simulate_power(pilot, 0.1, n, n_trials=50)
    assert sim.power == power
    noisy = [0.3, 0.1 + 0.2, 0.7 - 0.4, 0.3, 0.6 - 0.3]  # equal up to rounding
    assert len(set(noisy)) > 1
    assert simulate_power(noisy, 0.2, n, n_trials=50).power == power
    a, b = diffs([0.1] * n)
    assert paired_test(a, b, "m", method="t-test").significant is (power == 1.0)


# ------------------------------------------------------------ extreme magnitudes
@pytest.mark.parametrize("scale", [2.0 ** 400, 2.0 ** -600, 2.0 ** 1000, 2.0 ** -1000])
@pytest.mark.parametrize("method", ["randomization", "t-test", "bootstrap-t", "bootstrap"])
def test_extreme_magnitudes_give_the_answer_of_the_same_data_near_one(
        scale: float, method: str) -> None:
    rng = np.random.default_rng(7)
    d = list(rng.normal(0.05, 0.3, 25))
    base = paired_test(*diffs(d), "m", method=method, n_resamples=500)
    big = paired_test(*diffs([v * scale for v in d]), "m", method=method, n_resamples=500)
    # multiplying by a power of two is exact: the same p, the interval scaled exactly
    assert big.p_value == base.p_value and big.significant == base.significant
    assert (big.observed, big.ci_low, big.ci_high) == (
        base.observed * scale, base.ci_low * scale, base.ci_high * scale)
    assert big.effect is not None and base.effect is not None
    assert big.effect.sd_diff == base.effect.sd_diff * scale
    assert big.effect.standardized == base.effect.standardized
    boot = paired_bootstrap(*diffs([v * scale for v in d]), "m", n_resamples=500)
    ref = paired_bootstrap(*diffs(d), "m", n_resamples=500)
    assert (boot.p_value, boot.ci_low) == (ref.p_value, ref.ci_low * scale)


def test_scores_at_the_edge_of_the_float_range() -> None:
    a = {"q1": 1e308, "q2": 1.5e308, "q3": 1.7e308, "q4": 1.6e308}
    b = dict.fromkeys(a, 0.0)
    for r in (paired_test(a, b, "m"), paired_bootstrap(a, b, "m")):
        assert r.observed == pytest.approx(1.45e308, rel=1e-15)  # fsum would overflow
        assert not any(math.isnan(v) for v in (r.observed, r.ci_low, r.ci_high, r.p_value))
        assert r.p_value > 0
    run = RunResult("big", [QueryResult(q, [], {"m": v}) for q, v in a.items()])
    assert run.mean("m") == pytest.approx(1.45e308, rel=1e-15)  # math.fsum raises here
    with pytest.raises(OverflowError):
        math.fsum(a.values())
    opposite = {"q1": -1e308, "q2": -1.5e308, "q3": 0.0, "q4": 0.0}
    with pytest.raises(ValueError, match=r"exceeds the float64 range on 2 queries"):
        paired_test(a, opposite, "m")
    with pytest.raises(ValueError, match=r"'q1', 'q2'; 1e\+308 - -1e\+308"):
        paired_bootstrap(a, opposite, "m")
