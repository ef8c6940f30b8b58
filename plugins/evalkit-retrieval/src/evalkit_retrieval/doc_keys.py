"""Sorted 64-bit keys of (query, document) pairs: duplicates and lookups in bulk.

A run or qrels held in arrays (:mod:`.columns`) finds a document of a query by a key:
:func:`id_hashes` hashes each fixed-width byte-string id, :func:`pair_keys` mixes in the
query's block (splitmix64's finaliser), and :class:`PairKeys` keeps every row's key with
the row number packed into its low bits, sorted once (numpy's vectorised in-place sort:
no argsort, no gather, two arrays of one word per row in all). Equal ids of one query have
equal keys, so duplicates sit side by side; two different pairs may share the hash bits
left above the row number (a few times in five million rows), so every lookup and every
duplicate is confirmed on the ids' bytes, and rows that share hash bits are tried in
turn. The arrays are made in place wherever numpy allows it: on the machines this runs on,
touching fresh memory costs more than the arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
Keys = npt.NDArray[np.uint64]
Bools = npt.NDArray[np.bool_]
Ids = npt.NDArray[np.bytes_]

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
#: an odd multiplier for each 8-byte word of an id (ids of up to 512 bytes)
_WORD = tuple(np.uint64(((2 * j + 1) * 0x9E3779B97F4A7C15) % 2**64 | 1) for j in range(64))
#: rows sharing a key's hash bits tried before a lookup gives up (the caller then takes
#: its general path): only a file built to collide gets there
MAX_TRIES = 16
#: rows whose keys are made at a time (buffers of 512 KB, which stay in the CPU's cache)
_CHUNK_ROWS = 1 << 16


def id_hashes(ids: Ids) -> Keys:
    """A 64-bit hash of each fixed-width byte-string id, whatever the array's width: the
    sum of its 8-byte words times one odd constant each, so that the NUL padding past an
    id adds nothing (ids never hold NUL bytes)."""
    out: Keys = np.empty(len(ids), dtype=np.uint64)
    _hash_into(out, ids, np.empty_like(out))
    return out


def _hash_into(out: Keys, ids: Ids, scratch: Keys) -> None:
    """:func:`id_hashes` of ``ids`` written into ``out`` (``scratch``: as long)."""
    n, width = len(ids), ids.dtype.itemsize
    words = max(1, -(-width // 8))
    if width != words * 8 or not ids.flags.c_contiguous:
        ids = ids.astype(f"S{words * 8}")
    m = ids.view(np.uint64).reshape(n, words)
    np.multiply(m[:, 0], _WORD[0], out=out)
    for j in range(1, words):
        np.multiply(m[:, j], _WORD[j], out=scratch)
        out += scratch


def pair_keys(hashes: Keys, blocks: Ints) -> Keys:
    """The key of each (block, id hash) pair (a new array)."""
    k: Keys = blocks.astype(np.uint64)
    k *= _M1
    k += hashes
    _finalise(k, np.empty_like(k))
    return k


def _finalise(k: Keys, scratch: Keys) -> None:
    """splitmix64's finaliser, in place."""
    for shift, factor in ((30, _M2), (27, _M3)):
        np.right_shift(k, np.uint64(shift), out=scratch)
        k ^= scratch
        k *= factor
    np.right_shift(k, np.uint64(31), out=scratch)
    k ^= scratch


def _block_index(out: Keys, first: int, ends: Ints) -> None:
    """``out[i]`` = the block of row ``first + i``, block ``b`` ending at ``ends[b]``."""
    lo = int(np.searchsorted(ends, first, side="right"))
    hi = int(np.searchsorted(ends, first + len(out) - 1, side="right"))
    bounds = np.clip(ends[lo:hi + 1], first, first + len(out)) - first
    sizes = np.diff(np.concatenate(([0], bounds)))
    out[:] = np.repeat(np.arange(lo, hi + 1, dtype=np.uint64), sizes)


class PairKeys:
    """The (block, id) pair of every row of ``docs`` (block ``b``: rows
    ``starts[b]:ends[b]``), sorted by key with the row in the low ``bits``.

    Attributes:
        duplicate: some block holds an id twice.
    """

    def __init__(self, docs: Ids, starts: Ints, ends: Ints) -> None:
        n = len(docs)
        self.ends = ends
        self.bits = max(1, (n - 1).bit_length())
        self.low = np.uint64((1 << self.bits) - 1)
        keys: Keys = np.empty(n, dtype=np.uint64)
        # a chunk at a time, in buffers that stay in the CPU's cache: the rows' keys are
        # written once, then sorted in place
        size = min(n, _CHUNK_ROWS)
        h, t = np.empty(size, dtype=np.uint64), np.empty(size, dtype=np.uint64)
        for first in range(0, n, _CHUNK_ROWS):
            m = min(n - first, _CHUNK_ROWS)
            hc, tc = h[:m], t[:m]
            _hash_into(hc, docs[first:first + m], tc)
            _block_index(tc, first, ends)
            tc *= _M1
            hc += tc
            _finalise(hc, tc)
            hc &= ~self.low
            hc |= np.arange(first, first + m, dtype=np.uint64)  # the row, in the low bits
            keys[first:first + m] = hc
        keys.sort()
        self.packed: Keys = keys
        self.duplicate = self._has_duplicate(docs)

    def _rows(self, packed: Keys) -> Ints:
        return (packed & self.low).astype(np.int64)

    def _has_duplicate(self, docs: Ids) -> bool:
        """Whether two rows of one block hold the same id (rows sharing hash bits are
        compared on their bytes)."""
        p = self.packed
        same = np.flatnonzero((p[1:] ^ p[:-1]) <= self.low)
        if not len(same):
            return False
        first, second = self._rows(p[same]), self._rows(p[same + 1])
        if ((docs[first] == docs[second])
                & (self.block_of(first) == self.block_of(second))).any():
            return True  # a duplicate's rows next to each other (the usual case): found
        rows = np.concatenate((first, second))
        rows.sort()  # unique, by sorting (numpy's hash-based unique: 10 s on 10M rows)
        rows = rows[np.concatenate(([True], rows[1:] != rows[:-1]))]
        by_id = rows[np.lexsort((docs[rows], self.block_of(rows)))]
        blocks = self.block_of(by_id)
        return bool(((docs[by_id[1:]] == docs[by_id[:-1]]) & (blocks[1:] == blocks[:-1])).any())

    def block_of(self, rows: Ints) -> Ints:
        """The block of each row."""
        out: Ints = np.searchsorted(self.ends, rows, side="right")
        return out

    def lookup(self, keys: Keys, matches: Callable[[Ints, Ints], Bools]) -> Ints | None:
        """For each of ``keys`` (:func:`pair_keys`), the row whose pair it is, or -1.

        Rows whose key shares its hash bits are candidates; ``matches(i, rows)`` says
        which candidate ``rows`` are the pairs of ``keys[i]`` (compare their ids and
        blocks), and candidates are tried in turn. ``None`` when some key still has
        candidates after :data:`MAX_TRIES`.
        """
        out: Ints = np.full(len(keys), -1, dtype=np.int64)
        if not len(keys) or not len(self.packed):
            return out
        high = keys & ~self.low
        order = np.argsort(high)  # sorted needles: a cache-friendly search
        at = np.empty(len(keys), dtype=np.int64)
        at[order] = np.searchsorted(self.packed, high[order])
        todo = np.arange(len(keys), dtype=np.int64)
        last = len(self.packed) - 1
        for _ in range(MAX_TRIES):
            entry = self.packed[np.minimum(at[todo], last)]
            shared = ((entry ^ high[todo]) <= self.low) & (at[todo] <= last)
            todo, rows = todo[shared], self._rows(entry[shared])
            found = matches(todo, rows)
            out[todo[found]] = rows[found]
            todo = todo[~found]
            if not len(todo):
                return out
            at[todo] += 1
        return None
