"""Argument checks of the power and planning functions (evalkit.stats.power): every
argument is validated with a ValueError naming it, and valid calls still give the
noncentral-t power (values stored below, from scipy.stats.nct: ``1 - nct.cdf(tc, 19,
0.5 sqrt(20)) + nct.cdf(-tc, 19, 0.5 sqrt(20))`` with ``tc = t.ppf(0.975, 19)``, and the
MDE by ``brentq`` on it at power 0.8; statsmodels' ``TTestPower`` gives the same to
1e-9)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalkit.stats import minimum_detectable_effect, required_n, t_power
from evalkit.stats.power import simulate_power

NAN, INF = float("nan"), float("inf")

# the one-sample (paired) t-test, two-sided, n = 20, alpha = 0.05 (scipy.stats.nct)
SM_POWER_05_20 = 0.5645044184390209
SM_MDE_20 = 0.6604416546230263


@pytest.mark.parametrize("effect", [NAN, INF, -INF, "0.5", None, True])
def test_t_power_refuses_a_non_finite_or_non_numeric_effect(effect: object) -> None:
    with pytest.raises(ValueError, match="effect"):
        t_power(effect, 1.0, 20)  # type: ignore[arg-type]


@pytest.mark.parametrize("n", [20.5, 1, 0, -3, NAN, INF, "20", True])
def test_t_power_refuses_n_that_is_not_an_integer_of_at_least_2(n: object) -> None:
    with pytest.raises(ValueError, match="n must be"):
        t_power(0.5, 1.0, n)  # type: ignore[arg-type]


@pytest.mark.parametrize("sd", [0.0, -1.0, NAN, INF, None])
def test_t_power_refuses_a_bad_sd(sd: object) -> None:
    with pytest.raises(ValueError, match="sd must be"):
        t_power(0.5, sd, 20)  # type: ignore[arg-type]


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, NAN, "0.05"])
def test_every_power_function_refuses_a_bad_alpha(alpha: object) -> None:
    for call in (lambda: t_power(0.5, 1.0, 20, alpha),  # type: ignore[arg-type]
                 lambda: minimum_detectable_effect(20, 1.0, alpha),  # type: ignore[arg-type]
                 lambda: required_n(0.5, 1.0, alpha)):  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="alpha"):
            call()


@pytest.mark.parametrize("power", [0.0, 0.05, 1.0, 1.5, NAN])
def test_mde_and_required_n_refuse_power_outside_alpha_to_1(power: float) -> None:
    with pytest.raises(ValueError, match="power"):
        minimum_detectable_effect(20, 1.0, 0.05, power)
    with pytest.raises(ValueError, match="power"):
        required_n(0.5, 1.0, 0.05, power)


def test_required_n_refuses_a_nan_effect_instead_of_answering_2() -> None:
    with pytest.raises(ValueError, match="effect"):
        required_n(NAN, 1.0)
    with pytest.raises(ValueError, match="effect"):
        required_n(INF, 1.0)


def test_mde_refuses_fractional_n_and_simulate_power_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="n must be"):
        minimum_detectable_effect(20.5, 1.0)  # type: ignore[arg-type]
    pilot = np.array([0.1, -0.2, 0.3, 0.0, 0.05])
    with pytest.raises(ValueError, match="effect"):
        simulate_power(pilot, NAN, 20)
    with pytest.raises(ValueError, match="n must be"):
        simulate_power(pilot, 0.1, 20.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_trials"):
        simulate_power(pilot, 0.1, 20, n_trials=0)


def test_valid_calls_still_equal_statsmodels_and_integral_floats_are_accepted() -> None:
    assert t_power(0.5, 1.0, 20) == pytest.approx(SM_POWER_05_20, abs=1e-8)
    assert t_power(0.5, 1.0, 20.0) == t_power(0.5, 1.0, np.int64(20))  # type: ignore[arg-type]
    assert minimum_detectable_effect(20, 1.0) == pytest.approx(SM_MDE_20, rel=1e-8)


@pytest.mark.parametrize("sd", [1e-320, 1e-150, 1e150, 1e300])
def test_mde_scales_with_sd_at_any_magnitude(sd: float) -> None:
    # power depends on effect / sd only, so the MDE is sd times the MDE at sd = 1
    got = minimum_detectable_effect(20, sd)
    assert math.isfinite(got)
    assert got == pytest.approx(SM_MDE_20 * sd, rel=1e-6 if sd > 1e-300 else 1e-2)
