"""The skew guard over the non-zero differences: the default's guard (``|G1| >= 1`` over
all n differences, then the sign-flip test and the equal-tailed bootstrap-t over all n)
against the same guard computed on the non-zero differences only (G1 and the bootstrap-t
over the k differences that are not exact ties), measured on every cell where the two can
differ: nulls and alternatives with exact zeros (docs/statistics.md, Calibration, "Type I
error on IR-shaped nulls").

The sign-flip test conditions on the ties already (a zero has no sign: its sum over sign
patterns is that of the k non-zero values), so its p is the same under both rules. Under
H0 ``mean(all) = 0`` iff ``mean(non-zero) = 0``; the non-zero rule's bootstrap-t is the
studentized mean of the k non-zero values resampled among themselves, given which
cases tied.

Every trial's statistics are computed once in one compiled loop (:func:`sim`), as in
bench_skew_rules.py: the two-sided p of the sign-flip test of the mean (B random sign
patterns, ``(count + 1)/(B + 1)``), of the equal-tailed bootstrap-t over all n values and
over the non-zero ones (twice the smaller tail, as the library's ``studentized_p``), and
G1 over all and over the non-zero values. Both rules reject only where the sign-flip test
does, so the bootstraps are drawn only on those trials. The rules (columns): the sign-flip
test alone; the guard over all n (the default before); the guard and the bootstrap-t over
the non-zero values; the two tests together on every trial, the bootstrap-t over all n and
over the non-zero values; the guard over all n with the bootstrap-t over the non-zero
values ("hybrid"); and the library's rule now, the non-zero one with the guard off when
every non-zero value has one magnitude (``+-c``: G1 is then a function of the wins and
losses). About 13 minutes on one core for every part (docs/statistics.md, "Ties").
Cells:

* ``shapes``: the IR-shaped nulls of bench_calibration ``--part shapes`` (zero-inflated
  skewed, symmetric bimodal, P@10-like), n = 10, 25, 50, 100;
* ``Z``: tie-heavy real pools with ties kept at 0 (``--part ties``);
* ``S``: real pools under sign exchange (zeros stay zeros), n = 25, 50, 100;
* ``P@1``: P@1 under sign exchange, undeclared (the sign-flip test with the guard);
* ``T``: symmetric real alternatives with ties kept: sign exchange, then the non-zero
  values shifted by 0.3 of the pool's sd (zeros stay 0);
* ``P``: the existing symmetric real alternatives (sign exchange + 0.3 sd on every value):
  no zeros, so both rules agree; counted as a check.

    .venv/bin/python benchmarks/bench_tie_guard.py [--trials 4000] [--resamples 2000]
        [--part shapes Z S P@1 T P] [--json counts.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import zlib
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_calibration import (
    BUILT_BY_EXAMPLE,
    SYNTHETIC_SHAPES,
    TIE_HEAVY,
    Sampler,
    from_pool,
    load_pools,
    tie_preserving,
    wilson,
)

ALPHA = 0.05


@numba.njit(cache=True)
def _skew(d: np.ndarray) -> float:
    n = d.shape[0]
    if n < 3:
        return 0.0
    mean = d.mean()
    e = d - mean
    m2 = (e * e).sum() / n
    if m2 <= 0.0:
        return 0.0
    m3 = (e * e * e).sum() / n
    return float(m3 / m2 ** 1.5 * math.sqrt(n * (n - 1)) / (n - 2))


@numba.njit(cache=True)
def _boot_t(d: np.ndarray, B: int) -> float:
    """Two-sided equal-tailed bootstrap-t p of the mean of ``d`` (1.0 below 2 values or
    without spread)."""
    n = d.shape[0]
    if n < 2:
        return 1.0
    mean = d.mean()
    e = d - mean
    m2 = (e * e).sum() / n
    if m2 <= 1e-300:
        return 1.0
    var = m2 * n / (n - 1)
    t = mean / math.sqrt(var / n)
    tol = 1e-12 * (np.abs(d).max() + 1e-300)
    up = 0
    lo = 0
    for _b in range(B):
        idx = np.random.randint(0, n, size=n)
        s1 = 0.0
        for i in range(n):
            s1 += e[idx[i]]  # type: ignore[index]
        mb = s1 / n
        s2 = 0.0
        for i in range(n):
            v = e[idx[i]] - mb  # type: ignore[index]
            s2 += v * v
        vb = s2 / (n - 1)
        if vb <= 1e-14 * var:
            ts = 0.0 if abs(mb) <= tol else (math.inf if mb > 0 else -math.inf)
        else:
            ts = mb / math.sqrt(vb / n)
        if ts >= t - 1e-10 * max(1.0, abs(t)):
            up += 1
        if ts <= t + 1e-10 * max(1.0, abs(t)):
            lo += 1
    return min(1.0, 2.0 * (min(up, lo) + 1) / (B + 1))


@numba.njit(cache=True)
def sim(D: np.ndarray, B: int, seed: int, alpha: float) -> np.ndarray:
    """Per trial (row of ``D``, ``(m, n)``): p of the sign-flip test, p of the bootstrap-t
    over all values and over the non-zero ones (1.0 where the sign-flip test does not
    reject: not drawn), G1 over all and over the non-zero values, k, and whether the
    non-zero values are all of one magnitude (``+-c``); ``(m, 7)``."""
    np.random.seed(seed)
    m, n = D.shape
    out = np.ones((m, 7))
    for r in range(m):
        d = D[r]
        nz = d[d != 0.0]
        k = nz.shape[0]
        out[r, 3] = _skew(d)
        out[r, 4] = _skew(nz)
        out[r, 5] = k
        two = 1.0
        for i in range(k):
            if abs(nz[i]) != abs(nz[0]):
                two = 0.0
                break
        out[r, 6] = two
        if k == 0:
            continue
        S = d.sum()
        tol = 1e-12 * (np.abs(d).max() + 1e-300)
        cnt = 0
        for _b in range(B):
            s = 0.0
            for i in range(k):
                if np.random.random() < 0.5:
                    s += nz[i]
                else:
                    s -= nz[i]
            if abs(s) >= abs(S) - n * tol:
                cnt += 1
        pf = (cnt + 1) / (B + 1)
        out[r, 0] = pf
        if pf < alpha:
            out[r, 1] = _boot_t(d, B)
            out[r, 2] = _boot_t(nz, B)
    return out


RULES = ("sign-flip", "default (G1, bt over all n)", "non-zero (G1, bt over the k)",
         "both always, all n", "both always, non-zero", "hybrid (G1 over all n, bt over the k)",
         "non-zero, guard off on +-c")


def rules(o: np.ndarray) -> dict[str, np.ndarray]:
    pf, pa, pz, ga, gz, _k, two = o.T
    f = pf < ALPHA
    return {
        RULES[0]: f,
        RULES[1]: np.where(np.abs(ga) >= 1.0, f & (pa < ALPHA), f),
        RULES[2]: np.where(np.abs(gz) >= 1.0, f & (pz < ALPHA), f),
        RULES[3]: f & (pa < ALPHA),
        RULES[4]: f & (pz < ALPHA),
        RULES[5]: np.where(np.abs(ga) >= 1.0, f & (pz < ALPHA), f),
        RULES[6]: np.where((np.abs(gz) >= 1.0) & (two == 0.0), f & (pz < ALPHA), f),
    }


def cell(label: str, sampler: Sampler, n: int, T: int, B: int) -> dict[str, float]:
    base = zlib.crc32(f"{label}|{n}".encode())
    rng = np.random.default_rng(base)
    D = np.ascontiguousarray(sampler(rng, n, T))
    o = sim(D, B, base % 100_000, ALPHA)
    dec = rules(o)
    res: dict[str, float] = {k: int(v.sum()) for k, v in dec.items()}
    res["guard all"] = int((np.abs(o[:, 3]) >= 1).sum())
    res["guard nz"] = int((np.abs(o[:, 4]) >= 1).sum())
    res["mean k"] = float(o[:, 5].mean())
    # paired difference non-zero rule minus default, for power
    res["only nz"] = int((dec[RULES[2]] & ~dec[RULES[1]]).sum())
    res["only default"] = int((dec[RULES[1]] & ~dec[RULES[2]]).sum())
    res["nz lost vs flip"] = int((dec[RULES[0]] & ~dec[RULES[2]]).sum())
    res["default lost vs flip"] = int((dec[RULES[0]] & ~dec[RULES[1]]).sum())
    return res


def pct(k: int, T: int) -> str:
    lo, hi = wilson(k, T)
    return f"{100 * k / T:.2f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def shifted_nonzero(pool: np.ndarray, shift: float) -> Sampler:
    """Sign exchange, then ``shift`` added to the non-zero values only (ties stay 0)."""
    def sample(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
        x = pool[rng.integers(0, pool.size, size=(m, n))]
        x = x * np.where(rng.random(size=(m, n)) < 0.5, 1.0, -1.0)
        return np.where(x != 0.0, x + shift, 0.0)

    return sample


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--part", nargs="*", default=["shapes", "Z", "S", "P@1", "T", "P"])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    T, B = args.trials, args.resamples
    pools = load_pools()
    graded = [(p, m, x) for p, m, x in pools if m in ("AP", "nDCG@10", "RR")]

    def mark(p: str) -> str:
        return " (bundled run)" if BUILT_BY_EXAMPLE in p else ""

    specs: list[tuple[str, Sampler, tuple[int, ...]]] = []
    if "shapes" in args.part:
        specs += [(k, v, (10, 25, 50, 100)) for k, v in SYNTHETIC_SHAPES.items()]
    if "Z" in args.part:
        specs += [(f"Z {m} {p}{mark(p)}", from_pool(tie_preserving(x), signs=False),
                   (25, 50, 100)) for p, m, x in graded if np.mean(x == 0) >= TIE_HEAVY]
    if "S" in args.part:
        specs += [(f"S {m} {p}{mark(p)}", from_pool(x, signs=True), (25, 50, 100))
                  for p, m, x in graded]
    if "P@1" in args.part:
        specs += [(f"P@1 {p}{mark(p)}, undeclared", from_pool(x, signs=True), (25, 50, 100))
                  for p, m, x in pools if m == "P@1"]
    if "T" in args.part:
        specs += [(f"T {m} {p}{mark(p)}", shifted_nonzero(x, 0.3 * float(x.std(ddof=1))),
                   (25, 50, 100)) for p, m, x in graded if np.any(x == 0)]
    if "P" in args.part:
        specs += [(f"P {m} {p}{mark(p)}",
                   from_pool(x, signs=True, shift=0.3 * float(x.std(ddof=1))),
                   (25, 50, 100)) for p, m, x in graded]
    t0 = time.perf_counter()
    print(f"alpha = {ALPHA}, two-sided; B = {B} resamples; {T:,} trials per cell; "
          "rejections in %, Wilson 95% interval; guard: share of trials with |G1| >= 1 "
          "over all values / over the non-zero ones; k: mean number of non-zero values")
    print("\n| cell | n | k | sign-flip | default | non-zero rule | both always (all) | "
          "both always (non-zero) | hybrid | non-zero, not on +-c | guard all / nz | "
          "non-zero - default (points) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    res: dict[str, dict[str, float]] = {}
    for label, sampler, ns in specs:
        for n in ns:
            c = cell(label, sampler, n, T, B)
            res[f"{label}|{n}"] = c
            a, b = int(c["only nz"]), int(c["only default"])
            d = (a - b) / T
            var = (a + b) / T - d * d
            half = 1.96 * math.sqrt(max(var, 0.0) / T)
            print(f"| {label} | {n} | {c['mean k']:.1f} | "
                  + " | ".join(pct(int(c[r]), T) for r in RULES)
                  + f" | {100 * c['guard all'] / T:.0f}% / {100 * c['guard nz'] / T:.0f}% | "
                  f"{100 * d:+.2f} [{100 * (d - half):+.1f}, {100 * (d + half):+.1f}] |",
                  flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
