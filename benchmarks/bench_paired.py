"""One paired test against its compiled limit, and pairing two runs by id, in one run.

* ``paired_bootstrap`` and ``paired_test`` (the default test) at n = 10,000 and
  B = 10,000, from two ``{query id: score}`` mappings (pairing included), against the
  limit kernels of ``limit_kernels.py`` (numba on all cores, no index matrix): ratio
  evalkit / limit, budget 1.5 for ``paired_bootstrap``. Best of ``--rounds`` runs each,
  the calls interleaved so load on the machine falls on all alike.
* ``evalkit.stats.pairing.align`` of two mappings of n = 100,000 ids (ids inserted in
  sorted order, and shuffled), budget 20 ms, against a copy of the previous
  implementation (:func:`previous_align`, which checked each value in Python), whose
  output it must equal; beside them the work any order of the ids leaves
  (:func:`checks_alone`: both mappings' ids and values read and their types checked, no
  sorting), the floor of the budget. The shuffled case is timed twice: with the
  mappings' ids and values the same objects as the sorted case's (made in sorted order,
  so reading them in the shuffled order jumps about in memory), and as a run read from a
  file holds them (each made in the order read: a JSON round trip).
* Values: the results' observed difference, interval and p-value must equal those the
  previous implementation gave on the same inputs, stored in
  ``data/paired_reference.json`` (written with ``--write-reference`` by that
  implementation).

    .venv/bin/python benchmarks/bench_paired.py [--rounds 9]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import limit_kernels  # noqa: E402

REFERENCE = HERE / "data" / "paired_reference.json"
N, B, N_ALIGN = 10_000, 10_000, 100_000


def inputs(n: int, seed: int) -> tuple[dict[str, float], dict[str, float]]:
    """Two runs' scores over ids ``q000000``.. (inserted sorted), a skewed difference."""
    rng = np.random.default_rng(seed)
    base = rng.beta(2.0, 5.0, n)
    cand = np.clip(base + rng.normal(0.003, 0.08, n), 0.0, 1.0)
    ids = [f"q{i:06d}" for i in range(n)]
    return (dict(zip(ids, cand.tolist(), strict=True)),
            dict(zip(ids, base.tolist(), strict=True)))


def results() -> dict[str, list[str]]:
    """The values checked against the reference, as ``repr`` strings."""
    from evalkit.stats import paired_bootstrap, paired_test

    a, b = inputs(N, 1)
    out = {}
    r = paired_bootstrap(a, b, "m", n_resamples=B, seed=42)
    out["paired_bootstrap"] = [repr(x) for x in (r.observed, r.ci_low, r.ci_high, r.p_value)]
    t = paired_test(a, b, "m", n_resamples=B, seed=42)
    out["paired_test"] = [t.method] + [repr(x) for x in (t.observed, t.ci_low, t.ci_high,
                                                         t.p_value)]
    return out


def previous_align(a: dict[str, Any], b: dict[str, Any]) -> tuple[tuple[str, ...], Any, Any]:
    """The pairing before the speed-up, for mappings: each value checked in Python
    (``real_number``, ``math.isfinite``), ids sorted, values read in id order."""
    from evalkit.stats.numeric import real_number

    def scores(run: dict[str, Any]) -> dict[str, float]:
        raw = {str(k): v for k, v in run.items()}
        out = {}
        for qid, v in raw.items():
            f = real_number(v, f"case {qid!r}")
            if not math.isfinite(f):
                raise ValueError(qid)
            out[qid] = f
        return out

    sa, sb = scores(a), scores(b)
    if set(sa) != set(sb):
        raise ValueError("different ids")
    ids = tuple(sorted(sa))
    va = np.fromiter((sa[i] for i in ids), dtype=np.float64, count=len(ids))
    vb = np.fromiter((sb[i] for i in ids), dtype=np.float64, count=len(ids))
    return ids, va, vb


def checks_alone(a: dict[str, Any], b: dict[str, Any]) -> None:
    """What pairing two mappings does whatever their ids' order: each mapping's ids and
    values read, their types checked in one pass each, the values converted and checked
    finite by numpy; the ids not sorted."""
    for run in (a, b):
        if not (set(map(type, run)) <= {str}
                and set(map(type, run.values())) <= {float, int, np.float64}):
            raise ValueError("not plain")
        values = np.fromiter(run.values(), dtype=np.float64, count=len(run))
        if not np.isfinite(values).all():
            raise ValueError("not finite")
        tuple(run)


def best_of(fns: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    for fn in fns.values():
        fn()
    best = dict.fromkeys(fns, math.inf)
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--write-reference", action="store_true")
    args = parser.parse_args()
    if args.write_reference:
        REFERENCE.write_text(json.dumps(results(), indent=1) + "\n")
        print(f"wrote {REFERENCE}")
        return 0
    from evalkit.stats import paired_bootstrap, paired_test
    from evalkit.stats.pairing import align

    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at start")
    limit_kernels.warm()
    a, b = inputs(N, 1)
    d = np.array([a[q] - b[q] for q in sorted(a)])
    times = best_of({
        "limit kernel, bootstrap": lambda: limit_kernels.bootstrap_means(d, B, 7),
        "limit kernel, sign flips": lambda: limit_kernels.signflip_means(d, B, 7),
        "paired_bootstrap": lambda: paired_bootstrap(a, b, "m", n_resamples=B),
        "paired_test (default test)": lambda: paired_test(a, b, "m", n_resamples=B),
    }, args.rounds)
    boot, sign = times["limit kernel, bootstrap"], times["limit kernel, sign flips"]
    print(f"\nn = {N:,}, B = {B:,}, best of {args.rounds}:")
    for name, t in times.items():
        ratio = f"x{t / boot:5.2f} of the bootstrap limit, x{t / sign:5.2f} of the sign-flip"
        print(f"  {name:<30}{t * 1e3:8.1f} ms   {ratio}")
    ok = times["paired_bootstrap"] <= 1.5 * boot
    print(f"  paired_bootstrap budget (<= 1.5x the bootstrap limit): "
          f"{'met' if ok else 'not met'}")

    ref = json.loads(REFERENCE.read_text())
    got = results()
    same = got == ref
    print(f"  values equal to the previous implementation's: {same}")

    a2, b2 = inputs(N_ALIGN, 2)
    keys = list(a2)
    random.Random(3).shuffle(keys)
    a3 = {k: a2[k] for k in keys}
    b3 = {k: b2[k] for k in reversed(keys)}
    a4, b4 = json.loads(json.dumps(a3)), json.loads(json.dumps(b3))  # as read from files
    t_align = best_of({
        "align, ids in sorted order": lambda: align(a2, b2, "m"),
        "align, ids shuffled": lambda: align(a3, b3, "m"),
        "align, shuffled, as read": lambda: align(a4, b4, "m"),
        "previous align, sorted": lambda: previous_align(a2, b2),
        "previous align, shuffled": lambda: previous_align(a3, b3),
        "previous align, as read": lambda: previous_align(a4, b4),
        "checks alone, sorted": lambda: checks_alone(a2, b2),
        "checks alone, shuffled": lambda: checks_alone(a3, b3),
        "checks alone, as read": lambda: checks_alone(a4, b4),
    }, args.rounds)
    print(f"\npairing n = {N_ALIGN:,} ids, best of {args.rounds} (budget 20 ms):")
    for name, t in t_align.items():
        print(f"  {name:<30}{t * 1e3:8.1f} ms")
    for new, old, x, y, checks in (
            ("align, ids in sorted order", "previous align, sorted", a2, b2, "sorted"),
            ("align, ids shuffled", "previous align, shuffled", a3, b3, "shuffled"),
            ("align, shuffled, as read", "previous align, as read", a4, b4, "as read")):
        p = align(x, y, "m")
        ids, va, vb = previous_align(x, y)
        equal = p.ids == ids and np.array_equal(p.a, va) and np.array_equal(p.b, vb)
        floor = t_align["checks alone, " + checks]
        print(f"  {new}: x{t_align[new] / t_align[old]:.2f} of the previous, "
              f"x{t_align[new] / floor:.2f} of the checks alone; output equal: {equal}; "
              f"20 ms {'met' if t_align[new] < 0.020 else 'not met'}")
        same &= equal
    print(f"\nload average at end {os.getloadavg()[0]:.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
