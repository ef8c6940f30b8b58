"""The skew guard and the bootstrap-t of "randomization+bootstrap-t" over the non-zero
differences: ties (exact zeros) have no sign, so the sign-flip test conditions on them,
and the guard's skewness and the bootstrap-t do the same.

Expected values come from scipy (skewness), an exact enumeration of the sign patterns,
and the bootstrap-t of tests/conftest.py (written out on the documented generator) run
on the non-zero values alone, never from evalkit.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

from evalkit.stats import compare_runs, paired_test
from evalkit.stats.methods import BOTH, guard_skewness, resolve_method

BootstrapT = Callable[..., tuple[float, float, float]]  # the fixture of tests/conftest.py


def pair(d: list[float] | np.ndarray) -> tuple[dict[str, float], dict[str, float]]:
    vals = [float(x) for x in d]
    return ({f"q{i:03d}": v for i, v in enumerate(vals)},
            {f"q{i:03d}": 0.0 for i in range(len(vals))})


def exact_signflip_p(d: np.ndarray) -> float:
    """Two-sided exact sign-flip p over all 2**n patterns (Fisher 1935)."""
    obs = abs(d.sum())
    count = sum(abs(float(np.dot(s, d))) >= obs - 1e-12
                for s in itertools.product((-1.0, 1.0), repeat=d.size))
    return float(count / 2**d.size)


# skewed non-zero values (G1 about 1.6) and the same with five ties among them (n = 15)
LIVE = np.array([0.61, -0.05, -0.08, -0.02, 0.04, -0.07, -0.03, 0.02, -0.06, 0.44])
TIED = np.array([0.61, 0.0, -0.05, -0.08, 0.0, -0.02, 0.04, 0.0, -0.07, -0.03, 0.02,
                 0.0, -0.06, 0.44, 0.0])


def test_guard_skewness_is_g1_of_the_non_zero_values() -> None:
    assert sorted(TIED[TIED != 0]) == sorted(LIVE)
    assert guard_skewness(TIED) == pytest.approx(stats.skew(LIVE, bias=False), rel=1e-12)
    assert guard_skewness(LIVE) == pytest.approx(stats.skew(LIVE, bias=False), rel=1e-12)
    # with clusters every cluster's value counts, a zero sum included
    assert guard_skewness(TIED, clustered=True) == pytest.approx(
        stats.skew(TIED, bias=False), rel=1e-12)


def test_the_guard_is_off_when_every_non_zero_difference_is_plus_or_minus_c() -> None:
    # wins and losses of one size: a null with mean 0 is symmetric, and G1 would be a
    # function of the wins and losses (here 9 wins, 2 losses: G1 = -1.9)
    d = np.array([1.0] * 9 + [-1.0] * 2 + [0.0] * 19)
    assert abs(stats.skew(d[d != 0], bias=False)) >= 1.0
    assert guard_skewness(d) == 0.0
    assert resolve_method("auto", d, None) == "randomization"
    assert guard_skewness(np.zeros(5)) == 0.0
    assert guard_skewness(np.array([0.0, 0.3, -0.3, 0.3])) == 0.0


def test_auto_reads_the_non_zero_values_not_the_ties() -> None:
    # the ties make all n values look skewed, the non-zero ones are symmetric
    live = np.array([-0.4, -0.3, -0.2, -0.1, 0.1, 0.2, 0.3, 0.4, 0.35, -0.35])
    d = np.concatenate([live, np.zeros(30), [0.05]])
    assert abs(stats.skew(np.append(live, 0.05), bias=False)) < 1.0
    assert resolve_method("auto", np.append(live, 0.05), None) == "randomization"
    assert resolve_method("auto", d, "continuous") == "randomization"
    # and the other way: skewed non-zero values among ties
    assert abs(stats.skew(TIED, bias=False)) >= 1.0 <= abs(stats.skew(LIVE, bias=False))
    assert resolve_method("auto", TIED, "continuous") == BOTH


def test_both_runs_its_bootstrap_t_on_the_non_zero_values(
        reference_bootstrap_t: BootstrapT) -> None:
    # n = 15 (exact sign flips); the bootstrap-t is the reference one on the 10 non-zero
    # values with the same seed and B: its interval, times k / n, is the bootstrap part
    r = paired_test(*pair(TIED), "m", method=BOTH, n_resamples=3000, seed=11)
    p_flip = exact_signflip_p(TIED)
    assert p_flip == pytest.approx(exact_signflip_p(LIVE), rel=1e-12)  # ties have no sign
    p_t, lo_t, hi_t = reference_bootstrap_t(LIVE, 11, 3000)
    assert r.p_value == pytest.approx(max(p_flip, p_t), rel=1e-12)
    share = LIVE.size / TIED.size
    inv = paired_test(*pair(TIED), "m", method="randomization")
    assert r.ci_low == pytest.approx(min(inv.ci_low, share * lo_t), rel=1e-9)
    assert r.ci_high == pytest.approx(max(inv.ci_high, share * hi_t), rel=1e-9)
    assert r.observed == pytest.approx(TIED.mean(), rel=1e-12)


def test_ties_removed_or_kept_give_the_same_p(reference_bootstrap_t: BootstrapT) -> None:
    for seed in (1, 2, 3):
        kept = paired_test(*pair(TIED), "m", method=BOTH, n_resamples=2000, seed=seed)
        dropped = paired_test(*pair(LIVE), "m", method=BOTH, n_resamples=2000, seed=seed)
        assert kept.p_value == pytest.approx(dropped.p_value, rel=1e-12)
        p_t, _, _ = reference_bootstrap_t(LIVE, seed, 2000)
        assert kept.p_value == pytest.approx(max(exact_signflip_p(LIVE), p_t), rel=1e-12)


def test_the_interval_agrees_with_p_on_tied_samples(
        reference_bootstrap_t: BootstrapT) -> None:
    # the sign-flip test rejects each at 5%; whether both do is up to the bootstrap-t of
    # the non-zero values
    cases = [
        np.array([0.02, 0.0, 0.03, 0.01, 0.0, 0.04, 0.02, 0.03, 0.0, 0.05, 0.01, 0.9]),
        np.array([0.05, 0.04, 0.0, 0.06, 0.05, 0.07, 0.0, 0.04, 0.05, 0.06, 0.3, 0.28]),
        np.array([0.3, 0.25, 0.2, 0.0, 0.35, 0.28, 0.22, 0.31, 0.26, 0.24, 0.3, 0.29, 0.27,
                  0.25, -0.9]),
    ]
    seen = set()
    for d in cases:
        live = d[d != 0]
        p_flip = exact_signflip_p(d)
        p_t, _, _ = reference_bootstrap_t(live, 42, 2000)
        r = paired_test(*pair(d), "m", method=BOTH, n_resamples=2000)
        both = p_flip < 0.05 and p_t < 0.05
        assert p_flip < 0.05
        assert r.significant == both
        assert (r.ci_low > 0 or r.ci_high < 0) == both
        assert r.p_value == pytest.approx(max(p_flip, p_t), rel=1e-12)
        seen.add(both)
    assert seen == {True, False}


def test_a_family_gives_each_metric_its_own_ties() -> None:
    # two skewed metrics with different ties, one without: each as tested alone
    rng = np.random.default_rng(3)
    n = 40
    cols = {
        "a": np.where(rng.uniform(size=n) < 0.5, 0.0, rng.exponential(1.0, n) - 0.8),
        "b": np.where(rng.uniform(size=n) < 0.3, 0.0, rng.exponential(1.0, n) ** 2 - 1.5),
        "c": rng.lognormal(0.0, 1.0, n) * 0.05 - 0.06,
    }
    from evalkit.data.results import QueryResult, RunResult

    cand = RunResult("c", [QueryResult(f"q{i}", [], {m: float(v[i]) for m, v in
                                                     cols.items()}) for i in range(n)])
    base = RunResult("b", [QueryResult(f"q{i}", [], dict.fromkeys(cols, 0.0))
                           for i in range(n)])
    fam = compare_runs(base, [cand], list(cols), n_resamples=2000)
    wy = compare_runs(base, [cand], list(cols), n_resamples=2000,
                      correction="westfall-young")
    for m, d in cols.items():
        assert resolve_method("auto", d, None) == BOTH, m
        one = paired_test(cand, base, m, n_resamples=2000)
        got = fam.get("c", "b", m)
        assert got.method == BOTH
        assert (got.p_value, got.ci_low, got.ci_high) == (one.p_value, one.ci_low,
                                                          one.ci_high)
        w = wy.get("c", "b", m)
        assert w.p_value == got.p_value
        assert w.p_adjusted is not None and got.p_value <= w.p_adjusted <= 1.0


def test_one_non_zero_difference_leaves_the_answer_to_the_sign_flip_test() -> None:
    d = np.zeros(30)
    d[7] = 0.4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = paired_test(*pair(d), "m", method=BOTH, n_resamples=500)
        flip = paired_test(*pair(d), "m", method="randomization", n_resamples=500)
    assert r.p_value == flip.p_value == 1.0
    assert np.isfinite(r.ci_low) and np.isfinite(r.ci_high)
    assert (r.ci_low, r.ci_high) == (min(flip.ci_low, d.mean()), max(flip.ci_high, d.mean()))


def test_the_skew_note_suggests_auto_only_when_its_guard_would_fire() -> None:
    # skewed over all 41 values (the ties), symmetric over the 11 non-zero ones: "auto"
    # would run the sign-flip test alone, so the note does not suggest it
    live = np.array([-0.4, -0.3, -0.2, -0.1, 0.1, 0.2, 0.3, 0.4, 0.35, -0.35, 0.05])
    d = np.concatenate([live, np.zeros(30)])
    d[0] = -0.7  # a longer loss: skewed over all values, not over the non-zero ones
    assert abs(stats.skew(d, bias=False)) > 1.0 > abs(stats.skew(d[d != 0], bias=False))
    r = paired_test(*pair(d), "m", method="randomization")
    notes = [w for w in r.warnings if "skewed (G1" in w]
    assert len(notes) == 1 and "would add" not in notes[0]
    assert resolve_method("auto", d, None) == "randomization"
    # skewed non-zero values: the note does suggest it
    r = paired_test(*pair(TIED), "m", method="randomization")
    assert any("(method 'auto' would add the bootstrap-t)" in w for w in r.warnings)
