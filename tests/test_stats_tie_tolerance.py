"""The tie tolerance of resampled means (evalkit.stats.bootstrap.tie_tolerance): scaled
from the rounding error of the sums actually computed, so one query with a huge
difference does not turn every sign pattern into a tie, while patterns whose means are
equal in exact arithmetic still tie. References: scipy.stats.permutation_test (exact
enumeration), exact rational sums (fractions.Fraction), and the hand count 2 / 2**n of
the sign-flip test when every difference is positive."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from evalkit.stats import paired_test
from evalkit.stats._kernels import exact_signflip_sums
from evalkit.stats.bootstrap import tie_tolerance

B = 9999


def runs(d: list[float]) -> tuple[dict[str, float], dict[str, float]]:
    return ({f"q{i:02d}": float(x) for i, x in enumerate(d)},
            {f"q{i:02d}": 0.0 for i in range(len(d))})


@pytest.mark.parametrize("big", [1e8, 1e9, 1e10, 1e12, 1e13, 1e15, 1e18])
@pytest.mark.parametrize("alt", ["two-sided", "greater"])
def test_one_huge_difference_leaves_the_sign_flip_p_at_its_floor(big: float, alt: str
                                                                  ) -> None:
    # 29 differences of +0.1 and one of `big`, all positive: only the identity (and,
    # two-sided, its mirror) is as extreme, so the exact p is 2/2**30 (1/2**30 one-sided),
    # far below the Monte Carlo floor 1/(B+1)
    a = {f"q{i:02d}": 0.5 for i in range(30)}
    b = {f"q{i:02d}": 0.4 for i in range(30)}
    a["q00"] = big
    r = paired_test(a, b, "m", method="randomization", n_resamples=B, alternative=alt)
    assert r.p_value == 1 / (B + 1)


def decimal_count(d: list[float], alt: str) -> float:
    """The exact sign-flip p of ``d`` read as the decimals they print as (so 0.1 + 0.2
    ties 0.3), by enumerating every pattern in rational arithmetic."""
    exact = [Fraction(repr(float(v))) for v in d]
    obs = sum(exact, Fraction(0))
    count = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        s = sum((si * v for si, v in zip(signs, exact, strict=True)), Fraction(0))
        count += bool(abs(s) >= abs(obs) if alt == "two-sided"
                      else s >= obs if alt == "greater" else s <= obs)
    return float(count) / float(2 ** len(d))


@pytest.mark.parametrize("big", [1e9, 1e10, 1e12, 1e15])
@pytest.mark.parametrize("alt", ["two-sided", "greater", "less"])
def test_exact_enumeration_with_a_huge_difference_is_exact(big: float, alt: str) -> None:
    rng = np.random.default_rng(7)
    d = np.round(rng.normal(0.05, 0.2, 12), 2)
    d[3] = big
    r = paired_test(*runs(d.tolist()), "m", method="randomization", alternative=alt)
    assert r.exact
    assert r.p_value == pytest.approx(decimal_count(d.tolist(), alt), abs=1e-12)
    if big <= 1e10:
        # scipy's own tie tolerance, 1e-14 of the statistic, is fine up to here (at 1e12
        # it counts patterns 0.02/12 apart as ties: 0.159 two-sided, the exact p 0.145)
        ref = stats.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis),
                                     permutation_type="samples", n_resamples=np.inf,
                                     alternative=alt)
        assert r.p_value == pytest.approx(ref.pvalue, abs=1e-12)


@pytest.mark.parametrize("alt", ["two-sided", "greater", "less"])
def test_genuine_ties_still_count_and_equal_scipy(alt: str) -> None:
    # tenths, whose sign-flip means tie exactly in real arithmetic (0.1 + 0.2 = 0.3)
    # but not always in floating point: the tolerance must still count them
    d = [0.1, 0.2, 0.3, -0.1, 0.4, 0.3, -0.2, 0.1, 0.5, -0.3, 0.2, 0.6]
    r = paired_test(*runs(d), "m", method="randomization", alternative=alt)
    x = np.array(d)
    ref = stats.permutation_test((x,), lambda v, axis: np.mean(v, axis=axis),
                                 permutation_type="samples", n_resamples=np.inf,
                                 alternative=alt)
    assert r.p_value == pytest.approx(decimal_count(d, alt), abs=1e-12)
    assert r.p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_the_tolerance_bounds_the_rounding_of_every_sign_flip_mean() -> None:
    # every computed sign-flip mean is within half the tolerance (the derived bound) of
    # the exact rational mean of the same pattern, on data of mixed magnitudes
    rng = np.random.default_rng(3)
    for _ in range(5):
        d = rng.normal(0, 1, 12) * 10.0 ** rng.integers(-8, 9, 12)
        sums, _ = exact_signflip_sums(d)
        tol = tie_tolerance(d)
        exact = [Fraction(float(v)) for v in d]
        n = len(d)
        worst = Fraction(0)
        for p in range(1 << n):
            s = sum(((v if (p >> i) & 1 else -v) for i, v in enumerate(exact)), Fraction(0))
            worst = max(worst, abs(Fraction(float(sums[p, 0])) / n - s / n))
        assert worst <= Fraction(tol) / 2


def test_the_tolerance_is_far_below_the_former_global_one() -> None:
    d = np.array([1e10] + [0.1] * 29)
    assert tie_tolerance(d) < 1e-4  # the former 1e-10 * max|d| was 1.0
    assert tie_tolerance(d, resampled=True) < 1e-3
    # and it is the documented 2 eps sum|d| (n max|d| when resampled)
    eps = float(np.finfo(np.float64).eps)
    assert tie_tolerance(d) == pytest.approx(2 * eps * (1e10 + 2.9), rel=1e-12)
    assert tie_tolerance(d, resampled=True) == pytest.approx(2 * eps * 30 * 1e10, rel=1e-12)


@pytest.mark.parametrize("big", [1e15, 1e18])
def test_with_sums_too_coarse_the_interval_still_agrees_with_the_p(big: float) -> None:
    # past ~1e14 times the other differences the drawn sums drop them (1e15 + 0.1 is
    # 1e15); the sign-flip p and the inversion interval then read the patterns' exact
    # gaps, so the interval excludes 0 exactly when p < alpha, as everywhere else
    a = {f"q{i:02d}": 0.5 for i in range(30)}
    b = {f"q{i:02d}": 0.4 for i in range(30)}
    a["q00"] = big
    r = paired_test(a, b, "m", method="randomization", n_resamples=B)
    assert r.p_value == 1 / (B + 1) and r.significant
    assert r.ci_low > 0
    b["q05"] = 0.6  # one loss of 0.1 among 28 wins: still at the floor
    r = paired_test(a, b, "m", method="randomization", n_resamples=B)
    assert r.p_value == 1 / (B + 1) and r.ci_low > 0


def test_split_exact_parts_add_up_and_their_signed_sums_are_exact() -> None:
    from evalkit.stats.randomization import split_exact

    rng = np.random.default_rng(1)
    d = rng.normal(0, 1, 40) * 10.0 ** rng.integers(-20, 16, 40)
    hi, lo = split_exact(d)
    assert np.array_equal(hi + lo, d)
    signs = np.where(rng.random((50, 40)) < 0.5, -1.0, 1.0)
    for s in signs:
        total = 0.0
        for x in s * hi:  # sequential, as the kernels add
            total += x
        assert Fraction(total) == sum((Fraction(float(x)) for x in s * hi), Fraction(0))
