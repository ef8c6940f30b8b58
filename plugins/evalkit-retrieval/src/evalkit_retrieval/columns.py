"""A TREC run and qrels held in arrays, with lazy views for the kernel's mappings.

The bulk TREC reader (:mod:`.trec`) keeps what it parsed as numpy arrays instead of one
Python string per line: :class:`RunColumns` (a run in trec_eval's ranked order) and
:class:`QrelsColumns` (judgments grouped by query). The kernel still sees its usual
mappings, ``{qid: ranking}`` and ``{qid: {doc: label}}``, whose values are views
(:class:`ColumnIds`, :class:`ColumnJudged`) that make Python strings only when read.
:mod:`.bulk_state` joins the two sets of arrays directly when an evaluation is made of
such views, so a million-line run is scored without a million strings.

Documents are found by 64-bit keys (:func:`id_hashes` of the id's bytes, mixed with the
query's block): duplicates are looked for among equal keys, and every match found
through a key is confirmed on the ids' bytes. Two different ids sharing a key (about
one chance in 10^7 for a billion lines) are noted in ``exact`` and send the evaluation
through the general path instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import numpy as np
import numpy.typing as npt

from evalkit.ranked_ids import RankedIds
from evalkit.ranking import group_queries, rank_order

Ints = npt.NDArray[np.int64]
Keys = npt.NDArray[np.uint64]
Ids = npt.NDArray[np.bytes_]

_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)
#: an odd multiplier for each 8-byte word of an id (ids of up to 512 bytes)
_WORD = tuple(np.uint64(((2 * j + 1) * 0x9E3779B97F4A7C15) % 2**64 | 1) for j in range(64))


# --------------------------------------------------------------------------- keys
def id_hashes(ids: Ids) -> Keys:
    """A 64-bit hash of each fixed-width byte-string id, whatever the array's width:
    the sum of its 8-byte words times one odd constant each, so that the NUL padding
    past an id adds nothing (ids never hold NUL bytes); :func:`block_keys` mixes it."""
    n, width = len(ids), ids.dtype.itemsize
    words = max(1, -(-width // 8))
    if width != words * 8 or not ids.flags.c_contiguous:
        ids = ids.astype(f"S{words * 8}")
    m = ids.view(np.uint64).reshape(n, words)
    h: Keys = np.multiply(m[:, 0], _WORD[0])
    if words > 1:
        term = np.empty_like(h)
        for j in range(1, words):
            np.multiply(m[:, j], _WORD[j], out=term)
            h += term
    return h


def block_keys(hashes: Keys, blocks: Ints) -> Keys:
    """Keys of (query block, id hash) pairs."""
    k: Keys = blocks.astype(np.uint64)
    return _finish_keys(k, hashes)


def run_keys(hashes: Keys, sizes: Ints) -> Keys:
    """:func:`block_keys` of consecutive blocks of ``sizes`` rows (block ``b`` repeated
    ``sizes[b]`` times), without an array of block indexes."""
    k: Keys = np.repeat(np.arange(len(sizes), dtype=np.uint64), sizes)
    return _finish_keys(k, hashes)


def _finish_keys(k: Keys, hashes: Keys) -> Keys:
    """``k`` (block indexes, overwritten) mixed with ``hashes``: splitmix64's finaliser
    of ``block * M1 + hash``, in place."""
    k *= _M1
    k += hashes
    shifted = np.empty_like(k)
    for shift, factor in ((30, _M2), (27, _M3)):
        np.right_shift(k, np.uint64(shift), out=shifted)
        k ^= shifted
        k *= factor
    np.right_shift(k, np.uint64(31), out=shifted)
    k ^= shifted
    return k


def _check_keys(sorted_keys: Keys, order: Ints, docs: Ids, ends: Ints) -> tuple[bool, bool]:
    """Whether every key is one (block, id) pair's (``exact``), and whether some block
    holds an id twice (``duplicate``); ``order`` gives the row of each sorted key and
    ``ends`` the end of each block's rows."""
    same = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if not len(same):
        return True, False
    a, b = order[same], order[same + 1]
    block_a = np.searchsorted(ends, a, side="right")
    block_b = np.searchsorted(ends, b, side="right")
    twice = (docs[a] == docs[b]) & (block_a == block_b)
    if twice.all():
        return True, True
    # keys shared by different ids: compare the ids of every row whose key is shared
    rows = np.unique(np.concatenate((a, b)))
    blocks = np.searchsorted(ends, rows, side="right")
    by_id = rows[np.lexsort((docs[rows], blocks))]
    blocks = np.searchsorted(ends, by_id, side="right")
    repeated = (docs[by_id[1:]] == docs[by_id[:-1]]) & (blocks[1:] == blocks[:-1])
    return False, bool(repeated.any())


# --------------------------------------------------------------------------- runs
class RunColumns:
    """A run in trec_eval's order: query ``b`` holds positions ``starts[b]:ends[b]`` of
    ``docs``; ``keys`` (sorted) and ``positions`` locate a (block, id) pair.

    Attributes:
        exact: no two different (block, id) pairs share a key.
        duplicate: some query lists a document twice.
    """

    def __init__(self, qids: list[str], starts: Ints, ends: Ints, docs: Ids) -> None:
        self.qids, self.starts, self.ends, self.docs = qids, starts, ends, docs
        keys = run_keys(id_hashes(docs), ends - starts)
        self.positions: Ints = np.argsort(keys)
        keys = keys[self.positions]
        self.keys: Keys = keys
        self.exact, self.duplicate = _check_keys(keys, self.positions, docs, ends)

    def views(self) -> dict[str, RankedIds]:
        """``{qid: ranking}`` with one lazy :class:`ColumnIds` per query."""
        return {q: ColumnIds(self, b, int(st), int(en)) for b, (q, st, en) in
                enumerate(zip(self.qids, self.starts.tolist(), self.ends.tolist(),
                              strict=True))}


def ranked_columns(parsed: list[Any]) -> RunColumns:
    """Rank a parsed run, ``[qids, docs, scores]`` (:func:`evalkit.ranking.rank_order`),
    into :class:`RunColumns`. The list is emptied once its arrays have been read, so
    that the parsed table they view can be freed before the keys are made."""
    qids, docs, scores = parsed
    parsed.clear()
    order = rank_order(qids, docs, scores)
    ranked = np.ascontiguousarray(order.ranked(docs))
    del qids, docs, scores
    return RunColumns(order.qids, order.starts, order.ends, ranked)


class ColumnIds(RankedIds):
    """The ranking of one query of a :class:`RunColumns` (or its first ``stop - start``
    documents): ids become ``str`` when read, once."""

    __slots__ = ("_ids", "block", "columns", "start", "stop")

    def __init__(self, columns: RunColumns, block: int, start: int, stop: int) -> None:
        self.columns, self.block, self.start, self.stop = columns, block, start, stop
        self._ids: list[str] | None = None

    def _list(self) -> list[str]:
        if self._ids is None:
            raw: list[bytes] = self.columns.docs[self.start:self.stop].tolist()
            self._ids = list(map(bytes.decode, raw))
        return self._ids

    def __len__(self) -> int:
        return self.stop - self.start

    def __iter__(self) -> Iterator[str]:
        return iter(self._list())

    def _item(self, index: int) -> str:
        if self._ids is not None:
            return self._ids[index]
        return bytes(self.columns.docs[self.start + index]).decode()

    def _slice(self, start: int, stop: int) -> RankedIds:
        return ColumnIds(self.columns, self.block, self.start + start, self.start + stop)

    @property
    def whole_from_top(self) -> bool:
        """Whether this is its query's ranking from rank 1 (perhaps cut at a depth)."""
        return self.start == int(self.columns.starts[self.block])


# --------------------------------------------------------------------------- qrels
class QrelsColumns:
    """Judgments grouped by query (queries and documents in the file's order): query
    ``b`` holds rows ``starts[b]:ends[b]`` of ``docs``, ``labels`` and ``hashes``.

    Attributes:
        exact: no two different documents of one query share a key.
        duplicate: some query judges a document twice.
    """

    def __init__(self, qids: Ids, docs: Ids, labels: Ints) -> None:
        grouped = group_queries(qids)
        self.qids: list[str] = grouped.qids
        self.starts, self.ends = grouped.starts, grouped.ends
        self.docs: Ids = np.ascontiguousarray(grouped.ranked(docs))
        self.labels: Ints = np.ascontiguousarray(grouped.ranked(labels), dtype=np.int64)
        self.hashes: Keys = id_hashes(self.docs)
        keys = run_keys(self.hashes, self.ends - self.starts)
        by_key = np.argsort(keys)
        self.exact, self.duplicate = _check_keys(keys[by_key], by_key, self.docs, self.ends)

    def views(self) -> dict[str, Mapping[str, int]]:
        """``{qid: {doc: label}}`` with one lazy :class:`ColumnJudged` per query."""
        return {q: ColumnJudged(self, b) for b, q in enumerate(self.qids)}


class ColumnJudged(MutableMapping[str, int]):
    """The judgments of one query of a :class:`QrelsColumns`: a ``{doc: label}``
    mapping made when first read. It may be changed like a dict; it then no longer
    stands for its columns (``modified``) and is evaluated as the mapping it holds."""

    __slots__ = ("_dict", "block", "columns", "modified")

    def __init__(self, columns: QrelsColumns, block: int) -> None:
        self.columns, self.block = columns, block
        self._dict: dict[str, int] | None = None
        self.modified = False

    def _d(self) -> dict[str, int]:
        if self._dict is None:
            c, b = self.columns, self.block
            st, en = int(c.starts[b]), int(c.ends[b])
            raw: list[bytes] = c.docs[st:en].tolist()
            labels: list[int] = c.labels[st:en].tolist()
            self._dict = dict(zip(map(bytes.decode, raw), labels, strict=True))
        return self._dict

    def __getitem__(self, doc: str) -> int:
        return self._d()[doc]

    def __setitem__(self, doc: str, label: int) -> None:
        self._d()[doc] = label
        self.modified = True

    def __delitem__(self, doc: str) -> None:
        del self._d()[doc]
        self.modified = True

    def __iter__(self) -> Iterator[str]:
        return iter(self._d())

    def __len__(self) -> int:
        if self._dict is not None:
            return len(self._dict)
        return int(self.columns.ends[self.block] - self.columns.starts[self.block])

    def __repr__(self) -> str:
        return f"ColumnJudged({self._d()!r})"

    @property
    def as_loaded(self) -> bool:
        """Whether this still holds exactly its query's rows of the columns."""
        return not self.modified


def count_labels_above(judgments: Mapping[str, Mapping[str, int]], floor: int) -> int:
    """How many judgments of every query have a label above ``floor`` (without making
    strings when the judgments are :class:`ColumnJudged` views of one set of columns)."""
    views = list(judgments.values())
    first = views[0] if views else None
    if isinstance(first, ColumnJudged):
        blocks = {v.block for v in views if isinstance(v, ColumnJudged)
                  and v.columns is first.columns and v.as_loaded}
        if len(blocks) == len(views) == len(first.columns.qids):
            return int(np.count_nonzero(first.columns.labels > floor))
    return sum(1 for judged in views for g in judged.values() if g > floor)
