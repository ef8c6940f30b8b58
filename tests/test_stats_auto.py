"""The default test, "auto": which test it runs for which metric, and its skew guard.

"auto" is chosen from what the metric is (its declared value type), never from the values
one comparison happened to observe; on a metric that is not binary it is the sign-flip
test, joined by the equal-tailed bootstrap-t when the non-zero differences' sample
skewness ``|G1|`` is at least 1. Expected values come from scipy (skewness, t-test), an exact
enumeration of the sign patterns and the bootstrap-t of tests/conftest.py, written out on
the documented generator, never from evalkit.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats

from evalkit.stats import compare_runs, paired_test
from evalkit.stats.methods import (
    BOTH,
    SKEW_GUARD,
    VALUE_TYPES,
    resolve_method,
    sample_skewness,
    smallest_p,
)

BootstrapT = Callable[..., tuple[float, float, float]]  # the fixture of tests/conftest.py

def pair(d: list[float] | np.ndarray) -> tuple[dict[str, float], dict[str, float]]:
    vals = [float(x) for x in d]
    return ({f"q{i:03d}": v for i, v in enumerate(vals)},
            {f"q{i:03d}": 0.0 for i in range(len(vals))})


def exact_signflip_p(d: np.ndarray) -> float:
    """Two-sided exact sign-flip p: every one of the 2**n sign patterns, counted when
    |mean(s d)| >= |mean(d)| (Fisher 1935)."""
    obs = abs(d.mean())
    hits = sum(bool(abs(np.dot(s, d)) / d.size >= obs - 1e-12)
               for s in itertools.product((-1.0, 1.0), repeat=d.size))
    return float(hits / 2**d.size)


# ------------------------------------------------------------------ skewness statistic
@pytest.mark.parametrize("values", [
    [0.1, 0.2, 0.9], [0.3, -0.1, 0.05, 0.6, 0.0, 0.02], list(np.linspace(-1, 2, 40) ** 3),
    list(np.random.default_rng(3).exponential(1.0, 57)), [-5.0, 1.0, 1.0, 1.0, 1.0],
])
def test_sample_skewness_is_scipys_adjusted_g1(values: list[float]) -> None:
    d = np.array(values)
    assert sample_skewness(d) == pytest.approx(stats.skew(d, bias=False), rel=1e-12)


def test_sample_skewness_is_zero_without_spread_or_three_values() -> None:
    assert sample_skewness(np.array([0.2, 0.2, 0.2, 0.2])) == 0.0
    assert sample_skewness(np.array([0.1, 0.4])) == 0.0


# ------------------------------------------------------------------ what "auto" chooses
def test_auto_chooses_by_the_declared_value_type_not_by_the_values() -> None:
    # P@10 differences that happen to be all +-0.1 or 0: the values look like a 0/1
    # metric's, but P@10 is not binary, so the test is the sign-flip test
    tenths = np.array([0.1, -0.1, 0.1, 0.0, 0.1, 0.1, -0.1, 0.1, 0.0, 0.1] * 3)
    assert abs(stats.skew(tenths, bias=False)) < SKEW_GUARD
    for declared in ("discrete", None):
        assert resolve_method("auto", tenths, declared) == "randomization"
    assert resolve_method("auto", tenths, "binary") == "t-test"
    assert resolve_method("auto", np.array([0.3, -0.2, 0.5]), "binary") == "t-test"
    r = paired_test(*pair(tenths), "precision@10", value_type="discrete")
    assert r.method == "randomization"
    # an explicit method is never changed
    for m in ("randomization", "t-test", "bootstrap-t", "bootstrap", BOTH):
        assert resolve_method(m, tenths, "binary") == m


def test_the_skew_guard_looks_at_g1() -> None:
    # G1 (scipy.stats.skew, bias=False) on either side of 1 (no zeros: the guard reads
    # the non-zero values, tests/test_stats_tie_guard.py)
    below = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.3]) + 1.0
    above = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.4]) + 1.0
    assert stats.skew(below, bias=False) < 1.0 <= stats.skew(above, bias=False)
    assert resolve_method("auto", below, "continuous") == "randomization"
    assert resolve_method("auto", above, "continuous") == BOTH
    assert resolve_method("auto", -above, None) == BOTH  # either direction
    assert resolve_method("auto", above, "binary") == "t-test"


def test_an_unknown_value_type_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown value type 'boolean'.*binary"):
        paired_test(*pair([0.1, 0.2, 0.3]), "m", value_type="boolean")
    with pytest.raises(ValueError, match="unknown value type"):
        cand, base = pair([0.1, 0.2, 0.3])
        compare_runs(base, [cand], "m", value_types={"m": "ordinal"})


def test_value_types_match_the_metric_records() -> None:
    from typing import get_args

    from evalkit.core.specs import VALUE_TYPES as RECORD_TYPES
    from evalkit.core.specs import ValueType

    assert VALUE_TYPES == RECORD_TYPES == get_args(ValueType)


# ------------------------------------------------------------------ the combined rule
def test_combined_p_is_the_larger_of_the_exact_sign_flip_and_the_bootstrap_t(
        reference_bootstrap_t: BootstrapT) -> None:
    # n = 12: the sign-flip part enumerates 4,096 patterns; the bootstrap-t is written
    # out above on the documented generator
    d = np.array([0.61, -0.05, -0.08, -0.02, 0.04, -0.07, -0.03, 0.02, -0.06, 0.05, 0.44,
                  0.31])
    assert stats.skew(d, bias=False) >= 1.0
    r = paired_test(*pair(d), "m", n_resamples=4000, seed=7, value_type="continuous")
    assert r.method == BOTH and r.ci_method == "inversion+bootstrap-t"
    p_flip = exact_signflip_p(d)
    p_t, lo_t, hi_t = reference_bootstrap_t(d, 7, 4000)
    assert r.p_value == pytest.approx(max(p_flip, p_t), rel=1e-12)
    # the interval holds the bootstrap-t's (and the inversion interval, checked against
    # brute force in test_stats_paired)
    inv = paired_test(*pair(d), "m", method="randomization")
    assert r.ci_low == pytest.approx(min(inv.ci_low, lo_t), rel=1e-9)
    assert r.ci_high == pytest.approx(max(inv.ci_high, hi_t), rel=1e-9)
    assert any("skewed" in w and "both" in w for w in r.warnings)


def test_combined_rule_rejects_only_when_both_tests_reject(
        reference_bootstrap_t: BootstrapT) -> None:
    # the sign-flip test rejects each of these at 5% (exact, n = 12 and 14); whether the
    # combination does depends on the bootstrap-t alone
    cases = [
        np.array([0.02, 0.03, 0.01, 0.04, 0.02, 0.03, 0.05, 0.01, 0.02, 0.04, 0.03, 0.9]),
        np.array([0.3, 0.25, 0.2, 0.35, 0.28, 0.22, 0.31, 0.26, 0.24, 0.3, 0.29, 0.27, 0.25,
                  -0.9]),
        np.array([0.05, 0.04, 0.06, 0.05, 0.07, 0.04, 0.05, 0.06, 0.05, 0.04, 0.3, 0.28]),
    ]
    seen = set()
    for d in cases:
        p_flip = exact_signflip_p(d)
        p_t, _, _ = reference_bootstrap_t(d, 42, 2000)
        r = paired_test(*pair(d), "m", method=BOTH, n_resamples=2000)
        both = p_flip < 0.05 and p_t < 0.05
        assert p_flip < 0.05 and r.significant == both
        assert (r.ci_low > 0 or r.ci_high < 0) == both  # the interval agrees
        seen.add(both)
    assert seen == {True, False}  # a case of each kind


def test_auto_in_a_family_resolves_per_metric_and_matches_single_tests() -> None:
    rng = np.random.default_rng(5)
    n = 40
    sym = rng.normal(0.03, 0.1, n)
    skew = rng.lognormal(0.0, 1.0, n) * 0.05 - 0.06
    hit = (rng.uniform(size=n) < 0.3).astype(float)
    runs_b = {f"q{i}": 0.0 for i in range(n)}
    columns = {"ndcg": sym, "rr": skew, "hit": hit}
    assert abs(stats.skew(sym, bias=False)) < 1.0 <= abs(stats.skew(skew, bias=False))
    from evalkit.data.results import QueryResult, RunResult

    cand = RunResult("c", [QueryResult(f"q{i}", [], {m: float(v[i]) for m, v in
                                                     columns.items()}) for i in range(n)])
    base = RunResult("b", [QueryResult(q, [], dict.fromkeys(columns, v))
                           for q, v in runs_b.items()])
    types = {"ndcg": "continuous", "rr": "continuous", "hit": "binary"}
    fam = compare_runs(base, [cand], list(columns), value_types=types, n_resamples=3000)
    assert [fam.get("c", "b", m).method for m in columns] == ["randomization", BOTH,
                                                              "t-test"]
    for m in columns:
        one = paired_test(cand, base, m, value_type=types[m], n_resamples=3000)
        got = fam.get("c", "b", m)
        assert (got.p_value, got.ci_low, got.ci_high) == (one.p_value, one.ci_low,
                                                          one.ci_high)


# ------------------------------------------------------------------ p floors
def test_smallest_p_of_each_test() -> None:
    assert smallest_p("t-test", 30, 1000, "two-sided", False) == 0.0
    assert smallest_p("randomization", 30, 1000, "two-sided", False) == 1 / 1001
    assert smallest_p("randomization", 10, 1000, "two-sided", True) == 2 / 1024
    assert smallest_p("randomization", 10, 1000, "greater", True) == 1 / 1024
    assert smallest_p("bootstrap-t", 30, 1000, "two-sided", False) == 2 / 1001
    assert smallest_p("bootstrap-t", 30, 1000, "less", False) == 1 / 1001
    assert smallest_p("bootstrap", 30, 1000, "two-sided", False) == 1 / 1001
    assert smallest_p(BOTH, 30, 1000, "two-sided", False) == 2 / 1001
    assert smallest_p(BOTH, 8, 1000, "two-sided", False) == 2 / 256
    # each floor is attained: no resampled statistic as extreme as the observed one
    d = np.linspace(0.5, 1.5, 30)
    for method in ("randomization", "bootstrap-t", "bootstrap", BOTH):
        r = paired_test(*pair(d), "m", method=method, n_resamples=1000)
        assert r.p_value == smallest_p(method, 30, 1000, "two-sided", r.exact), method
