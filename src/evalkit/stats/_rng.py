"""The counter-based generator behind every resampling method.

Every random quantity evalkit's statistics draw is a pure function of
``(seed, resample number, position)``, so a seeded result does not depend on how the
resamples are split into chunks, on the number of threads, or on the backend (numpy
or the compiled kernel): both backends evaluate the same integer formulas.

Generator: **SplitMix64** (Steele, Lea and Flood, "Fast splittable pseudorandom number
generators", OOPSLA 2014; the finaliser is Stafford's "Mix13"). Draw ``k`` (0-based) of
the stream started at ``s`` is ``mix(s + (k + 1) * GAMMA mod 2**64)`` — exactly the
``k``-th output of the sequential SplitMix64 generator seeded with ``s``.

* Bootstrap index ``(b, i)`` (resample ``b``, position ``i`` of ``n``) is draw
  ``k = b * n + i`` of the stream started at ``seed``, mapped to ``[0, n)`` by the
  multiply-high rule ``floor(z * n / 2**64)`` (Lemire, "Fast random integer generation
  in an interval", ACM TOMACS 2019, without the rejection step; the bias is at most
  ``n / 2**64``).
* Sign-flip word ``(b, w)`` is draw ``k = b * W + w`` (``W = ceil(n / 64)``) of the
  stream started at ``seed + 2**63``; bit ``t`` of word ``w`` gives the sign of position
  ``64 * w + t`` (set: ``+1``, clear: ``-1``). The two streams never overlap within
  ``2**63`` draws.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

#: The resampling generator's name, as results and artifacts record it.
GENERATOR_NAME = "splitmix64-counter"
GENERATOR_DESCRIPTION = (
    "SplitMix64 (Steele, Lea & Flood 2014) used as a counter-based generator: "
    "bootstrap index (b, i) = floor(z * n / 2**64) with z = draw b*n+i of the stream "
    "seeded with `seed`; sign-flip bits from the stream seeded with seed + 2**63"
)

MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
SIGN_STREAM_OFFSET = 1 << 63

_U30 = np.uint64(30)
_U27 = np.uint64(27)
_U31 = np.uint64(31)
_U32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)
_M1 = np.uint64(MIX1)
_M2 = np.uint64(MIX2)


def check_seed(seed: int | None) -> int:
    """Validate a seed, or draw a fresh one when ``seed`` is None.

    Raises:
        ValueError: ``seed`` is negative, not an integer, or >= 2**64.
    """
    if seed is None:
        import secrets

        return secrets.randbits(63)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"seed must be a non-negative integer or None, not {seed!r}")
    s = int(seed)
    if s < 0 or s > MASK64:
        raise ValueError(f"seed must be in [0, 2**64), got {s}")
    return s


def mix64_scalar(z: int) -> int:
    """The SplitMix64 finaliser on a Python int (reference implementation)."""
    z &= MASK64
    z = ((z ^ (z >> 30)) * MIX1) & MASK64
    z = ((z ^ (z >> 27)) * MIX2) & MASK64
    return z ^ (z >> 31)


def splitmix64_draw(seed: int, k: int) -> int:
    """Draw ``k`` (0-based) of the SplitMix64 stream seeded with ``seed`` (reference)."""
    return mix64_scalar(seed + (k + 1) * GAMMA)


def mix64_inplace(z: NDArray[np.uint64], tmp: NDArray[np.uint64]) -> None:
    """Apply the SplitMix64 finaliser to ``z`` in place (``tmp`` is scratch, same shape)."""
    np.right_shift(z, _U30, out=tmp)
    np.bitwise_xor(z, tmp, out=z)
    np.multiply(z, _M1, out=z)
    np.right_shift(z, _U27, out=tmp)
    np.bitwise_xor(z, tmp, out=z)
    np.multiply(z, _M2, out=z)
    np.right_shift(z, _U31, out=tmp)
    np.bitwise_xor(z, tmp, out=z)


def bounded_inplace(
    z: NDArray[np.uint64], n: int, tmp: NDArray[np.uint64], out: NDArray[np.uint64]
) -> None:
    """``out = floor(z * n / 2**64)`` for ``n < 2**32``, exact, in uint64 arithmetic.

    With ``z = zh * 2**32 + zl``: ``floor(z*n / 2**64) = (zh*n + (zl*n >> 32)) >> 32``;
    no intermediate exceeds ``2**64``.
    """
    un = np.uint64(n)
    np.bitwise_and(z, _LOW32, out=tmp)
    np.multiply(tmp, un, out=tmp)
    np.right_shift(tmp, _U32, out=tmp)
    np.right_shift(z, _U32, out=out)
    np.multiply(out, un, out=out)
    np.add(out, tmp, out=out)
    np.right_shift(out, _U32, out=out)


def bootstrap_indices(seed: int, n: int, b_start: int, b_stop: int) -> NDArray[np.int64]:
    """The index rows of resamples ``b_start .. b_stop - 1``, shape ``(b_stop - b_start, n)``.

    A reference for tests and for small aggregate bootstraps; the kernels never build
    this matrix.
    """
    b = np.arange(b_start, b_stop, dtype=np.uint64)[:, None]
    i = np.arange(n, dtype=np.uint64)[None, :]
    k = b * np.uint64(n) + i + np.uint64(1)
    z = (k * np.uint64(GAMMA)) + np.uint64(seed & MASK64)
    tmp = np.empty_like(z)
    mix64_inplace(z, tmp)
    out = np.empty_like(z)
    bounded_inplace(z, n, tmp, out)
    return out.astype(np.int64)
