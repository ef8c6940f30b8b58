"""Calibration of the clustered paired tests: type I error when cases come in clusters.

Each simulated comparison has ``G`` clusters of cases; a case's difference is
``d = u_g + e``, the cluster's shared part ``u_g`` and the case's own ``e`` independent,
mean 0, with intra-cluster correlation ``var(u) / (var(u) + var(e)) = 0.3`` (the null:
the true mean difference is 0). Every test runs twice on the same data: treating the
cases as independent (the default), and with ``clusters=`` (the cluster is the unit:
:mod:`evalkit.stats.clusters`). The tests, each as the library runs it
(``evalkit.stats.engine`` on a batch of simulated comparisons, one column per trial; 250
trials share one seed):

* ``t-test``: the paired t-test; clustered, the CR1 standard error on ``G - 1`` df;
* ``sign-flip``: the sign-flip randomization test; clustered, whole clusters' sums flip;
* ``bootstrap-t``: the equal-tailed studentized bootstrap; clustered, clusters resampled;
* ``bootstrap``: ``paired_bootstrap``'s percentile bootstrap p; clustered, likewise;
* ``auto``: the default (the sign-flip test, joined by the bootstrap-t when the
  differences', or clustered the clusters' sums', skewness ``|G1| >= 1``).

Cells: 30 clusters of 5 cases (normal parts, and the cluster part exponential: skewed
sums), 30 clusters of 2 to 8 cases (unequal sizes), 10 clusters of 5 cases (few), and 30
clusters of 1 case (no clustering: both versions are the same test). Rates are
rejections at alpha = 0.05, two-sided, in percent, with Wilson's 95% interval and the
number of trials.

    .venv/bin/python benchmarks/bench_clusters.py            # 2,000 trials a cell, under a minute
    .venv/bin/python benchmarks/bench_clusters.py --full     # 10,000 trials a cell
        [--trials N] [--resamples B] [--json results.json]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evalkit.stats.clusters import ClusterIndex, cluster_columns
from evalkit.stats.engine import analyse
from evalkit.stats.methods import BOTH, DEFAULT_CI, sample_skewness

ICC = 0.3
ALPHA = 0.05
CHUNK = 250
METHODS = ("t-test", "randomization", "bootstrap-t", "bootstrap", "auto")
LABELS = {"t-test": "t-test", "randomization": "sign-flip", "bootstrap-t": "bootstrap-t",
          "bootstrap": "bootstrap", "auto": "auto (default)"}

#: Draws ``(trials, G)`` cluster parts or ``(trials, N)`` case parts with variance 1.
Draw = Callable[[np.random.Generator, tuple[int, int]], np.ndarray]


def normal(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return rng.standard_normal(shape)


def exponential(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    return rng.exponential(1.0, shape) - 1.0


@dataclass(frozen=True)
class Design:
    """One cell: the cluster sizes and how the cluster parts are drawn."""

    name: str
    sizes: tuple[int, ...]
    cluster_part: Draw = normal


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson's score interval for a binomial proportion (Wilson, JASA 22, 1927)."""
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def index_of(sizes: tuple[int, ...]) -> ClusterIndex:
    codes = np.repeat(np.arange(len(sizes)), sizes).astype(np.intp)
    return ClusterIndex(tuple(f"c{g:03d}" for g in range(len(sizes))), codes,
                        np.asarray(sizes, dtype=np.float64))


def simulate(design: Design, rng: np.random.Generator, trials: int) -> np.ndarray:
    """Differences ``(N, trials)``: ``sqrt(ICC) u_g + sqrt(1 - ICC) e``."""
    index = index_of(design.sizes)
    u = design.cluster_part(rng, (trials, len(design.sizes)))
    e = rng.standard_normal((trials, int(sum(design.sizes))))
    return (math.sqrt(ICC) * u[:, index.codes] + math.sqrt(1 - ICC) * e).T


def rejections(D: np.ndarray, method: str, seed: int, B: int,
               flip: np.ndarray | None = None) -> np.ndarray:
    """Which columns ``method`` rejects at ``ALPHA``; "auto" resolved per column from the
    skewness of the values the sign-flip test flips, as the library does."""
    F = D if flip is None else flip
    if method == "auto":
        skewed = np.array([abs(sample_skewness(F[:, j])) >= 1.0 for j in range(D.shape[1])])
        out = np.zeros(D.shape[1], dtype=bool)
        for m, cols in ((BOTH, np.flatnonzero(skewed)),
                        ("randomization", np.flatnonzero(~skewed))):
            if cols.size:
                out[cols] = rejections(D[:, cols], m, seed, B,
                                       None if flip is None else flip[:, cols])
        return out
    an = analyse(D, method=method, ci_method=DEFAULT_CI[method], alpha=ALPHA,
                 alternative="two-sided", n_resamples=B, seed=seed, flip=flip)
    return np.array([o.p_value < ALPHA for o in an.outcomes])


def run_cell(design: Design, trials: int, B: int, seed: int) -> dict[str, dict[str, int]]:
    """Rejections of every method, independent and clustered, over ``trials``."""
    index = index_of(design.sizes)
    counts = {m: {"independent": 0, "clustered": 0} for m in METHODS}
    rng = np.random.default_rng(seed)
    done = 0
    while done < trials:
        t = min(CHUNK, trials - done)
        D = simulate(design, rng, t)
        robust, flip = cluster_columns(D, index)
        s = seed * 1000 + done
        for m in METHODS:
            counts[m]["independent"] += int(rejections(D, m, s, B).sum())
            counts[m]["clustered"] += int(rejections(robust, m, s, B, flip).sum())
        done += t
    return counts


def rate(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{100 * k / n:.1f} ({100 * lo:.1f}-{100 * hi:.1f})"


def designs() -> list[Design]:
    rng = np.random.default_rng(2024)
    unequal = tuple(int(x) for x in rng.integers(2, 9, 30))
    return [
        Design("30 clusters x 5, normal", (5,) * 30),
        Design("30 clusters x 5, cluster part exponential", (5,) * 30, exponential),
        Design(f"30 clusters of 2-8 ({sum(unequal)} cases), normal", unequal),
        Design("10 clusters x 5, normal", (5,) * 10),
        Design("30 clusters x 1 (no clustering)", (1,) * 30),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=2000, help="trials per cell")
    ap.add_argument("--full", action="store_true", help="10,000 trials per cell")
    ap.add_argument("--resamples", type=int, default=999, help="B of the resampling tests")
    ap.add_argument("--json", type=Path, default=None, help="also write the counts here")
    args = ap.parse_args()
    trials = 10_000 if args.full else args.trials
    print(f"type I error (%) at alpha {ALPHA}, two-sided, intra-cluster correlation {ICC}; "
          f"{trials:,} trials per cell, B = {args.resamples}; Wilson 95% interval")
    print()
    print("| null | test | independent | clustered | trials |")
    print("|---|---|---|---|---|")
    out = []
    start = time.perf_counter()
    for k, design in enumerate(designs()):
        counts = run_cell(design, trials, args.resamples, seed=k + 1)
        for m in METHODS:
            c = counts[m]
            print(f"| {design.name} | {LABELS[m]} | {rate(c['independent'], trials)} | "
                  f"{rate(c['clustered'], trials)} | {trials:,} |", flush=True)
        out.append({"design": design.name, "sizes": list(design.sizes), "trials": trials,
                    "counts": counts})
    print(f"\n{time.perf_counter() - start:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps({"icc": ICC, "alpha": ALPHA,
                                         "resamples": args.resamples, "cells": out},
                                        indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
