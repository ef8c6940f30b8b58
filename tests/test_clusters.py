"""Clustered cases: the CR1 t-test against statsmodels, the cluster sign-flip test against
a hand enumeration of every sign pattern, the cluster bootstrap against the bootstrap of
the clusters' values, and the refusals."""

from __future__ import annotations

import itertools
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evalkit.stats import compare_runs, paired_test
from evalkit.stats.clusters import FEW_CLUSTERS, cluster_index, cr1_se, effective_clusters
from evalkit.stats.methods import BOTH, resolve_method

REFERENCE = json.loads((Path(__file__).parent / "data" / "clusters" /
                        "statsmodels_reference.json").read_text())
CASES = REFERENCE["cases"]


def _runs(d: list[float], clusters: list[str]) -> tuple[dict[str, float], dict[str, float],
                                                        dict[str, str]]:
    ids = [f"q{i:03d}" for i in range(len(d))]
    return ({q: float(x) for q, x in zip(ids, d, strict=True)}, dict.fromkeys(ids, 0.0),
            dict(zip(ids, clusters, strict=True)))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_cr1_standard_error_matches_statsmodels(case: dict[str, Any]) -> None:
    a, _, cl = _runs(case["d"], case["clusters"])
    ids = sorted(a)
    index = cluster_index(ids, cl)
    d = np.array([a[q] for q in ids])
    se = cr1_se(d, index)
    assert se == pytest.approx(case["se"], rel=1e-10)
    # statsmodels' CR0 (use_correction=False) lacks exactly the factor G / (G - 1)
    G = case["n_clusters"]
    assert se * math.sqrt((G - 1) / G) == pytest.approx(case["se_cr0"], rel=1e-10)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_clustered_t_test_matches_statsmodels(case: dict[str, Any]) -> None:
    a, b, cl = _runs(case["d"], case["clusters"])
    r = paired_test(a, b, "x", method="t-test", clusters=cl)
    assert r.n_clusters == case["n_clusters"] == case["df"] + 1
    assert r.observed == pytest.approx(case["mean"], rel=1e-12, abs=1e-15)
    assert r.p_value == pytest.approx(case["p_value"], rel=1e-8)
    assert r.ci_low == pytest.approx(case["ci_low"], rel=1e-10)
    assert r.ci_high == pytest.approx(case["ci_high"], rel=1e-10)
    assert r.n_clusters is not None
    sizes = np.array(list(Counter(case["clusters"]).values()), dtype=float)
    g_star = np.sum(sizes**2) ** 2 / np.sum(sizes**4)  # rho = 1, by hand
    assert r.effective_clusters == pytest.approx(g_star, rel=1e-12)
    assert (r.n_clusters < FEW_CLUSTERS or g_star < FEW_CLUSTERS) == any(
        w.startswith("the inference rests on") for w in r.warnings)


def test_vaswani_runs_with_clusters_match_statsmodels() -> None:
    for case in (c for c in CASES if c["name"].startswith("vaswani")):
        cand = dict(zip(case["ids"], case["candidate"], strict=True))
        base = dict(zip(case["ids"], case["baseline"], strict=True))
        cl = dict(zip(case["ids"], case["clusters"], strict=True))
        fam = compare_runs(base, [cand], "ap", method="t-test", clusters=cl)
        r = fam.results[0]
        assert r.p_value == pytest.approx(case["p_value"], rel=1e-8)
        assert r.ci_high - r.observed == pytest.approx(case["ci_high"] - case["mean"],
                                                       rel=1e-10)


def _signflip_p_by_hand(sums: list[float], alternative: str) -> float:
    """Every one of the 2**G sign patterns of the clusters' sums, counted here."""
    obs = sum(sums)
    count = 0
    for signs in itertools.product((1, -1), repeat=len(sums)):
        t = sum(s * x for s, x in zip(signs, sums, strict=True))
        if alternative == "two-sided":
            count += int(abs(t) >= abs(obs) - 1e-12)
        elif alternative == "greater":
            count += int(t >= obs - 1e-12)
        else:
            count += int(t <= obs + 1e-12)
    return count / float(2 ** len(sums))


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_cluster_sign_flip_is_the_enumeration_of_cluster_sums(alternative: str) -> None:
    # five clusters of unequal sizes; the sums are 0.9, 0.5, 0.6, -0.2, 0.3
    d = [0.5, 0.4, 0.1, 0.3, 0.1, 0.2, 0.3, 0.1, -0.4, 0.2, 0.3]
    clusters = ["A", "A", "B", "B", "B", "C", "C", "C", "D", "D", "E"]
    sums = [0.9, 0.5, 0.6, -0.2, 0.3]
    a, b, cl = _runs(d, clusters)
    r = paired_test(a, b, "x", method="randomization", alternative=alternative, clusters=cl)
    assert r.exact and r.n_resamples == 2**5 and r.n_clusters == 5
    assert r.p_value == pytest.approx(_signflip_p_by_hand(sums, alternative), abs=1e-15)
    if alternative == "two-sided":
        # by hand, T = 2.1; |T*| >= 2.1 only for the observed signs, for D's sign flipped
        # (T* = 2.5) and for their two mirrors: p = 4/32
        assert r.p_value == pytest.approx(4 / 32)
    # the independent test flips 11 differences and sees another null
    r0 = paired_test(a, b, "x", method="randomization", alternative=alternative)
    assert r0.n_resamples == 2**11


def test_singleton_clusters_are_the_independent_tests() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0.05, 0.3, 40).tolist()
    a, b, _ = _runs(d, ["x"] * 40)
    own = {q: q for q in a}
    for method in ("t-test", "randomization", "bootstrap", "bootstrap-t", "auto",
                   "randomization+bootstrap-t"):
        r0 = paired_test(a, b, "x", method=method, n_resamples=2000)
        r = paired_test(a, b, "x", method=method, n_resamples=2000, clusters=own)
        assert (r.p_value, r.ci_low, r.ci_high) == pytest.approx(
            (r0.p_value, r0.ci_low, r0.ci_high), rel=1e-9), method
        assert r.method == r0.method and r.n_clusters == 40


def test_cluster_labels_are_compared_as_text() -> None:
    # a Python mapping's labels are read as a clusters file's are: int 0 and "0" are one
    # cluster, so the test is the one with the labels all given as strings
    rng = np.random.default_rng(5)
    d = rng.normal(0.1, 0.3, 12).tolist()
    mixed: list[Any] = [0, "0", 1, "1", 2, "2", 0, "1", 2, 0, "1", 2]
    a, b, _ = _runs(d, ["x"] * 12)
    labels = dict(zip(a, mixed, strict=True))
    text = {q: str(c) for q, c in labels.items()}
    r_mixed = paired_test(a, b, "x", method="t-test", clusters=labels)
    r_text = paired_test(a, b, "x", method="t-test", clusters=text)
    assert r_mixed.n_clusters == r_text.n_clusters == 3
    assert (r_mixed.p_value, r_mixed.ci_low, r_mixed.ci_high) == (
        r_text.p_value, r_text.ci_low, r_text.ci_high)


def test_cluster_bootstrap_resamples_whole_clusters() -> None:
    # each value copied into a cluster of 3: resampling clusters is resampling the 12
    # values, so every method equals the independent test on the 12 values
    rng = np.random.default_rng(5)
    values = rng.normal(0.1, 0.4, 12).tolist()
    a1, b1, _ = _runs(values, ["x"] * 12)
    d = [v for v in values for _ in range(3)]
    names = [f"g{g:02d}" for g in range(12) for _ in range(3)]
    a3, b3, cl = _runs(d, names)
    for method, ci in (("bootstrap", None), ("bootstrap", "bca"), ("bootstrap-t", None),
                       ("randomization", None), ("t-test", None)):
        r1 = paired_test(a1, b1, "x", method=method, ci=ci, n_resamples=3000)
        r3 = paired_test(a3, b3, "x", method=method, ci=ci, n_resamples=3000, clusters=cl)
        assert (r3.p_value, r3.ci_low, r3.ci_high) == pytest.approx(
            (r1.p_value, r1.ci_low, r1.ci_high), rel=1e-9), (method, ci)
        # without clusters the 36 cases look like 36 independent draws: narrower
        r0 = paired_test(a3, b3, "x", method=method, ci=ci, n_resamples=3000)
        assert r0.ci_high - r0.ci_low < r3.ci_high - r3.ci_low


def test_refusals_name_the_cases() -> None:
    a, b, cl = _runs([0.1, 0.2, 0.3, 0.4], ["A", "A", "B", "B"])
    with pytest.raises(ValueError, match=r"1 compared case\(s\) have no cluster \('q003'\)"):
        paired_test(a, b, "x", clusters={k: v for k, v in cl.items() if k != "q003"})
    with pytest.raises(ValueError, match=r"not cases of the compared runs \('zz'\)"):
        paired_test(a, b, "x", clusters={**cl, "zz": "A"})
    with pytest.raises(ValueError, match="one cluster"):
        paired_test(a, b, "x", clusters=dict.fromkeys(cl, "A"))
    with pytest.raises(ValueError, match="has cluster None"):
        paired_test(a, b, "x", clusters={**cl, "q000": None})


def test_family_counts_clusters_and_warns_below_twenty() -> None:
    rng = np.random.default_rng(11)
    ids = [f"q{i:03d}" for i in range(60)]
    base = {q: float(x) for q, x in zip(ids, rng.uniform(0, 1, 60), strict=True)}
    cand = {q: v + 0.05 for q, v in base.items()}
    few = {q: f"c{i // 6}" for i, q in enumerate(ids)}  # 10 clusters
    fam = compare_runs(base, [cand], ["m"], clusters=few)
    assert fam.results[0].n_clusters == 10
    assert any("rests on 10 clusters" in w for w in fam.results[0].warnings)
    many = {q: f"c{i // 2}" for i, q in enumerate(ids)}  # 30 clusters
    fam = compare_runs(base, [cand], ["m"], clusters=many)
    assert fam.results[0].n_clusters == 30
    assert not any("clusters" in w for w in fam.results[0].warnings)


# ------------------------------------------- unequal sizes: G*, and what "auto" runs
#: 25 single cases and clusters of 10, 20, 30, 40 and 50 (N = 175): the design where the
#: CR1 t-test rejected 16% of true nulls at alpha 0.05 (docs/statistics.md).
UNEQUAL = [1] * 25 + [10, 20, 30, 40, 50]


def test_effective_clusters_by_hand() -> None:
    # Carter, Schnepel and Steigerwald: G* = G / (1 + Gamma), Gamma the squared
    # coefficient of variation (divisor G) of gamma_g ~ n_g (1 + rho (n_g - 1)).
    # sizes 1, 2, 3; rho = 1: gamma = 1, 4, 9, mean 14/3, variance 98/3 - 196/9 = 98/9,
    # Gamma = (98/9) / (196/9) = 1/2, G* = 3 / 1.5 = 2
    assert effective_clusters([1, 2, 3]) == pytest.approx(2.0, rel=1e-15)
    # rho = 0: gamma = 1, 2, 3, Gamma = (2/3) / 4 = 1/6, G* = 3 / (7/6) = 18/7 = 36/14
    assert effective_clusters([1, 2, 3], rho=0.0) == pytest.approx(18 / 7, rel=1e-15)
    # rho = 0.5: gamma = 1, 3, 6, mean 10/3, variance 46/3 - 100/9 = 38/9, Gamma = 0.38
    assert effective_clusters([1, 2, 3], rho=0.5) == pytest.approx(3 / 1.38, rel=1e-14)
    # equal sizes: G* = G whatever rho
    for rho in (0.0, 0.3, 1.0):
        assert effective_clusters([5] * 10, rho=rho) == pytest.approx(10.0, rel=1e-15)
    # the unequal design: sum n^2 = 5525, sum n^4 = 25 + 979 * 10^4 = 9790025
    assert effective_clusters(UNEQUAL) == pytest.approx(5525**2 / 9_790_025, rel=1e-14)
    assert effective_clusters(UNEQUAL, rho=0.0) == pytest.approx(175**2 / 5525, rel=1e-14)
    # scale-free: no overflow from n**4 of a huge cluster
    assert effective_clusters([1e80, 1e80]) == pytest.approx(2.0, rel=1e-12)
    assert cluster_index([f"q{i}" for i in range(6)],
                         {"q0": "a", "q1": "b", "q2": "b", "q3": "c", "q4": "c",
                          "q5": "c"}).effective == pytest.approx(2.0, rel=1e-15)


def test_effective_clusters_refuses_bad_input() -> None:
    for sizes in ([], [0, 3], [2, float("nan")], [-1, 2]):
        with pytest.raises(ValueError, match="sizes must be"):
            effective_clusters(sizes)
    with pytest.raises(ValueError, match="rho must be in"):
        effective_clusters([1, 2], rho=1.5)


def _unequal_runs(binary: bool) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    g = np.repeat(np.arange(len(UNEQUAL)), UNEQUAL)
    rng = np.random.default_rng(5)
    if binary:
        a, b = (rng.random(g.size) < 0.5).astype(float), (rng.random(g.size) < 0.5)
    else:
        a, b = rng.normal(0.5, 0.1, g.size), np.full(g.size, 0.5)
    ids = [f"q{i:03d}" for i in range(g.size)]
    return ({q: float(x) for q, x in zip(ids, a, strict=True)},
            {q: float(x) for q, x in zip(ids, b, strict=True)},
            {q: f"c{k:02d}" for q, k in zip(ids, g, strict=True)})


def test_auto_with_clusters_runs_the_sign_flip_test_on_a_binary_metric() -> None:
    a, b, cl = _unequal_runs(binary=True)
    # without clusters a binary metric gets the t-test, as before
    assert paired_test(a, b, "em", value_type="binary").method == "t-test"
    r = paired_test(a, b, "em", value_type="binary", clusters=cl, n_resamples=999)
    assert r.method in ("randomization", BOTH)
    assert not any("metric is binary" in w for w in r.warnings)
    fam = compare_runs(b, [a], ["em"], value_types={"em": "binary"}, clusters=cl,
                       n_resamples=999)
    assert fam.results[0].method in ("randomization", BOTH)
    assert fam.results[0].effective_clusters == pytest.approx(5525**2 / 9_790_025)
    # the choice, on values whose skewness is below the guard
    tenths = np.array([1.0, -1.0, 1.0, 0.0, 1.0, -1.0, -1.0, 1.0, 0.0, -1.0])
    assert resolve_method("auto", tenths, "binary", clustered=True) == "randomization"
    assert resolve_method("auto", tenths, "binary") == "t-test"
    assert resolve_method("t-test", tenths, "binary", clustered=True) == "t-test"
    # the CR1 t-test is still there when asked for
    assert paired_test(a, b, "em", method="t-test", clusters=cl).method == "t-test"


def test_thirty_unequal_clusters_warn_with_g_and_g_star() -> None:
    a, b, cl = _unequal_runs(binary=False)
    forced = paired_test(a, b, "x", method="t-test", clusters=cl)
    assert forced.n_clusters == 30
    note = ("the inference rests on 30 clusters of unequal sizes, whose effective number "
            "G* = 3.1 is below 20 (Carter, Schnepel and Steigerwald 2017): the CR1 t-test "
            "and the cluster bootstrap reject true nulls too often when a few large "
            "clusters carry the mean; the cluster sign-flip test (method 'randomization', "
            "the default 'auto' with clusters) holds there")
    assert note in forced.warnings
    boot = paired_test(a, b, "x", method="bootstrap-t", clusters=cl, n_resamples=999)
    assert note in boot.warnings
    flip = paired_test(a, b, "x", method="randomization", clusters=cl, n_resamples=999)
    assert [w for w in flip.warnings if w.startswith("the inference rests on")] == [
        note.split("; the cluster sign-flip")[0] + "; the sign-flip test, which ran here, "
        "held its level on such designs (docs/statistics.md, Clustered cases)"]
    # 30 clusters of 2: G* = G = 30, no warning
    pairs = {q: f"c{i // 2}" for i, q in enumerate(sorted(a)[:60])}
    a60 = {q: a[q] for q in pairs}
    b60 = {q: b[q] for q in pairs}
    even = paired_test(a60, b60, "x", method="t-test", clusters=pairs)
    assert even.effective_clusters == pytest.approx(30.0)
    assert not any("clusters" in w for w in even.warnings)
