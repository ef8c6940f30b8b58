"""Compiled (numba) resampling kernels, imported only for large problems.

Same generator, same per-resample summation order as the numpy kernels in
:mod:`._kernels`, hence bit-identical results. ``parallel=True`` spreads resamples over
threads; each resample is computed by one thread start to finish, so the thread count
never changes a value. ``cache=True`` stores the machine code beside this file (or in
``NUMBA_CACHE_DIR``) so only the very first large comparison on a machine compiles.
"""

from __future__ import annotations

import types
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from evalkit.stats._blocks import column_blocks
from evalkit.stats._rng import GAMMA, MASK64, MIX1, MIX2, SIGN_STREAM_OFFSET

_GAMMA = np.uint64(GAMMA)
_MIX1 = np.uint64(MIX1)
_MIX2 = np.uint64(MIX2)


@numba.njit(inline="always", cache=True)
def _mix(z: Any) -> Any:
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@numba.njit(inline="always", cache=True)
def _bounded(z: Any, un: Any) -> Any:
    lo = ((z & np.uint64(0xFFFFFFFF)) * un) >> np.uint64(32)
    return ((z >> np.uint64(32)) * un + lo) >> np.uint64(32)


@numba.njit(parallel=True, cache=True, nogil=True)
def _boot_kernel(
    mat: Any, n_resamples: Any, base0: Any, stride: Any, want_sq: Any, sums: Any, squares: Any
) -> None:  # pragma: no cover - compiled
    n, m = mat.shape
    un = np.uint64(n)
    for b in numba.prange(n_resamples):
        row = np.uint64(b) * stride + base0
        for i in range(n):
            z = _mix(row + np.uint64(i) * _GAMMA)
            k = np.int64(_bounded(z, un))
            for j in range(m):
                x = mat[k, j]
                sums[b, j] += x
                if want_sq:
                    squares[b, j] += x * x


@numba.njit(parallel=True, cache=True, nogil=True)
def _sign_kernel(
    mat: Any, n_resamples: Any, base0: Any, stride: Any, sums: Any, signs: Any
) -> None:  # pragma: no cover - compiled
    n, m = mat.shape
    words = (n + 63) // 64
    for b in numba.prange(n_resamples):
        row = np.uint64(b) * stride + base0
        s_acc = 0.0
        for w in range(words):
            z = _mix(row + np.uint64(w) * _GAMMA)
            top = min(64, n - 64 * w)
            for t in range(top):
                i = 64 * w + t
                bit = (z >> np.uint64(t)) & np.uint64(1)
                if bit:
                    s_acc += 1.0
                    for j in range(m):
                        sums[b, j] += mat[i, j]
                else:
                    s_acc -= 1.0
                    for j in range(m):
                        sums[b, j] += -mat[i, j]
        signs[b] = s_acc


@numba.njit(parallel=True, cache=True, nogil=True)
def _boot_kernel_1d(
    vec: Any, n_resamples: Any, base0: Any, stride: Any, want_sq: Any, sums: Any, squares: Any
) -> None:  # pragma: no cover - compiled
    n = vec.shape[0]
    un = np.uint64(n)
    for b in numba.prange(n_resamples):
        row = np.uint64(b) * stride + base0
        s = 0.0
        q = 0.0
        if want_sq:
            for i in range(n):
                x = vec[np.int64(_bounded(_mix(row + np.uint64(i) * _GAMMA), un))]
                s += x
                q += x * x
            squares[b] = q
        else:
            for i in range(n):
                s += vec[np.int64(_bounded(_mix(row + np.uint64(i) * _GAMMA), un))]
        sums[b] = s


@numba.njit(parallel=True, cache=True, nogil=True)
def _sign_kernel_1d(
    vec: Any, n_resamples: Any, base0: Any, stride: Any, sums: Any, signs: Any
) -> None:  # pragma: no cover - compiled
    n = vec.shape[0]
    words = (n + 63) // 64
    for b in numba.prange(n_resamples):
        row = np.uint64(b) * stride + base0
        s = 0.0
        ones = 0
        for w in range(words):
            z = _mix(row + np.uint64(w) * _GAMMA)
            top = min(64, n - 64 * w)
            base = 64 * w
            for t in range(top):
                x = vec[base + t]
                if (z >> np.uint64(t)) & np.uint64(1):
                    s += x
                    ones += 1
                else:
                    s += -x
        sums[b] = s
        signs[b] = float(2 * ones - n)


# Serial builds of the same loops (``prange`` runs as ``range``): below
# ``PARALLEL_MIN_WORK`` the cost of waking and joining threads, which grows sharply when
# the cores are busy with other work, exceeds the loop itself. Same values either way.
# Each serial build compiles a copy of the Python function under its own name: numba's
# disk cache is indexed by the function's qualified name and line, so compiling the very
# same function object twice would share one cache entry, and whichever build ran first
# (serial or parallel) would be loaded for both.
def _serial(kernel: Any) -> Any:
    f = kernel.py_func
    copy = types.FunctionType(f.__code__, f.__globals__, f.__name__ + "_serial",
                              f.__defaults__, f.__closure__)
    copy.__qualname__ = f.__qualname__ + "_serial"
    return numba.njit(cache=True, nogil=True)(copy)


_boot_kernel_serial = _serial(_boot_kernel)
_boot_kernel_1d_serial = _serial(_boot_kernel_1d)
_sign_kernel_serial = _serial(_sign_kernel)
_sign_kernel_1d_serial = _serial(_sign_kernel_1d)

#: Work (n * B * columns) from which the multi-threaded loops are used.
PARALLEL_MIN_WORK = 1_000_000



def bootstrap_sums(
    mat: NDArray[np.float64], n_resamples: int, seed: int, want_squares: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """See :func:`evalkit.stats._kernels.bootstrap_sums`."""
    n, m = mat.shape
    stride = np.uint64((n * GAMMA) & MASK64)
    base0 = np.uint64((seed + GAMMA) & MASK64)
    blocks = column_blocks(n, m)
    whole = len(blocks) == 1 and m > 1  # one block: the kernel adds into the answer itself
    sums = np.zeros((n_resamples, m))
    squares = np.zeros((n_resamples, m)) if want_squares else None
    for j0, j1 in blocks:
        width = j1 - j0
        parallel = n * n_resamples * width >= PARALLEL_MIN_WORK
        if width == 1:
            s1 = np.zeros(n_resamples)
            q1 = np.zeros(n_resamples if want_squares else 1)
            k1 = _boot_kernel_1d if parallel else _boot_kernel_1d_serial
            k1(np.ascontiguousarray(mat[:, j0]), n_resamples, base0, stride, want_squares,
               s1, q1)
            sums[:, j0] = s1
            if squares is not None:
                squares[:, j0] = q1
            continue
        s = sums if whole else np.zeros((n_resamples, width))
        q = squares if whole and squares is not None else np.zeros(
            (n_resamples, width) if want_squares else (1, 1))
        k = _boot_kernel if parallel else _boot_kernel_serial
        k(np.ascontiguousarray(mat[:, j0:j1]), n_resamples, base0, stride, want_squares, s, q)
        if not whole:
            sums[:, j0:j1] = s
            if squares is not None:
                squares[:, j0:j1] = q
    return sums, squares


def signflip_sums(
    mat: NDArray[np.float64], n_resamples: int, seed: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """See :func:`evalkit.stats._kernels.signflip_sums`."""
    n, m = mat.shape
    words = (n + 63) // 64
    blocks = column_blocks(n, m)
    whole = len(blocks) == 1 and m > 1  # one block: the kernel adds into the answer itself
    sums = np.zeros((n_resamples, m))
    signs = np.zeros(n_resamples)
    stride = np.uint64((words * GAMMA) & MASK64)
    base0 = np.uint64((seed + SIGN_STREAM_OFFSET + GAMMA) & MASK64)
    for j0, j1 in blocks:
        width = j1 - j0
        parallel = n * n_resamples * width >= PARALLEL_MIN_WORK
        if width == 1:
            s1 = np.zeros(n_resamples)
            k1 = _sign_kernel_1d if parallel else _sign_kernel_1d_serial
            k1(np.ascontiguousarray(mat[:, j0]), n_resamples, base0, stride, s1, signs)
            sums[:, j0] = s1
            continue
        s = sums if whole else np.zeros((n_resamples, width))
        k = _sign_kernel if parallel else _sign_kernel_serial
        k(np.ascontiguousarray(mat[:, j0:j1]), n_resamples, base0, stride, s, signs)
        if not whole:
            sums[:, j0:j1] = s
    return sums, signs
