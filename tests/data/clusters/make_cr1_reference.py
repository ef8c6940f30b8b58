"""Make ``statsmodels_reference.json``: statsmodels' cluster-robust (CR1) standard error
of a mean difference, for tests/test_clusters.py, stored because statsmodels takes
seconds to import on the shared 2-core machine (pandas and patsy).

Run from the repository root, with statsmodels installed (the version is stored)::

    pip install statsmodels
    python tests/data/clusters/make_cr1_reference.py

Each case is per-case differences ``d`` and a cluster per case. statsmodels regresses
``d`` on a constant, ``OLS(d, ones).fit(cov_type="cluster", cov_kwds={"groups": codes},
use_t=True)``; what is stored: the coefficient (the mean difference), its standard error
``bse``, the t statistic, the p-value and the 95% interval (Student t on ``G - 1``
degrees of freedom, statsmodels' ``df_resid_inference`` for clustered errors). Its
default small-sample correction (``use_correction=True``) multiplies the sandwich by
``G / (G - 1) * (N - 1) / (N - K)``; with ``K = 1`` (the constant) the second factor is 1,
so it is the CR1 of Cameron and Miller (2015) that evalkit computes. The uncorrected
(CR0) standard error is stored too (``use_correction=False``), to show the factor.

Cases:

* ``random-*``: differences with a cluster effect, clusters of equal and of unequal sizes
  (numpy's default_rng, seeds in the names); the drawn values are stored.
* ``singletons``: every case its own cluster: CR1 is then the ordinary paired t-test's
  standard error ``s / sqrt(n)``.
* ``vaswani-*``: the per-query AP and nDCG that trec_eval 10.0 printed for the Vaswani
  BM25 run (``examples/vaswani/data/expected/``) at full depth minus depth 100, the 93
  queries put into clusters of consecutive ids (7 and 31 clusters, unequal sizes).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import statsmodels
import statsmodels.api as sm

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


def reference(name: str, d: list[float], clusters: list[str]) -> dict[str, object]:
    labels = sorted(set(clusters))
    codes = np.array([labels.index(c) for c in clusters])
    y = np.asarray(d, dtype=np.float64)
    X = np.ones((y.size, 1))
    fit = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)
    cr0 = sm.OLS(y, X).fit(cov_type="cluster",
                           cov_kwds={"groups": codes, "use_correction": False})
    lo, hi = fit.conf_int(alpha=0.05)[0]
    return {"name": name, "d": y.tolist(), "clusters": clusters,
            "n_clusters": len(labels), "mean": float(fit.params[0]),
            "se": float(fit.bse[0]), "se_cr0": float(cr0.bse[0]),
            "t": float(fit.tvalues[0]), "p_value": float(fit.pvalues[0]),
            "df": float(fit.df_resid_inference), "ci_low": float(lo), "ci_high": float(hi)}


def random_cases() -> list[dict[str, object]]:
    cases = []
    for seed, G, equal in ((1, 5, True), (2, 12, True), (3, 30, True), (4, 8, False),
                           (5, 25, False), (6, 60, False)):
        rng = np.random.default_rng(seed)
        sizes = np.full(G, 4) if equal else rng.integers(1, 9, G)
        shift = rng.normal(0.0, 0.1, G)
        d: list[float] = []
        names: list[str] = []
        for g, k in enumerate(sizes.tolist()):
            d.extend((0.02 + shift[g] + rng.normal(0.0, 0.15, k)).tolist())
            names.extend([f"c{g:02d}"] * k)
        cases.append(reference(f"random-seed{seed}-G{G}-{'equal' if equal else 'unequal'}",
                               d, names))
    rng = np.random.default_rng(7)
    d = rng.normal(0.01, 0.2, 40).tolist()
    cases.append(reference("singletons", d, [f"q{i}" for i in range(40)]))
    return cases


def vaswani_cases() -> list[dict[str, object]]:
    full = EXPECTED / "trec_eval-10.0.all_trec.q.bm25.txt"
    cut = EXPECTED / "trec_eval-10.0.all_trec.q.c.M100.bm25.txt"
    cases = []
    for measure, metric in (("map", "ap"), ("ndcg", "ndcg")):
        cand, base = trec_eval_values(full, measure), trec_eval_values(cut, measure)
        ids = sorted(cand, key=int)
        assert ids == sorted(base, key=int) and len(ids) == 93
        for parts in (7, 31):
            groups = np.array_split(np.array(ids), parts)
            names = [f"part{g}" for g, grp in enumerate(groups) for _ in grp]
            case = reference(f"vaswani-{metric}-{parts}",
                             [cand[q] - base[q] for q in ids], names)
            case["ids"] = ids
            case["candidate"] = [cand[q] for q in ids]
            case["baseline"] = [base[q] for q in ids]
            cases.append(case)
    return cases


def main() -> None:
    doc = {"statsmodels": statsmodels.__version__, "alpha": 0.05,
           "cases": random_cases() + vaswani_cases()}
    (HERE / "statsmodels_reference.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
