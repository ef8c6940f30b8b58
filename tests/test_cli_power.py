"""``evalkit power``: ``-k/--epochs`` needs a pilot with samples (with ``--sd`` it is
refused in one line), and very large values are printed in scientific notation by the
shared formatter (:mod:`evalkit.report.formatting`) in every console table, never as
hundreds of digits cut by the table. The expected MDE is solved here with scipy's
noncentral t, not by evalkit."""

from __future__ import annotations

import math

import pytest
from scipy import optimize, stats
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.comparison import ComparisonError, plan_power
from evalkit.report.formatting import decimal, figure, signed

runner = CliRunner()


def _mde(sd: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """Two-sided paired t-test: the effect whose power is ``power`` (scipy's nct)."""
    df, crit = n - 1, stats.t.ppf(1 - alpha / 2, n - 1)

    def gap(d: float) -> float:
        nc = d * math.sqrt(n)
        lower = float(stats.nct.cdf(-crit, df, nc))  # the far tail; scipy gives NaN at
        return float(stats.nct.sf(crit, df, nc)) + (0.0 if math.isnan(lower) else lower) \
            - power  # large nc, where it is below 1e-10

    return float(optimize.brentq(gap, 1e-6, 1.5)) * sd


def test_epochs_with_sd_is_refused_in_one_line() -> None:
    res = runner.invoke(app, ["power", "--sd", "0.1", "-n", "50", "-k", "5"])
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "-k/--epochs" in lines[0] and "--sd" in lines[0]
    with pytest.raises(ComparisonError, match="epochs"):
        plan_power(sd=0.1, n=[50], epochs=[5])


def test_sd_without_epochs_still_plans() -> None:
    res = runner.invoke(app, ["power", "--sd", "0.1", "-n", "50"])
    assert res.exit_code == 0, res.output
    assert f"{_mde(0.1, 50):.4f}" in res.output
    titled = runner.invoke(app, ["power", "--sd", "0.1", "-n", "50", "-e", "0.05"])
    assert "minimum detectable effect\n" in titled.output
    assert [ln for ln in titled.output.splitlines() if ln != ln.rstrip()] == []


@pytest.mark.parametrize("sd", [1e308, 1e7])
def test_huge_values_are_printed_in_scientific_notation(sd: float) -> None:
    res = runner.invoke(app, ["power", "--sd", repr(sd), "-n", "10"])
    assert res.exit_code == 0, res.output
    assert "…" not in res.output
    expected = _mde(1.0, 10) * sd  # 9.96 sd
    assert f"{expected:.4g}" in res.output  # "9.96e+307"
    assert max(len(w) for w in res.output.split()) < 20


def test_shared_formatter_by_hand() -> None:
    assert decimal(0.21774) == "0.2177"
    assert decimal(1234567.0) == "1.235e+06"
    assert decimal(-2.5e7) == "-2.5e+07"
    assert decimal(999999.0) == "999999.0000"
    assert signed(1e308) == "+1e+308" and signed(-3e6) == "-3e+06"
    assert figure(1e308) == "1e+308" and figure(2e-5) == "2e-05"
    assert decimal(math.inf) == "inf" and signed(math.nan) == "NaN"


def _one_sided_mde(sd: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """"greater": the effect whose power is ``power`` (scipy's nct), a magnitude."""
    df, crit = n - 1, stats.t.ppf(1 - alpha, n - 1)
    return float(optimize.brentq(
        lambda d: float(stats.nct.sf(crit, df, d * math.sqrt(n))) - power, 1e-6, 1.5)) * sd


@pytest.mark.parametrize(("alternative", "sign"), [("less", -1.0), ("greater", 1.0)])
def test_power_detectable_diff_is_signed_as_the_alternative(alternative: str,
                                                            sign: float) -> None:
    import json

    want = sign * _one_sided_mde(0.1, 50)
    assert round(want, 4) == sign * 0.0357
    res = runner.invoke(app, ["power", "--sd", "0.1", "-n", "50", "--alternative", alternative])
    assert res.exit_code == 0, res.output
    row = next(ln for ln in res.output.splitlines() if ln.strip().startswith("50 "))
    assert row.split()[-1] == f"{want:.4f}"
    res = runner.invoke(app, ["power", "--sd", "0.1", "-n", "50", "--alternative", alternative,
                              "--json"])
    assert res.exit_code == 0, res.output
    (d,) = json.loads(res.output)["plans"][0]["detectable"]
    assert d["mde"] == pytest.approx(want, rel=1e-7)


@pytest.mark.parametrize(("args", "named"), [
    (["--simulate", "--trials", "5000"], "--simulate and --trials"),
    (["--simulate"], "--simulate"),
    (["--trials", "5000"], "--trials"),
    (["--seed", "7"], "--seed"),
])
def test_power_simulation_options_without_a_pilot_are_refused(args: list[str],
                                                              named: str) -> None:
    res = runner.invoke(app, ["power", "--sd", "0.1", "-n", "100", *args])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in res.output
    assert lines[0].startswith(f"error: {named}: the simulation draws from a pilot pair")
    ok = runner.invoke(app, ["power", "--sd", "0.1", "-n", "100", "--no-simulate"])
    assert ok.exit_code == 0, ok.output


@pytest.mark.parametrize("sd", [1e-300, 1e-150])
def test_tiny_sd_plans_in_units_of_sd(sd: float) -> None:
    # the MDE is solved in units of sd and scaled back: sd times the MDE at sd = 1 at any
    # magnitude (a tolerance of 1e-12 sd in metric units underflowed at subnormal sd)
    res = runner.invoke(app, ["power", "--sd", repr(sd), "-n", "20"])
    assert res.exit_code == 0, res.output
    assert f"{_mde(1.0, 20) * sd:.4g}" in res.output


@pytest.mark.parametrize("args", [["-n", "20", "-e", "nan"], ["-n", "20.5"],
                                  ["-n", "1"], ["-n", "20", "--power", "nan"]])
def test_bad_power_arguments_are_refused_without_traceback(args: list[str]) -> None:
    res = runner.invoke(app, ["power", "--sd", "0.1", *args])
    assert res.exit_code == 2
    assert "Traceback" not in res.output
