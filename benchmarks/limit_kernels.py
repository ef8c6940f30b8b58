"""The compiled limit of one paired resampling test: the floors the statistics benchmarks
divide by.

Each kernel is the least work one paired test at ``n`` differences and ``B`` resamples
can do: numba, ``parallel=True`` with ``prange`` over resamples (all cores), the random
numbers drawn inline from xorshift64* (Vigna, "An experimental exploration of
Marsaglia's xorshift generators, scrambled", ACM TOMS 42, 2016) and never stored, so
there is no ``(B x n)`` index matrix and memory is ``O(B)``; nothing beyond the
resampled means (no p-value, interval or check):

* :func:`bootstrap_means`: resample ``n`` positions with replacement; each 64-bit draw
  gives two indices (its two 32-bit halves, mapped to ``[0, n)`` by multiply-high);
* :func:`signflip_means`: flip the sign of each difference by one bit of a draw (64
  positions per draw).

They are benchmarks' yardsticks, not evalkit code (their streams are not evalkit's).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_STAR = np.uint64(0x2545F4914F6CDD1D)


@numba.njit(parallel=True, cache=True)
def bootstrap_means(d: Any, n_res: Any, seed: Any) -> Any:  # pragma: no cover - compiled
    """Means of ``n_res`` bootstrap resamples of ``d`` (shape ``(n,)``); ``(n_res,)``."""
    n = d.shape[0]
    un = np.uint64(n)
    out = np.empty(n_res)
    for b in numba.prange(n_res):
        z = np.uint64(seed) ^ (np.uint64(b + 1) * _GOLDEN)
        s = 0.0
        for _ in range(n // 2):
            z ^= z >> np.uint64(12)
            z ^= z << np.uint64(25)
            z ^= z >> np.uint64(27)
            r = z * _STAR
            s += d[np.int64(((r >> np.uint64(32)) * un) >> np.uint64(32))]
            s += d[np.int64(((r & np.uint64(0xFFFFFFFF)) * un) >> np.uint64(32))]
        if n % 2:
            z ^= z >> np.uint64(12)
            z ^= z << np.uint64(25)
            z ^= z >> np.uint64(27)
            r = z * _STAR
            s += d[np.int64(((r >> np.uint64(32)) * un) >> np.uint64(32))]
        out[b] = s / n
    return out


@numba.njit(parallel=True, cache=True)
def signflip_means(d: Any, n_res: Any, seed: Any) -> Any:  # pragma: no cover - compiled
    """Means of ``n_res`` random sign flips of ``d`` (shape ``(n,)``); ``(n_res,)``."""
    n = d.shape[0]
    out = np.empty(n_res)
    for b in numba.prange(n_res):
        z = np.uint64(seed) ^ (np.uint64(b + 1) * _GOLDEN)
        s = 0.0
        for w in range(0, n, 64):
            z ^= z >> np.uint64(12)
            z ^= z << np.uint64(25)
            z ^= z >> np.uint64(27)
            r = z * _STAR
            for t in range(min(64, n - w)):
                x = d[w + t]
                s += x if (r >> np.uint64(t)) & np.uint64(1) else -x
        out[b] = s / n
    return out


def warm() -> None:
    """Compile (or load from numba's cache) both kernels."""
    d = np.zeros(3)
    bootstrap_means(d, 2, 1)
    signflip_means(d, 2, 1)
