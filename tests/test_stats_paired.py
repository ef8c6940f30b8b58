"""paired_test: every method and interval against independently obtained
values (scipy, exact enumeration, naive re-implementations), the degenerate-input
table, effect sizes, and result invariants."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from evalkit.data.results import QueryResult, RunResult
from evalkit.stats import (
    CI_OF_METHOD,
    DEFAULT_METHOD,
    compare_runs,
    paired_bootstrap,
    paired_test,
)
from evalkit.stats._kernels import bootstrap_sums, signflip_sums
from evalkit.stats.effects import effect_sizes

METHODS = ["auto", "randomization", "t-test", "bootstrap-t", "bootstrap"]
ALTS = ["two-sided", "greater", "less"]


def pair(d: np.ndarray | list[float]) -> tuple[dict[str, float], dict[str, float]]:
    vals = [float(x) for x in d]
    return ({f"q{i:03d}": v for i, v in enumerate(vals)},
            {f"q{i:03d}": 0.0 for i in range(len(vals))})


def data(seed: int, n: int, loc: float = 0.02, skew: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if skew:
        return rng.exponential(0.1, size=n) - 0.1 + loc
    return rng.normal(loc, 0.1, size=n)


# ---------------------------------------------------------------------------
# t-test


@pytest.mark.parametrize("alt", ALTS)
def test_t_test_matches_scipy(alt: str) -> None:
    a_vals = data(1, 30, 0.5)
    b_vals = data(2, 30, 0.48)
    a = {f"q{i}": float(v) for i, v in enumerate(a_vals)}
    b = {f"q{i}": float(v) for i, v in enumerate(b_vals)}
    r = paired_test(a, b, "m", method="t-test", alternative=alt)
    ref = stats.ttest_rel(a_vals, b_vals, alternative=alt)
    ci = ref.confidence_interval(0.95)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert r.ci_low == pytest.approx(ci.low, rel=1e-9)
    assert r.ci_high == pytest.approx(ci.high, rel=1e-9)
    assert r.n_resamples == 0 and r.generator is None


# ---------------------------------------------------------------------------
# randomization


def exact_signflip(d: np.ndarray, alt: str) -> float:
    obs = d.mean()
    count = 0
    for signs in itertools.product((-1.0, 1.0), repeat=d.size):
        m = float(np.dot(signs, d)) / d.size
        if alt == "two-sided":
            count += abs(m) >= abs(obs) - 1e-12
        elif alt == "greater":
            count += m >= obs - 1e-12
        else:
            count += m <= obs + 1e-12
    return float(count / 2**d.size)


@pytest.mark.parametrize("alt", ALTS)
def test_randomization_exact_matches_enumeration_and_scipy(alt: str) -> None:
    d = data(3, 11, 0.05)
    r = paired_test(*pair(d), "m", method="randomization", alternative=alt)
    assert r.exact and r.n_resamples == 2**11
    assert r.p_value == pytest.approx(exact_signflip(d, alt), abs=1e-12)
    ref = stats.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis),
                                 permutation_type="samples", n_resamples=np.inf,
                                 alternative=alt)
    assert r.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_randomization_c19_and_c21_context_values() -> None:
    # C19's exact sign-flip p (context): 0.0625; C21's: 0.001953 = 2/1024
    c19 = paired_test({"q1": 0.625, "q2": 0.375, "q3": 0.875, "q4": 0.25, "q5": 0.75},
                      {"q1": 0.5, "q2": 0.25, "q3": 0.75, "q4": 0.125, "q5": 0.625}, "m",
                      method="randomization")
    assert c19.p_value == pytest.approx(0.0625, rel=1e-6)
    c21 = paired_test(*pair([0.25, 0.125, 0.375, 0.25, 0.5, 0.125, 0.25, 0.375, 0.125, 0.25]),
                      "m", method="randomization")
    assert c21.p_value == pytest.approx(0.001953, rel=1e-3)
    assert c21.observed == pytest.approx(0.2625, rel=1e-6)


def test_randomization_monte_carlo_matches_scipy() -> None:
    d = data(4, 40, 0.03, skew=True)
    r = paired_test(*pair(d), "m", method="randomization", n_resamples=20_000, seed=1)
    assert not r.exact and r.n_resamples == 20_000
    ref = stats.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis),
                                 permutation_type="samples", n_resamples=20_000,
                                 rng=np.random.default_rng(0))
    se = math.sqrt(ref.pvalue * (1 - ref.pvalue) / 20_000)
    assert r.p_value == pytest.approx(ref.pvalue, abs=6 * se + 1e-4)


def test_randomization_interval_inverts_the_exact_test() -> None:
    d = data(5, 9, 0.04)
    r = paired_test(*pair(d), "m", method="randomization", alpha=0.1)

    def p_at(theta: float) -> float:
        return exact_signflip(d - theta, "two-sided")

    lo, hi = r.ci_low, r.ci_high
    width = hi - lo
    # the endpoints are where a sign pattern ties the observed statistic: just inside
    # the test keeps H0, just outside it rejects
    assert p_at(lo + 1e-6 * width) >= 0.1 and p_at(hi - 1e-6 * width) >= 0.1
    assert p_at(lo - 1e-6 * width) < 0.1 and p_at(hi + 1e-6 * width) < 0.1
    assert r.significant == (lo > 0 or hi < 0)


# ---------------------------------------------------------------------------
# bootstrap intervals


def naive_bootstrap(d: np.ndarray, B: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Index-matrix bootstrap with numpy's PCG64: resampled means and t statistics."""
    rng = np.random.default_rng(seed)
    x = d[rng.integers(0, d.size, size=(B, d.size))]
    means = x.mean(axis=1)
    se = x.std(axis=1, ddof=1) / math.sqrt(d.size)
    t = (means - d.mean()) / se
    return means, t


def test_bootstrap_t_interval_agrees_with_naive_reference() -> None:
    d = data(6, 50, 0.02, skew=True)
    r = paired_test(*pair(d), "m", method="bootstrap-t", n_resamples=20_000, seed=3)
    _, t = naive_bootstrap(d, 40_000, 9)
    se = d.std(ddof=1) / math.sqrt(d.size)
    ref_lo = d.mean() - np.quantile(t, 0.975) * se
    ref_hi = d.mean() - np.quantile(t, 0.025) * se
    assert r.ci_low == pytest.approx(ref_lo, abs=0.1 * se)
    assert r.ci_high == pytest.approx(ref_hi, abs=0.1 * se)


def test_bca_interval_agrees_with_scipy() -> None:
    d = data(7, 60, 0.02, skew=True)
    r = paired_test(*pair(d), "m", method="bootstrap", ci="bca", n_resamples=20_000, seed=2)
    ref = stats.bootstrap((d,), np.mean, method="BCa", n_resamples=20_000,
                          rng=np.random.default_rng(1)).confidence_interval
    se = d.std(ddof=1) / math.sqrt(d.size)
    assert r.ci_low == pytest.approx(ref.low, abs=0.12 * se)
    assert r.ci_high == pytest.approx(ref.high, abs=0.12 * se)


def test_bootstrap_method_is_the_seeds_paired_bootstrap() -> None:
    a, b = pair(data(8, 45, 0.01))
    r = paired_test(a, b, "m", method="bootstrap")
    s = paired_bootstrap(a, b, "m")
    assert (r.observed, r.ci_low, r.ci_high, r.p_value) == (
        s.observed, s.ci_low, s.ci_high, s.p_value)


@pytest.mark.parametrize("method", ["auto", "randomization", "t-test", "bootstrap-t"])
@pytest.mark.parametrize("alt", ALTS)
def test_interval_and_p_make_the_same_decision(method: str, alt: str) -> None:
    for seed in range(12):
        d = data(100 + seed, 25, 0.035, skew=seed % 2 == 0)
        r = paired_test(*pair(d), "m", method=method, alternative=alt, n_resamples=2000)
        excludes = r.ci_low > 0 or r.ci_high < 0
        assert r.significant == excludes, (seed, r)


# ---------------------------------------------------------------------------
# degenerate inputs (the documented table)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("diffs", [[0.0] * 5, [0.125] * 5, [0.125] * 7, [0.3], [-0.25, -0.25],
                                   [0.2, 0.5], [0.0, 0.0, 1.0]])
@pytest.mark.parametrize("alt", ALTS)
def test_degenerate_inputs_are_defined(method: str, diffs: list[float], alt: str) -> None:
    r = paired_test(*pair(diffs), "m", method=method, alternative=alt, n_resamples=999)
    vals = [r.observed, r.ci_low, r.ci_high, r.p_value]
    assert not any(math.isnan(v) for v in vals)
    assert 0 < r.p_value <= 1
    assert r.ci_low <= r.observed <= r.ci_high


def test_degenerate_table_values() -> None:
    # every difference 0.125, n = 5: exact sign-flip p = 2/32, interval unbounded
    for m in ("randomization", "t-test", "bootstrap-t"):
        r = paired_test(*pair([0.125] * 5), "m", method=m)
        assert (r.p_value, r.ci_low, r.ci_high) == (0.0625, -math.inf, math.inf)
        assert r.degenerate == "constant" and not r.significant
        r7 = paired_test(*pair([0.125] * 7), "m", method=m)
        assert (r7.p_value, r7.ci_low, r7.ci_high) == (2 / 2**7, 0.125, 0.125)
        assert r7.significant
        z = paired_test(*pair([0.0] * 8), "m", method=m)
        assert (z.p_value, z.ci_low, z.ci_high) == (1.0, 0.0, 0.0)
        one = paired_test(*pair([0.3]), "m", method=m)
        assert one.p_value == 1.0 and not one.significant
    boot = paired_test(*pair([0.125] * 5), "m", method="bootstrap", n_resamples=1000)
    assert (boot.p_value, boot.ci_low, boot.ci_high) == (1 / 1001, 0.125, 0.125)
    g = paired_test(*pair([0.125] * 5), "m", alternative="greater")
    assert g.p_value == 1 / 32
    big = paired_test(*pair([0.125] * 40), "m", n_resamples=999)
    assert big.p_value == 1 / 1000


# ---------------------------------------------------------------------------
# effect sizes and the result


def test_effect_sizes_match_scipy_and_hand_counts() -> None:
    d = np.array([0.3, -0.1, 0.0, 0.2, 0.05, 0.4, -0.2, 0.0, 0.1, 0.15])
    e = effect_sizes(d)
    assert e.mean_diff == pytest.approx(d.mean())
    assert e.sd_diff == pytest.approx(d.std(ddof=1))
    assert e.standardized == pytest.approx(d.mean() / d.std(ddof=1))
    assert (e.wins, e.ties, e.losses) == (6, 2, 2)
    assert e.skewness == pytest.approx(stats.skew(d, bias=False))
    assert e.skewness_warning is not None and "unreliable" in e.skewness_warning
    assert effect_sizes(np.full(40, 0.1)).standardized == math.inf
    assert effect_sizes(np.zeros(40)).standardized == 0.0
    assert effect_sizes(np.arange(40.0)).skewness_warning is None


def test_result_fields_and_default_method() -> None:
    a = RunResult("cand", [QueryResult(f"q{i}", [], {"ap": 0.5 + 0.01 * i}) for i in range(30)])
    b = RunResult("base", [QueryResult(f"q{i}", [], {"ap": 0.5}) for i in range(30)])
    r = paired_test(a, b, "ap")
    assert DEFAULT_METHOD == "auto" and r.method == "randomization"
    assert (r.name_a, r.name_b, r.metric, r.n_queries, r.alpha, r.alternative) == (
        "cand", "base", "ap", 30, 0.05, "two-sided")
    assert r.seed == 42 and r.generator == "splitmix64-counter"
    assert r.effect is not None and r.effect.wins == 29 and r.effect.ties == 1
    assert r.significant and r.p_value == 1 / 10_001


def test_bad_options_raise() -> None:
    a, b = pair([0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="unknown method"):
        paired_test(a, b, "m", method="wilcoxon")
    with pytest.raises(ValueError, match="unknown ci"):
        paired_test(a, b, "m", ci="normal")
    with pytest.raises(ValueError, match="alpha"):
        paired_test(a, b, "m", alpha=1.5)
    with pytest.raises(ValueError, match="alternative"):
        paired_test(a, b, "m", alternative="both")


@pytest.mark.parametrize("method", ["t-test", "bootstrap", "bootstrap-t", "auto"])
def test_inversion_interval_goes_only_with_the_randomization_test(method: str) -> None:
    # the inversion interval is the set of means the sign-flip test does not reject: it
    # is no interval of another test (and "auto" may run the t-test), so it is refused
    # whatever the data, naming the combinations that are allowed
    a, b = pair([0.3, -0.1, 0.2, 0.5, -0.4, 0.1, 0.25])
    with pytest.raises(ValueError) as err:
        paired_test(a, b, "m", method=method, ci="inversion")
    message = str(err.value)
    assert "ci='inversion' inverts the randomization test" in message
    assert f"not method={method!r}" in message
    assert "Allowed combinations: method='randomization'" in message
    assert "'percentile', 'bca', 'bootstrap-t', 't'" in message
    with pytest.raises(ValueError, match="goes only with method='randomization'"):
        compare_runs(a, [b], "m", method=method, ci="inversion")
    # every other interval still goes with this method, and inversion with randomization
    for ci in ("percentile", "bca", "bootstrap-t", "t"):
        assert paired_test(a, b, "m", method=method, ci=ci, n_resamples=200).ci_method == ci
    r = paired_test(a, b, "m", method="randomization", ci="inversion")
    assert (r.method, r.ci_method) == ("randomization", "inversion")


def test_the_command_line_refuses_the_same_combinations() -> None:
    from evalkit.comparison.options import CI_OF_TEST

    assert CI_OF_TEST == CI_OF_METHOD


# ---------------------------------------------------------------------------
# determinism across chunking, threads and backends


def test_serial_and_parallel_builds_keep_separate_disk_cache_entries() -> None:
    # numba indexes its disk cache by a function's qualified name and line: two builds of
    # one function object would share an entry, and a large comparison run after a small
    # one would load the serial machine code for the multi-threaded loop.
    pytest.importorskip("numba")
    from evalkit.stats import _compiled

    pairs: list[tuple[Any, Any]] = [(_compiled._boot_kernel, _compiled._boot_kernel_serial),
             (_compiled._boot_kernel_1d, _compiled._boot_kernel_1d_serial),
             (_compiled._sign_kernel, _compiled._sign_kernel_serial),
             (_compiled._sign_kernel_1d, _compiled._sign_kernel_1d_serial)]
    for parallel, serial in pairs:
        assert parallel.targetoptions.get("parallel") is True
        assert not serial.targetoptions.get("parallel")
        names = {k._cache._cache_file._index_name for k in (parallel, serial)}
        assert len(names) == 2, names


@pytest.mark.parametrize("block_columns", [1, 2, 5])
def test_column_blocks_never_change_a_sum(block_columns: int,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # a wide matrix is resampled a block of columns at a time; every (resample, column)
    # sum must equal the one of the whole matrix at once, and the numpy backend's
    pytest.importorskip("numba")
    from evalkit.stats import _blocks, _compiled

    d = np.random.default_rng(8).normal(size=(200, 7))
    whole = _compiled.bootstrap_sums(d, 1500, 5, True), _compiled.signflip_sums(d, 1500, 5)
    monkeypatch.setattr(_blocks, "BLOCK_BYTES", 8 * 200 * block_columns)
    assert len(_blocks.column_blocks(200, 7)) == -(-7 // block_columns)
    (s, q), (f, g) = _compiled.bootstrap_sums(d, 1500, 5, True), _compiled.signflip_sums(
        d, 1500, 5)
    assert q is not None and whole[0][1] is not None
    assert np.array_equal(s, whole[0][0]) and np.array_equal(q, whole[0][1])
    assert np.array_equal(f, whole[1][0]) and np.array_equal(g, whole[1][1])
    ref, refq = bootstrap_sums(d, 1500, 5, want_squares=True, backend="numpy")
    assert refq is not None and np.array_equal(ref, s) and np.array_equal(refq, q)
    f_np, g_np = signflip_sums(d, 1500, 5, backend="numpy")
    assert np.array_equal(f_np, f) and np.array_equal(g_np, g)


@pytest.mark.parametrize("parallel", [False, True])
def test_backends_chunks_and_threads_agree(parallel: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    numba = pytest.importorskip("numba")
    from evalkit.stats import _compiled

    # force the multi-threaded or the serial compiled loops
    monkeypatch.setattr(_compiled, "PARALLEL_MIN_WORK", 0 if parallel else 10**18)
    d = np.random.default_rng(12).normal(size=(300, 3))
    ref, refq = bootstrap_sums(d, 2500, 17, want_squares=True, backend="numpy", chunk=100)
    got, gotq = bootstrap_sums(d, 2500, 17, want_squares=True, backend="numba")
    assert refq is not None and gotq is not None
    assert np.array_equal(ref, got) and np.array_equal(refq, gotq)
    f1, s1 = signflip_sums(d, 2500, 17, backend="numpy", chunk=33)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        f2, s2 = signflip_sums(d, 2500, 17, backend="numba")
    finally:
        numba.set_num_threads(old)
    f3, s3 = signflip_sums(d, 2500, 17, backend="numba")
    assert np.array_equal(f1, f2) and np.array_equal(f1, f3)
    assert np.array_equal(s1, s2) and np.array_equal(s1, s3)
    a, b = pair(d[:, 0])
    for m in METHODS:
        x = paired_test(a, b, "m", method=m, backend="numpy")
        y = paired_test(a, b, "m", method=m, backend="numba")
        assert x == y


def test_to_dict_is_json_ready() -> None:
    import json

    r = paired_test(*pair([0.125] * 5), "m", alternative="greater")
    out = json.loads(json.dumps(r.to_dict(), allow_nan=False))
    assert out["ci_high"] is None and out["effect"]["standardized"] is None
    assert out["method"] == "randomization" and isinstance(out["warnings"], list)


def test_auto_uses_t_test_for_a_metric_declared_binary_only() -> None:
    rng = np.random.default_rng(21)
    a_vals = (rng.uniform(size=60) < 0.6).astype(float)
    b_vals = (rng.uniform(size=60) < 0.45).astype(float)
    a = {f"q{i}": float(v) for i, v in enumerate(a_vals)}
    b = {f"q{i}": float(v) for i, v in enumerate(b_vals)}
    r = paired_test(a, b, "acc", value_type="binary")
    assert r.method == "t-test" and r.ci_method == "t"
    ref = stats.ttest_rel(a_vals, b_vals)
    assert r.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert any("binary" in w for w in r.warnings)
    cont = paired_test(*pair(data(22, 30, 0.02)), "m", value_type="continuous")
    assert cont.method == "randomization" and cont.ci_method == "inversion"
    assert not any("binary" in w for w in cont.warnings)
    # the same 0/1 values of a metric that declares nothing get the default test: the
    # choice follows what the metric is, not the values this comparison observed
    undeclared = paired_test(a, b, "acc")
    assert undeclared.method != "t-test"


@pytest.mark.parametrize("method", ["auto", "randomization", "t-test", "bootstrap-t",
                                    "bootstrap"])
def test_rounding_noise_is_no_difference(method: str) -> None:
    # 30 queries whose scores differ only by 5e-17 (an nDCG summed in another order):
    # every test must see zero differences, p = 1, not significant.
    base = {f"q{i}": (i * 7 % 30) / 31 + 0.1 for i in range(30)}
    cand = {k: v + (5e-17 if i % 2 else 0.0) for i, (k, v) in enumerate(base.items())}
    r = paired_test(cand, base, "ndcg@10", method=method)
    assert r.p_value == 1.0
    assert r.significant is False
    assert r.effect is not None and r.effect.ties == 30


def test_equal_differences_up_to_rounding_are_degenerate() -> None:
    # 0.7 - 0.5 and 0.4 - 0.2 differ in float64 (0.19999999999999996 vs
    # 0.20000000000000004); docs/statistics.md: n = 2 constant differences give the
    # t-test p = 0.5 and an unbounded interval.
    r = paired_test({"a": 0.7, "b": 0.4}, {"a": 0.5, "b": 0.2}, "x", method="t-test")
    assert r.degenerate == "constant"
    assert r.p_value == 0.5
    assert r.significant is False
    assert abs(r.observed - 0.2) < 1e-15


def test_inversion_interval_ends_are_where_the_exact_test_starts_rejecting() -> None:
    # n = 9 differences: the sign-flip test enumerates all 512 patterns. The interval must
    # be exactly the means the test accepts: a brute-force p (itertools, two-sided,
    # |mean of s*(d - theta)| >= |mean(d) - theta|) is >= alpha at each end and < alpha
    # just outside.
    d = [0.31, -0.12, 0.45, 0.08, 0.27, -0.05, 0.19, 0.36, 0.02]
    a = {f"q{i}": x + 1.0 for i, x in enumerate(d)}
    b = {f"q{i}": 1.0 for i in range(len(d))}
    r = paired_test(a, b, "m", method="randomization", ci="inversion")
    assert r.exact is True

    def brute_p(theta: float) -> float:
        obs = abs(sum(d) / len(d) - theta)
        hits = 0
        for signs in itertools.product((1.0, -1.0), repeat=len(d)):
            stat = abs(sum(s * (x - theta) for s, x in zip(signs, d, strict=True)) / len(d))
            hits += int(stat >= obs - 1e-12)
        return hits / float(1 << len(d))

    eps = 1e-7
    assert brute_p(r.ci_low) >= 0.05 > brute_p(r.ci_low - eps)
    assert brute_p(r.ci_high) >= 0.05 > brute_p(r.ci_high + eps)
