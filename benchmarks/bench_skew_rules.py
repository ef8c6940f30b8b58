"""Candidate rules for skewed differences, each measured as a whole against every target
of docs/statistics.md (Calibration, "Candidate rules against every bar").

Every trial's statistics are computed once in one compiled loop (:func:`sim`), so all
rules see the same samples and the same resamples: the two-sided p of the sign-flip test
of the mean (B random sign patterns, ``(count + 1)/(B + 1)``), of the equal-tailed
bootstrap-t (twice the smaller tail of ``t*`` around the observed t, as the library's
``studentized_p``) and of the symmetric bootstrap-t (``#{|t*| >= |t|}``), Hall's
skewness-corrected t and its bootstrap p, and the sample skewness G1. :func:`rules` turns
them into each candidate's decision; :func:`summary` prints each candidate's worst cell
against each target. The nulls and alternatives are those of bench_calibration.py
(centred pools "C", tie-preserving "Z", sign exchange "S", sign exchange + 0.3 sd "P",
and the synthetic ones).

Hall's statistic: ``T = sqrt(n) g(x)``, ``g(x) = x + G x^2/3 + G^2 x^3/27 + G/(6n)``,
``x = mean / sigma``, ``G = m3 / sigma^3`` (central moments with divisor n): Johnson,
"Modified t tests and confidence intervals for asymmetrical populations", JASA 73, 1978,
with the cubic term of Hall, "On the removal of skewness by transformation", JRSS B 54,
1992, that makes ``g`` monotone; its bootstrap version recomputes ``G`` on each resample.

    .venv/bin/python benchmarks/bench_skew_rules.py [--trials 4000] [--resamples 499]
        [--json counts.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_calibration import (
    BUILT_BY_EXAMPLE,
    CARRIED,
    SYNTHETIC_SKEWED,
    SYNTHETIC_SYMMETRIC,
    TIE_HEAVY,
    Sampler,
    from_pool,
    load_pools,
    tie_preserving,
    wilson,
)


@numba.njit(cache=True)
def _g(x: float, gam: float, n: int) -> float:
    """Hall's monotone transformation of the standardised mean ``x`` (skewness ``gam``)."""
    return x + gam * x * x / 3.0 + gam * gam * x * x * x / 27.0 + gam / (6.0 * n)


@numba.njit(cache=True)
def sim(D: np.ndarray, B: int, seed: int) -> np.ndarray:
    """Per trial (row of ``D``, shape ``(m, n)``) the columns p of the sign-flip test, p of
    the equal-tailed and of the symmetric bootstrap-t, p of Hall's t by the bootstrap,
    Hall's T, the sample skewness G1 and the observed t; shape ``(m, 7)``. A trial without
    spread gets p = 1 (no test rejects)."""
    np.random.seed(seed)
    m, n = D.shape
    out = np.zeros((m, 7))
    for r in range(m):
        d = D[r]
        mean = d.mean()
        e = d - mean
        m2 = (e * e).sum() / n
        m3 = (e * e * e).sum() / n
        var = m2 * n / (n - 1)
        if var <= 1e-300:
            out[r, :] = np.array([1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
            continue
        g1 = m3 / m2 ** 1.5
        G1 = g1 * math.sqrt(n * (n - 1)) / (n - 2)
        se = math.sqrt(var / n)
        t = mean / se
        tol = 1e-12 * (np.abs(d).max() + 1e-300)
        # sign flips
        S = d.sum()
        cnt = 0
        for _b in range(B):
            s = 0.0
            for i in range(n):
                if np.random.random() < 0.5:
                    s += d[i]
                else:
                    s -= d[i]
            if abs(s) >= abs(S) - n * tol:
                cnt += 1
        pf = (cnt + 1) / (B + 1)
        # bootstrap
        x = mean / math.sqrt(m2)
        TH = math.sqrt(n) * _g(x, g1, n)
        up = lo = sym = hu = hl = 0
        for _b in range(B):
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            idx = np.random.randint(0, n, size=n)
            for i in range(n):
                v = e[idx[i]]  # type: ignore[index]
                s1 += v
            mb = s1 / n
            for i in range(n):
                v = e[idx[i]] - mb  # type: ignore[index]
                s2 += v * v
                s3 += v * v * v
            m2b = s2 / n
            if m2b <= 1e-14 * m2:
                ts = 0.0 if abs(mb) <= tol else (math.inf if mb > 0 else -math.inf)
                th = ts
            else:
                ts = mb / math.sqrt(m2b * n / (n - 1) / n)
                g1b = (s3 / n) / m2b ** 1.5
                th = math.sqrt(n) * _g(mb / math.sqrt(m2b), g1b, n)
            if ts >= t - 1e-10 * max(1.0, abs(t)):
                up += 1
            if ts <= t + 1e-10 * max(1.0, abs(t)):
                lo += 1
            if abs(ts) >= abs(t) - 1e-10 * max(1.0, abs(t)):
                sym += 1
            if th >= TH:
                hu += 1
            if th <= TH:
                hl += 1
        out[r, 0] = pf
        out[r, 1] = min(1.0, 2.0 * (min(up, lo) + 1) / (B + 1))
        out[r, 2] = (sym + 1) / (B + 1)
        out[r, 3] = min(1.0, 2.0 * (min(hu, hl) + 1) / (B + 1))
        out[r, 4] = TH
        out[r, 5] = G1
        out[r, 6] = t
    return out


ALPHA = 0.05


def rules(o: np.ndarray, n: int) -> dict[str, np.ndarray]:
    """Each candidate's two-sided decision at ALPHA per trial, from :func:`sim`'s columns."""
    from scipy.stats import t as tdist

    pf, pe, ps, ph, TH, G1, t = o.T
    f, e, s, h = pf < ALPHA, pe < ALPHA, ps < ALPHA, ph < ALPHA
    ht = 2 * tdist.sf(np.abs(TH), n - 1) < ALPHA
    sk = np.abs(G1)
    short = np.sign(t) * np.sign(G1) < 0  # the mean lies on the short tail's side
    return {
        "sign-flip": f,
        "default (abs(G1)>=1: flip & bt-eq)": np.where(sk >= 1, f & e, f),
        "abs(G1)>=0.5: flip & bt-eq": np.where(sk >= 0.5, f & e, f),
        "short side, abs(G1)>=1: flip & bt-eq": np.where((sk >= 1) & short, f & e, f),
        "short side, abs(G1)>=0.5: flip & bt-eq": np.where((sk >= 0.5) & short, f & e, f),
        "short side, always: flip & bt-eq": np.where(short, f & e, f),
        "always flip & bt-eq": f & e,
        "bt-eq alone": e,
        "bt-sym alone": s,
        "abs(G1)>=1: flip & bt-sym": np.where(sk >= 1, f & s, f),
        "abs(G1)>=1: flip & bt-eq & bt-sym": np.where(sk >= 1, f & e & s, f),
        "Hall t, t(n-1) alone": ht,
        "Hall t, bootstrap alone": h,
        "abs(G1)>=1: flip & Hall-t": np.where(sk >= 1, f & ht, f),
        "abs(G1)>=0.5: flip & Hall-boot": np.where(sk >= 0.5, f & h, f),
        "always flip & Hall-boot": f & h,
    }


def cell(label: str, sampler: Sampler, n: int, T: int, B: int) -> dict[str, int]:
    """Rejections of every candidate on ``T`` trials of ``n`` draws from ``sampler``."""
    base = zlib.crc32(f"{label}|{n}".encode())
    rng = np.random.default_rng(base)
    D = np.ascontiguousarray(sampler(rng, n, T))
    o = sim(D, B, base % 100_000)
    return {k: int(v.sum()) for k, v in rules(o, n).items()}


def pct(k: int, T: int) -> str:
    lo, hi = wilson(k, T)
    return f"{100 * k / T:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def summary(res: dict[tuple[str, int], dict[str, int]], T: int) -> None:
    """One row per candidate: its worst cells against each bar (built pools only)."""
    def keys(pred: Callable[[str], bool]) -> list[tuple[str, int]]:
        return [k for k in res if pred(k[0])]

    def built(lab: str) -> bool:
        return BUILT_BY_EXAMPLE not in lab

    expo = keys(lambda lab: lab.startswith("exponential"))
    logn = keys(lambda lab: lab.startswith("lognormal"))
    cen = keys(lambda lab: lab.startswith("C ") and built(lab))
    limit = f"C {CARRIED[1]} {CARRIED[0]}"
    cen_rest = [k for k in cen if k[0] != limit]
    ties = keys(lambda lab: lab.startswith("Z ") and built(lab))
    sym = keys(lambda lab: lab in SYNTHETIC_SYMMETRIC)
    sx = keys(lambda lab: lab.startswith("S ") and built(lab))
    pw = keys(lambda lab: lab.startswith("P ") and built(lab))
    print(f"\n### Candidates, {T:,} trials per cell (worst cell, Wilson 95% interval)\n")
    print("| rule | exponential, max n >= 25 | lognormal n = 25 / 50 / 100 | centred real: "
          f"cells > 6% of {len(cen)} (without the carried-mean pool: of {len(cen_rest)}); "
          "worst other | tie-preserving: max | symmetric synthetic: min - max | sign "
          f"exchange: min - max | power lost vs sign-flip on {len(pw)} symmetric real "
          "alternatives: median / max / cells > 2 |")
    print("|---|---|---|---|---|---|---|---|")
    rule_names = list(next(iter(res.values())))
    for r in rule_names:
        def worst(ks: list[tuple[str, int]], hi: bool = True, r: str = r) -> str:
            if not ks:
                return "-"
            k = (max if hi else min)(ks, key=lambda c: res[c][r])
            return pct(res[k][r], T)
        over = [k for k in cen if res[k][r] > 0.06 * T]
        over_rest = [k for k in cen_rest if res[k][r] > 0.06 * T]
        loss = [100 * (res[k]["sign-flip"] - res[k][r]) / T for k in pw]
        ln = " / ".join(f"{100 * res[k][r] / T:.1f}" for k in sorted(logn, key=lambda c: c[1])
                        if k[1] >= 25)
        print(f"| {r} | {worst([k for k in expo if k[1] >= 25])} | {ln} | {len(over)} "
              f"({len(over_rest)}); {worst(cen_rest)} | {worst(ties)} | "
              f"{worst(sym, hi=False)} - {worst(sym)} | {worst(sx, hi=False)} - {worst(sx)} | "
              + (f"{float(np.median(loss)):.1f} / {max(loss):.1f} / "
                 f"{sum(x > 2 for x in loss)} |" if loss else "- |"), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--resamples", type=int, default=499)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    T, B = args.trials, args.resamples
    pools = load_pools()
    graded = [(p, m, x) for p, m, x in pools if m in ("AP", "nDCG@10", "RR")]
    specs: list[tuple[str, Sampler, tuple[int, ...]]] = []
    specs += [(k, v, (25, 50, 100)) for k, v in SYNTHETIC_SKEWED.items()]
    specs += [(f"C {m} {p}", from_pool(x - x.mean(), signs=False), (25, 50, 100))
              for p, m, x in graded]
    specs += [(f"Z {m} {p}", from_pool(tie_preserving(x), signs=False), (25, 50, 100))
              for p, m, x in graded if np.mean(x == 0) >= TIE_HEAVY]
    specs += [(k, v, (25, 50, 100)) for k, v in SYNTHETIC_SYMMETRIC.items()]
    specs += [(f"S {m} {p}", from_pool(x, signs=True), (25, 50, 100)) for p, m, x in graded]
    specs += [(f"P {m} {p}", from_pool(x, signs=True, shift=0.3 * float(x.std(ddof=1))),
               (25, 50, 100)) for p, m, x in graded]
    t0 = time.perf_counter()
    print(f"alpha = {ALPHA}, two-sided; B = {B} resamples; {T:,} trials per cell; C: centred "
          "pool, Z: tie-preserving, S: sign exchange, P: sign exchange + 0.3 sd; rejections in %")
    res: dict[tuple[str, int], dict[str, int]] = {}
    for label, sampler, ns in specs:
        for n in ns:
            res[(label, n)] = c = cell(label, sampler, n, T, B)
            print(f"{label}|{n}|" + "|".join(f"{r}={100 * k / T:.2f}" for r, k in c.items()),
                  flush=True)
    summary(res, T)
    if args.json is not None:
        args.json.write_text(json.dumps({f"{k[0]}|{k[1]}": v for k, v in res.items()},
                                        indent=1) + "\n", encoding="utf-8")
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
