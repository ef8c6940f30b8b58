"""Planning n cases x K samples: the analytic plan from a pilot against a simulation of
the model it assumes (numpy and scipy's t-test, not evalkit's), and `evalkit power`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.comparison import plan_power
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.samples import reduce_samples
from evalkit.data.targets import TargetResponse
from evalkit.stats.power_samples import enough_samples, samples_mde
from evalkit.stats.spread import WithinCaseSpread, within_case_spread

SD_CASE, SD_SAMPLE = 0.15, 0.25  # between-case sd of the true difference; sample noise


def draw(rng: np.random.Generator, n: int, k: int, effect: float, trials: int
         ) -> tuple[np.ndarray, np.ndarray]:
    """``(candidate, baseline)`` sample scores, shape (trials, n, k): the true per-case
    difference is effect + N(0, SD_CASE^2); every sample adds N(0, SD_SAMPLE^2)."""
    case = rng.normal(0.5, 0.2, (trials, n, 1))
    shift = effect + rng.normal(0, SD_CASE, (trials, n, 1))
    a = case + shift + rng.normal(0, SD_SAMPLE, (trials, n, k))
    b = case + rng.normal(0, SD_SAMPLE, (trials, n, k))
    return a, b


def pilot_spread(rng: np.random.Generator) -> WithinCaseSpread:
    a, b = draw(rng, 3000, 3, 0.0, 1)
    return within_case_spread({str(i): list(b[0, i]) for i in range(3000)},
                              {str(i): list(a[0, i]) for i in range(3000)})


@pytest.mark.parametrize(("n", "k"), [(30, 1), (30, 4), (60, 2), (40, 16)])
def test_the_n_by_k_plan_holds_its_power_in_a_simulation(n: int, k: int) -> None:
    rng = np.random.default_rng(1000 + n + k)
    spread = pilot_spread(rng)
    mde = samples_mde(spread, n, k, alpha=0.05, power=0.8)
    a, b = draw(rng, n, k, mde, 4000)
    d = a.mean(axis=2) - b.mean(axis=2)  # reduced by the mean, paired by case
    p = sps.ttest_1samp(d, 0.0, axis=1).pvalue
    simulated = float(np.mean(p < 0.05))
    assert abs(simulated - 0.8) <= 0.08, (n, k, mde, simulated)


def test_more_samples_help_less_than_more_cases() -> None:
    spread = pilot_spread(np.random.default_rng(3))
    # doubling K shrinks only the within part; doubling n shrinks both
    assert samples_mde(spread, 100, 4) < samples_mde(spread, 50, 4)
    assert samples_mde(spread, 50, 8) > samples_mde(spread, 100, 4)


def test_enough_samples_is_where_the_mde_is_within_5_percent_of_its_floor() -> None:
    # between 0.01, within 0.09 + 0.09: K* = ceil(0.18 / (0.01 * (1.05^2 - 1))) = 176
    s = WithinCaseSpread(2, 2, 50, 0.1, 0.09, 0.9, 0.01, 0.09, 0.09, 0.0, (), 0.0)
    assert enough_samples(s) == 176
    assert math.sqrt(s.var_at(176) / 0.01) <= 1.05 < math.sqrt(s.var_at(175) / 0.01)
    no_between = WithinCaseSpread(2, 2, 50, 0.1, 0.1, 1.0, 0.0, 0.1, 0.1, 0.0, (), 0.0)
    assert enough_samples(no_between) is None


def sample_run(name: str, values: np.ndarray) -> RunResult:
    samples = [CaseResult(f"q{i}", TargetResponse([]), {"m": float(x)}, sample=j)
               for i, row in enumerate(values) for j, x in enumerate(row)]
    header = {"kind": "target", "samples": {"epochs": values.shape[1], "reduce": "mean"}}
    return RunResult(name, reduce_samples(samples), header, samples=samples)


def test_evalkit_power_plans_cases_and_samples_from_a_pilot(tmp_path: Path) -> None:
    a, b = draw(np.random.default_rng(5), 80, 3, 0.02, 1)
    sample_run("base", b[0]).save(tmp_path / "base.jsonl")
    sample_run("cand", a[0]).save(tmp_path / "cand.jsonl")
    res = CliRunner().invoke(app, ["power", str(tmp_path / "base.jsonl"),
                                   str(tmp_path / "cand.jsonl"), "-n", "50", "-k", "1",
                                   "-k", "4", "--no-simulate"])
    assert res.exit_code == 0, res.output
    assert "cases x samples" in res.output
    assert "more samples stop helping beyond K =" in res.output
    plan = plan_power(tmp_path / "base.jsonl", tmp_path / "cand.jsonl", n=[50],
                      epochs=[1, 4], simulate=False).plans[0]
    assert plan.samples is not None
    assert [(d.n, d.k) for d in plan.samples.detectable] == [(50, 1), (50, 4)]
    assert plan.samples.detectable[1].mde < plan.samples.detectable[0].mde
    doc = json.loads(CliRunner().invoke(app, [
        "power", str(tmp_path / "base.jsonl"), str(tmp_path / "cand.jsonl"), "-n", "50",
        "--no-simulate", "--json"]).output)
    ks = [d["k"] for d in doc["plans"][0]["samples"]["detectable"]]
    assert ks == [1, 2, 3, 5, 10, 20]
