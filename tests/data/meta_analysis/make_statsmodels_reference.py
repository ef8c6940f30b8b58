"""Make ``statsmodels_reference.json``: statsmodels' random-effects pooling of the effects
and variances tests/test_stats_meta.py feeds evalkit, stored because statsmodels takes
seconds to import (``python -X importtime -c "import statsmodels.stats.meta_analysis"``:
1.7 to 5.7 s on the shared 2-core machine, most of it pandas and patsy).

Run from the repository root, with statsmodels installed (0.15.0 made the stored file)::

    pip install statsmodels==0.15.0
    python tests/data/meta_analysis/make_statsmodels_reference.py

Cases:

* ``random-*``: effects and variances drawn here (numpy's default_rng, seeds in the
  names), from k = 2 to 18 collections, from none to much heterogeneity; the drawn values
  are stored, so the test does not depend on the generator.
* ``vaswani-*``: real effects: the per-query AP and nDCG that trec_eval 10.0 printed for
  the Vaswani BM25 run (``examples/vaswani/data/expected/``) at full depth (the
  candidate) and cut at depth 100 (``-M100``, the baseline), the 93 queries split by id
  into 3 or 5 consecutive "collections"; each collection's effect is the mean of its
  differences and its variance ``s^2 / n`` (numpy, ``ddof=1``). The per-query values are
  stored too, so the test builds the same runs for ``evalkit.meta_compare``.

What is stored from ``statsmodels.stats.meta_analysis.combine_effects``, per case and
``method_re`` ("dl", "pm") and ``use_t`` (False: normal interval; True:
Hartung-Knapp-Sidik-Jonkman): the pooled estimate, its standard error and interval,
``tau2``, Q, I^2 and the p of Q (``test_homogeneity``). Two properties of statsmodels
are handled here, not in evalkit:

* its DerSimonian-Laird ``tau2`` is ``(Q - (k - 1)) / c`` without the truncation at 0 of
  DerSimonian and Laird (1986), and its I^2 is ``1 - (k - 1) / Q`` without the one at 0
  of Higgins and Thompson (2002). Where Q <= k - 1 the estimator is 0, the random-effects
  model is then the fixed-effect one, and statsmodels' fixed-effect results
  (``mean_effect_fe``, ``sd_eff_w_fe``, ``sd_eff_w_fe_hksj`` and the matching
  ``conf_int`` entries) are stored; I^2 is stored as max(0, I^2).
* its Paule-Mandel iteration (``_fit_tau_iterative``, Newton steps from 0 until the
  estimating equation is within ``atol`` of 0) resets tau2 to 0 when rounding makes the
  equation a hair negative after a full step. The tightest ``atol`` of 1e-10 ... 1e-5
  whose answer is positive exactly when Q > k - 1 is used (stored per case).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import statsmodels
from statsmodels.stats.meta_analysis import combine_effects

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
EXPECTED = REPO / "examples" / "vaswani" / "data" / "expected"


def trec_eval_values(path: Path, measure: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == measure and parts[1] != "all":
            out[parts[1]] = float(parts[2])
    return out


def pooled(y: np.ndarray, v: np.ndarray) -> dict[str, object]:
    k = len(y)
    out: dict[str, object] = {}
    dl = combine_effects(y, v, method_re="dl")
    heterogeneous = bool(dl.q > k - 1)
    for method in ("dl", "pm"):
        atol = None
        if method == "dl":
            res = dl
        else:
            for atol in (1e-10, 1e-9, 1e-8, 1e-7, 1e-6, 1e-5):
                res = combine_effects(y, v, method_re="pm", atol=atol, maxiter=1000)
                if (res.tau2 > 0) == heterogeneous:
                    break
            else:
                raise AssertionError("statsmodels' Paule-Mandel iteration did not settle")
        re = heterogeneous or method == "pm"  # DL with Q <= k-1: the fixed-effect model
        for use_t in (False, True):
            ci = res.conf_int(alpha=0.05, use_t=use_t)
            if re:
                est = res.mean_effect_re
                se = res.sd_eff_w_re_hksj if use_t else res.sd_eff_w_re
                lo, hi = ci[3] if use_t else ci[1]
            else:
                est = res.mean_effect_fe
                se = res.sd_eff_w_fe_hksj if use_t else res.sd_eff_w_fe
                lo, hi = ci[2] if use_t else ci[0]
            out[f"{method}/{'hk' if use_t else 'z'}"] = {
                "estimate": float(est), "std_error": float(se), "ci_low": float(lo),
                "ci_high": float(hi), "tau2": float(max(res.tau2, 0.0)) if re else 0.0,
                "pm_atol": atol,
            }
    out["q"] = float(dl.q)
    out["i2"] = float(max(dl.i2, 0.0))
    out["q_p_value"] = float(dl.test_homogeneity().pvalue)
    return out


def random_cases() -> list[dict[str, object]]:
    cases = []
    for seed, k, spread in ((1, 2, 0.0), (2, 2, 0.05), (3, 3, 0.0), (4, 3, 0.03),
                            (5, 5, 0.01), (6, 5, 0.06), (7, 10, 0.02), (8, 18, 0.04),
                            (9, 18, 0.0), (10, 8, 0.1)):
        rng = np.random.default_rng(seed)
        v = rng.uniform(1e-5, 2e-3, k)
        y = 0.02 + rng.normal(0.0, spread, k) + rng.normal(0.0, np.sqrt(v))
        cases.append({"name": f"random-seed{seed}-k{k}", "effects": y.tolist(),
                      "variances": v.tolist(), **pooled(y, v)})
    return cases


def vaswani_cases() -> list[dict[str, object]]:
    full = EXPECTED / "trec_eval-10.0.all_trec.q.bm25.txt"
    cut = EXPECTED / "trec_eval-10.0.all_trec.q.c.M100.bm25.txt"
    cases = []
    for measure, metric in (("map", "ap"), ("ndcg", "ndcg")):
        cand, base = trec_eval_values(full, measure), trec_eval_values(cut, measure)
        ids = sorted(cand, key=int)
        assert ids == sorted(base, key=int) and len(ids) == 93
        for parts in (3, 5):
            groups = [list(g) for g in np.array_split(np.array(ids), parts)]
            y, v = [], []
            for g in groups:
                d = np.array([cand[q] - base[q] for q in g])
                y.append(float(d.mean()))
                v.append(float(d.var(ddof=1) / d.size))
            cases.append({
                "name": f"vaswani-{metric}-{parts}", "metric": metric,
                "collections": {f"part{i + 1}": g for i, g in enumerate(groups)},
                "candidate": {q: cand[q] for q in ids}, "baseline": {q: base[q] for q in ids},
                "effects": y, "variances": v,
                **pooled(np.array(y), np.array(v)),
            })
    return cases


def main() -> None:
    # statsmodels takes the square root of the negative variances its untruncated DL
    # tau2 gives when Q < k - 1; those columns are not stored (the fixed-effect ones are)
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    doc = {"statsmodels": statsmodels.__version__, "alpha": 0.05,
           "cases": random_cases() + vaswani_cases()}
    (HERE / "statsmodels_reference.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
