"""Clustered power planning (``simulate_power(clusters=...)``, ``plan_from_pilot(clusters=)``,
``evalkit power --cluster``): the simulated power is that of the test ``compare`` runs by
default with clusters, the cluster sign-flip test with its skew guard, over whole clusters
of the pilot. Checked three ways: trial by trial against ``paired_test`` on the same draws;
against a numpy re-implementation of the whole procedure written here (its own generator,
so within a stated Monte Carlo bound); and against the noncentral t for many equal clusters
with a small intra-cluster correlation."""

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
from evalkit.stats import paired_test, plan_from_pilot, simulate_power, t_power
from evalkit.stats.power import _draw

REPO = Path(__file__).resolve().parents[1]
QRELS = REPO / "examples" / "vaswani" / "data" / "qrels"
BM25 = REPO / "examples" / "vaswani" / "data" / "runs" / "run.vaswani.bm25.txt"


def _pilot(sizes: list[int], icc: float, seed: int) -> tuple[np.ndarray, list[str]]:
    """Per-case differences ``u_g + e`` (variance 1, intra-cluster correlation ``icc``)
    in clusters of ``sizes``, and each case's cluster."""
    rng = np.random.default_rng(seed)
    d, labels = [], []
    for g, k in enumerate(sizes):
        u = rng.normal(0, math.sqrt(icc))
        d.extend((u + rng.normal(0, math.sqrt(1 - icc), k)).tolist())
        labels.extend([f"c{g}"] * k)
    return np.asarray(d), labels


def test_each_trial_is_decided_as_paired_test_decides_it() -> None:
    # the same draws (power._draw, seed 7) through paired_test, one call per trial
    d, labels = _pilot([2, 3, 4, 5, 6, 2, 3, 4, 5, 6], icc=0.2, seed=1)
    n, trials, effect = 8, 60, 0.6
    sim = simulate_power(d, effect, n, method="auto", n_trials=trials, seed=7,
                         n_resamples=999, clusters=labels)
    pop = d - d.mean() + effect
    names = sorted(set(labels))
    members = {c: [i for i, x in enumerate(labels) if x == c] for c in names}
    drawn = _draw(np.arange(len(names), dtype=np.float64), n, 7, 0, trials).astype(int)
    hits = 0
    for row in drawn:
        a, cl = {}, {}
        for k, g in enumerate(row.tolist()):
            for i in members[names[g]]:
                a[f"{k}-{i}"], cl[f"{k}-{i}"] = float(pop[i]), f"t{k}"
        r = paired_test(a, dict.fromkeys(a, 0.0), "x", method="auto", n_resamples=999,
                        seed=8, clusters=cl)
        hits += int(r.significant)
    assert sim.method == "auto" and sim.n == n
    assert sim.power == hits / trials


def _reference_power(d: np.ndarray, labels: list[str], effect: float, n: int, trials: int,
                     alpha: float, boot: int, seed: int) -> float:
    """The clustered default test re-implemented in numpy: draw ``n`` whole clusters with
    replacement from ``d - mean(d) + effect``; ``f_g = (n / N) S_g`` and
    ``r_g = (n / N) (S_g - n_g m) + m``; the exact two-sided sign-flip p over all ``2**n``
    patterns of ``f``; when ``|G1(f)| >= 1`` (scipy's adjusted skewness) also the
    equal-tailed bootstrap-t over ``r`` (``boot`` resamples, doubled smaller tail,
    ``(count + 1) / (B + 1)``), ``p`` the larger of the two; reject at ``p < alpha``."""
    rng = np.random.default_rng(seed)
    pop = d - d.mean() + effect
    names = sorted(set(labels))
    lab = np.asarray(labels)
    sums = np.array([pop[lab == c].sum() for c in names])
    sizes = np.array([np.count_nonzero(lab == c) for c in names], dtype=float)
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=n)))
    rejected = 0
    for _ in range(trials):
        idx = rng.integers(0, len(names), n)
        S, k = sums[idx], sizes[idx]
        N = k.sum()
        m = S.sum() / N
        f = n / N * S
        r = n / N * (S - k * m) + m
        flipped = signs @ f / n
        p = np.count_nonzero(np.abs(flipped) >= abs(m) - 1e-12) / signs.shape[0]
        if abs(stats.skew(f, bias=False)) >= 1.0:
            se = r.std(ddof=1) / math.sqrt(n)
            t = (r.mean()) / se
            res = r[rng.integers(0, n, (boot, n))]
            se_b = res.std(axis=1, ddof=1) / math.sqrt(n)
            ok = se_b > 0
            t_b = (res.mean(axis=1)[ok] - r.mean()) / se_b[ok]
            tail = min(np.count_nonzero(t_b >= t), np.count_nonzero(t_b <= t))
            p = max(p, min(1.0, 2 * (tail + 1) / (boot + 1)))
        rejected += int(p < alpha)
    return rejected / trials


@pytest.mark.parametrize(("icc", "skewed", "effect"), [(0.2, False, 0.5), (0.5, True, 1.5)])
def test_simulated_power_matches_a_numpy_reimplementation(icc: float, skewed: bool,
                                                          effect: float) -> None:
    # 12 pilot clusters of unequal sizes; 10 drawn per trial (exact sign-flip test).
    # Library and reference draw independently, so they agree within Monte Carlo error:
    # |difference| <= 4 * sqrt(se_lib**2 + se_ref**2), binomial standard errors.
    d, labels = _pilot([1, 2, 3, 4, 5, 6, 8, 2, 3, 4, 5, 6], icc=icc, seed=3)
    if skewed:  # a long right tail in two clusters: the guard fires in many trials
        d = d + np.where(np.isin(labels, ["c6", "c5"]), 3.0, 0.0)
    n = 10
    lib = simulate_power(d, effect, n, method="auto", n_trials=3000, seed=11,
                         n_resamples=2000, clusters=labels)
    ref = _reference_power(d, labels, effect, n, trials=6000, alpha=0.05, boot=2000, seed=5)
    se = math.sqrt(lib.se**2 + ref * (1 - ref) / 6000)
    assert 0.1 < ref < 0.9  # a power the comparison can tell apart
    assert abs(lib.power - ref) <= 4 * se, (lib.power, ref, se)


def test_many_equal_clusters_with_small_icc_approach_the_t_figure() -> None:
    # 400 pilot clusters of 4, ICC 0.05, normal: at the t-test's minimum detectable
    # effect for 40 clusters the simulated power of the cluster sign-flip test is the
    # target 0.8 within 4 binomial standard errors (0.8 * 0.2 / 2000 trials: 0.0089)
    d, labels = _pilot([4] * 400, icc=0.05, seed=9)
    ids = [f"q{i}" for i in range(d.size)]
    plan = plan_from_pilot(dict(zip(ids, d.tolist(), strict=True)), dict.fromkeys(ids, 0.0),
                           "x", n=40, n_trials=2000, seed=4,
                           clusters=dict(zip(ids, labels, strict=True)))
    assert plan.n_pilot == plan.n_clusters == 400 and plan.effective_clusters == 400.0
    assert plan.method == "auto" and plan.pilot_method == "randomization"
    assert t_power(plan.mde, plan.sd_diff, 40) == pytest.approx(0.8, abs=1e-9)
    sim = plan.simulated
    assert sim is not None and sim.n == 40 and sim.method == "auto"
    assert abs(sim.power - 0.8) <= 4 * math.sqrt(0.8 * 0.2 / 2000), sim.power


def test_one_case_per_cluster_simulates_the_unclustered_draws() -> None:
    # singleton clusters: the same draws, so the cluster sign-flip test is the sign-flip
    # test on the same differences, trial by trial (exact at 12: with Monte Carlo
    # patterns the order of a trial's rows, which paired_test sorts by id, decides
    # which pattern meets which value, and the two agree in distribution only)
    d, _ = _pilot([1] * 30, icc=0.0, seed=2)
    a = simulate_power(d, 0.5, 12, method="randomization", n_trials=200, seed=3,
                       n_resamples=999)
    b = simulate_power(d, 0.5, 12, method="randomization", n_trials=200, seed=3,
                       n_resamples=999, clusters=[f"s{i:02d}" for i in range(d.size)])
    assert a.power == b.power


def test_bad_clusters_are_refused() -> None:
    d, labels = _pilot([2, 3], icc=0.1, seed=1)
    with pytest.raises(ValueError, match="one cluster per pilot difference"):
        simulate_power(d, 0.1, 5, clusters=labels[:-1])
    with pytest.raises(ValueError, match="at least two clusters"):
        simulate_power(d, 0.1, 5, clusters=["one"] * d.size)


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """BM25 without its top two documents on every third query, and clusters of 3."""
    d = tmp_path_factory.mktemp("clpower")
    lines = [ln for ln in BM25.read_text().splitlines()
             if not (int(ln.split()[0]) % 3 == 0 and int(ln.split()[3]) <= 2)]
    (d / "cand.txt").write_text("\n".join(lines) + "\n")
    qids = sorted({int(ln.split()[0]) for ln in QRELS.read_text().splitlines()})
    (d / "clusters.tsv").write_text("".join(f"{q}\tc{(q - 1) // 3}\n" for q in qids))
    return d / "cand.txt", d / "clusters.tsv"


def test_cli_names_the_test_counts_clusters_and_warns(pilot: tuple[Path, Path]) -> None:
    cand, cl_file = pilot
    args = ["power", str(BM25), str(cand), "--qrels", str(QRELS), "-m", "ap",
            "--clusters", str(cl_file), "-n", "5", "-n", "12", "--trials", "200"]
    doc = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
    assert doc["clustered"] is True and doc["test"] == "auto"
    assert doc["primary"] == "simulated" and doc["n_resamples"] == 10_000
    assert "cluster sign-flip" in doc["test_description"]
    assert "approximation" in doc["analytic"]
    plan = doc["plans"][0]
    assert plan["n_clusters"] == 31 and plan["effective_clusters"] == 31.0
    assert plan["test"] == "auto" and plan["pilot_test"] in (
        "randomization", "randomization+bootstrap-t")
    warnings = " ".join(doc["warnings"])
    assert "planned n of 5, 12 clusters: fewer than 20" in warnings
    # 5 clusters: the exact two-sided sign-flip test's smallest p is 2/32
    assert "with 5 clusters the cluster sign-flip test cannot reach p < 0.05" in warnings
    five = next(x for x in plan["detectable"] if x["n"] == 5)
    assert five["simulated_power"] == 0.0
    text = CliRunner().invoke(app, args)
    assert text.exit_code == 0, text.output
    flat = " ".join(text.output.split())
    assert "clustered (31 clusters in the pilot, effective number G* = 31.0): power of " \
        "the cluster sign-flip test" in flat
    assert "smallest detectable diff (t approx.)" in flat
    assert "power, cluster sign-flip test (simulated)" in flat


def test_cli_without_simulation_says_so(pilot: tuple[Path, Path]) -> None:
    cand, cl_file = pilot
    res = CliRunner().invoke(app, ["power", str(BM25), str(cand), "--qrels", str(QRELS),
                                   "-m", "ap", "--clusters", str(cl_file), "--no-simulate",
                                   "--json"])
    doc = json.loads(res.stdout)
    assert doc["primary"] == "analytic" and doc["n_resamples"] is None
    assert any("nothing is simulated" in w for w in doc["warnings"])
    unclustered = CliRunner().invoke(app, ["power", "--sd", "0.1", "-n", "30", "--json"])
    plain = json.loads(unclustered.stdout)
    assert plain["test"] == "t-test" and plain["clustered"] is False
