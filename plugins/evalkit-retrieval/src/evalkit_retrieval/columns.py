"""A TREC run and qrels held in arrays, with lazy views for the kernel's mappings.

The bulk TREC reader (:mod:`.trec`) keeps what it parsed as numpy arrays instead of one
Python string per line: :class:`RunColumns` (a run in trec_eval's ranked order) and
:class:`QrelsColumns` (judgments grouped by query). The kernel still sees its usual
mappings, ``{qid: ranking}`` and ``{qid: {doc: label}}``, whose values are views
(:class:`ColumnIds`, :class:`ColumnJudged`) that make Python strings only when read.
:mod:`.bulk_state` joins the two sets of arrays directly when an evaluation is made of
such views, so a million-line run is scored without a million strings. Documents are
found, and duplicates told, by sorted keys of (query, document) pairs
(:mod:`.doc_keys`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import numpy as np

from evalkit.data.ranked_ids import RankedIds
from evalkit_retrieval import doc_keys
from evalkit_retrieval.doc_keys import Ids, Ints, Keys, PairKeys
from evalkit_retrieval.ranking import group_queries, rank_order


# --------------------------------------------------------------------------- runs
class RunColumns:
    """A run in trec_eval's order: query ``b`` holds positions ``starts[b]:ends[b]`` of
    ``docs``; ``keys`` finds a (query, document) pair's position.

    Attributes:
        duplicate: some query lists a document twice.
    """

    def __init__(self, qids: list[str], starts: Ints, ends: Ints, docs: Ids) -> None:
        self.qids, self.starts, self.ends, self.docs = qids, starts, ends, docs
        self.keys = PairKeys(docs, starts, ends)
        self.duplicate = self.keys.duplicate

    def views(self) -> dict[str, RankedIds]:
        """``{qid: ranking}`` with one lazy :class:`ColumnIds` per query."""
        return {q: ColumnIds(self, b, int(st), int(en)) for b, (q, st, en) in
                enumerate(zip(self.qids, self.starts.tolist(), self.ends.tolist(),
                              strict=True))}


def ranked_columns(parsed: list[Any]) -> RunColumns:
    """Rank a parsed run, ``[qids, docs, scores]`` (:func:`evalkit_retrieval.ranking.rank_order`),
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
    ``b`` holds rows ``starts[b]:ends[b]`` of ``docs``, ``labels`` and ``hashes``
    (:func:`~.doc_keys.id_hashes`).

    Attributes:
        duplicate: some query judges a document twice.
    """

    def __init__(self, qids: Ids, docs: Ids, labels: Ints) -> None:
        grouped = group_queries(qids)
        self.qids: list[str] = grouped.qids
        self.starts, self.ends = grouped.starts, grouped.ends
        self.docs: Ids = np.ascontiguousarray(grouped.ranked(docs))
        self.labels: Ints = np.ascontiguousarray(grouped.ranked(labels), dtype=np.int64)
        self.hashes: Keys = doc_keys.id_hashes(self.docs)
        self.duplicate = PairKeys(self.docs, self.starts, self.ends).duplicate

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
