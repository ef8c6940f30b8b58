"""PPI++ against ppi_py (Angelopoulos et al.'s package) and by derivation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalkit.stats.ppi import (
    MIN_LABELS,
    PPIError,
    labels_needed,
    labels_only_interval,
    planned_width,
    power_tuning_lambda,
    ppi_mean,
    ppi_paired_difference,
)


def _judge_data(seed: int, n: int = 80, big_n: int = 600, bias: float = 0.4,
                noise: float = 0.7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.normal(3.0, 1.0, size=n + big_n)
    judge = human + bias + rng.normal(0.0, noise, size=n + big_n)
    return human[:n], judge[:n], judge[n:]


@pytest.mark.parametrize("seed", range(6))
def test_ppi_mean_matches_ppi_py(seed: int) -> None:
    ppi_py = pytest.importorskip("ppi_py")
    y, f, u = _judge_data(seed, noise=0.3 + 0.4 * seed)
    ours = ppi_mean(y, f, u, alpha=0.1)
    point = ppi_py.ppi_mean_pointestimate(y, f, u)
    low, high = ppi_py.ppi_mean_ci(y, f, u, alpha=0.1)
    assert ours.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
    assert ours.ci_low == pytest.approx(float(np.ravel(low)[0]), abs=1e-9)
    assert ours.ci_high == pytest.approx(float(np.ravel(high)[0]), abs=1e-9)
    for lam in (0.0, 0.5, 1.0):  # a fixed lambda: classic PPI at 1
        fixed = ppi_mean(y, f, u, alpha=0.05, lam=lam)
        lo, hi = ppi_py.ppi_mean_ci(y, f, u, alpha=0.05, lam=lam)
        assert (fixed.ci_low, fixed.ci_high) == pytest.approx(
            (float(np.ravel(lo)[0]), float(np.ravel(hi)[0])), abs=1e-9)


def test_lambda_by_hand() -> None:
    y = np.array([1.0, 2.0, 4.0])
    f = np.array([1.0, 3.0, 5.0])
    u = np.array([2.0, 4.0, 3.0, 1.0])
    # cov_3(y, f) = mean((y - 7/3)(f - 3)) = ((-4/3)(-2) + (-1/3)(0) + (5/3)(2)) / 3 = 2
    # var of all 7 grades (ddof 1): mean 19/7, sum of squares 65 - 7 (19/7)^2 = 94/7 -> /6
    var = (65 - 19 ** 2 / 7) / 6
    expected = 2 / ((1 + 3 / 4) * var)
    assert power_tuning_lambda(y, f, u) == pytest.approx(min(1.0, expected), abs=1e-15)


def test_paired_difference_is_the_ppi_mean_of_differences() -> None:
    ppi_py = pytest.importorskip("ppi_py")
    ya, fa, ua = _judge_data(1)
    rng = np.random.default_rng(9)
    yb = ya - 0.3 + rng.normal(0, 0.5, ya.size)
    fb = fa - 0.2 + rng.normal(0, 0.5, fa.size)
    ub = ua - 0.2 + rng.normal(0, 0.5, ua.size)
    ours = ppi_paired_difference(ya, yb, fa, fb, ua, ub)
    # by derivation: the PPI++ mean of Y_a - Y_b with predictions f_a - f_b
    low, high = ppi_py.ppi_mean_ci(ya - yb, fa - fb, ua - ub, alpha=0.05)
    point = ppi_py.ppi_mean_pointestimate(ya - yb, fa - fb, ua - ub)
    assert ours.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-9)
    assert (ours.ci_low, ours.ci_high) == pytest.approx(
        (float(np.ravel(low)[0]), float(np.ravel(high)[0])), abs=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_p_value_matches_ppi_py(seed: int) -> None:
    ppi_py = pytest.importorskip("ppi_py")
    y, f, u = _judge_data(seed, n=40, big_n=300, bias=0.2, noise=0.5 + seed)
    shifted = y - 3.0 + 0.05 * seed  # a mean near 0, so p is neither 0 nor 1
    ours = ppi_mean(shifted, f - 3.0, u - 3.0)
    theirs = ppi_py.ppi_mean_pval(shifted, f - 3.0, u - 3.0, null=0.0)
    assert 0.0 < ours.lam < 1.0  # the agreement holds only there (next test)
    assert ours.p_value() == pytest.approx(float(np.ravel(theirs)[0]), abs=1e-9)
    assert 0.0 < ours.p_value() < 1.0


@pytest.mark.parametrize("clipped", [0.0, 1.0])
def test_p_value_with_a_clipped_lambda_is_the_intervals_own(clipped: float) -> None:
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(4)
    y = rng.normal(0.1, 1.0, 12)
    # a judge at half the labels' scale tunes lambda near 2 (clipped to 1); one that
    # grades against them, below 0 (clipped to 0)
    slope = 0.5 if clipped == 1.0 else -1.0
    f = slope * y + rng.normal(0, 0.05, 12)
    u = slope * rng.normal(0.1, 1.0, 400)
    ours = ppi_mean(y, f, u)
    assert ours.lam == clipped
    # ppi_py's interval clips lambda too: the same interval ...
    low, high = ppi_py.ppi_mean_ci(y, f, u, alpha=0.05)
    assert (ours.ci_low, ours.ci_high) == pytest.approx(
        (float(np.ravel(low)[0]), float(np.ravel(high)[0])), abs=1e-9)
    # ... but its p-value tunes lambda without clipping: a different test
    unclipped = float(np.ravel(ppi_py.ppi_mean_pval(y, f, u))[0])
    assert abs(ours.p_value() - unclipped) > 1e-3
    # with the lambda the estimate used, ppi_py's p is ours, and agrees with the interval
    same = float(np.ravel(ppi_py.ppi_mean_pval(y, f, u, lam=ours.lam))[0])
    assert ours.p_value() == pytest.approx(same, abs=1e-9)
    assert (ours.p_value() < 0.05) == (ours.ci_low > 0 or ours.ci_high < 0)


def test_fewer_than_ten_labels_carry_a_note() -> None:
    y, f, u = _judge_data(2, n=3, big_n=3)
    few = ppi_mean(y, f, u)
    assert few.note is not None and "only 3 human labels" in few.note
    assert ppi_mean(*_judge_data(2, n=MIN_LABELS, big_n=3)).note is None
    # the n = 3 interval's coverage, by hand: with lambda 0 it is the labels' z interval
    # with variance divisor n, P(|T_2| <= 1.96 sqrt(2/3)) = 0.749 for normal labels
    from scipy import stats
    cover = 1 - 2 * stats.t.sf(1.959963984540054 * math.sqrt(2 / 3), 2)
    assert cover == pytest.approx(0.7493, abs=1e-4)


def test_labels_only_is_lambda_zero_and_classical() -> None:
    ppi_py = pytest.importorskip("ppi_py")
    y, f, u = _judge_data(3)
    _mean, lo, hi = labels_only_interval(y, 0.1)
    c_lo, c_hi = ppi_py.classical_mean_ci(y, alpha=0.1)
    assert (lo, hi) == pytest.approx((float(np.ravel(c_lo)[0]), float(np.ravel(c_hi)[0])),
                                     rel=1e-3)  # ppi_py's classical uses the t quantile
    zero = ppi_mean(y, f, u, lam=0.0, alpha=0.1)
    assert (zero.ci_low, zero.ci_high) == pytest.approx((lo, hi), abs=1e-12)


def test_ppi_is_narrower_than_labels_when_the_judge_correlates() -> None:
    y, f, u = _judge_data(5, noise=0.3)
    ppi = ppi_mean(y, f, u)
    _, lo, hi = labels_only_interval(y)
    assert ppi.width < hi - lo


def test_planning() -> None:
    y, f, u = _judge_data(7, n=60, big_n=940, noise=0.5)
    every = np.concatenate([f, u])
    plan = labels_needed(y, f, every, 0.3)
    assert plan.n_labels is not None
    var_y, cov = float(y.var()), float(np.mean((y - y.mean()) * (f - f.mean())))
    var_f = float(every.var(ddof=1))
    assert planned_width(var_y, var_f, cov, plan.n_labels, 1000 - plan.n_labels) <= 0.3
    assert planned_width(var_y, var_f, cov, plan.n_labels - 1, 1001 - plan.n_labels) > 0.3
    # labels alone: n >= (2 z sd / w)^2
    z = 1.959963984540054
    assert plan.labels_only_n == math.ceil((2 * z) ** 2 * var_y / 0.09)
    assert plan.n_labels < plan.labels_only_n
    assert labels_needed(y, f, every, 1e-6).n_labels is None


def test_errors() -> None:
    with pytest.raises(PPIError, match="at least 2 human labels"):
        ppi_mean([1.0], [1.0], [1.0, 2.0])
    with pytest.raises(PPIError, match="one grade per label"):
        ppi_mean([1.0, 2.0], [1.0], [1.0, 2.0])
    with pytest.raises(PPIError, match="unlabelled"):
        ppi_mean([1.0, 2.0], [1.0, 2.0], [])
    with pytest.raises(PPIError, match="finite"):
        ppi_mean([1.0, math.nan], [1.0, 2.0], [1.0])
    for lam in (math.nan, math.inf, "0.5", True):
        with pytest.raises(PPIError, match="lam must be a finite number"):
            ppi_mean([1.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 0.0], lam=lam)  # type: ignore[arg-type]
