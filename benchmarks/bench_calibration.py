"""Calibration of every paired method: type I error under realistic nulls, and power.

Per-query differences come from the Vaswani collection (examples/vaswani): BM25 and
TF-IDF are run with the example's retrievers and scored with ``evaluate_run``; a third
run is the Terrier BM25 run bundled in examples/vaswani/data/runs.

Nulls (each simulated comparison draws ``n`` differences with replacement from a pool):

* ``AP sign-exchange``: AP(bm25) - AP(tfidf), each drawn difference given a random sign
  (H0: the two systems are exchangeable per query);
* ``nDCG@10 close pair``: nDCG@10(terrier bm25) - nDCG@10(example bm25), sign exchange;
* ``P@1 (0/1 metric)``: P@1(bm25) - P@1(tfidf) in {-1, 0, 1}, sign exchange;
* ``RR centred (skewed)``: RR(bm25) - RR(tfidf) minus its mean: mean 0 but asymmetric,
  so no test is exact;
* ``exponential(1) - 1``: a heavily skewed synthetic null (skewness 2).

Power: the AP pool under sign exchange plus a true effect of 0.3 sd; and the P@1 pool's
magnitudes with a sign that is + with probability 0.65 (a 0/1 metric where one system
wins 65% of the queries on which the two disagree).

Repeated samples (``--samples-only``): K = 5 samples per case under a null whose case
differences are the AP pool's with random signs, at high and low within-case noise, n =
25, 50, 100, ``--samples-trials`` (4,000) trials each; the default test on the per-case
means.

Every method sees the same simulated data in each trial; the first ``--trials`` trials
run every method, the default ("auto": the randomization test, or the t-test for binary
differences), the randomization test and the t-test continue to ``--default-trials``.
Rates are rejections at alpha = 0.05 (two-sided); "+-" is the binomial standard error.

    .venv/bin/python benchmarks/bench_calibration.py [--trials 2000] [--default-trials 10000]
    .venv/bin/python benchmarks/bench_calibration.py --samples-only [--samples-trials 4000]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ALPHA = 0.05
NS = (25, 50, 100, 300)
METHODS = ("auto (default)", "randomization", "t-test", "bootstrap-t", "bootstrap (p)",
           "bootstrap (CI)", "BCa CI")


def vaswani_pools() -> dict[str, np.ndarray]:
    sys.path.insert(0, str(ROOT / "examples" / "vaswani"))
    import retrieval  # type: ignore[import-not-found, unused-ignore]

    from evalkit import evaluate_run

    data = retrieval.DATA_DIR
    qrels = data / "qrels"
    docs = retrieval.load_documents()
    queries = retrieval.load_queries()
    bm25, tfidf = retrieval.build(docs)
    metrics = ["AP", "nDCG@10", "P@1", "RR"]
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for system in (bm25, tfidf):
            f = retrieval.write_trec_run(Path(tmp) / f"{system.name}.txt",
                                         system.score_all(queries), tag=system.name)
            runs[system.name] = evaluate_run(f, qrels, metrics)
    runs["terrier"] = evaluate_run(data / "runs" / "run.vaswani.bm25.txt", qrels, metrics)

    def diff(x: str, y: str, metric: str) -> np.ndarray:
        canon = runs[x].metric_names()[metrics.index(metric)]
        sx, sy = runs[x].scores(canon), runs[y].scores(canon)
        return np.array([sx[q] - sy[q] for q in sorted(sx)])

    rr = diff("bm25", "tfidf", "RR")
    return {
        "AP sign-exchange": diff("bm25", "tfidf", "AP"),
        "nDCG@10 close pair": diff("terrier", "bm25", "nDCG@10"),
        "P@1 (0/1 metric)": diff("bm25", "tfidf", "P@1"),
        "RR centred (skewed)": rr - rr.mean(),
    }


def decide(d: np.ndarray, seed: int, full: bool, B: int) -> dict[str, bool]:
    """Each method's two-sided decision at ALPHA on differences ``d`` (library code)."""
    from evalkit.stats._kernels import bootstrap_sums, signflip_sums
    from evalkit.stats.bootstrap import mean_and_centred, tie_tolerance
    from evalkit.stats.degenerate import constant_outcome
    from evalkit.stats.intervals import (
        bca_ci,
        percentile_ci,
        studentized_p,
        studentized_stats,
    )
    from evalkit.stats.methods import is_binary
    from evalkit.stats.randomization import signflip_p
    from evalkit.stats.ttest import t_test

    n = d.size
    mean, centred, const = mean_and_centred(d)
    out: dict[str, bool] = {}
    if const:
        for m, key in (("randomization", "randomization"), ("t-test", "t-test"),
                       ("bootstrap-t", "bootstrap-t"), ("bootstrap", "bootstrap (p)")):
            out[key] = constant_outcome(mean, n, B, m, ALPHA, "two-sided")[0] < ALPHA
        out["bootstrap (CI)"] = mean != 0
        out["BCa CI"] = mean != 0
        out["auto (default)"] = out["randomization"]
        return out
    tol = tie_tolerance(d)
    var = math.fsum((centred * centred).tolist()) / (n - 1)
    se = math.sqrt(var / n)
    flips, signs = signflip_sums(d, B, seed, backend="numba")
    out["randomization"] = signflip_p(flips[:, 0], signs, n, mean, 0.0, "two-sided", False,
                                      tol) < ALPHA
    out["t-test"] = t_test(mean, se, n, ALPHA, "two-sided")[0] < ALPHA
    out["auto (default)"] = out["t-test"] if is_binary(d) else out["randomization"]
    if not full:
        return out
    sums, sq = bootstrap_sums(centred, B, seed, want_squares=True, backend="numba")
    assert sq is not None
    dev = sums[:, 0] / n
    extreme = int(np.count_nonzero(np.abs(dev) >= abs(mean) - tol))
    out["bootstrap (p)"] = (extreme + 1) / (B + 1) < ALPHA
    lo, hi = percentile_ci(mean, dev, ALPHA, "two-sided")
    out["bootstrap (CI)"] = bool(lo > 0 or hi < 0)
    lo, hi = bca_ci(mean, dev, centred, ALPHA, "two-sided", tol)
    out["BCa CI"] = bool(lo > 0 or hi < 0)
    tstar = studentized_stats(dev, sq[:, 0], n, var, tol)
    t_obs = mean / se
    out["bootstrap-t"] = studentized_p(t_obs, tstar, "two-sided",
                                       1e-10 * max(1.0, abs(t_obs))) < ALPHA
    return out


def simulate(pool: np.ndarray, n: int, trials: int, default_trials: int, B: int,
             sign_exchange: bool, shift: float, seed: int,
             p_plus: float = 0.5) -> dict[str, tuple[int, int]]:
    """Rejections and trials per method; key "discordant" holds (default only,
    t-test only) over the trials both ran."""
    rng = np.random.default_rng(seed)
    counts = {m: [0, 0] for m in METHODS}
    only_r = only_t = 0
    for t in range(max(trials, default_trials)):
        d = pool[rng.integers(0, pool.size, size=n)]
        if sign_exchange:
            d = d * np.where(rng.random(size=n) < p_plus, 1.0, -1.0)
        d = d + shift
        res = decide(d, 1_000_003 * seed + t, t < trials, B)
        for m, rej in res.items():
            counts[m][0] += int(rej)
            counts[m][1] += 1
        only_r += int(res["auto (default)"] and not res["t-test"])
        only_t += int(res["t-test"] and not res["auto (default)"])
    out = {m: (c[0], c[1]) for m, c in counts.items()}
    out["discordant"] = (only_r, only_t)
    return out


def binary_conditional_size(n: int = 100) -> None:
    """Exact size of the t-test and the sign-flip test on 0/1-metric differences, given
    k discordant queries (under H0 each discordant query favours either system with
    probability 1/2): enumerated, no simulation."""
    from scipy.special import comb

    from evalkit.stats.ttest import t_test

    def p_t(b: int, c: int) -> float:
        d = np.array([1.0] * b + [-1.0] * c + [0.0] * (n - b - c))
        if b + c == 0 or (c == 0 and b == n) or (b == 0 and c == n):
            return 1.0
        mean = d.mean()
        se = d.std(ddof=1) / math.sqrt(n)
        return t_test(float(mean), float(se), n, ALPHA, "two-sided")[0]

    def p_exact(b: int, k: int) -> float:
        hi = sum(comb(k, j, exact=True) for j in range(b, k + 1))
        lo = sum(comb(k, j, exact=True) for j in range(0, b + 1))
        return float(min(1.0, 2.0 * min(hi, lo) / 2**k))

    print(f"\n0/1 metric, n = {n}: exact size (%) given k discordant queries")
    print(f"{'k':>5}{'t-test':>10}{'sign-flip':>11}")
    for k in (4, 6, 8, 10, 20, 30, 50, 100):
        w = [comb(k, b, exact=True) / 2**k for b in range(k + 1)]
        size_t = sum(wb for b, wb in enumerate(w) if p_t(b, k - b) < ALPHA)
        size_r = sum(wb for b, wb in enumerate(w) if p_exact(b, k) < ALPHA)
        print(f"{k:>5}{100 * size_t:>10.1f}{100 * size_r:>11.1f}")


#: Within-case noise (sd of one sample around its case's mean) of the repeated-samples null.
SAMPLE_NOISE = {"high": 0.25, "low": 0.02}
SAMPLE_NS = (25, 50, 100)


def samples_null(pool: np.ndarray, n: int, k: int, noise: float, trials: int, B: int,
                 seed: int) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], float]:
    """Type I error of the default test (and the t-test) on K-sample means under a null
    with repeated samples: case i's true difference is an AP difference of the pool with
    a random sign (the systems are exchangeable per case), and each of the K samples of
    each system adds N(0, noise^2). The test sees the per-case means, paired by case.
    Returns (default rejections, trials), (t-test rejections, trials), the t-test's
    rejections when the n x K sample differences are wrongly taken as n x K cases, and the
    mean within-case share of the variance of the per-case differences."""
    from scipy import stats as sps

    rng = np.random.default_rng(seed)
    delta = pool[rng.integers(0, pool.size, size=(trials, n))]
    delta = delta * np.where(rng.random(size=(trials, n)) < 0.5, 1.0, -1.0)
    a = 0.5 + delta[:, :, None] / 2 + rng.normal(0.0, noise, size=(trials, n, k))
    b = 0.5 - delta[:, :, None] / 2 + rng.normal(0.0, noise, size=(trials, n, k))
    d = a.mean(axis=2) - b.mean(axis=2)  # reduced by the mean, paired by case
    within = (a.var(axis=2, ddof=1) + b.var(axis=2, ddof=1)).mean(axis=1) / k
    share = float(np.mean(np.minimum(1.0, within / d.var(axis=1, ddof=1))))
    flat = (a - b).reshape(trials, n * k)  # what pairing by (case, sample) would test
    naive = int(np.count_nonzero(sps.ttest_1samp(flat, 0.0, axis=1).pvalue < ALPHA))
    default = ttest = 0
    for t in range(trials):
        res = decide(d[t], 1_000_003 * seed + t, False, B)
        default += int(res["auto (default)"])
        ttest += int(res["t-test"])
    return (default, trials), (ttest, trials), (naive, trials), share


def samples_table(pool: np.ndarray, trials: int, B: int, k: int = 5) -> None:
    """The repeated-samples table of docs/statistics.md."""
    print(f"\nType I error (%) with K = {k} samples per case (per-case means, paired by case;"
          f" {trials:,} trials each)")
    print(f"{'within-case noise':<20}{'n':>5}{'within share':>14}{'default (auto)':>18}"
          f"{'t-test':>16}{'samples as cases':>20}")
    for j, (label, noise) in enumerate(SAMPLE_NOISE.items()):
        for n in SAMPLE_NS:
            c_def, c_t, c_naive, share = samples_null(pool, n, k, noise, trials, B,
                                                      seed=11_000 + 100 * j + n)
            print(f"{label + f' (sd {noise:g})':<20}{n:>5}{100 * share:>13.1f}%"
                  f"{rate(c_def):>18}{rate(c_t):>16}{rate(c_naive):>20}", flush=True)


def rate(c: tuple[int, int]) -> str:
    k, total = c
    if total == 0:
        return "-"
    p = k / total
    return f"{100 * p:5.2f} +- {100 * math.sqrt(p * (1 - p) / total):4.2f}"


def skew(x: np.ndarray) -> float:
    e = x - x.mean()
    return float(np.mean(e**3) / np.mean(e**2) ** 1.5)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--default-trials", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--ns", type=int, nargs="*", default=list(NS))
    parser.add_argument("--power-only", action="store_true", help="skip the type I tables")
    parser.add_argument("--samples-trials", type=int, default=4000,
                        help="trials per row of the repeated-samples (K = 5) table")
    parser.add_argument("--samples-only", action="store_true",
                        help="only the repeated-samples (K = 5) table")
    args = parser.parse_args()
    from evalkit.stats import DEFAULT_METHOD

    t_start = time.perf_counter()
    pools = vaswani_pools()
    rng = np.random.default_rng(0)
    expo = rng.exponential(1.0, size=100_000)
    pools["exponential(1) - 1"] = expo - expo.mean()  # centred exactly: mean 0
    print(f"alpha = {ALPHA}, B = {args.resamples:,}; every method {args.trials:,} trials, "
          f"default ({DEFAULT_METHOD}), randomization and t-test {args.default_trials:,}; "
          "rates in %, +- one SE")
    if args.samples_only:
        samples_table(pools["AP sign-exchange"], args.samples_trials, args.resamples)
        print(f"\ntotal {time.perf_counter() - t_start:.0f} s")
        return 0
    for name, pool in pools.items():
        print(f"  pool {name}: {pool.size} values, mean {pool.mean():+.4f}, "
              f"sd {pool.std(ddof=1):.4f}, skewness {skew(pool):+.2f}")
    header = f"{'null':<22}{'n':>5}  " + "".join(f"{m:>16}" for m in METHODS)
    print("\nType I error (%)\n" + header)
    for k, (name, pool) in enumerate(pools.items()):
        if args.power_only:
            break
        sign = "centred" not in name and not name.startswith("exponential")
        for n in args.ns:
            c = simulate(pool, n, args.trials, args.default_trials, args.resamples, sign, 0.0,
                         seed=100 * k + n)
            print(f"{name:<22}{n:>5}  " + "".join(f"{rate(c[m]):>16}" for m in METHODS),
                  flush=True)
    ap = pools["AP sign-exchange"]
    effect = 0.3 * float(ap.std(ddof=1))
    print(f"\nPower (%) at a true effect of 0.3 sd = {effect:+.4f} AP (AP pool, sign exchange)")
    print(header)
    for n in args.ns:
        c = simulate(ap, n, args.trials, args.default_trials, args.resamples, True, effect,
                     seed=7_000 + n)
        only_r, only_t = c["discordant"]
        total = c["t-test"][1]
        diff = (only_r - only_t) / total
        se = math.sqrt(max(only_r + only_t - total * diff * diff, 0.0)) / total
        print(f"{'AP + 0.3 sd':<22}{n:>5}  " + "".join(f"{rate(c[m]):>16}" for m in METHODS)
              + f"   default - t-test: {100 * diff:+.2f} +- {100 * se:.2f} points",
              flush=True)
    p1 = np.abs(pools["P@1 (0/1 metric)"])
    print(f"\nPower (%): P@1 magnitudes, sign + with probability 0.65 "
          f"(true mean {0.3 * p1.mean():+.4f})")
    print(header)
    for n in args.ns:
        c = simulate(p1, n, args.trials, args.default_trials, args.resamples, True, 0.0,
                     seed=9_000 + n, p_plus=0.65)
        only_r, only_t = c["discordant"]
        total = c["t-test"][1]
        diff = (only_r - only_t) / total
        se = math.sqrt(max(only_r + only_t - total * diff * diff, 0.0)) / total
        print(f"{'P@1, 65% of wins':<22}{n:>5}  " + "".join(f"{rate(c[m]):>16}" for m in METHODS)
              + f"   default - t-test: {100 * diff:+.2f} +- {100 * se:.2f} points",
              flush=True)
    binary_conditional_size()
    samples_table(pools["AP sign-exchange"], args.samples_trials, args.resamples)
    print(f"\ntotal {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
