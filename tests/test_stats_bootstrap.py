"""paired_bootstrap: handed cases C18, C19, C21, known answers, alignment,
errors, and agreement with independently computed values (scipy, exact enumeration,
the published SplitMix64 test vector)."""

from __future__ import annotations

import itertools
import random
import tracemalloc

import numpy as np
import pytest

from evalkit.data.results import QueryResult, RunResult
from evalkit.stats import BootstrapResult, paired_bootstrap
from evalkit.stats._kernels import bootstrap_sums
from evalkit.stats._rng import bootstrap_indices, splitmix64_draw


def make_run(name: str, scores: dict[str, float], metric: str = "ndcg@10") -> RunResult:
    return RunResult(name, [QueryResult(q, [], {metric: v}) for q, v in scores.items()])


# ---------------------------------------------------------------------------
# handed cases


def test_c18_identical_systems() -> None:
    a = {"q1": 0.5, "q2": 0.7, "q3": 0.2, "q4": 0.9, "q5": 0.4}
    r = paired_bootstrap(make_run("A", a), make_run("B", dict(a)), "ndcg@10",
                         n_resamples=1000, seed=0)
    assert r.observed == 0.0
    assert (r.ci_low, r.ci_high) == (0.0, 0.0)
    assert r.p_value == 1.0
    assert r.significant is False
    assert not any(np.isnan([r.observed, r.ci_low, r.ci_high, r.p_value]))


def test_c19_constant_nonzero_difference() -> None:
    a = {"q1": 0.625, "q2": 0.375, "q3": 0.875, "q4": 0.25, "q5": 0.75}
    b = {"q1": 0.5, "q2": 0.25, "q3": 0.75, "q4": 0.125, "q5": 0.625}
    r = paired_bootstrap(a, b, "m", n_resamples=1000, seed=0)
    assert r.observed == pytest.approx(0.125, rel=1e-6)
    assert (r.ci_low, r.ci_high) == pytest.approx((0.125, 0.125), rel=1e-6)
    # The p rule (centred null, +1 floor): no resample is as extreme, so
    # p = 1/(B+1) = 0.000999 (the case's scipy convention doubles it to 0.001998).
    assert r.p_value == pytest.approx(0.000999, rel=1e-3)
    assert r.p_value == 1 / 1001
    assert r.p_value > 0 and r.p_value >= 1 / (1000 + 1)
    assert r.p_value <= 0.001998
    # constant differences follow the sign-flip rule of paired_test's
    # degenerate table: at n = 5 its smallest two-sided p is 2**(1-5) = 0.0625 >= 0.05,
    # so not significant, whatever the mechanical [c, c] interval says
    assert r.significant is False
    assert r.degenerate == "constant"
    assert r.note is not None and "0.0625" in r.note and "not significant" in r.note


def test_c21_p_value_never_zero() -> None:
    diffs = [0.25, 0.125, 0.375, 0.25, 0.5, 0.125, 0.25, 0.375, 0.125, 0.25]
    a = {f"q{i}": d for i, d in enumerate(diffs)}
    b = {f"q{i}": 0.0 for i in range(len(diffs))}
    r = paired_bootstrap(a, b, "m", n_resamples=1000, seed=0)
    assert r.observed == pytest.approx(0.2625, rel=1e-6)
    assert r.p_value > 0 and r.p_value >= 1 / 1001
    # every centred resample mean lies within [-0.1375, 0.2375], below 0.2625
    assert r.p_value == 1 / 1001
    assert r.p_display() == "p < 0.001"
    assert 0.125 <= r.ci_low < r.observed < r.ci_high <= 0.5


# ---------------------------------------------------------------------------
# known answers


def test_better_on_every_query_is_significant() -> None:
    rng = np.random.default_rng(3)
    base = rng.uniform(0.1, 0.6, size=40)
    gain = rng.uniform(0.05, 0.3, size=40)
    ids = [f"q{i}" for i in range(40)]
    a = make_run("new", dict(zip(ids, base + gain, strict=True)))
    b = make_run("old", dict(zip(ids, base, strict=True)))
    r = paired_bootstrap(a, b, "ndcg@10")
    assert r.significant and r.ci_low > 0
    assert r.p_value == 1 / 10_001
    assert r.observed == pytest.approx(float(np.mean(gain)), rel=1e-12)
    assert (r.name_a, r.name_b, r.metric, r.n_queries, r.n_resamples) == (
        "new", "old", "ndcg@10", 40, 10_000)
    assert r.seed == 42 and r.generator == "splitmix64-counter"


def test_system_against_itself() -> None:
    rng = np.random.default_rng(4)
    run = make_run("x", {f"q{i}": float(v) for i, v in enumerate(rng.uniform(size=30))})
    r = paired_bootstrap(run, run, "ndcg@10")
    assert r.p_value == 1.0 and (r.ci_low, r.ci_high) == (0.0, 0.0) and not r.significant


def test_single_query_is_defined() -> None:
    r = paired_bootstrap({"q": 0.5}, {"q": 0.25}, "m", n_resamples=99)
    assert (r.observed, r.ci_low, r.ci_high, r.p_value) == (0.25, 0.25, 0.25, 0.01)


# ---------------------------------------------------------------------------
# alignment and errors


def test_alignment_by_id_not_position() -> None:
    rng = np.random.default_rng(5)
    ids = [f"q{i}" for i in range(50)]
    va, vb = rng.uniform(size=50), rng.uniform(size=50)
    a = make_run("a", dict(zip(ids, va, strict=True)))
    b = make_run("b", dict(zip(ids, vb, strict=True)))
    ref = paired_bootstrap(a, b, "ndcg@10", n_resamples=2000, seed=7)
    rows = list(b.per_query)
    random.Random(1).shuffle(rows)
    shuffled = RunResult("b", rows)
    assert paired_bootstrap(a, shuffled, "ndcg@10", n_resamples=2000, seed=7) == ref
    # mapping input in another order gives the same numbers
    rev = dict(reversed(list(zip(ids, vb, strict=True))))
    got = paired_bootstrap(dict(zip(ids, va, strict=True)), rev, "ndcg@10",
                           n_resamples=2000, seed=7)
    assert (got.observed, got.ci_low, got.ci_high, got.p_value) == (
        ref.observed, ref.ci_low, ref.ci_high, ref.p_value)


def test_empty_run_raises() -> None:
    with pytest.raises(ValueError, match="empty"):
        paired_bootstrap(RunResult("e", []), make_run("b", {"q1": 1.0}), "ndcg@10")
    with pytest.raises(ValueError, match="empty"):
        paired_bootstrap({}, {}, "m")


def test_different_ids_raise_and_name_them() -> None:
    a = make_run("a", {"q1": 1.0, "q2": 0.5, "q3": 0.1})
    b = make_run("b", {"q1": 1.0, "q2": 0.5, "q9": 0.1})
    with pytest.raises(ValueError, match=r"different query ids.*'q3'.*'q9'"):
        paired_bootstrap(a, b, "ndcg@10")


def test_missing_metric_raises() -> None:
    a = make_run("a", {"q1": 1.0}, metric="ap")
    b = make_run("b", {"q1": 1.0}, metric="ndcg@10")
    with pytest.raises(ValueError, match=r"run 'a' lacks metric 'ndcg@10'"):
        paired_bootstrap(a, b, "ndcg@10")


@pytest.mark.parametrize("bad", [0, -5, 2.5])
def test_bad_n_resamples(bad: float) -> None:
    with pytest.raises(ValueError, match="n_resamples"):
        paired_bootstrap({"q": 1.0}, {"q": 0.0}, "m", n_resamples=bad)  # type: ignore[arg-type]


def test_duplicate_row_ids_raise() -> None:
    dup = RunResult("dup", [QueryResult("q1", [], {"m": 1.0}), QueryResult("q1", [], {"m": 0.0})])
    with pytest.raises(ValueError, match="duplicate"):
        paired_bootstrap(dup, {"q1": 0.5}, "m")


def test_nan_score_raises() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        paired_bootstrap({"q": float("nan")}, {"q": 0.0}, "m")


# ---------------------------------------------------------------------------
# independent checks of the numbers


def test_generator_matches_published_splitmix64_vector() -> None:
    # Vigna's reference SplitMix64, seed 1234567: the first five outputs
    expected = [6457827717110365317, 3203168211198807973, 9817491932198370423,
                4593380528125082431, 16408922859458223821]
    assert [splitmix64_draw(1234567, k) for k in range(5)] == expected
    idx = bootstrap_indices(1234567, 7, 0, 3)
    want = [[(splitmix64_draw(1234567, b * 7 + i) * 7) >> 64 for i in range(7)] for b in range(3)]
    assert idx.tolist() == want


def test_ci_agrees_with_scipy_percentile_bootstrap() -> None:
    from scipy import stats

    rng = np.random.default_rng(11)
    n = 60
    d = rng.gamma(2.0, 0.05, size=n) - 0.05
    a = {f"q{i}": float(v) for i, v in enumerate(d)}
    b = {f"q{i}": 0.0 for i in range(n)}
    r = paired_bootstrap(a, b, "m", n_resamples=10_000, seed=1)
    ref = stats.bootstrap((d,), np.mean, method="percentile", n_resamples=10_000,
                          confidence_level=0.95, rng=np.random.default_rng(2))
    se = float(np.std(d, ddof=1) / np.sqrt(n))
    # Monte Carlo SE of a 2.5% quantile from 10,000 resamples is ~0.03 se for each
    # estimate; allow 5 joint SEs
    tol = 5 * 0.04 * se
    assert r.ci_low == pytest.approx(ref.confidence_interval.low, abs=tol)
    assert r.ci_high == pytest.approx(ref.confidence_interval.high, abs=tol)


def test_p_value_matches_exact_bootstrap_enumeration() -> None:
    d = np.array([0.3, -0.1, 0.2, 0.05, 0.15])
    n = d.size
    obs = d.mean()
    # all n**n equally likely ordered resamples
    extreme = sum(
        abs(np.mean(d[list(t)]) - obs) >= abs(obs) - 1e-12
        for t in itertools.product(range(n), repeat=n)
    )
    exact = extreme / n**n
    B = 20_000
    r = paired_bootstrap({f"q{i}": v for i, v in enumerate(d)},
                         {f"q{i}": 0.0 for i in range(n)}, "m", n_resamples=B, seed=3)
    assert r.p_value == pytest.approx(exact, abs=5 * np.sqrt(exact * (1 - exact) / B))


def test_seeded_results_reproducible_and_chunk_independent() -> None:
    rng = np.random.default_rng(8)
    d = rng.normal(size=257)
    s1, q1 = bootstrap_sums(d, 3001, 99, want_squares=True, backend="numpy", chunk=3001)
    s2, q2 = bootstrap_sums(d, 3001, 99, want_squares=True, backend="numpy", chunk=17)
    assert np.array_equal(s1, s2) and q1 is not None and q2 is not None
    assert np.array_equal(q1, q2)
    a = {f"q{i}": float(v) for i, v in enumerate(d)}
    z = {f"q{i}": 0.0 for i in range(d.size)}
    assert paired_bootstrap(a, z, "m", seed=5) == paired_bootstrap(a, z, "m", seed=5)
    assert paired_bootstrap(a, z, "m", seed=5) != paired_bootstrap(a, z, "m", seed=6)


def test_memory_is_bounded() -> None:
    n, B = 5000, 2000  # a (B x n) int64 index matrix would take 80 MB
    d = np.random.default_rng(9).normal(size=n)
    tracemalloc.start()
    try:
        bootstrap_sums(d, B, 1, want_squares=True, backend="numpy")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000


def test_result_type() -> None:
    r = paired_bootstrap({"q1": 1.0, "q2": 0.0}, {"q1": 0.0, "q2": 0.0}, "m", n_resamples=10)
    assert isinstance(r, BootstrapResult)
    assert set(r.to_dict()) >= {"observed", "ci_low", "ci_high", "p_value", "significant",
                                "metric", "name_a", "name_b", "n_queries", "n_resamples",
                                "seed", "generator"}


def test_seed_none_draws_and_records_a_seed() -> None:
    a = {f"q{i}": float(i % 3) for i in range(20)}
    z = dict.fromkeys(a, 0.5)
    r = paired_bootstrap(a, z, "m", n_resamples=500, seed=None)
    assert isinstance(r.seed, int)
    again = paired_bootstrap(a, z, "m", n_resamples=500, seed=r.seed)
    assert (again.ci_low, again.ci_high, again.p_value) == (r.ci_low, r.ci_high, r.p_value)
    with pytest.raises(ValueError, match="seed"):
        paired_bootstrap(a, z, "m", seed=-1)


def test_interval_bound_zero_up_to_rounding_is_not_significant() -> None:
    # One query of ten moves by +1 (recall@1 of the custom_client example): the
    # resampled means that draw that query zero times are exactly 0, so the 2.5%
    # quantile is 0 and the interval does not exclude 0; p is far above 0.05.
    a = {"001": .5, "002": .5, "003": .5, "004": 1.0, "005": .5, "006": .5, "007": 1.0,
         "008": 1.0, "009": 0.0, "010": .5}
    b = dict(a, **{"008": 0.0})
    r = paired_bootstrap(a, b, "recall@1")
    assert r.observed == pytest.approx(0.1)
    assert r.ci_low == 0.0
    assert r.p_value > 0.5
    assert r.significant is False


# ------------------------------------------------- too few queries for any exact test
def _sign_flip_p(d: list[float]) -> float:
    """The exact two-sided sign-flip p, by enumeration of the 2**n sign patterns."""
    total = abs(sum(d))
    hits = sum(abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= total - 1e-12
               for signs in itertools.product((1, -1), repeat=len(d)))
    return float(hits / 2 ** len(d))


SMALL = [[0.3, 0.5], [0.01, 0.02], [0.1, 0.2, 0.15], [0.1, 0.12, 0.3, 0.2],
         [0.05, -0.01, 0.2, 0.1, 0.07]]


@pytest.mark.parametrize("d", SMALL, ids=lambda d: f"n={len(d)}")
def test_too_few_queries_for_any_exact_test_are_never_significant(d: list[float]) -> None:
    from evalkit.stats import paired_test

    a = {f"q{i}": x for i, x in enumerate(d)}
    b = {f"q{i}": 0.0 for i in range(len(d))}
    # no exact paired test can reject: the sign-flip p is at least 2**(1-n) >= 0.0625
    assert _sign_flip_p(d) >= 2.0 ** (1 - len(d)) >= 0.05
    r = paired_bootstrap(a, b, "m")
    # the interval stays what the resamples give; it no longer decides (was p 1/(B+1),
    # significant, for every one of these)
    assert r.ci_low > 0 and r.p_value < 0.05
    assert not r.significant and r.degenerate == "small-n"
    assert r.note is not None and f"with {len(d)} queries" in r.note
    assert r.p_display() == "n too small"
    t = paired_test(a, b, "m", method="bootstrap")
    assert not t.significant and t.degenerate == "small-n" and t.note == r.note
    for alternative in ("greater", "less"):  # one-sided: n <= 4 (2**-n >= 0.05)
        one = paired_test(a, b, "m", method="bootstrap", alternative=alternative)
        assert one.significant is False or len(d) == 5


def test_from_six_queries_the_bootstrap_interval_decides_again() -> None:
    d = [0.3, 0.5, 0.2, 0.4, 0.25, 0.35]
    r = paired_bootstrap({f"q{i}": x for i, x in enumerate(d)},
                         {f"q{i}": 0.0 for i in range(6)}, "m")
    assert r.significant and r.degenerate is None and r.note is None
    assert _sign_flip_p(d) == 2.0**-5 < 0.05
