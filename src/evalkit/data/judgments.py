"""Relevance judgments (qrels) given as a mapping, and qrels as a run evaluator loads them.

:func:`graded_judgments` reads ``{qid: {doc: label}}``, ``{qid: relevant ids}`` or
subtopic judgments (:class:`SubtopicJudgments`, or ``{qid: {subtopic: {doc: label}}}``)
into graded judgments with text ids and integer labels, and :func:`loaded_from_mapping`
makes them :class:`LoadedQrels` (what :func:`evalkit.run` and the run evaluator of a
plugin, :class:`~evalkit.core.specs.RunEvaluatorSpec`, take from a mapping);
:class:`LoadedQrels` is also what a run evaluator's ``load_qrels`` returns.
"""

from __future__ import annotations

import hashlib
import json
import math
import operator
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from evalkit.data.text_ids import text_ids
from evalkit.io.limits import first_repeated, label_problem


@dataclass(frozen=True)
class LoadedQrels:
    """Qrels as graded judgments plus where they came from (a loader may give each query
    a lazy ``{doc: label}`` view rather than a dict).

    Attributes:
        judgments: ``{qid: {doc: label}}``.
        path: the file read, or None for judgments given in memory.
        sha256: hex SHA-256 of the file's bytes, or of the judgments as canonical JSON.
    """

    judgments: Mapping[str, Mapping[str, int]]
    path: str | None
    sha256: str


class SubtopicJudgments(dict[str, int]):
    """One query's subtopic judgments (the TREC Web track's diversity qrels, ``qid
    subtopic docno label``): ``{docno: largest label over the subtopics}`` (what every
    measure but the diversity ones sees: a document relevant to any subtopic is relevant
    to the query, ndeval's own rule for its MAP), with ``subtopics``: ``{subtopic:
    {docno: label}}`` in the order given."""

    subtopics: dict[str, dict[str, int]]

    def __init__(self, subtopics: Mapping[str, Mapping[str, int]] | None = None) -> None:
        super().__init__()
        self.subtopics = {str(s): dict(j) for s, j in (subtopics or {}).items()}
        for judged in self.subtopics.values():
            for doc, label in judged.items():
                self[doc] = max(self.get(doc, label), label)


def subtopics_given(judged: object) -> Mapping[str, Mapping[str, object]] | None:
    """The ``{subtopic: {doc: label}}`` of one query's judgments given in memory: a
    :class:`SubtopicJudgments`' (or any mapping's ``subtopics`` attribute), or the
    judgments themselves when they are a non-empty mapping whose every value is a
    mapping; else None (``{doc: label}`` or relevant ids)."""
    found = getattr(judged, "subtopics", None)
    if isinstance(found, Mapping):
        return found
    if isinstance(judged, Mapping) and judged \
            and all(isinstance(v, Mapping) for v in judged.values()):
        return judged
    return None


def graded_judgments(qrels: Mapping[str, Mapping[str, object] | Collection[object]]
                     ) -> dict[str, dict[str, int]]:
    """``{qid: {doc: label}}`` with text ids from a mapping of ``{doc: label}`` (integer
    labels; numpy integers, integral floats and integer text are accepted) or of a set or
    list of relevant ids (label 1 each).

    Subtopic judgments keep their subtopics, as a subtopic qrels file read for a
    diversity measure does: a query given as a :class:`SubtopicJudgments` (what
    ``evalkit_retrieval.trec.load_qrels(path, subtopics=True)`` returns per query) or
    as ``{subtopic: {doc: label}}`` (every value a mapping) becomes a
    :class:`SubtopicJudgments` with text subtopic and document ids: alpha-nDCG and
    ERR-IA read each subtopic, every other measure a document's largest label.

    Raises:
        ValueError: a label that is not an integer or lies outside the 64-bit range
            (:func:`evalkit.io.limits.label_problem`), a relevant id listed twice.
        IdCollisionError: (a ``ValueError``) two keys of the same level (query ids, a
            query's document ids or subtopics) become one id as text, such as ``1`` and
            ``"1"`` (:func:`~evalkit.data.text_ids.text_ids`); the message names both.
        TypeError: a query's judgments are neither a mapping nor a collection of ids.
    """
    graded: dict[str, dict[str, int]] = {}
    for qid, j in zip(text_ids(qrels.keys(), "qrels (query ids)"), qrels.values(),
                      strict=True):
        subtopics = subtopics_given(j)
        if subtopics is not None:
            graded[qid] = SubtopicJudgments({
                s: _graded(qid, judged, f"qrels of query {qid!r}, subtopic {s!r}")
                for s, judged in zip(text_ids(subtopics.keys(),
                                              f"qrels of query {qid!r} (subtopics)"),
                                     subtopics.values(), strict=True)})
        elif isinstance(j, Mapping):
            graded[qid] = _graded(qid, j, f"qrels of query {qid!r}")
        elif isinstance(j, str | bytes) or not isinstance(j, Collection):
            raise TypeError(
                f"qrels of query {qid!r}: expected {{doc id: label}} or a set of relevant "
                f"ids, got {type(j).__name__}"
            )
        else:
            given = list(j)
            ids = text_ids(given, f"qrels of query {qid!r}")
            dup = first_repeated(ids)
            if dup is not None:
                raise ValueError(f"qrels of query {qid!r} list document {dup!r} twice")
            graded[qid] = dict.fromkeys(ids, 1)
    return graded


def _graded(qid: str, judged: Mapping[Any, object], what: str) -> dict[str, int]:
    """``{doc: label}`` with text ids (:func:`~evalkit.data.text_ids.text_ids`) and
    integer labels."""
    return {d: _label(qid, doc, g) for d, doc, g in zip(
        text_ids(judged.keys(), what), judged.keys(), judged.values(), strict=True)}


def judgments_sha256(judgments: Mapping[str, Mapping[str, int]]) -> str:
    """Hex SHA-256 of graded judgments as canonical JSON (sorted keys): ``{qid: {doc:
    label}}``, a query with subtopics written as ``{"subtopics": {subtopic: {doc:
    label}}}`` (so qrels that differ only in their subtopics differ here too)."""
    canon = json.dumps({q: {"subtopics": subs} if (subs := getattr(j, "subtopics", None))
                        is not None else dict(j) for q, j in judgments.items()},
                       sort_keys=True).encode()
    return hashlib.sha256(canon).hexdigest()


def loaded_from_mapping(qrels: Mapping[str, Mapping[str, object] | Collection[object]]
                        ) -> LoadedQrels:
    """:func:`graded_judgments` of ``qrels``, hashed by :func:`judgments_sha256`.

    Raises:
        ValueError, TypeError: as :func:`graded_judgments`.
    """
    graded = graded_judgments(qrels)
    return LoadedQrels(judgments=graded, path=None, sha256=judgments_sha256(graded))


def _label(qid: str, doc: object, value: object) -> int:
    """An integer label (ints, numpy ints, integral floats, integer text) in the 64-bit
    range (:func:`evalkit.io.limits.label_problem`)."""
    label = _integer_label(qid, doc, value)
    problem = label_problem(label)
    if problem is not None:
        raise ValueError(f"qrels of query {qid!r}, document {doc!r}: {problem}")
    return label


def _integer_label(qid: str, doc: object, value: object) -> int:
    if type(value) is int:
        return value
    if not isinstance(value, bool):
        try:
            return operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            pass
        try:
            number = float(value) if isinstance(value, float | str) else math.nan
        except ValueError:
            number = math.nan
        if number.is_integer():
            return int(number)
    raise ValueError(
        f"qrels of query {qid!r}: the label of document {doc!r} is {value!r}; labels are "
        "integers (0 = not relevant)"
    )
