"""Resampling kernels: per-resample sums without an index matrix.

Two backends compute bit-identical results from the generator in :mod:`._rng`:

* numpy: vectorised over a chunk of resamples, looping over positions, so memory is
  ``O(chunk * m)`` and no ``(n_resamples x n)`` array ever exists;
* numba (:mod:`._compiled`): one compiled, multi-threaded loop over resamples that
  draws each index inline; used for large problems only, so small comparisons never
  wait for a compile (its machine code is cached on disk after the first use).

Both accumulate each resample's sum sequentially over positions ``0 .. n-1``, which fixes
the floating-point summation order: the result is independent of chunk size, thread
count and backend.
"""

from __future__ import annotations

import os
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from evalkit.stats._rng import (
    GAMMA,
    MASK64,
    SIGN_STREAM_OFFSET,
    bounded_inplace,
    mix64_inplace,
)

Backend = Literal["auto", "numpy", "numba"]
FloatArray = NDArray[np.float64]

#: Work (n * n_resamples * columns) from which "auto" uses the compiled kernel in a
#: process that has not loaded it yet (importing numba and the cached machine code costs
#: about 0.35 s, more than numpy needs below this).
NUMBA_THRESHOLD = 50_000_000
#: The same once the compiled kernels are loaded in this process, or numba is imported and
#: its cache holds them (nothing left to wait for but a cache read).
NUMBA_WARM_THRESHOLD = 1_000_000
#: Largest n for which the sign-flip test enumerates all 2**n sign patterns.
EXACT_MAX_N = 16
_CHUNK_ELEMS = 1 << 16

_numba_state: dict[str, object] = {}


def _numba_available() -> bool:
    if "ok" not in _numba_state:
        try:
            import numba  # noqa: F401
        except Exception:  # pragma: no cover - depends on the environment
            _numba_state["ok"] = False
        else:
            _numba_state["ok"] = True
    return bool(_numba_state["ok"])


def _compiled_cache_ready() -> bool:
    """Whether numba's on-disk cache holds the compiled kernels (so loading them costs a
    cache read, never a compile). Only consulted once numba itself is imported."""
    if "cache" not in _numba_state:
        from pathlib import Path

        folder = Path(__file__).with_name("__pycache__")
        _numba_state["cache"] = any(folder.glob("_compiled.*.nbi")) if folder.is_dir() else False
    return bool(_numba_state["cache"])


def choose_backend(work: int, backend: Backend = "auto") -> Literal["numpy", "numba"]:
    """Resolve ``backend``; ``EVALKIT_STATS_BACKEND`` overrides "auto".

    Raises:
        ValueError: an unknown backend, or "numba" asked for but not importable.
    """
    if backend == "auto":
        env = os.environ.get("EVALKIT_STATS_BACKEND", "auto").strip().lower()
        if env in ("numpy", "numba"):
            backend = env  # type: ignore[assignment]
    if backend == "numpy":
        return "numpy"
    if backend == "numba":
        if not _numba_available():
            raise ValueError("backend 'numba' requested but numba cannot be imported")
        return "numba"
    if backend != "auto":
        raise ValueError(f"unknown backend {backend!r}; use 'auto', 'numpy' or 'numba'")
    import sys

    warm = "evalkit.stats._compiled" in sys.modules or (
        "numba" in sys.modules and _compiled_cache_ready()
    )
    threshold = NUMBA_WARM_THRESHOLD if warm else NUMBA_THRESHOLD
    return "numba" if work >= threshold and _numba_available() else "numpy"


def _as_matrix(d: NDArray[np.float64]) -> FloatArray:
    m = np.ascontiguousarray(d, dtype=np.float64)
    if m.ndim == 1:
        m = m[:, None]
    if m.ndim != 2:
        raise ValueError("differences must be a vector or an (n, m) matrix")
    return m


def _chunk_for(n_cols: int, chunk: int | None) -> int:
    if chunk is not None:
        if chunk < 1:
            raise ValueError("chunk must be >= 1")
        return chunk
    return max(256, _CHUNK_ELEMS // max(1, n_cols))


# ---------------------------------------------------------------------------
# bootstrap


def bootstrap_sums(
    d: NDArray[np.float64],
    n_resamples: int,
    seed: int,
    *,
    want_squares: bool = False,
    backend: Backend = "auto",
    chunk: int | None = None,
) -> tuple[FloatArray, FloatArray | None]:
    """Per-resample column sums (and sums of squares) of a paired bootstrap.

    Args:
        d: shape ``(n,)`` or ``(n, m)``; row ``i`` holds position ``i``'s values (one
            column per metric or comparison; every column uses the same resamples).
        n_resamples: ``B``.
        seed: generator seed (see :mod:`._rng`).
        want_squares: also return the per-resample sums of squares.
        backend: "auto", "numpy" or "numba".
        chunk: resamples per numpy chunk (memory only; never changes the result).

    Returns:
        ``(sums, squares)``, each ``(B, m)`` float64 (``squares`` None unless asked).
    """
    mat = _as_matrix(d)
    n, m = mat.shape
    if n < 1 or n >= 1 << 32:
        raise ValueError(f"need 1 <= n < 2**32 positions, got {n}")
    which = choose_backend(n * n_resamples * m, backend)
    if which == "numba":
        from evalkit.stats import _compiled

        return _compiled.bootstrap_sums(mat, n_resamples, seed, want_squares)
    return _np_bootstrap_sums(mat, n_resamples, seed, want_squares, _chunk_for(m, chunk))


def _np_bootstrap_sums(
    mat: FloatArray, n_resamples: int, seed: int, want_squares: bool, chunk: int
) -> tuple[FloatArray, FloatArray | None]:
    n, m = mat.shape
    sums = np.zeros((n_resamples, m))
    squares = np.zeros((n_resamples, m)) if want_squares else None
    stride = np.uint64((n * GAMMA) & MASK64)
    base0 = np.uint64((seed + GAMMA) & MASK64)
    offsets = [np.uint64((i * GAMMA) & MASK64) for i in range(n)]
    col = mat[:, 0] if m == 1 else None
    for c0 in range(0, n_resamples, chunk):
        c1 = min(n_resamples, c0 + chunk)
        size = c1 - c0
        rows = np.arange(c0, c1, dtype=np.uint64) * stride + base0
        z = np.empty(size, dtype=np.uint64)
        tmp = np.empty(size, dtype=np.uint64)
        idx = np.empty(size, dtype=np.uint64)
        acc = sums[c0:c1]
        acc2 = squares[c0:c1] if squares is not None else None
        if col is not None:
            acc1 = np.zeros(size)
            acc21 = np.zeros(size) if acc2 is not None else None
            x1 = np.empty(size)
            for i in range(n):
                np.add(rows, offsets[i], out=z)
                mix64_inplace(z, tmp)
                bounded_inplace(z, n, tmp, idx)
                np.take(col, idx.view(np.int64), out=x1)
                acc1 += x1
                if acc21 is not None:
                    np.multiply(x1, x1, out=x1)
                    acc21 += x1
            acc[:, 0] = acc1
            if acc2 is not None and acc21 is not None:
                acc2[:, 0] = acc21
            continue
        x = np.empty((size, m))
        for i in range(n):
            np.add(rows, offsets[i], out=z)
            mix64_inplace(z, tmp)
            bounded_inplace(z, n, tmp, idx)
            np.take(mat, idx.view(np.int64), axis=0, out=x)
            acc += x
            if acc2 is not None:
                np.multiply(x, x, out=x)
                acc2 += x
    return sums, squares


# ---------------------------------------------------------------------------
# sign flips


def signflip_sums(
    d: NDArray[np.float64],
    n_resamples: int,
    seed: int,
    *,
    backend: Backend = "auto",
    chunk: int | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Per-resample sums of randomly sign-flipped rows, and the sums of the signs.

    Args:
        d: shape ``(n,)`` or ``(n, m)``; every column gets the same sign pattern.
        n_resamples: ``B`` random sign patterns (see :mod:`._rng` for the bits).
        seed: generator seed.

    Returns:
        ``(sums, sign_sums)``: ``(B, m)`` with ``sum_i s_bi * d_ij`` and ``(B,)`` with
        ``sum_i s_bi`` (used to invert the test for a confidence interval).
    """
    mat = _as_matrix(d)
    n, m = mat.shape
    if n < 1:
        raise ValueError("need at least one position")
    which = choose_backend(n * n_resamples * m, backend)
    if which == "numba":
        from evalkit.stats import _compiled

        return _compiled.signflip_sums(mat, n_resamples, seed)
    return _np_signflip_sums(mat, n_resamples, seed, _chunk_for(m, chunk))


def _np_signflip_sums(
    mat: FloatArray, n_resamples: int, seed: int, chunk: int
) -> tuple[FloatArray, FloatArray]:
    n, m = mat.shape
    words = (n + 63) // 64
    sums = np.zeros((n_resamples, m))
    signs = np.zeros(n_resamples)
    stride = np.uint64((words * GAMMA) & MASK64)
    base0 = np.uint64((seed + SIGN_STREAM_OFFSET + GAMMA) & MASK64)
    one = np.uint64(1)
    for c0 in range(0, n_resamples, chunk):
        c1 = min(n_resamples, c0 + chunk)
        size = c1 - c0
        rows = np.arange(c0, c1, dtype=np.uint64) * stride + base0
        z = np.empty(size, dtype=np.uint64)
        tmp = np.empty(size, dtype=np.uint64)
        sgn = np.empty(size)
        acc = sums[c0:c1]
        sacc = signs[c0:c1]
        for w in range(words):
            np.add(rows, np.uint64((w * GAMMA) & MASK64), out=z)
            mix64_inplace(z, tmp)
            for t in range(min(64, n - 64 * w)):
                i = 64 * w + t
                np.right_shift(z, np.uint64(t), out=tmp)
                np.bitwise_and(tmp, one, out=tmp)
                np.multiply(tmp, 2, out=sgn, casting="unsafe")
                sgn -= 1.0
                if m == 1:
                    acc[:, 0] += sgn * mat[i, 0]
                else:
                    acc += sgn[:, None] * mat[i][None, :]
                sacc += sgn
    return sums, signs


def exact_signflip_sums(d: NDArray[np.float64]) -> tuple[FloatArray, FloatArray]:
    """All ``2**n`` sign patterns (pattern ``p``: sign of position ``i`` is bit ``i``).

    Same return shapes as :func:`signflip_sums` with ``B = 2**n``; ``n <= EXACT_MAX_N``.
    """
    mat = _as_matrix(d)
    n, m = mat.shape
    if n > EXACT_MAX_N:
        raise ValueError(f"exact enumeration is limited to n <= {EXACT_MAX_N}")
    total = 1 << n
    pat = np.arange(total, dtype=np.int64)
    sums = np.zeros((total, m))
    signs = np.zeros(total)
    for i in range(n):
        sgn = ((pat >> i) & 1).astype(np.float64) * 2.0 - 1.0
        sums += sgn[:, None] * mat[i][None, :]
        signs += sgn
    return sums, signs
