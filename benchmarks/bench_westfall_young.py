"""Power and family-wise error of Westfall-Young's min-P beside Holm's, on correlated
tests (docs/statistics.md, "Westfall-Young step-down min-P").

Each trial draws the differences of ``m`` metrics of one pair on ``n`` queries: a shared
factor with correlation ``rho`` between metrics plus each metric's own noise, either
normal or skewed (a centred exponential, mirrored: a long tail of losses, as recall's
differences often have), shifted by ``delta`` standard deviations in every metric (0:
the null). The test (``--test``: ``auto``, the default, which adds the bootstrap-t to the
sign-flip test on skewed differences, or ``randomization``) runs on every metric with
``B`` shared resamples (``evalkit.stats.grouped.analyse_family``, the path of
``compare_runs``), and
the family is adjusted three ways on the same resamples: Holm, Westfall-Young min-P
(the library's, ``evalkit.stats.family.westfall_young_family``), and a step-down max-T
of the studentized sign-flip mean (written here), each adjusted p at least the raw p.
The table gives, per cell, the share of trials rejecting at least one null (the
family-wise error when ``delta = 0``) and the mean number of rejections, with the ratio
min-P / Holm.

    .venv/bin/python benchmarks/bench_westfall_young.py [--trials 400] [--resamples 999]
        [-n 50] [-m 6] [--test auto|randomization]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from evalkit.stats.engine import draw_signflips
from evalkit.stats.family import westfall_young_family
from evalkit.stats.grouped import analyse_family
from evalkit.stats.multiple import holm


def draw(rng: np.random.Generator, n: int, m: int, rho: float, delta: float,
         skewed: bool) -> np.ndarray:
    """``(n, m)`` differences, unit variance per metric, correlation ``rho``."""
    if skewed:
        shared = -(rng.exponential(1.0, size=(n, 1)) - 1.0)
        own = -(rng.exponential(1.0, size=(n, m)) - 1.0)
    else:
        shared = rng.normal(size=(n, 1))
        own = rng.normal(size=(n, m))
    out: np.ndarray = delta + np.sqrt(rho) * shared + np.sqrt(1.0 - rho) * own
    return out


def max_t(D: np.ndarray, B: int, seed: int) -> list[float]:
    """Step-down max-T of the studentized sign-flip mean (Westfall and Young 1993,
    Algorithm 2.8), two-sided, ``+1`` rule."""
    n, m = D.shape
    sums, _ = draw_signflips(D, n_resamples=B, seed=seed, backend="auto")
    sq = (D * D).sum(axis=0)

    def t_of(mean: np.ndarray) -> np.ndarray:
        var = np.maximum(sq - n * mean * mean, 1e-300) / (n - 1)
        out: np.ndarray = np.abs(mean) / np.sqrt(var / n)
        return out

    t_obs = t_of(D.mean(axis=0))
    null = t_of(sums / n)
    order = np.argsort(-t_obs)
    running = np.full(B, -np.inf)
    counts = np.empty(m)
    for pos in range(m - 1, -1, -1):
        j = order[pos]
        running = np.maximum(running, null[:, j])
        counts[pos] = np.count_nonzero(running >= t_obs[j])
    p = np.minimum(1.0, np.maximum.accumulate((counts + 1) / (B + 1)))
    adj = np.empty(m)
    adj[order] = p
    return adj.tolist()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=400)
    ap.add_argument("--resamples", type=int, default=999)
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("-m", type=int, default=6)
    ap.add_argument("--test", default="auto", choices=("auto", "randomization"))
    args = ap.parse_args()
    n, m, B, alpha = args.n, args.m, args.resamples, 0.05
    print(f"n = {n} queries, m = {m} metrics, B = {B}, {args.trials} trials a cell, "
          f"alpha = {alpha}, --test {args.test}")
    print(f"{'noise':7} {'rho':>4} {'delta':>5} | {'any rejection: holm':>20} {'min-P':>6} "
          f"{'max-T':>6} | {'mean rejections: holm':>22} {'min-P':>6} {'max-T':>6} "
          f"{'min-P/holm':>10}")
    started = time.perf_counter()
    for skewed in (False, True):
        for rho in (0.0, 0.5, 0.9):
            for delta in (0.0, 0.3):
                rng = np.random.default_rng(int(rho * 10) + 100 * skewed + int(delta * 1000))
                anyr = np.zeros(3)
                count = np.zeros(3)
                for trial in range(args.trials):
                    D = draw(rng, n, m, rho, delta, skewed)
                    fam = analyse_family(D, method=args.test, ci=None, alpha=alpha,
                                         alternative="two-sided", n_resamples=B,
                                         seed=trial, want_null=True)
                    raw = [o.p_value for o in fam.outcomes]
                    for k, adj in enumerate((holm(raw), westfall_young_family(fam),
                                             [max(w, p) for w, p in zip(
                                                 max_t(D, B, trial), raw, strict=True)])):
                        r = sum(1 for p in adj if p < alpha)
                        anyr[k] += r > 0
                        count[k] += r
                anyr /= args.trials
                count /= args.trials
                ratio = count[1] / count[0] if count[0] else float("nan")
                print(f"{'skewed' if skewed else 'normal':7} {rho:4.1f} {delta:5.1f} | "
                      f"{anyr[0]:20.3f} {anyr[1]:6.3f} {anyr[2]:6.3f} | {count[0]:22.2f} "
                      f"{count[1]:6.2f} {count[2]:6.2f} {ratio:10.2f}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
