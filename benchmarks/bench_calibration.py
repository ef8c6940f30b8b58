"""Calibration of the default paired test: type I error under skewed, symmetric,
heavy-tailed and 0/1 nulls, and power, each with a binomial 95% interval.

The procedures, each run as the library runs it (``evalkit.stats.engine`` on a batch of
simulated comparisons, one column per trial; 250 trials share one seed):

* ``default``: ``method="auto"`` with the metric's declared value type: the paired t-test
  on a 0/1 metric; otherwise the sign-flip test, joined by the equal-tailed bootstrap-t
  (p the larger of the two) when the differences' sample skewness ``|G1| >= 1``;
* ``sign-flip``: ``method="randomization"`` on every trial (the default before the skew
  guard);
* ``both``: ``method="randomization+bootstrap-t"`` on every trial (the guard always on).

The data are per-query differences of seven pairs of systems on the Vaswani collection
(``benchmarks/data/vaswani_differences.json``, made by
``benchmarks/data/make_vaswani_differences.py`` with ``examples/vaswani/retrieval.py``:
BM25 at four settings of k1 and b, TF-IDF, BM25 on the rarer half of each query's terms,
and the bundled Terrier BM25 run), and synthetic distributions. Each trial draws ``n``
values with replacement from a pool (93 per-query differences) or from the distribution:

* skewed nulls (mean 0, asymmetric): a pool minus its mean ("centred"); exponential(1) - 1,
  lognormal(0, 1) - e^0.5, chi-square(3) - 3, gamma(0.3) - 0.3;
* symmetric nulls: a pool's values with random signs ("sign exchange": the two systems
  are exchangeable per query); normal, Laplace, uniform, Student t with 3 (heavy-tailed)
  and 2 (infinite variance) degrees of freedom;
* 0/1 nulls: P@1's differences (-1, 0, 1) with random signs, tested as a binary metric
  (the default runs the t-test) and as an undeclared one (the sign-flip test);
* alternatives: a symmetric null plus 0.3 of the pool's sd (symmetric real
  alternatives), and a centred pool shifted by 0.3 sd toward its long tail (the sign of
  its skewness) and against it (skewed real alternatives).

Rates are rejections at alpha = 0.05, two-sided, in percent, with Wilson's 95% interval;
a power difference is the default's rejections minus the sign-flip test's on the same
trials, with the normal interval of a paired difference (from the discordant trials).

Two parts about the nulls themselves, not run unless named: ``ties``, the tie-heavy pools
(at least 25% of differences exactly 0) made mean-zero by shifting only their non-zero
differences, so ties stay ties (centring moves every tie to ``-mean``, a value no tie
takes); ``limit``, the floor under any test's type I error on the centred pool whose mean
three queries carry (AP BM25 - BM25(0.6, 0.3)): with probability ``(90/93)^n`` none of the
three is drawn, and then the sample is i.i.d. from the other 90 values, a real
alternative, so a test's type I error is at least that probability times its power there.

Part ``shapes``, not run unless named: nulls shaped like IR differences, kept apart so
the default parts' figures stay comparable: 60% exact ties and otherwise a centred
exponential (zero-inflated skewed), ``+-0.5`` plus normal(0, 0.05) noise (symmetric
bimodal, where the sample skewness is a function of the win/loss imbalance), and two P@10
runs with the same per-query precision (symmetric, discrete).

Three more parts, not run unless named: ``methods``, every method and interval of
``paired_test`` (bootstrap-t, the percentile bootstrap's p and interval, BCa) beside the
default on five nulls (``--method-trials`` every method, ``--default-trials`` the
default, the sign-flip test and the t-test; "+-" one binomial standard error);
``binary-exact``, the exact size of the t-test and the sign-flip test on a 0/1 metric
given the number of queries the systems disagree on (enumerated, no simulation);
``samples`` (or ``--samples-only``), the default test on per-case means of K = 5 samples.

    .venv/bin/python benchmarks/bench_calibration.py [--trials 4000] [--resamples 10000]
        [--part skewed symmetric binary power power-skewed ties limit methods binary-exact
                samples shapes]
        [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import math
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
POOLS = ROOT / "benchmarks" / "data" / "vaswani_differences.json"
ALPHA = 0.05
CHUNK = 250
PROCEDURES = ("default", "sign-flip", "both")
#: Pairs whose systems the example's retrieval code builds; the Terrier pair's "a" is the
#: bundled run, made by other software.
BUILT_BY_EXAMPLE = "terrier"

Sampler = Callable[[np.random.Generator, int, int], np.ndarray]


@dataclass
class Cell:
    """Rejections of each procedure over ``trials`` simulated comparisons."""

    name: str
    n: int
    trials: int = 0
    rejections: dict[str, int] = field(default_factory=dict)
    only_default: int = 0  # trials the default rejects and the sign-flip test does not
    only_flip: int = 0
    guarded: int = 0  # trials on which the default ran the bootstrap-t too

    def rate(self, proc: str) -> str:
        k = self.rejections.get(proc)
        if k is None:
            return "-"
        lo, hi = wilson(k, self.trials)
        return f"{100 * k / self.trials:.2f} [{100 * lo:.1f}, {100 * hi:.1f}]"

    def difference(self) -> str:
        """Default minus sign-flip, points, with the 95% interval of a paired difference."""
        t = self.trials
        d = (self.only_default - self.only_flip) / t
        var = (self.only_default + self.only_flip) / t - d * d
        half = 1.96 * math.sqrt(max(var, 0.0) / t)
        return f"{100 * d:+.2f} [{100 * (d - half):+.1f}, {100 * (d + half):+.1f}]"


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson's score interval for a binomial proportion (Wilson, JASA 22, 1927)."""
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def run_cell(name: str, n: int, sample: Sampler, trials: int, n_resamples: int,
             value_type: str | None = None) -> Cell:
    """Simulate ``trials`` comparisons of ``n`` differences from ``sample`` and count each
    procedure's rejections (all three see the same data and the same resamples)."""
    from evalkit.stats.engine import analyse
    from evalkit.stats.grouped import analyse_family
    from evalkit.stats.methods import BOTH

    cell = Cell(name, n, rejections=dict.fromkeys(PROCEDURES, 0))
    base = zlib.crc32(f"{name}|{n}".encode())
    rng = np.random.default_rng(base)
    for c0 in range(0, trials, CHUNK):
        m = min(CHUNK, trials - c0)
        D = np.ascontiguousarray(sample(rng, n, m).T)  # (n, m): one trial per column
        seed = base * 1_000 + c0
        common = {"alpha": ALPHA, "alternative": "two-sided", "n_resamples": n_resamples,
                  "seed": seed, "backend": "numba"}
        fam = analyse_family(D, method="auto", ci="t", value_types=[value_type] * m,
                             **common)  # type: ignore[arg-type]
        flip = analyse(D, method="randomization", ci_method="t", **common)  # type: ignore[arg-type]
        both = analyse(D, method=BOTH, ci_method="t", **common)  # type: ignore[arg-type]
        d_rej = np.array([o.p_value < ALPHA for o in fam.outcomes])
        f_rej = np.array([o.p_value < ALPHA for o in flip.outcomes])
        b_rej = np.array([o.p_value < ALPHA for o in both.outcomes])
        cell.rejections["default"] += int(d_rej.sum())
        cell.rejections["sign-flip"] += int(f_rej.sum())
        cell.rejections["both"] += int(b_rej.sum())
        cell.only_default += int((d_rej & ~f_rej).sum())
        cell.only_flip += int((f_rej & ~d_rej).sum())
        cell.guarded += sum(meth == BOTH for meth in fam.methods)
        cell.trials += m
    return cell


# ------------------------------------------------------------------ samplers
def from_pool(pool: np.ndarray, *, signs: bool, shift: float = 0.0) -> Sampler:
    def sample(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
        x = pool[rng.integers(0, pool.size, size=(m, n))]
        if signs:
            x = x * np.where(rng.random(size=(m, n)) < 0.5, 1.0, -1.0)
        return x + shift

    return sample


SYNTHETIC_SKEWED: dict[str, Sampler] = {
    "exponential(1) - 1": lambda r, n, m: r.exponential(1.0, (m, n)) - 1.0,
    "lognormal(0, 1) - e^0.5": lambda r, n, m: r.lognormal(0.0, 1.0, (m, n)) - math.exp(0.5),
    "chi-square(3) - 3": lambda r, n, m: r.chisquare(3, (m, n)) - 3.0,
    "gamma(0.3) - 0.3": lambda r, n, m: r.gamma(0.3, 1.0, (m, n)) - 0.3,
}
SYNTHETIC_SYMMETRIC: dict[str, Sampler] = {
    "normal": lambda r, n, m: r.normal(0.0, 1.0, (m, n)),
    "Laplace": lambda r, n, m: r.laplace(0.0, 1.0, (m, n)),
    "uniform": lambda r, n, m: r.uniform(-1.0, 1.0, (m, n)),
    "Student t, 3 df": lambda r, n, m: r.standard_t(3, (m, n)),
    "Student t, 2 df": lambda r, n, m: r.standard_t(2, (m, n)),
}


def _p10_binomial(r: np.random.Generator, n: int, m: int) -> np.ndarray:
    """Two P@10 runs with the same per-query precision p ~ Beta(1, 3): many double zeros,
    differences in steps of 0.1, symmetric."""
    p = r.beta(1.0, 3.0, (m, n))
    return (r.binomial(10, p) - r.binomial(10, p)) / 10.0


#: Nulls shaped like IR differences, part ``shapes``: zero-inflated skewed (60% exact
#: ties, else a centred exponential), symmetric bimodal (two points plus a little noise)
#: and symmetric discrete (P@10-like).
SYNTHETIC_SHAPES: dict[str, Sampler] = {
    "60% ties, else 0.2 (exponential(1) - 1)": lambda r, n, m: np.where(
        r.random((m, n)) < 0.6, 0.0, 0.2 * (r.exponential(1.0, (m, n)) - 1.0)),
    "+-0.5 + normal(0, 0.05)": lambda r, n, m: (
        np.where(r.random((m, n)) < 0.5, -0.5, 0.5) + r.normal(0.0, 0.05, (m, n))),
    "P@10, p ~ Beta(1, 3) (binomial(10, p) - binomial(10, p)) / 10": _p10_binomial,
}


def load_pools() -> list[tuple[str, str, np.ndarray]]:
    """``(pair, measure, differences)`` for every pool in the data file."""
    doc = json.loads(POOLS.read_text(encoding="utf-8"))
    return [(f"{p['a']} - {p['b']}", p["measure"], np.array(p["differences"], dtype=float))
            for p in doc["pools"]]


def skewness(x: np.ndarray) -> float:
    from scipy import stats

    return float(stats.skew(x, bias=False))


def decide(d: np.ndarray, seed: int, full: bool, B: int, value_type: str | None
           ) -> dict[str, bool]:
    """Each method's two-sided decision at ALPHA on differences ``d`` of a metric of
    ``value_type`` (library code; the default through ``resolve_method``, its choice)."""
    from evalkit.stats._kernels import bootstrap_sums, signflip_sums
    from evalkit.stats.bootstrap import mean_and_centred, tie_tolerance
    from evalkit.stats.degenerate import constant_outcome
    from evalkit.stats.intervals import (
        bca_ci,
        percentile_ci,
        studentized_p,
        studentized_stats,
    )
    from evalkit.stats.methods import BOTH, resolve_method
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
        if not full:
            return {k: out[k] for k in ("randomization", "t-test", "auto (default)")}
        return out
    tol = tie_tolerance(d)
    var = math.fsum((centred * centred).tolist()) / (n - 1)
    se = math.sqrt(var / n)
    flips, signs = signflip_sums(d, B, seed, backend="numba")
    out["randomization"] = signflip_p(flips[:, 0], signs, n, mean, 0.0, "two-sided", False,
                                      tol) < ALPHA
    out["t-test"] = t_test(mean, se, n, ALPHA, "two-sided")[0] < ALPHA
    chosen = resolve_method("auto", d, value_type)
    if not full and chosen != BOTH:
        out["auto (default)"] = out["t-test" if chosen == "t-test" else "randomization"]
        return out
    sums, sq = bootstrap_sums(centred, B, seed, want_squares=True, backend="numba")
    assert sq is not None
    dev = sums[:, 0] / n
    btol = tie_tolerance(centred, resampled=True)
    extreme = int(np.count_nonzero(np.abs(dev) >= abs(mean) - btol))
    out["bootstrap (p)"] = (extreme + 1) / (B + 1) < ALPHA
    lo, hi = percentile_ci(mean, dev, ALPHA, "two-sided")
    out["bootstrap (CI)"] = bool(lo > 0 or hi < 0)
    lo, hi = bca_ci(mean, dev, centred, ALPHA, "two-sided", btol)
    out["BCa CI"] = bool(lo > 0 or hi < 0)
    tstar = studentized_stats(dev, sq[:, 0], n, var, btol)
    t_obs = mean / se
    out["bootstrap-t"] = studentized_p(t_obs, tstar, "two-sided",
                                       1e-10 * max(1.0, abs(t_obs))) < ALPHA
    if chosen == BOTH:
        out["auto (default)"] = out["randomization"] and out["bootstrap-t"]
    else:
        out["auto (default)"] = out["t-test" if chosen == "t-test" else "randomization"]
    if not full:
        return {k: out[k] for k in ("randomization", "t-test", "auto (default)")}
    return out


def simulate(pool: np.ndarray, n: int, trials: int, default_trials: int, B: int,
             sign_exchange: bool, shift: float, seed: int,
             p_plus: float = 0.5, value_type: str | None = None
             ) -> dict[str, tuple[int, int]]:
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
        res = decide(d, 1_000_003 * seed + t, t < trials, B, value_type)
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
        res = decide(d[t], 1_000_003 * seed + t, False, B, "continuous")
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


# ------------------------------------------------------------------ every method
#: Sample sizes and methods of the every-method table.
METHOD_NS = (25, 50, 100, 300)
METHODS = ("auto (default)", "randomization", "t-test", "bootstrap-t", "bootstrap (p)",
           "bootstrap (CI)", "BCa CI")


def method_pools() -> dict[str, tuple[np.ndarray, bool, str | None]]:
    """The every-method table's nulls: ``{name: (pool, sign exchange, value type)}``."""
    by = {(pair, meas): x for pair, meas, x in load_pools()}
    rr = by[("bm25 - tfidf", "RR")]
    expo = np.random.default_rng(0).exponential(1.0, size=100_000)
    return {
        "AP sign-exchange": (by[("bm25 - tfidf", "AP")], True, "continuous"),
        "nDCG@10 close pair": (by[("terrier - bm25", "nDCG@10")], True, "continuous"),
        "P@1 (0/1 metric)": (by[("bm25 - tfidf", "P@1")], True, "binary"),
        "RR centred (skewed)": (rr - rr.mean(), False, "continuous"),
        "exponential(1) - 1": (expo - expo.mean(), False, None),
    }


def methods_tables(trials: int, default_trials: int, B: int) -> None:
    """Type I error of every method (and the default) on five nulls, and power on two
    alternatives: the first ``trials`` trials run every method, the default, the
    randomization test and the t-test continue to ``default_trials``; "+-" is one
    binomial standard error."""
    header = f"{'null':<22}{'n':>5}  " + "".join(f"{m:>16}" for m in METHODS)
    print(f"\nEvery method: {trials:,} trials, default/randomization/t-test "
          f"{default_trials:,}; type I error (%)\n" + header)
    pools = method_pools()
    for k, (name, (pool, sign, vtype)) in enumerate(pools.items()):
        for n in METHOD_NS:
            c = simulate(pool, n, trials, default_trials, B, sign, 0.0, seed=100 * k + n,
                         value_type=vtype)
            print(f"{name:<22}{n:>5}  " + "".join(f"{rate(c[m]):>16}" for m in METHODS),
                  flush=True)
    ap = pools["AP sign-exchange"][0]
    p1 = np.abs(pools["P@1 (0/1 metric)"][0])
    effect = 0.3 * float(ap.std(ddof=1))
    print(f"\nPower (%): AP + 0.3 sd = {effect:+.4f}; P@1 magnitudes, sign + with "
          f"probability 0.65 (true mean {0.3 * p1.mean():+.4f})\n" + header)
    for label, pool, shift, p_plus, seed0, vtype in (
            ("AP + 0.3 sd", ap, effect, 0.5, 7_000, "continuous"),
            ("P@1, 65% of wins", p1, 0.0, 0.65, 9_000, "binary")):
        for n in METHOD_NS:
            c = simulate(pool, n, trials, default_trials, B, True, shift, seed=seed0 + n,
                         p_plus=p_plus, value_type=vtype)
            only_r, only_t = c["discordant"]
            total = c["t-test"][1]
            diff = (only_r - only_t) / total
            se = math.sqrt(max(only_r + only_t - total * diff * diff, 0.0)) / total
            print(f"{label:<22}{n:>5}  " + "".join(f"{rate(c[m]):>16}" for m in METHODS)
                  + f"   default - t-test: {100 * diff:+.2f} +- {100 * se:.2f} points",
                  flush=True)


# ------------------------------------------------------------------ limits of any test
#: The centred pool whose mean three of its 93 queries carry, and how many.
CARRIED = ("bm25 - bm25-k0.6-b0.3", "AP", 3)
#: A pool counts as tie-heavy when at least this share of its differences is exactly 0.
TIE_HEAVY = 0.25


def carried_mean_limit(pool: np.ndarray, k: int, trials: int, B: int) -> None:
    """The floor under any test's type I error on a centred pool whose mean ``k`` values
    carry. Draw n values from the N centred values P; with probability ((N-k)/N)^n none of
    the k largest is drawn, and then the n draws are i.i.d. from the other N-k values Q
    (mean below 0: a real alternative). So for every test phi, whatever its statistic,
    E_P[phi] >= ((N-k)/N)^n E_Q[phi]: holding ``rate`` on P caps its power on Q at
    rate / ((N-k)/N)^n. The default's power on Q (simulated) puts its own floor beside."""
    centred = pool - pool.mean()
    order = np.argsort(centred)
    rest = centred[order[:-k]]
    N = centred.size
    print(f"\n### Limit: {k} of {N} queries carry the mean ({CARRIED[1]} {CARRIED[0]})\n")
    print(f"Q: the other {N - k} centred differences, mean {rest.mean():+.4f}, sd "
          f"{rest.std(ddof=1):.4f}, skewness {skewness(rest):+.2f}; largest "
          + ", ".join(f"{v:+.3f}" for v in centred[order[-k:]]) + "\n")
    print("| n | P(none of the k drawn) | default's power on Q | sign-flip's | floor on the "
          "default's type I | most power on Q any test holding 6% can have |")
    print("|---|---|---|---|---|---|")
    for n in (25, 50, 100):
        w = ((N - k) / N) ** n
        c = run_cell(f"Q {CARRIED[1]} {CARRIED[0]}", n, from_pool(rest, signs=False),
                     trials, B, "continuous")
        pw = c.rejections["default"] / c.trials
        print(f"| {n} | {100 * w:.1f}% | {c.rate('default')} | {c.rate('sign-flip')} | "
              f"{100 * w * pw:.1f}% | "
              f"{min(100.0, 6.0 / w):.1f}% |", flush=True)


def tie_preserving(x: np.ndarray) -> np.ndarray:
    """``x`` with mean 0 by shifting only its non-zero values: the ties stay exact ties
    (centring every value would move them to ``-mean``)."""
    y = x.copy()
    nz = x != 0
    y[nz] -= math.fsum(x.tolist()) / int(nz.sum())
    return y


# ------------------------------------------------------------------ the tables
def table(title: str, cells: Iterator[tuple[str, Cell]], power: bool = False) -> None:
    print(f"\n### {title}\n")
    extra = " | default - sign-flip (points) |" if power else ""
    print("| null | n | default | sign-flip | both always | guarded |" + extra)
    print("|---|---|---|---|---|---|" + ("---|" if power else ""))
    for label, c in cells:
        row = (f"| {label} | {c.n} | {c.rate('default')} | {c.rate('sign-flip')} | "
               f"{c.rate('both')} | {100 * c.guarded / c.trials:.0f}% |")
        print(row + (f" {c.difference()} |" if power else ""), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--part", nargs="*",
                        default=["skewed", "symmetric", "binary", "power", "power-skewed"],
                        choices=["skewed", "symmetric", "binary", "power", "power-skewed",
                                 "methods", "limit", "ties",
                                 "binary-exact", "samples", "shapes"])
    parser.add_argument("--method-trials", type=int, default=2000,
                        help="trials per cell of the every-method table (--part methods)")
    parser.add_argument("--default-trials", type=int, default=10_000,
                        help="... continued for the default, randomization and t-test")
    parser.add_argument("--samples-trials", type=int, default=4000,
                        help="trials per row of the repeated-samples (K = 5) table")
    parser.add_argument("--samples-only", action="store_true",
                        help="only the repeated-samples (K = 5) table (--part samples)")
    parser.add_argument("--json", type=Path, default=None,
                        help="also write every cell's counts to this file")
    args = parser.parse_args()
    if args.samples_only:
        args.part = ["samples"]
    t0 = time.perf_counter()
    T, B = args.trials, args.resamples
    pools = load_pools()
    graded = [(pair, meas, x) for pair, meas, x in pools if meas in ("AP", "nDCG@10", "RR")]
    print(f"alpha = {ALPHA}, two-sided; B = {B:,} resamples; {T:,} trials per cell; rates in "
          "%, Wilson 95% interval in brackets; 'guarded': share of trials on which the "
          "default ran the bootstrap-t too")
    print("\npools (93 per-query differences each):")
    for pair, meas, x in pools:
        print(f"  {pair:<34} {meas:<8} mean {x.mean():+.4f} sd {x.std(ddof=1):.4f} "
              f"skewness {skewness(x):+.2f} ties {np.mean(x == 0):.0%}")
    done: list[Cell] = []

    def cells(specs: list[tuple[str, Sampler, str | None]], ns: tuple[int, ...]
              ) -> Iterator[tuple[str, Cell]]:
        for label, sampler, vtype in specs:
            for n in ns:
                c = run_cell(label, n, sampler, T, B, vtype)
                done.append(c)
                yield label, c

    def pool_specs(signs: bool, shift: float = 0.0, toward: bool = True
                   ) -> list[tuple[str, Sampler, str | None]]:
        """Every graded pool, centred or under sign exchange, plus ``shift`` sd; a centred
        pool is shifted toward its long tail (the sign of its skewness), or against it."""
        out: list[tuple[str, Sampler, str | None]] = []
        for pair, meas, x in graded:
            centred = x - x.mean() if not signs else x
            mark = "" if BUILT_BY_EXAMPLE not in pair else " (bundled run)"
            way = 1.0 if signs else math.copysign(1.0, skewness(x)) * (1 if toward else -1)
            out.append((f"{meas} {pair}{mark}",
                        from_pool(centred, signs=signs,
                                  shift=way * shift * float(x.std(ddof=1))),
                        "continuous"))
        return out

    if "skewed" in args.part:
        table("Type I error (%), skewed synthetic nulls", cells(
            [(k, v, None) for k, v in SYNTHETIC_SKEWED.items()], (10, 25, 50, 100)))
        table("Type I error (%), real centred differences (skewed nulls)",
              cells(pool_specs(signs=False), (25, 50, 100)))
    if "symmetric" in args.part:
        table("Type I error (%), symmetric synthetic nulls", cells(
            [(k, v, None) for k, v in SYNTHETIC_SYMMETRIC.items()], (10, 25, 50, 100)))
        table("Type I error (%), real differences under sign exchange (symmetric nulls)",
              cells(pool_specs(signs=True), (25, 50, 100)))
    if "binary" in args.part:
        specs: list[tuple[str, Sampler, str | None]] = []
        for pair, meas, x in pools:
            if meas == "P@1":
                specs.append((f"P@1 {pair}, declared binary", from_pool(x, signs=True),
                              "binary"))
                specs.append((f"P@1 {pair}, undeclared", from_pool(x, signs=True), None))
        table("Type I error (%), 0/1 nulls (P@1, sign exchange)", cells(specs, (25, 50, 100)))
    if "power" in args.part:
        table("Power (%), symmetric real alternatives (sign exchange + 0.3 sd)",
              cells(pool_specs(signs=True, shift=0.3), (25, 50, 100)), power=True)
    if "power-skewed" in args.part:
        table("Power (%), skewed real alternatives (centred, 0.3 sd toward the long tail)",
              cells(pool_specs(signs=False, shift=0.3), (25, 50, 100)), power=True)
        table("Power (%), skewed real alternatives (centred, 0.3 sd against the long tail)",
              cells(pool_specs(signs=False, shift=0.3, toward=False), (25, 50, 100)),
              power=True)
    if "ties" in args.part:
        table("Type I error (%), tie-heavy real pools centred on their non-tied "
              "differences (ties stay 0)",
              cells([(f"{meas} {pair}" + (" (bundled run)" if BUILT_BY_EXAMPLE in pair
                                          else ""),
                      from_pool(tie_preserving(x), signs=False), "continuous")
                     for pair, meas, x in graded if np.mean(x == 0) >= TIE_HEAVY],
                    (25, 50, 100)))
    if "shapes" in args.part:
        table("Type I error (%), IR-shaped synthetic nulls (zero-inflated skewed, "
              "symmetric bimodal, symmetric discrete)", cells(
                  [(k, v, None) for k, v in SYNTHETIC_SHAPES.items()], (25, 50, 100)))
    if "limit" in args.part:
        pool = next(x for pair, meas, x in pools if (pair, meas) == CARRIED[:2])
        carried_mean_limit(pool, CARRIED[2], T, B)
    if "methods" in args.part:
        methods_tables(args.method_trials, args.default_trials, B)
    if "binary-exact" in args.part:
        binary_conditional_size()
    if "samples" in args.part:
        ap = next(x for pair, meas, x in pools if (pair, meas) == ("bm25 - tfidf", "AP"))
        samples_table(ap, args.samples_trials, B)
    if args.json is not None:
        args.json.write_text(json.dumps([c.__dict__ for c in done], indent=1) + "\n",
                             encoding="utf-8")
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
