"""Stopping early: the anytime-valid confidence sequence against a fixed-n test peeked at.

Each trial is one golden set of ``N`` cases (default 1,000) whose paired differences are
called in a uniformly random order, as ``evalkit run --until-decided`` calls them:

* **nulls** (true mean 0): real AP(BM25) - AP(TF-IDF) differences on Vaswani
  (``benchmarks/data/vaswani_differences.json``), ``N`` drawn with replacement from the 93
  and centred on their own mean (the golden set's mean difference is exactly 0); and
  synthetic bounded ones, ``a - b`` with ``a, b ~ Beta(2, 5)`` independently, centred the
  same way (values stay inside ``[-1, 1]``);
* **alternatives**: the centred real differences plus 0.02, 0.05 or 0.10, clipped to
  ``[-1, 1]``.

Monitoring: the sequence (:func:`evalkit.stats.sequential.paired_confidence_sequence`,
without replacement from ``N``, range ``[-1, 1]`` declared) is looked at after **every
case**; the fixed-n paired t-test after every batch of 10 cases (from 10 on). Type I
error is the share of null trials in which the procedure ever rejected "mean 0", with
Wilson's 95% interval. Under the alternatives: the median and 90th percentile share of
the ``N`` cases called before the sequence excluded 0, and the power at a budget of
``N / 4`` cases (decided within the first 250) of the sequence and of the t-test run
once at that n (no peeking).

    .venv/bin/python benchmarks/bench_sequential.py          # 2,000 null trials, < 1 min
    .venv/bin/python benchmarks/bench_sequential.py --trials 10000
        [--cases N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from evalkit.stats.sequential import paired_confidence_sequence

DATA = Path(__file__).resolve().parent / "data" / "vaswani_differences.json"
ALPHA = 0.05
BATCH = 10


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson's score interval of a binomial proportion ``k / n`` (percent)."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return 100 * (centre - half), 100 * (centre + half)


def real_pool() -> NDArray[np.float64]:
    pools = json.loads(DATA.read_text())["pools"]
    pool = next(p for p in pools if p["a"] == "bm25" and p["b"] == "tfidf"
                and p["measure"] == "AP")
    values: NDArray[np.float64] = np.asarray(pool["differences"], dtype=np.float64)
    return values


def population(kind: str, n: int, rng: np.random.Generator, pool: NDArray[np.float64],
               shift: float = 0.0) -> NDArray[np.float64]:
    if kind == "real":
        d = rng.choice(pool, size=n, replace=True)
    else:
        d = rng.beta(2, 5, size=n) - rng.beta(2, 5, size=n)
    d = d - d.mean()
    out: NDArray[np.float64] = np.clip(d + shift, -1.0, 1.0)
    return out


def first_stop(d: NDArray[np.float64]) -> int | None:
    """Cases called when the sequence first excludes 0 (None: never within ``d``)."""
    cs = paired_confidence_sequence(d, 1.0, alpha=ALPHA, population=d.size)
    hit = np.flatnonzero((cs.lower > 0) | (cs.upper < 0))
    return int(hit[0]) + 1 if hit.size else None


def peeked_t(d: NDArray[np.float64]) -> bool:
    """The fixed-n paired t-test at alpha, looked at after every batch: ever rejected."""
    t = np.arange(1, d.size + 1)
    mean = np.cumsum(d) / t
    var = (np.cumsum(d * d) - t * mean * mean) / np.maximum(t - 1, 1)
    looks = np.arange(BATCH - 1, d.size, BATCH)
    se = np.sqrt(var[looks] / t[looks])
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2 * stats.t.sf(np.abs(mean[looks] / se), t[looks] - 1)
    return bool(np.any(p < ALPHA))


def run(trials: int, n: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    pool = real_pool()
    out: dict[str, Any] = {"cases": n, "trials": trials, "null": [], "alternatives": []}
    for kind in ("real", "synthetic"):
        seq = peek = 0
        for _ in range(trials):
            d = population(kind, n, rng, pool)
            seq += first_stop(d) is not None
            peek += peeked_t(d)
        out["null"].append({"null": kind, "sequence": seq, "t_peeked": peek,
                            "trials": trials})
    budget = n // 4
    alt_trials = max(200, trials // 4)
    for shift in (0.02, 0.05, 0.10):
        used: list[float] = []
        seq_power = t_power = 0
        for _ in range(alt_trials):
            d = population("real", n, rng, pool, shift)
            stop = first_stop(d)
            used.append(1.0 if stop is None else stop / n)
            seq_power += stop is not None and stop <= budget
            head = d[:budget]
            p = stats.ttest_1samp(head, 0.0).pvalue
            t_power += bool(p < ALPHA)
        out["alternatives"].append({
            "shift": shift, "trials": alt_trials, "median_share": float(np.median(used)),
            "p90_share": float(np.quantile(used, 0.9)), "budget": budget,
            "sequence_power": seq_power / alt_trials, "t_power": t_power / alt_trials})
    return out


def table(result: dict[str, Any]) -> str:
    lines = [f"N = {result['cases']} cases; alpha {ALPHA}; t-test looked at every "
             f"{BATCH} cases", "",
             "| null | sequence, every case | t-test, every batch (peeked) | trials |",
             "|---|---|---|---|"]
    for row in result["null"]:
        k, m = row["sequence"], row["trials"]
        lo, hi = wilson(k, m)
        lo2, hi2 = wilson(row["t_peeked"], m)
        lines.append(f"| {row['null']} | {100 * k / m:.2f} ({lo:.2f}-{hi:.2f}) | "
                     f"{100 * row['t_peeked'] / m:.1f} ({lo2:.1f}-{hi2:.1f}) | {m:,} |")
    lines += ["", "| true difference | median share of cases called | 90th percentile | "
              "power within N/4, sequence | power at N/4, fixed-n t-test | trials |",
              "|---|---|---|---|---|---|"]
    for row in result["alternatives"]:
        lines.append(f"| {row['shift']:+.2f} | {100 * row['median_share']:.1f}% | "
                     f"{100 * row['p90_share']:.1f}% | {100 * row['sequence_power']:.1f}% | "
                     f"{100 * row['t_power']:.1f}% | {row['trials']:,} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20240)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    start = time.perf_counter()
    result = run(args.trials, args.cases, args.seed)
    print(table(result))
    print(f"\n{time.perf_counter() - start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
