"""Coverage and width of judge-only, labels-only and PPI++ intervals of a human mean.

A judge with a known bias and noise grades every case; humans label a random subset.
Per trial: ``n`` cases with human grades ``Y ~ Normal(3, 1)``, the judge's grade
``f = Y + bias + Normal(0, noise)``; ``labels`` of them (drawn at random) carry the human
grade. Three 95% intervals of the human mean (the population mean, 3):

* judge-only: the normal interval of the judge's mean over all ``n`` cases (what a tool
  that trusts its judge reports);
* labels-only: the normal interval of the ``labels`` human grades alone
  (:func:`evalkit.stats.ppi.labels_only_interval`);
* PPI++: :func:`evalkit.stats.ppi.ppi_mean` (power-tuned lambda; Angelopoulos, Duchi &
  Zrnic 2024).

Printed per setting: each interval's coverage in percent with the 99% Wilson interval of
the binomial proportion, and its mean width; the ratio labels-only width / PPI width. The
claim: PPI's coverage lies within the 99% binomial interval around 95% while judge-only
covers far less often under bias, and PPI is no wider than labels-only.

Pass/fail labels (``--binary-trials``, default 3,000 per design): of ``--cases`` cases each
fails with probability ``P(fail)`` (label 0, else 1); the judge agrees with the human label
on 85% of the cases (independently). Coverage of the cases' own human mean (or, paired, of
the mean difference of two systems whose fails share a common shock with probability
``rho``), 95% Wilson interval, and mean width, of

* plain PPI++: ``theta -+ z * sqrt(var0(lambda f~) / N + var0(Y - lambda f) / n)``, the
  unadjusted interval (what ppi_py's ``ppi_mean_ci`` gives; written out here, since
  :func:`evalkit.stats.ppi.ppi_mean` no longer gives it for pass/fail labels);
* adjusted: :func:`evalkit.stats.ppi.ppi_mean` / :func:`~evalkit.stats.ppi.ppi_paired_difference`
  (Agresti-Coull / Agresti-Min pseudo-labels; module docstring of :mod:`evalkit.stats.ppi`),

and the share of trials whose plain interval has width 0 and whose result carries the
few-labels note.

    .venv/bin/python benchmarks/bench_ppi.py              # 500 trials per setting
    .venv/bin/python benchmarks/bench_ppi.py --trials 5000 --binary-trials 3000
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from evalkit.stats.ppi import (
    PPIResult,
    labels_only_interval,
    power_tuning_lambda,
    ppi_mean,
    ppi_paired_difference,
)

Z = 1.959963984540054
#: (bias, noise sd): the judge's correlation with people is 1 / sqrt(1 + noise^2)
SETTINGS = [(0.0, 0.5), (0.3, 0.5), (0.3, 1.0), (0.6, 0.3), (0.3, 3.0)]
#: (labels, P(fail)) of a mean of pass/fail labels: the outside statistician's designs
BINARY = [(10, 0.2), (20, 0.2), (20, 0.05), (50, 0.05), (100, 0.05), (50, 0.5), (100, 0.2)]
#: (labels, P(fail) of a, P(fail) of b, rho) of a paired difference of pass/fail labels
PAIRED = [(20, 0.05, 0.05, 0.5), (20, 0.2, 0.1, 0.5), (50, 0.05, 0.05, 0.5),
          (20, 0.1, 0.1, 0.8), (100, 0.05, 0.1, 0.5)]


def wilson(k: int, n: int, z: float = 2.5758293035489004) -> tuple[float, float]:
    """Wilson's interval of a binomial proportion (99% by default)."""
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return mid - half, mid + half


def trial(rng: np.random.Generator, n: int, labels: int, bias: float, noise: float
          ) -> list[tuple[bool, float]]:
    y = rng.normal(3.0, 1.0, n)
    f = y + bias + rng.normal(0.0, noise, n)
    chosen = np.zeros(n, dtype=bool)
    chosen[rng.choice(n, labels, replace=False)] = True
    judge_half = Z * f.std() / math.sqrt(n)
    judge = (abs(f.mean() - 3.0) <= judge_half, 2 * judge_half)
    _, lo, hi = labels_only_interval(y[chosen])
    only = (lo <= 3.0 <= hi, hi - lo)
    p = ppi_mean(y[chosen], f[chosen], f[~chosen])
    return [judge, only, (p.ci_low <= 3.0 <= p.ci_high, p.width)]


def plain(y: np.ndarray, f: np.ndarray, u: np.ndarray) -> tuple[float, float]:
    """The unadjusted PPI++ interval (ppi_py's ``ppi_mean_ci``, lambda tuned and clipped)."""
    lam = power_tuning_lambda(y, f, u)
    rect = y - lam * f
    est = lam * u.mean() + rect.mean()
    se = math.sqrt(float(np.var(lam * u)) / u.size + float(np.var(rect)) / y.size)
    return est - Z * se, est + Z * se


def cell(hits: int, trials: int, width: float) -> str:
    lo, hi = wilson(hits, trials, Z)
    return f"{100 * hits / trials:.1f} [{100 * lo:.1f}, {100 * hi:.1f}] / {width / trials:.3f}"


def judged(rng: np.random.Generator, y: np.ndarray) -> np.ndarray:
    """The judge's pass/fail grade: the human label on 85% of the cases, else flipped."""
    return np.where(rng.random(y.size) < 0.85, y, 1.0 - y)


class Tally:
    """Coverage and width of the plain and the adjusted interval over one design's trials,
    with how often the plain one had width 0 and the result a note."""

    def __init__(self) -> None:
        self.got = np.zeros(2)
        self.width = np.zeros(2)
        self.zero = self.notes = self.trials = 0

    def add(self, truth: float, plain_ci: tuple[float, float], r: PPIResult) -> None:
        for i, (a, b) in enumerate((plain_ci, (r.ci_low, r.ci_high))):
            self.got[i] += a <= truth <= b
            self.width[i] += b - a
        self.zero += plain_ci[1] - plain_ci[0] == 0.0
        self.notes += r.note is not None
        self.trials += 1

    def cells(self) -> str:
        t = self.trials
        return (f"{cell(int(self.got[0]), t, self.width[0])} | "
                f"{cell(int(self.got[1]), t, self.width[1])} | {100 * self.zero / t:.1f}% | "
                f"{100 * self.notes / t:.1f}% |")


def binary_table(rng: np.random.Generator, trials: int, cases: int) -> None:
    print(f"\npass/fail labels, mean: {cases} cases, judge agrees on 85%, {trials} trials; "
          "coverage % [95% Wilson] / mean width")
    print("| labels | P(fail) | plain PPI++ | adjusted | plain width 0 | note |")
    print("|---|---|---|---|---|---|")
    for n, p_fail in BINARY:
        tally = Tally()
        for _ in range(trials):
            y = (rng.random(cases) >= p_fail).astype(float)
            f = judged(rng, y)
            idx = rng.permutation(cases)
            lab, rest = idx[:n], idx[n:]
            tally.add(float(y.mean()), plain(y[lab], f[lab], f[rest]),
                      ppi_mean(y[lab], f[lab], f[rest]))
        print(f"| {n} | {p_fail} | {tally.cells()}")


def paired_table(rng: np.random.Generator, trials: int, cases: int) -> None:
    print(f"\npass/fail labels, paired difference a - b: {cases} cases, judge agrees on 85%, "
          f"{trials} trials; coverage % [95% Wilson] / mean width")
    print("| labels | P(fail) a | P(fail) b | rho | plain PPI++ | adjusted | plain width 0 "
          "| note |")
    print("|---|---|---|---|---|---|---|---|")
    for n, pa, pb, rho in PAIRED:
        tally = Tally()
        for _ in range(trials):
            shock = rng.random(cases) < rho
            common = rng.random(cases)
            ya = (np.where(shock, common, rng.random(cases)) >= pa).astype(float)
            yb = (np.where(shock, common, rng.random(cases)) >= pb).astype(float)
            fa, fb = judged(rng, ya), judged(rng, yb)
            idx = rng.permutation(cases)
            lab, rest = idx[:n], idx[n:]
            tally.add(float((ya - yb).mean()),
                      plain(ya[lab] - yb[lab], fa[lab] - fb[lab], fa[rest] - fb[rest]),
                      ppi_paired_difference(ya[lab], yb[lab], fa[lab], fb[lab], fa[rest],
                                            fb[rest]))
        print(f"| {n} | {pa} | {pb} | {rho} | {tally.cells()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=500)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--labels", type=int, default=100)
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--binary-trials", type=int, default=3000,
                    help="trials per pass/fail design (0: skip them)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"n = {args.cases} cases, {args.labels} human labels, {args.trials} trials; "
          "coverage % [99% Wilson] / mean width")
    print("| bias | noise sd | corr | judge-only | labels-only | PPI++ | labels/PPI width |")
    print("|---|---|---|---|---|---|---|")
    for bias, noise in SETTINGS:
        hits = np.zeros(3)
        widths = np.zeros(3)
        for _ in range(args.trials):
            for i, (hit, width) in enumerate(trial(rng, args.cases, args.labels, bias, noise)):
                hits[i] += hit
                widths[i] += width
        cells = []
        for i in range(3):
            lo, hi = wilson(int(hits[i]), args.trials)
            cells.append(f"{100 * hits[i] / args.trials:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"
                         f" / {widths[i] / args.trials:.3f}")
        corr = 1 / math.sqrt(1 + noise * noise)
        print(f"| {bias} | {noise} | {corr:.2f} | " + " | ".join(cells)
              + f" | {widths[1] / widths[2]:.2f} |")
    if args.binary_trials > 0:
        binary_table(rng, args.binary_trials, args.cases)
        paired_table(rng, args.binary_trials, args.cases)


if __name__ == "__main__":
    main()
