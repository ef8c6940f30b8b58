"""Diversity (subtopic) qrels: ``qid subtopic docno label``, the TREC Web track's
``qrels.diversity`` layout, which ndeval and ir_measures (its ``iteration`` column as the
subtopic) read.

The layout is TREC qrels' own; only the second column means something. A qrels file is
read as subtopic qrels when that column holds two or more distinct values (trec_eval's
``Q0`` counted as ``0``, so ``0`` and ``Q0`` alone are ordinary qrels); otherwise it is
ordinary qrels, and the diversity measures see each query as one subtopic (as ndeval and
ir_measures do).

Each query of subtopic qrels becomes a :class:`SubtopicJudgments` (the kernel's record,
:class:`evalkit.data.judgments.SubtopicJudgments`): a ``{docno: label}``
dict holding each document's largest label over its subtopics (what every other measure
sees: a document relevant to any subtopic is relevant to the query, ndeval's own rule
for its MAP), with the per-subtopic judgments in :attr:`SubtopicJudgments.subtopics` for
:mod:`evalkit_retrieval.diversity`. A document may be judged once per (query, subtopic);
twice is refused, as trec_eval refuses ``duplicate docs``
(:func:`evalkit_retrieval.trec.parse_qrels` reads the file).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from evalkit.data.judgments import SubtopicJudgments

#: trec_eval's usual values of the second column (not subtopics)
_PLAIN = frozenset({b"0", b"Q0"})


def subtopics_of(judgments: Mapping[str, int]) -> Mapping[str, Mapping[str, int]]:
    """The subtopics of one query's judgments: those of :class:`SubtopicJudgments`, else
    the judgments as one subtopic (ndeval and ir_measures on ordinary qrels)."""
    found = getattr(judgments, "subtopics", None)
    return found if isinstance(found, Mapping) else {"0": judgments}


def is_subtopic_qrels(data: bytes | Iterable[bytes]) -> bool:
    """Whether the qrels text ``data`` (decompressed; or its lines, such as a binary file
    object, read until the answer is known) is subtopic qrels: its second column holds
    two or more distinct values, ``Q0`` counted as ``0``."""
    seen: set[bytes] = set()
    for line in data.split(b"\n") if isinstance(data, bytes) else data:
        fields = line.split(None, 2)
        if len(fields) >= 2 and not fields[0].startswith(b"#"):
            seen.add(b"0" if fields[1] in _PLAIN else fields[1])
            if len(seen) >= 2:
                return True
    return False


__all__ = ["SubtopicJudgments", "is_subtopic_qrels", "subtopics_of"]
