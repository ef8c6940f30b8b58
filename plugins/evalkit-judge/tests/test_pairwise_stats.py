"""The pairwise win rate's interval is the interval of the test whose p decides
``significant`` (:mod:`evalkit_judge.pairwise_stats`), so the two always agree: checked
against scipy's one-sample t-test and its interval, the two-sided binomial (sign) test,
and an inversion of the exact sign-flip test enumerated here over every sign pattern.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from evalkit_judge.pairwise_stats import PairStats, pair_stats, paired_tests
from scipy.stats import binomtest, ttest_1samp

#: one of the suite's longest modules: handed to a worker first (tests/conftest.py)
pytestmark = pytest.mark.schedule_first

# a's score on one sample: its verdicts in the two orders (a shown first, b shown first)
VERDICTS = {1.0: ("A", "B"), 0.0: ("B", "A"), 0.5: ("tie", "tie")}


def pair_of(samples: list[list[float]], method: str, alpha: float = 0.05) -> PairStats:
    """The statistics of a pair whose case i has samples ``samples[i]`` (0, 1/2 or 1)."""
    verdicts: dict[tuple[str, int | None], tuple[str, str]] = {
        (f"c{i:02d}", k): VERDICTS[score]
        for i, case in enumerate(samples) for k, score in enumerate(case)}
    pair = pair_stats("a", "b", verdicts)
    paired_tests([pair], alpha=alpha, method=method, seed=5)
    return pair


# the case scores the offline LLM example printed: 3 samples a case, many ties
EXAMPLE = ([[0, 0.5, 0]] * 6 + [[0, 0.5, 0.5]] * 5 + [[0.5, 0.5, 0.5]] * 8
           + [[1, 0.5, 0.5]] * 4 + [[1, 0.5, 1]])


def test_the_t_tests_p_and_interval_are_scipys() -> None:
    pair = pair_of(EXAMPLE, "t-test")
    scores = np.array([sum(c) / len(c) for c in EXAMPLE])
    ref = ttest_1samp(scores, 0.5)
    low, high = ref.confidence_interval(0.95)
    assert pair.win_rate == pytest.approx(scores.mean(), abs=1e-15)
    assert pair.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert (pair.ci_low, pair.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert pair.ci_method == "t" and pair.significant == (not low <= 0.5 <= high)


def signflip_p(x: np.ndarray) -> float:
    """The exact two-sided sign-flip p of H0 "mean 0": the share of the 2^n sign
    patterns whose |sum| is at least the observed one."""
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=x.size)))
    sums = np.abs(signs @ x)
    return float(np.mean(sums >= abs(x.sum()) - 1e-12))


@pytest.mark.parametrize("k", range(13))
def test_exact_sign_flip_on_won_or_lost_cases_is_the_sign_test_and_its_inversion(
        k: int) -> None:
    """12 cases, a wins k of them outright: p is the two-sided binomial test's, and the
    interval is the set of win rates w0 the sign-flip test of (s - w0) accepts."""
    n, alpha = 12, 0.05
    samples = [[1.0]] * k + [[0.0]] * (n - k)
    pair = pair_of(samples, "randomization", alpha)
    assert pair.p_value == pytest.approx(binomtest(k, n, 0.5).pvalue, abs=1e-12)
    s = np.array([c[0] for c in samples])
    # the interval's ends are accepted, and a hair outside them is rejected
    delta = 1e-7
    for end in (pair.ci_low, pair.ci_high):
        assert signflip_p(s - end) >= alpha
    if pair.ci_low - delta > 0:
        assert signflip_p(s - (pair.ci_low - delta)) < alpha
    if pair.ci_high + delta < 1:
        assert signflip_p(s - (pair.ci_high + delta)) < alpha
    # every win rate on a fine grid that the test accepts lies inside
    accepted = [w for w in np.linspace(0, 1, 401) if signflip_p(s - w) >= alpha]
    assert min(accepted) >= pair.ci_low - 1e-12 and max(accepted) <= pair.ci_high + 1e-12
    assert pair.p_value is not None
    assert pair.significant == (pair.p_value < alpha) == (not pair.ci_low <= 0.5
                                                          <= pair.ci_high)


@pytest.mark.parametrize("method", ["auto", "randomization", "t-test", "bootstrap-t"])
def test_significant_agrees_with_the_interval_printed_beside_it(method: str) -> None:
    """The example's scores (where a Wilson interval containing 1/2 was once printed
    beside 'significant'), and shifted variants on both sides of 1/2."""
    rng = np.random.default_rng(11)
    for shift in (0.0, -0.2, 0.3):
        samples = [[min(1.0, max(0.0, round(2 * (v + shift + rng.normal(0, 0.05))) / 2))
                    for v in case] for case in EXAMPLE]
        pair = pair_of(samples, method)
        assert pair.p_value is not None and not math.isnan(pair.ci_low)
        inside = pair.ci_low <= 0.5 <= pair.ci_high
        assert (pair.p_value < 0.05) == (not inside), (shift, pair.p_value, pair.ci_low,
                                                       pair.ci_high)
        assert pair.significant == (not inside)  # one pair: Holm changes nothing


def test_no_test_no_interval() -> None:
    pair = pair_of([[1.0]], "auto")
    assert pair.p_value is None and math.isnan(pair.ci_low) and math.isnan(pair.ci_high)
