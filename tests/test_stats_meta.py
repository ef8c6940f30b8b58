"""Random-effects pooling (:mod:`evalkit.stats.meta`) and :func:`evalkit.meta_compare`.

The expected values are statsmodels' ``combine_effects`` (``method_re="dl"`` and
``"pm"``, ``use_t`` for Hartung-Knapp) on the same effects and variances, stored in
tests/data/meta_analysis/ with the script that made them (statsmodels takes seconds to
import), hand calculations, and the defining equations of the estimators; the real
effects are the per-query values trec_eval printed for the Vaswani BM25 run at full
depth and at depth 100.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

import evalkit
from evalkit.comparison import ComparisonError, MetaComparison, meta_compare
from evalkit.comparison.options import Tau2
from evalkit.data.results import QueryResult, RunResult
from evalkit.stats.meta import (
    TAU2_METHODS,
    MetaAnalysisError,
    dersimonian_laird,
    paired_effect,
    paule_mandel,
    random_effects,
)

REFERENCE = json.loads((Path(__file__).parent / "data" / "meta_analysis"
                        / "statsmodels_reference.json").read_text(encoding="utf-8"))
CASES = REFERENCE["cases"]
VARIANTS = [(m, hk) for m in ("dl", "pm") for hk in (False, True)]


def close(a: float | None, b: float | None, rel: float = 1e-8) -> bool:
    assert a is not None and b is not None
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-14)


def expected_p(ref: dict[str, float], hk: bool, k: int) -> float:
    """The two-sided p of statsmodels' estimate and standard error, by scipy."""
    z = abs(ref["estimate"] / ref["std_error"])
    return float(2 * (stats.t.sf(z, k - 1) if hk else stats.norm.sf(z)))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
@pytest.mark.parametrize(("method", "hk"), VARIANTS, ids=[f"{m}-{'hk' if h else 'z'}"
                                                          for m, h in VARIANTS])
def test_pooling_matches_statsmodels(case: dict[str, Any], method: str, hk: bool) -> None:
    ref = case[f"{method}/{'hk' if hk else 'z'}"]
    k = len(case["effects"])
    res = random_effects(case["effects"], case["variances"], method=method,
                         hartung_knapp=hk, alpha=REFERENCE["alpha"])
    for key in ("estimate", "std_error", "ci_low", "ci_high", "tau2"):
        assert close(getattr(res, key), ref[key]), (key, getattr(res, key), ref[key])
    assert close(res.q, case["q"]) and res.q_df == k - 1
    assert res.i2 is not None and math.isclose(res.i2, case["i2"], abs_tol=1e-10)
    assert res.q_p_value is not None and math.isclose(res.q_p_value, case["q_p_value"],
                                                      abs_tol=1e-10)
    assert math.isclose(res.p_value, expected_p(ref, hk, k), rel_tol=1e-7, abs_tol=1e-15)
    assert res.df == (k - 1 if hk else None) and res.k == k
    assert math.isclose(sum(res.weights), 1.0, abs_tol=1e-12)


def test_the_stored_cases_cover_both_sides_of_q() -> None:
    # with Q <= k - 1 tau^2 is 0 (statsmodels' fixed-effect results are the reference)
    below = [c for c in CASES if c["q"] <= len(c["effects"]) - 1]
    above = [c for c in CASES if c["q"] > len(c["effects"]) - 1]
    assert len(below) >= 3 and len(above) >= 6
    assert {len(c["effects"]) for c in CASES} >= {2, 3, 5, 18}


def test_two_collections_by_hand() -> None:
    # y = (0.1, 0.3), v = (0.01, 0.01): fixed-effect mean 0.2, Q = 100 * 0.01 * 2 = 2 on
    # 1 df, c = 200 - 20000 / 200 = 100, tau^2_DL = (2 - 1) / 100 = 0.01; Paule-Mandel
    # solves 0.02 / (0.01 + t) = 1, t = 0.01. Weights 1 / 0.02 = 50 each: mu = 0.2,
    # SE = sqrt(1 / 100) = 0.1, I^2 = (2 - 1) / 2 = 0.5.
    y, v = [0.1, 0.3], [0.01, 0.01]
    assert dersimonian_laird(y, v) == pytest.approx(0.01, rel=1e-12)
    assert paule_mandel(y, v) == pytest.approx(0.01, rel=1e-12)
    for method in TAU2_METHODS:
        res = random_effects(y, v, method=method)
        assert res.estimate == pytest.approx(0.2, rel=1e-12)
        assert res.std_error == pytest.approx(0.1, rel=1e-12)
        assert res.tau == pytest.approx(0.1, rel=1e-10)
        assert res.q == pytest.approx(2.0, rel=1e-12) and res.i2 == pytest.approx(0.5)
        z = 1.959963984540054
        assert (res.ci_low, res.ci_high) == pytest.approx((0.2 - 0.1 * z, 0.2 + 0.1 * z))
        assert res.weights == pytest.approx((0.5, 0.5))
    # Hartung-Knapp: sum w (y - mu)^2 / ((k - 1) sum w) = 50 * 0.02 / 100 = 0.01; t on 1 df
    hk = random_effects(y, v, method="dl", hartung_knapp=True)
    assert hk.std_error == pytest.approx(0.1) and hk.df == 1
    assert hk.ci_high == pytest.approx(0.2 + 0.1 * 12.706204736174707)


def test_paule_mandel_solves_the_generalized_q_equation() -> None:
    rng = np.random.default_rng(7)
    for _ in range(50):
        k = int(rng.integers(2, 30))
        v = rng.uniform(1e-6, 1e-2, k)
        y = rng.normal(0.0, 0.1, k)
        t = paule_mandel(y, v)
        w = 1 / (v + t)
        q_gen = float(np.sum(w * (y - np.sum(w * y) / np.sum(w)) ** 2))
        w0 = 1 / v
        q0 = float(np.sum(w0 * (y - np.sum(w0 * y) / np.sum(w0)) ** 2))
        if q0 <= k - 1:
            assert t == 0.0
        else:
            assert t > 0 and q_gen == pytest.approx(k - 1, rel=1e-9)


def test_one_collection_is_its_own_effect_with_heterogeneity_undefined() -> None:
    for method in TAU2_METHODS:
        res = random_effects([0.05], [0.0004], method=method)
        assert (res.estimate, res.std_error, res.tau2, res.q, res.q_df) == (
            0.05, 0.02, 0.0, 0.0, 0)
        assert res.i2 is None and res.q_p_value is None and res.weights == (1.0,)
    with pytest.raises(MetaAnalysisError, match="at least two collections"):
        random_effects([0.05], [0.0004], hartung_knapp=True)


@pytest.mark.parametrize(("y", "v", "match"), [
    ([], [], "no effects"),
    ([0.1, 0.2], [0.01], "2 effects but 1 variances"),
    ([0.1, 0.2], [0.01, 0.0], "variance 2 \\(of 2\\) is 0"),
    ([0.1, math.nan], [0.01, 0.01], "not finite"),
])
def test_bad_effects_are_refused(y: list[float], v: list[float], match: str) -> None:
    with pytest.raises(MetaAnalysisError, match=match):
        random_effects(y, v)


def test_unknown_estimator_and_alpha_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown tau\\^2 estimator 'reml'"):
        random_effects([0.1, 0.2], [0.01, 0.01], method="reml")
    with pytest.raises(ValueError, match="alpha"):
        random_effects([0.1, 0.2], [0.01, 0.01], alpha=1.5)
    assert [m.value for m in Tau2] == list(TAU2_METHODS)


def test_paired_effect_is_the_mean_and_s2_over_n() -> None:
    d = [0.1, -0.2, 0.4, 0.0, 0.3]
    eff = paired_effect(d)
    # mean 0.12; deviations -0.02, -0.32, 0.28, -0.12, 0.18: squares sum 0.228, s^2 0.057
    assert eff.effect == pytest.approx(0.12) and eff.n == 5
    assert eff.variance == pytest.approx(0.057 / 5)
    assert eff.ci_high - eff.effect == pytest.approx(1.959963984540054 * math.sqrt(0.0114))
    with pytest.raises(MetaAnalysisError, match="1 paired query"):
        paired_effect([0.3])
    with pytest.raises(MetaAnalysisError, match=re.escape(
            "every one of the 4 per-query differences is +0.1")):
        paired_effect([0.1, 0.1, 0.1, 0.1])



def test_tiny_differences_are_not_equal_and_extreme_variances_are_refused() -> None:
    for scale in (1e-13, 2.0**-500, 1e-150):
        eff = paired_effect([1 * scale, 2 * scale, 3 * scale])
        # by hand: mean 2 s, sample variance s^2 (deviations -1, 0, 1), variance s^2 / 3
        assert eff.effect == pytest.approx(2 * scale, rel=1e-15)
        assert eff.variance == pytest.approx(scale * scale / 3, rel=1e-15)
    # a rounding residue is still no variance (the paired tests' rule)
    with pytest.raises(MetaAnalysisError, match="every one of the 3"):
        paired_effect([0.2, 0.7 - 0.5, 0.4 - 0.2])
    # s^2 / n of 1e-600 or 1e600 is no float64: refused, never inf or 0
    for scale in (1e-300, 1e300):
        with pytest.raises(MetaAnalysisError, match=r"outside the float64 range.*rescale"):
            paired_effect(np.array([1.0, 2.0, 4.0]) * scale)


@pytest.mark.parametrize(("method", "hk"), VARIANTS)
def test_pooling_is_scale_free(method: str, hk: bool) -> None:
    y = np.array([0.12, -0.03, 0.25, 0.07])
    v = np.array([0.004, 0.002, 0.009, 0.001])
    ref = random_effects(y, v, method=method, hartung_knapp=hk)
    for k in (-500, 500):  # exact powers of two: the same figures, scaled
        c = 2.0**k
        r = random_effects(y * c, v * c * c, method=method, hartung_knapp=hk)
        assert r.estimate == pytest.approx(ref.estimate * c, rel=1e-13)
        assert r.std_error == pytest.approx(ref.std_error * c, rel=1e-13)
        assert r.tau2 == pytest.approx(ref.tau2 * c * c, rel=1e-12)
        assert (r.q, r.p_value, *r.weights) == pytest.approx(
            (ref.q, ref.p_value, *ref.weights), rel=1e-12)


def test_effects_beyond_the_float_range_of_their_variances_give_clear_answers() -> None:
    # by hand: Q = sum (y - 2e-300)^2 / 1e-310 ~ 2e-290 < k - 1, so tau^2 = 0 and the
    # pooled effect is the plain mean with SE sqrt(1e-310 / 3); was scipy's "xtol too small"
    r = random_effects([1e-300, 3e-300, 2e-300], [1e-310] * 3)
    assert r.tau2 == 0.0 and r.estimate == pytest.approx(2e-300, rel=1e-15)
    assert r.std_error == pytest.approx(math.sqrt(1e-310 / 3), rel=1e-12)
    assert r.p_value == 1.0
    # 1e300 apart with standard errors of 1e-150: Q ~ 1e900, no float64; was scipy's
    # "The function value at x=inf is NaN"
    with pytest.raises(MetaAnalysisError, match="cannot be pooled"):
        random_effects([1e300, -1e300], [1e-300, 1e-300])
    for f in (paule_mandel, dersimonian_laird):
        with pytest.raises(MetaAnalysisError, match="cannot be pooled"):
            f([1e300, -1e300], [1e-300, 1e-300])
    # tau^2 of about 1e600: refused with the fix
    with pytest.raises(MetaAnalysisError, match=r"tau\^2 \(about 1e\+600\).*rescale"):
        random_effects([1e300, -1e300], [1e299, 1e299])


def test_hartung_knapp_on_effects_that_agree_exactly_says_it_is_degenerate() -> None:
    with pytest.warns(RuntimeWarning, match="Hartung-Knapp variance estimate"):
        r = random_effects([0.1, 0.1], [0.01, 0.02], hartung_knapp=True)
    # SE_HK = sqrt(sum w (y - mu)^2 / ((k - 1) sum w)) = 0: width 0, p 0
    assert r.std_error == 0.0 and r.p_value == 0.0 and r.ci_low == r.ci_high == 0.1
    assert r.note is not None and "degenerate" in r.note
    z = random_effects([0.1, 0.1], [0.01, 0.02])
    # by hand: tau^2 0, SE = 1 / sqrt(100 + 50), p = 2 (1 - Phi(0.1 sqrt(150)))
    assert z.note is None
    assert z.p_value == pytest.approx(2 * stats.norm.sf(0.1 * math.sqrt(150)), rel=1e-12)


# ---------------------------------------------------------------- meta_compare
def run(name: str, values: dict[str, float], metric: str) -> RunResult:
    return RunResult(name=name, per_query=[QueryResult(q, [], {metric: v})
                                           for q, v in values.items()])


def vaswani(case: dict[str, Any]) -> dict[str, tuple[RunResult, RunResult]]:
    """The case's collections: the -M100 run (baseline) and the full run (candidate)
    over each part's queries, with trec_eval's per-query values."""
    metric = case["metric"]
    return {part: (run("bm25@100", {q: case["baseline"][q] for q in ids}, metric),
                   run("bm25", {q: case["candidate"][q] for q in ids}, metric))
            for part, ids in case["collections"].items()}


REAL = [c for c in CASES if c["name"].startswith("vaswani")]


@pytest.mark.parametrize("case", REAL, ids=[c["name"] for c in REAL])
@pytest.mark.parametrize(("method", "hk"), VARIANTS, ids=[f"{m}-{'hk' if h else 'z'}"
                                                          for m, h in VARIANTS])
def test_meta_compare_on_real_runs_matches_statsmodels(case: dict[str, Any], method: str,
                                                       hk: bool) -> None:
    metric = case["metric"]
    result = meta_compare(vaswani(case), metrics=[metric], tau2=method, hartung_knapp=hk)
    assert isinstance(result, MetaComparison) and result.metrics == (metric,)
    pooled = result.get(metric)
    for row, y, v, ids in zip(pooled.collections, case["effects"], case["variances"],
                              case["collections"].values(), strict=True):
        assert row.effect == pytest.approx(y, rel=1e-12, abs=1e-15)
        assert row.std_error ** 2 == pytest.approx(v, rel=1e-10)
        assert row.n_queries == len(ids)
        assert row.candidate_mean == pytest.approx(
            sum(case["candidate"][q] for q in ids) / len(ids))
    ref = case[f"{method}/{'hk' if hk else 'z'}"]
    for key in ("estimate", "std_error", "ci_low", "ci_high", "tau2"):
        assert close(getattr(pooled, key), ref[key]), key
    assert close(pooled.q, case["q"]) and close(pooled.i2, case["i2"])
    assert pooled.k == len(case["effects"]) and pooled.n_queries == 93
    # one metric: Holm over one p leaves it as it is
    assert pooled.p_adjusted == pytest.approx(expected_p(ref, hk, pooled.k), rel=1e-7)
    assert pooled.significant == (pooled.p_value < 0.05)


def test_metrics_are_adjusted_together_by_holm() -> None:
    ap, ndcg = (next(c for c in REAL if c["name"] == f"vaswani-{m}-3") for m in ("ap", "ndcg"))
    both = {}
    for part, ids in ap["collections"].items():
        base = RunResult("bm25@100", [QueryResult(q, [], {"ap": ap["baseline"][q],
                                                          "ndcg": ndcg["baseline"][q]})
                                      for q in ids])
        cand = RunResult("bm25", [QueryResult(q, [], {"ap": ap["candidate"][q],
                                                      "ndcg": ndcg["candidate"][q]})
                                  for q in ids])
        both[part] = (base, cand)
    result = evalkit.meta_compare(both)
    assert result.metrics == ("ap", "ndcg")
    p = [result.get(m).p_value for m in result.metrics]
    small, large = sorted(p)
    expected = {small: min(1.0, 2 * small), large: max(min(1.0, 2 * small), large)}
    assert [result.get(m).p_adjusted for m in result.metrics] == pytest.approx(
        [expected[x] for x in p])
    assert "p adjusted by Holm over 2 metrics" in result.description
    none = evalkit.meta_compare(both, correction="none")
    assert all(r.p_adjusted is None for r in none)


def test_the_json_document_reads_back_and_deep_text_is_refused() -> None:
    case = next(c for c in REAL if c["name"] == "vaswani-ap-3")
    result = meta_compare(vaswani(case), metrics=["ap"])
    doc = json.dumps(result.to_json(), allow_nan=False)
    back = MetaComparison.from_json(doc)
    assert back.to_json() == json.loads(doc)
    assert back.get("ap").estimate == result.get("ap").estimate
    with pytest.raises(ValueError, match="nested"):
        MetaComparison.from_json("[" * 100_000 + "]" * 100_000)


def test_a_collection_without_variance_is_refused_by_name() -> None:
    same = {"q1": 0.5, "q2": 0.6, "q3": 0.7}
    shifted = {q: v + 0.1 for q, v in same.items()}
    other = {"q1": 0.5, "q2": 0.2, "q3": 0.9}
    collections = {"robust04": (run("a", same, "ap"), run("b", other, "ap")),
                   "trec-covid": (run("a", same, "ap"), run("b", shifted, "ap"))}
    with pytest.raises(ComparisonError, match=re.escape(
            "collection 'trec-covid', ap: every one of the 3 per-query differences is +0.1")):
        meta_compare(collections)
    one = {"robust04": (run("a", {"q1": 0.5}, "ap"), run("b", {"q1": 0.6}, "ap"))}
    with pytest.raises(ComparisonError, match="collection 'robust04', ap: 1 paired query"):
        meta_compare(one)


def test_mismatched_queries_in_a_collection_are_refused_as_compare_does() -> None:
    a = run("a", {"q1": 0.5, "q2": 0.6, "q3": 0.1}, "ap")
    b = run("b", {"q1": 0.5, "q2": 0.2, "q4": 0.9}, "ap")
    with pytest.raises(ComparisonError, match=re.escape(
            "collection 'nfcorpus': the runs cover different queries: 1 only in run 'a' "
            "(e.g. q3)")):
        meta_compare({"nfcorpus": (a, b)})


def test_one_collection_gives_its_effect_and_says_heterogeneity_is_undefined() -> None:
    base = run("a", {"q1": 0.5, "q2": 0.2, "q3": 0.1}, "ap")
    cand = run("b", {"q1": 0.6, "q2": 0.5, "q3": 0.1}, "ap")
    result = meta_compare({"only": (base, cand)})
    p = result.get("ap")
    d = [0.1, 0.3, 0.0]
    assert p.estimate == pytest.approx(sum(d) / 3) and p.tau2 == 0 and p.i2 is None
    assert p.std_error == pytest.approx(float(np.std(d, ddof=1)) / math.sqrt(3))
    assert any("heterogeneity (I^2, Q) is undefined" in w for w in result.warnings)
    with pytest.raises(ComparisonError, match="--hartung-knapp needs at least two"):
        meta_compare({"only": (base, cand)}, hartung_knapp=True)


@pytest.mark.parametrize(("collections", "options", "match"), [
    ({}, {}, "no collections"),
    ({"x": ("a.txt",)}, {}, "collection 'x': expected \\(baseline, candidate\\)"),
    ({" ": ("a", "b")}, {}, "collection name ' '"),
    ({"a\x1b[2J": ("a", "b")}, {}, "collection name 'a\\\\x1b\\[2J' holds a control"),
    ({"x": ("a", "b")}, {"tau2": "reml"}, "--tau2 reml: expected one of pm, dl"),
    ({"x": ("a", "b")}, {"correction": "westfall-young"}, "westfall-young needs resamples"),
    ({"x": ("a", "b")}, {"alpha": 1.0}, "--alpha 1"),
])
def test_bad_requests_are_refused_before_reading(collections: dict[str, Any],
                                                 options: dict[str, Any], match: str) -> None:
    with pytest.raises(ComparisonError, match=match):
        meta_compare(collections, **options)


def test_without_metrics_the_collections_share_theirs() -> None:
    def pair(metrics: list[str], shift: float = 0.0) -> tuple[RunResult, RunResult]:
        values = {"q1": 0.1 + shift, "q2": 0.5, "q3": 0.2}
        return (RunResult("a", [QueryResult(q, [], dict.fromkeys(metrics, v))
                                for q, v in values.items()]),
                RunResult("b", [QueryResult(q, [], dict.fromkeys(metrics, v * v + 0.1))
                                for q, v in values.items()]))

    result = meta_compare({"x": pair(["ap", "rr", "ndcg@10"]),
                           "y": pair(["rr", "ap"], 0.25)})
    assert result.metrics == ("ap", "rr")
    with pytest.raises(ComparisonError, match="the collections share no metric"):
        meta_compare({"x": pair(["ap"]), "y": pair(["rr"])})


def test_collections_pairing_the_same_queries_with_the_same_differences_are_refused(
        ) -> None:
    base = {"q1": 0.5, "q2": 0.25, "q3": 0.75}
    cand = {"q1": 0.625, "q2": 0.5, "q3": 0.5}
    one = (run("a", cand, "ap"), run("b", base, "ap"))
    again = (run("a", cand, "ap"), run("b", base, "ap"))  # other objects, no recorded start
    with pytest.raises(ComparisonError, match=re.escape(
            "collections 'x' and 'y' are the same evidence: on ap they pair the same 3 "
            "query ids with the same per-query differences")):
        meta_compare({"x": one, "y": again}, metrics=["ap"])
    with pytest.raises(ComparisonError, match=re.escape(
            "collections 'x' and 'y' are the same evidence: the baseline of 'x' and the "
            "baseline of 'y' are one object")):
        meta_compare({"x": one, "y": (one[0], again[1])}, metrics=["ap"])
    # the same differences on other queries are another collection's evidence
    moved = (run("a", {f"m{q}": v for q, v in cand.items()}, "ap"),
             run("b", {f"m{q}": v for q, v in base.items()}, "ap"))
    assert meta_compare({"x": one, "y": moved}, metrics=["ap"]).get("ap").k == 2


def test_meta_compare_warns_of_a_degenerate_hartung_knapp_interval() -> None:
    base = {"q1": 0.5, "q2": 0.25, "q3": 0.75}
    cand = {"q1": 0.625, "q2": 0.5, "q3": 0.75}
    collections = {name: (run("a", {f"{name}-{q}": v for q, v in cand.items()}, "ap"),
                          run("b", {f"{name}-{q}": v for q, v in base.items()}, "ap"))
                   for name in ("robust04", "trec-covid")}  # equal effects, own queries
    with pytest.warns(RuntimeWarning):
        got = meta_compare(collections, metrics=["ap"], hartung_knapp=True)
    assert got.get("ap").std_error == 0.0
    assert any(w.startswith("ap: the effects agree exactly") for w in got.warnings)
    assert not any("agree exactly" in w for w in meta_compare(collections,
                                                              metrics=["ap"]).warnings)
