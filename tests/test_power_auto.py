"""Unclustered power planning simulates the test ``compare`` runs by default
(``simulate_power(method="auto", value_type=...)``, ``plan_from_pilot``, ``evalkit
power``): the sign-flip randomization test with its skew guard, or the paired t-test for
a metric declared binary. Checked trial by trial against ``paired_test`` on the same
draws, and against a numpy re-implementation written here (its own generator, so within
a stated Monte Carlo bound)."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.stats import paired_test, plan_from_pilot, simulate_power
from evalkit.stats.power import _draw

REPO = Path(__file__).resolve().parents[1]
QRELS = REPO / "examples" / "vaswani" / "data" / "qrels"
BM25 = REPO / "examples" / "vaswani" / "data" / "runs" / "run.vaswani.bm25.txt"


def _skewed(n: int, seed: int) -> np.ndarray:
    """Right-skewed differences (a lognormal, shifted to mean about 0)."""
    rng = np.random.default_rng(seed)
    x = rng.lognormal(0.0, 1.0, n)
    return np.asarray(x - x.mean(), dtype=np.float64)


@pytest.mark.parametrize("skew", [False, True])
def test_each_trial_is_decided_as_paired_test_auto_decides_it(skew: bool) -> None:
    # the same draws (power._draw, seed 7) through paired_test(method="auto"), one call
    # per trial with seed + 1: the same test, the same resamples, the same decision
    d = _skewed(15, 2) if skew else np.random.default_rng(1).normal(0, 1, 15)
    n, trials, effect = 12, 40, 0.7
    sim = simulate_power(d, effect, n, method="auto", n_trials=trials, seed=7,
                         n_resamples=999)
    pop = d - d.mean() + effect
    x = _draw(pop, n, 7, 0, trials)
    hits, methods = 0, set()
    for row in x:
        keys = [f"q{i:03d}" for i in range(n)]
        r = paired_test(dict(zip(keys, row.tolist(), strict=True)), dict.fromkeys(keys, 0.0),
                        "x", method="auto", n_resamples=999, seed=8)
        hits += int(r.significant)
        methods.add(r.method)
    assert sim.method == "auto" and sim.n == n
    assert sim.power == hits / trials
    if skew:  # the guard fired in some trials: both tests were exercised
        assert len(methods) == 2, methods


def test_binary_metric_simulates_the_t_test() -> None:
    # a metric declared binary: "auto" is the paired t-test, trial by trial the same
    # rejections as simulate_power(method="t-test")
    rng = np.random.default_rng(4)
    a = rng.integers(0, 2, 60).astype(float)
    b = rng.integers(0, 2, 60).astype(float)
    d = a - b
    auto = simulate_power(d, 0.2, 40, method="auto", n_trials=300, seed=3,
                          value_type="binary")
    t = simulate_power(d, 0.2, 40, method="t-test", n_trials=300, seed=3)
    assert auto.power == t.power
    ids = [f"q{i}" for i in range(60)]
    plan = plan_from_pilot(dict(zip(ids, a.tolist(), strict=True)),
                           dict(zip(ids, b.tolist(), strict=True)), "acc", n=40,
                           n_trials=300, seed=3, value_type="binary")
    assert plan.method == "auto" and plan.pilot_method == "t-test"
    cont = plan_from_pilot(dict(zip(ids, a.tolist(), strict=True)),
                           dict(zip(ids, b.tolist(), strict=True)), "acc", n=40,
                           n_trials=300, seed=3)
    assert cont.pilot_method in ("randomization", "randomization+bootstrap-t")


def _reference_power(d: np.ndarray, effect: float, n: int, trials: int, alpha: float,
                     boot: int, seed: int) -> float:
    """The unclustered default test re-implemented in numpy: draw ``n`` of
    ``d - mean(d) + effect`` with replacement; the exact two-sided sign-flip p over all
    ``2**n`` patterns (ties within 1e-12 count); when ``|G1| >= 1`` over the non-zero
    differences (scipy's adjusted skewness) also the equal-tailed bootstrap-t
    (``boot`` resamples, doubled smaller tail, ``(count + 1) / (B + 1)``), ``p`` the larger
    of the two; reject at ``p < alpha``."""
    rng = np.random.default_rng(seed)
    pop = d - d.mean() + effect
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=n)))
    rejected = 0
    for _ in range(trials):
        x = pop[rng.integers(0, pop.size, n)]
        m = x.mean()
        p = np.count_nonzero(np.abs(signs @ x / n) >= abs(m) - 1e-12) / signs.shape[0]
        nz = x[x != 0]
        if nz.size >= 3 and abs(stats.skew(nz, bias=False)) >= 1.0:
            se = x.std(ddof=1) / math.sqrt(n)
            t = m / se
            res = x[rng.integers(0, n, (boot, n))]
            se_b = res.std(axis=1, ddof=1) / math.sqrt(n)
            ok = se_b > 0
            t_b = (res.mean(axis=1)[ok] - m) / se_b[ok]
            tail = min(np.count_nonzero(t_b >= t), np.count_nonzero(t_b <= t))
            p = max(p, min(1.0, 2 * (tail + 1) / (boot + 1)))
        rejected += int(p < alpha)
    return rejected / trials


@pytest.mark.parametrize(("skewed", "effect"), [(False, 0.6), (True, 0.5)])
def test_simulated_power_matches_a_numpy_reimplementation(skewed: bool,
                                                          effect: float) -> None:
    # 10 drawn per trial (exact sign-flip enumeration). Library and reference draw
    # independently, so they agree within Monte Carlo error:
    # |difference| <= 4 * sqrt(se_lib**2 + se_ref**2), binomial standard errors.
    d = _skewed(30, 5) if skewed else np.random.default_rng(6).normal(0, 1, 30)
    n = 10
    lib = simulate_power(d, effect, n, method="auto", n_trials=2000, seed=11,
                         n_resamples=2000)
    ref = _reference_power(d, effect, n, trials=4000, alpha=0.05, boot=2000, seed=5)
    se = math.sqrt(lib.se**2 + ref * (1 - ref) / 4000)
    assert 0.1 < ref < 0.9  # a power the comparison can tell apart
    assert abs(lib.power - ref) <= 4 * se, (lib.power, ref, se)


def test_cli_json_and_table_name_the_test(tmp_path: Path) -> None:
    # BM25 without its top two documents on every third query: AP differences
    lines = [ln for ln in BM25.read_text().splitlines()
             if not (int(ln.split()[0]) % 3 == 0 and int(ln.split()[3]) <= 2)]
    cand = tmp_path / "cand.txt"
    cand.write_text("\n".join(lines) + "\n")
    args = ["power", str(BM25), str(cand), "--qrels", str(QRELS), "-m", "ap", "-n", "20",
            "-e", "0.02", "--trials", "200"]
    res = CliRunner().invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["test"] == "auto" and doc["primary"] == "simulated"
    assert doc["clustered"] is False and doc["n_resamples"] == 10_000
    assert "sign-flip" in doc["test_description"]
    assert "t-based approximation" in doc["analytic"]
    assert doc["plans"][0]["test"] == "auto"
    assert doc["plans"][0]["pilot_test"] in ("randomization", "randomization+bootstrap-t")
    table = CliRunner().invoke(app, args).stdout
    assert "power, sign-flip test (simulated)" in table
    assert "smallest detectable diff (t approx.)" in table
