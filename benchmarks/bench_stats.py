"""Speed and memory of evalkit's resampling methods against baselines, in one run.

For n = 100, 1,000, 10,000, 100,000 per-query differences and B = 10,000 resamples it
times (best of a few runs, after a warm-up) and measures peak extra memory (tracemalloc,
which sees numpy's allocations) of:

* evalkit: ``paired_bootstrap`` and ``paired_test`` with every method (full result:
  p-value, interval, effect sizes);
* the reference loop: a minimal compiled, multi-core bootstrap (numba ``prange`` over
  resamples, inline xorshift64* indices, no index matrix, no extras) — the fastest
  practical implementation, the yardstick;
* the naive algorithm: a ``(B x n)`` index matrix from numpy's generator;
* ``scipy.stats.bootstrap`` (percentile) and ``scipy.stats.permutation_test`` (paired
  sign flips), with ``batch=`` sized to ~256 MB where a single batch would not fit.

A baseline whose working set would exceed the memory budget prints
"skipped (needs N GB)". Ratios are evalkit / baseline (below 1: evalkit is faster or
smaller). A last check runs a fresh interpreter that imports evalkit and tests n = 100.

    .venv/bin/python benchmarks/bench_stats.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

B = 10_000
BUDGET_BYTES = 4 * 1024**3
BATCH_BYTES = 256 * 1024**2


def measure(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """(best seconds, peak traced MB) of ``fn``; one untimed warm-up call first."""
    fn()
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak / 1024**2


def reference_loop() -> Callable[[np.ndarray, int, int], np.ndarray]:
    import numba

    @numba.njit(parallel=True, cache=True)
    def boot(d: Any, n_res: Any, seed: Any) -> Any:  # pragma: no cover - compiled
        n = d.shape[0]
        out = np.empty(n_res)
        for b in numba.prange(n_res):
            z = np.uint64(seed) ^ (np.uint64(b + 1) * np.uint64(0x9E3779B97F4A7C15))
            s = 0.0
            for _ in range(n):
                z ^= z >> np.uint64(12)
                z ^= z << np.uint64(25)
                z ^= z >> np.uint64(27)
                r = z * np.uint64(0x2545F4914F6CDD1D)
                s += d[np.int64((r >> np.uint64(32)) * np.uint64(n) >> np.uint64(32))]
            out[b] = s / n
        return out

    return boot  # type: ignore[no-any-return,unused-ignore]


def naive_bootstrap(d: np.ndarray) -> float:
    rng = np.random.default_rng(1)
    idx = rng.integers(0, d.size, size=(B, d.size))
    means = d[idx].mean(axis=1)
    return float(np.quantile(means, 0.025))


def fmt(t: float, mb: float) -> str:
    return f"{t * 1e3:9.1f} ms {mb:8.1f} MB"


def bench_size(n: int, ref: Callable[[np.ndarray, int, int], np.ndarray], quick: bool) -> None:
    from scipy import stats

    from evalkit.stats import paired_bootstrap, paired_test

    rng = np.random.default_rng(n)
    d = rng.normal(0.01, 0.2, size=n)
    a = {f"q{i}": float(v) for i, v in enumerate(d)}
    z = dict.fromkeys(a, 0.0)
    reps = 3 if n <= 10_000 else 1
    print(f"\nn = {n:,}")
    t_ref, m_ref = measure(lambda: ref(d, B, 7), reps)
    print(f"  {'reference loop (numba, inline rng)':<44}{fmt(t_ref, m_ref)}")
    rows: dict[str, tuple[float, float]] = {}
    rows["evalkit paired_bootstrap"] = measure(lambda: paired_bootstrap(a, z, "m"), reps)
    for method in ("randomization", "bootstrap-t", "bootstrap", "t-test"):

        def one(method: str = method) -> object:
            return paired_test(a, z, "m", method=method)

        rows[f"evalkit paired_test {method}"] = measure(one, reps)
    if n <= 1_000:
        # below the cold-process threshold evalkit uses numpy (no numba import or compile
        # for a small comparison); once the compiled kernel is loaded it is used from
        # n * B = 1e6. Show that path too.
        os.environ["EVALKIT_STATS_BACKEND"] = "numba"
        try:
            rows["  same, compiled path: paired_bootstrap"] = measure(
                lambda: paired_bootstrap(a, z, "m"), reps)
            for method in ("randomization", "bootstrap-t"):

                def comp(method: str = method) -> object:
                    return paired_test(a, z, "m", method=method)

                rows[f"  same, compiled path: paired_test {method}"] = measure(comp, reps)
        finally:
            del os.environ["EVALKIT_STATS_BACKEND"]
    for name, (t, mb) in rows.items():
        print(f"  {name:<44}{fmt(t, mb)}   x{t / t_ref:5.2f} of reference")

    t_boot, m_boot = rows["evalkit paired_bootstrap"]
    t_rand, m_rand = rows["evalkit paired_test randomization"]
    need = 2 * B * n * 8
    if need > BUDGET_BYTES:
        print(f"  {'naive (B x n) index matrix':<44}skipped (needs {need / 1024**3:.0f} GB)")
    else:
        t, mb = measure(lambda: naive_bootstrap(d), 1 if n >= 10_000 else reps)
        print(f"  {'naive (B x n) index matrix':<44}{fmt(t, mb)}   evalkit/naive: "
              f"time {t_boot / t:.3f}, memory {m_boot / mb:.4f}")
    batch = max(1, min(B, BATCH_BYTES // (3 * n * 8)))
    # scipy at n = 100,000 takes minutes: time a tenth of the resamples and scale
    frac = 10 if n >= 100_000 and not quick else 1

    def sp_boot() -> None:
        stats.bootstrap((d,), np.mean, method="percentile", n_resamples=B // frac,
                        batch=batch, rng=np.random.default_rng(0))

    def sp_perm() -> None:
        stats.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis),
                               permutation_type="samples", n_resamples=B // frac,
                               batch=batch, rng=np.random.default_rng(0))

    for label, fn, ours_t, ours_m in (
        ("scipy.stats.bootstrap percentile", sp_boot, t_boot, m_boot),
        ("scipy.stats.permutation_test (sign flips)", sp_perm, t_rand, m_rand),
    ):
        t, mb = measure(fn, 1)
        t *= frac
        note = f" (batch={batch}" + (f", timed on B/{frac}, scaled)" if frac > 1 else ")")
        print(f"  {label:<44}{fmt(t, mb)}   evalkit/scipy: time {ours_t / t:.3f}, "
              f"memory {ours_m / mb:.4f}{note}")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="n up to 10,000 only")
    args = parser.parse_args()
    sizes = [100, 1_000, 10_000] if args.quick else [100, 1_000, 10_000, 100_000]
    ref = reference_loop()
    ref(np.zeros(10), 10, 1)
    print(f"B = {B:,}; {os.cpu_count()} cores; times are best of runs after a warm-up")
    for n in sizes:
        bench_size(n, ref, args.quick)

    code = (
        "import time; t=time.perf_counter(); import evalkit; "
        "from evalkit.stats import paired_test; "
        "a={f'q{i}': (i % 7) / 7 for i in range(100)}; "
        "b={f'q{i}': (i % 5) / 5 for i in range(100)}; r=paired_test(a, b, 'm'); "
        "print(f'{time.perf_counter()-t:.3f}')"
    )
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    print(f"\nfresh process: import evalkit + paired_test at n = 100: {wall:.2f} s wall "
          f"({out.stdout.strip()} s inside the interpreter); goal < 1 s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
