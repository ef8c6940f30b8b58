"""The PrPl-EB confidence sequence (evalkit.stats.sequential) against the published
formula written out here with plain loops (Waudby-Smith and Ramdas, JRSS-B 2024,
Theorem 2, and its without-replacement form, Section 6), and against values the
``confseq`` package computed (tests/data/sequential: its wheel does not build here)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalkit.stats.sequential import (
    decide,
    eb_confidence_sequence,
    paired_confidence_sequence,
)

DATA = Path(__file__).with_name("data") / "sequential"


def published_cs(x: list[float], alpha: float, c: float, population: int | None,
                 centre: str = "regularized") -> tuple[list[float], list[float]]:
    """Theorem 2's interval at every t, one step at a time; with ``population`` the
    without-replacement weights; then clipped to [0, 1] and intersected."""
    lows: list[float] = []
    highs: list[float] = []
    s = 0.0  # sum of X_1..X_{t-1}
    sq = 0.0  # sum of (X_i - mu_hat_i)^2 over i <= t-1
    num = den = var_sum = var_up = 0.0
    low_run, high_run = 0.0, 1.0
    for t, xt in enumerate(x, start=1):
        mu_prev = (0.5 + s) / t  # mu_hat_{t-1}, with its pseudo-observation
        sigma2_prev = (0.25 + sq) / t  # sigma2_hat_{t-1}
        lam = min(c, math.sqrt(2 * math.log(2 / alpha) / (sigma2_prev * t * math.log(1 + t))))
        if centre == "regularized":
            v = v_up = 4 * (xt - mu_prev) ** 2
        else:  # each side's running mean, 0 at t = 1 (the upper side's is of 1 - X)
            v = 4 * (xt - (s / (t - 1) if t > 1 else 0.0)) ** 2
            v_up = 4 * ((1 - xt) - ((t - 1 - s) / (t - 1) if t > 1 else 0.0)) ** 2
        psi = (-math.log(1 - lam) - lam) / 4
        if population is None:
            num += lam * xt
            den += lam
        else:
            num += lam * (xt + s / (population - t + 1))
            den += lam * (1 + (t - 1) / (population - t + 1))
        var_sum += v * psi
        var_up += v_up * psi
        centre_t = num / den
        low_run = max(low_run, max(0.0, centre_t - (math.log(2 / alpha) + var_sum) / den))
        high_run = min(high_run, min(1.0, centre_t + (math.log(2 / alpha) + var_up) / den))
        lows.append(low_run)
        highs.append(max(high_run, low_run))
        s += xt
        mu_t = (0.5 + s) / (t + 1)
        sq += (xt - mu_t) ** 2
    return lows, highs


@pytest.mark.parametrize("population", [None, 60, 200])
@pytest.mark.parametrize("alpha,c", [(0.05, 0.5), (0.1, 0.75)])
def test_matches_the_published_formula(population: int | None, alpha: float,
                                       c: float) -> None:
    rng = random.Random(7)
    x = [rng.betavariate(2, 5) for _ in range(60)]
    lower, upper = eb_confidence_sequence(x, alpha=alpha, population=population,
                                          truncation=c)
    lows, highs = published_cs(x, alpha, c, population)
    np.testing.assert_allclose(lower, lows, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(upper, highs, rtol=1e-12, atol=1e-14)


def test_running_centre_matches_its_formula() -> None:
    rng = random.Random(3)
    x = [float(rng.random() < 0.3) for _ in range(50)]
    lower, upper = eb_confidence_sequence(x, population=80, variance_centre="running")
    lows, highs = published_cs(x, 0.05, 0.5, 80, centre="running")
    np.testing.assert_allclose(lower, lows, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(upper, highs, rtol=1e-12, atol=1e-14)


def test_without_replacement_ends_on_the_population_mean() -> None:
    # after all N draws the remaining-mean martingale is exact: the interval holds the
    # population's mean (hand-known here) and is narrow
    rng = random.Random(11)
    population = [rng.random() for _ in range(120)]
    rng.shuffle(population)
    lower, upper = eb_confidence_sequence(population, population=len(population))
    mean = sum(population) / len(population)
    assert lower[-1] <= mean <= upper[-1]
    with_replacement = eb_confidence_sequence(population)
    assert upper[-1] - lower[-1] < with_replacement[1][-1] - with_replacement[0][-1]


def test_without_replacement_does_not_reach_a_point_at_t_equal_n() -> None:
    # the docstring's and docs/statistics.md's example: after all N = 10 cases the
    # interval is about [-0.53, 0.55] (an outside statistician's run gave the same), not
    # the population mean 0 alone
    cs = paired_confidence_sequence([1, -1, 0, 0, 1, -1, 0, 0, 0, 0.0], 1.0, population=10)
    lo, hi = cs.last
    assert lo == pytest.approx(-0.53, abs=0.005) and hi == pytest.approx(0.55, abs=0.005)
    assert hi - lo > 1.0


def test_paired_sequence_maps_differences_to_the_unit_interval() -> None:
    d = [0.3, -0.1, 0.25, 0.4, 0.0, 0.35, 0.2, 0.3]
    cs = paired_confidence_sequence(d, 1.0, population=20)
    x = [(v + 1) / 2 for v in d]
    lows, highs = published_cs(x, 0.05, 0.5, 20)
    np.testing.assert_allclose(cs.lower, [2 * v - 1 for v in lows], rtol=1e-12)
    np.testing.assert_allclose(cs.upper, [2 * v - 1 for v in highs], rtol=1e-12)
    assert cs.n == 8 and cs.population == 20


def test_a_difference_outside_the_declared_range_is_refused() -> None:
    with pytest.raises(ValueError, match=r"outside \[-1, 1\].*declared range"):
        paired_confidence_sequence([0.2, 1.5], 1.0)
    with pytest.raises(ValueError, match="population"):
        eb_confidence_sequence([0.1, 0.2, 0.3], population=2)
    with pytest.raises(ValueError, match="alpha"):
        eb_confidence_sequence([0.1], alpha=1.0)


def test_decide() -> None:
    assert decide((0.01, 0.2)) == "differs"
    assert decide((-0.3, -0.001)) == "differs"
    assert decide((0.0, 0.2)) == "undecided"
    assert decide((-0.02, 0.03), margin=0.05) == "equivalent"
    assert decide((-0.02, 0.06), margin=0.05) == "undecided"
    assert decide((-math.inf, math.inf)) == "undecided"
    assert decide((0.1, 0.1)) == "differs"


@pytest.mark.parametrize(("interval", "margin", "message"), [
    ((0.3, 0.1), None, r"interval \(0.3, 0.1\) is inverted \(low > high\)"),
    ((math.nan, 0.1), None, "has a NaN end"),
    ((0.1, math.nan), None, "has a NaN end"),
    ((0.1,), None, "must be two numbers"),
    (("0.1", 0.2), None, "interval low must be a number"),
    ((-0.1, 0.1), 0.0, "margin must be a finite number > 0, got 0.0"),
    ((-0.1, 0.1), math.nan, "margin must be a finite number > 0, got nan"),
    ((-0.1, 0.1), -0.2, "margin must be a finite number > 0"),
])
def test_decide_refuses_what_is_no_interval(interval: tuple[Any, ...], margin: float | None,
                                            message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decide(interval, margin)


def test_matches_confseq() -> None:
    # confseq centres v_i on the plain running mean: variance_centre="running"
    stored = json.loads((DATA / "confseq_reference.json").read_text())
    assert len(stored["cases"]) == 4
    for case in stored["cases"]:
        lower, upper = eb_confidence_sequence(
            case["x"], alpha=case["alpha"], truncation=case["truncation"],
            population=case["population"], variance_centre="running")
        np.testing.assert_allclose(lower, case["lower"], rtol=1e-10, atol=1e-12,
                                   err_msg=case["name"])
        np.testing.assert_allclose(upper, case["upper"], rtol=1e-10, atol=1e-12,
                                   err_msg=case["name"])
