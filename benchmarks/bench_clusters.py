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
* ``auto``: the default, as :func:`evalkit.stats.methods.resolve_method` chooses it:
  on independent cases the t-test for a binary metric, else the sign-flip test joined
  by the bootstrap-t when the differences' skewness is ``|G1| >= 1``; with clusters the
  cluster sign-flip test on every metric, joined likewise when the clusters' sums are
  skewed.

Cells: 30 clusters of 5 cases (normal parts, and the cluster part exponential: skewed
sums), 30 clusters of 2 to 8 cases, 10 clusters of 5 cases (few), 30 clusters of 1 case
(no clustering: both versions are the same test); then strongly unequal sizes, where the
mean is carried by a few large clusters: 5 clusters of 1, 2, 3, 10 and 30 cases, 8 of
1, 1, 2, 3, 5, 8, 13, 21 (normal and exponential cluster parts), 30 clusters of 25
single cases and 10, 20, 30, 40, 50; and a binary metric (0/1 per case, declared binary)
on such sizes and on 10 clusters of 5. Each cell's name gives ``G*``, the effective
number of clusters (:func:`evalkit.stats.clusters.effective_clusters`). Rates are
rejections at alpha = 0.05, two-sided, in percent, with Wilson's 95% interval and the
number of trials.

The binary null: each cluster has a pass rate ``p_g ~ Beta(2, 2)``; each case's two
systems pass with probability ``p_g`` independently; in 30% of the clusters (a
cluster-level shock) each system's result is then set to pass with probability 1/2,
independently per case. Both systems have the same law, so the mean difference is 0,
and cases of one cluster are correlated.

    .venv/bin/python benchmarks/bench_clusters.py            # 2,000 trials a cell, B = 499
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

from evalkit.stats.clusters import ClusterIndex, cluster_columns, effective_clusters
from evalkit.stats.engine import analyse
from evalkit.stats.methods import DEFAULT_CI, resolve_method

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
    """One cell: the cluster sizes, how the cluster parts are drawn, and whether the
    metric is binary (then :func:`simulate_binary` draws the cases)."""

    name: str
    sizes: tuple[int, ...]
    cluster_part: Draw = normal
    binary: bool = False

    @property
    def label(self) -> str:
        """The name with ``G*``."""
        return f"{self.name}, G* {effective_clusters(self.sizes):.1f}"


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


def simulate_binary(design: Design, rng: np.random.Generator, trials: int) -> np.ndarray:
    """Differences ``(N, trials)`` of two 0/1 systems under the binary null (module
    docstring)."""
    index = index_of(design.sizes)
    G, N = len(design.sizes), int(sum(design.sizes))
    p = rng.beta(2.0, 2.0, (trials, G))[:, index.codes]
    a = rng.random((trials, N)) < p
    b = rng.random((trials, N)) < p
    shock = (rng.random((trials, G)) < 0.3)[:, index.codes]
    a = np.where(shock & (rng.random((trials, N)) < 0.5), True, a)
    b = np.where(shock & (rng.random((trials, N)) < 0.5), True, b)
    return (a.astype(np.float64) - b.astype(np.float64)).T


def simulate(design: Design, rng: np.random.Generator, trials: int) -> np.ndarray:
    """Differences ``(N, trials)``: ``sqrt(ICC) u_g + sqrt(1 - ICC) e``."""
    if design.binary:
        return simulate_binary(design, rng, trials)
    index = index_of(design.sizes)
    u = design.cluster_part(rng, (trials, len(design.sizes)))
    e = rng.standard_normal((trials, int(sum(design.sizes))))
    return (math.sqrt(ICC) * u[:, index.codes] + math.sqrt(1 - ICC) * e).T


def rejections(D: np.ndarray, method: str, seed: int, B: int,
               flip: np.ndarray | None = None, value_type: str | None = None
               ) -> np.ndarray:
    """Which columns ``method`` rejects at ``ALPHA``; "auto" resolved per column by
    :func:`evalkit.stats.methods.resolve_method` (from ``value_type``, whether the cases
    are clustered, and the skewness of the values the sign-flip test flips), as the
    library does."""
    F = D if flip is None else flip
    if method == "auto":
        chosen = np.array([resolve_method("auto", F[:, j], value_type, flip is not None)
                           for j in range(D.shape[1])])
        out = np.zeros(D.shape[1], dtype=bool)
        for m in sorted(set(chosen.tolist())):
            cols = np.flatnonzero(chosen == m)
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
        vt = "binary" if design.binary else None
        for m in METHODS:
            counts[m]["independent"] += int(rejections(D, m, s, B, None, vt).sum())
            counts[m]["clustered"] += int(rejections(robust, m, s, B, flip, vt).sum())
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
        Design("5 clusters of 1, 2, 3, 10, 30 (46 cases), normal", (1, 2, 3, 10, 30)),
        Design("8 clusters of 1, 1, 2, 3, 5, 8, 13, 21 (54 cases), normal", FIB),
        Design("8 clusters of 1, 1, 2, 3, 5, 8, 13, 21, cluster part exponential", FIB,
               exponential),
        Design("30 clusters: 25 x 1 and 10, 20, 30, 40, 50 (175 cases), normal", SINGLES),
        Design("binary: 8 clusters of 1, 1, 2, 3, 5, 8, 13, 21 (54 cases)", FIB,
               binary=True),
        Design("binary: 12 clusters: 10 x 1 and 20, 40 (70 cases)", (1,) * 10 + (20, 40),
               binary=True),
        Design("binary: 30 clusters: 25 x 1 and 10, 20, 30, 40, 50 (175 cases)", SINGLES,
               binary=True),
        Design("binary: 10 clusters x 5", (5,) * 10, binary=True),
    ]


#: Cluster sizes of the unequal cells.
FIB = (1, 1, 2, 3, 5, 8, 13, 21)
SINGLES = (1,) * 25 + (10, 20, 30, 40, 50)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=2000, help="trials per cell")
    ap.add_argument("--full", action="store_true", help="10,000 trials per cell")
    ap.add_argument("--resamples", type=int, default=499, help="B of the resampling tests")
    ap.add_argument("--cells", type=str, default=None,
                    help="run only these cells, by position (comma-separated, from 1)")
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
    only = None if args.cells is None else {int(x) for x in args.cells.split(",")}
    for k, design in enumerate(designs()):
        if only is not None and k + 1 not in only:
            continue
        counts = run_cell(design, trials, args.resamples, seed=k + 1)
        for m in METHODS:
            c = counts[m]
            print(f"| {design.label} | {LABELS[m]} | {rate(c['independent'], trials)} | "
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
