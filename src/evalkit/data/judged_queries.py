"""The cases of an evaluation against qrels, made one at a time when read.

:func:`evalkit.evaluate_run` scores every judged query; its cases are a
:class:`JudgedQueries` sequence rather than a list, so that a case (its ``relevance``
mapping and ``relevant`` set) is only built when something reads it. Metrics with a
vectorised path read the judgments in bulk instead: ``ids``, ``judgments`` and
``level`` say everything the cases would (the retrieval plugin joins a TREC run and
qrels held in arrays this way, without making a string per judged document).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import compress
from typing import overload

from evalkit.data.cases import GoldenCase


class JudgedQueries(Sequence[GoldenCase]):
    """One :class:`~evalkit.data.cases.GoldenCase` per query id, from graded judgments.

    Case ``i`` has id ``ids[i]``, ``relevance=judgments[ids[i]]`` and as ``relevant``
    the documents labelled ``>= level`` (trec_eval ``-l``). Each case is built on first
    access and kept.

    Attributes:
        ids: the query ids, in evaluation order.
        judgments: ``{qid: {doc: label}}`` holding every id of ``ids``.
        level: the relevance level, an integer >= 1.
    """

    def __init__(self, ids: Sequence[str], judgments: Mapping[str, Mapping[str, int]],
                 level: int) -> None:
        self.ids = list(ids)
        self.judgments = judgments
        self.level = level
        self._made: list[GoldenCase | None] = [None] * len(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> GoldenCase: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[GoldenCase]: ...

    def __getitem__(self, index: int | slice) -> GoldenCase | Sequence[GoldenCase]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        case = self._made[index]
        if case is None:
            qid = self.ids[index]
            judged = self.judgments[qid]
            relevant = frozenset(compress(judged, map(self.level.__le__, judged.values())))
            case = GoldenCase(id=qid, relevance=judged, relevant=relevant)
            self._made[index] = case
        return case


def case_ids(cases: Sequence[GoldenCase]) -> list[str]:
    """The ids of ``cases`` (without building a :class:`JudgedQueries` case)."""
    if isinstance(cases, JudgedQueries):
        return list(cases.ids)
    return [c.id for c in cases]
