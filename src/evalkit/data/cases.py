"""Golden cases: what a target is asked and what a good answer looks like.

A :class:`GoldenCase` is the unit every per-case metric receives as its second argument.
Retrieval evaluation builds one per judged query from the qrels; golden-set files
(jsonl, yaml, csv) build them from hand-written cases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.data.text_ids import text_ids


class _NotGiven(frozenset[str]):
    """Marks ``GoldenCase.relevant`` as not given (derived from ``relevance``)."""


_NOT_GIVEN = _NotGiven()


@dataclass(frozen=True)
class GoldenCase:
    """One case of an evaluation.

    Attributes:
        id: the case id, always text (``"010"`` and ``"10"`` are different cases).
        query: the query text (may be empty when only ids are known).
        expected: the expected answer: a list of ids, a text, or ``None``.
        relevance: graded judgments ``{doc_id: label}`` as in TREC qrels. Labels ``<= 0``
            are not relevant; negative labels are kept as given (trec_eval's "judged
            non-relevant" / "unjudged in pool").
        relevant: the ids counted as relevant by binary measures (P@k, R@k, RR, AP):
            those whose label is at least the run's relevance level.
        context: any extra fields of the source record, kept verbatim.
        answers: the acceptable reference answers (texts) that text metrics compare a
            generated answer with (exact match, F1, ROUGE-L), kept as a tuple; a single
            text is a one-answer tuple. Empty when the case gives none: :meth:`reference_answers`
            then falls back to a text ``expected``.
        tags: the slices the case belongs to (``evalkit compare --by tag``, a gate check's
            ``scope: {tags: [...]}``), in the order written; a single text is a one-tag
            tuple. Empty when the case gives none.
        labels: human labels of this case, ``{metric: value}`` (finite numbers), that
            the PPI intervals and the judge plugin's ``evalkit agreement`` compare a
            judge's grades with; not part of what a target or metric sees. Empty when
            the case has none.
        cluster: the cluster the case belongs to (cases about one passage, one
            conversation), which clustered paired tests take as their unit
            (:mod:`evalkit.stats.clusters`); None when not given.
    """

    id: str
    query: str = ""
    expected: Any = None
    relevance: Mapping[str, int] = field(default_factory=dict)
    relevant: frozenset[str] = field(default_factory=lambda: _NOT_GIVEN)
    context: Mapping[str, Any] = field(default_factory=dict)
    answers: Sequence[str] = ()
    tags: Sequence[str] = ()
    labels: Mapping[str, float] = field(default_factory=dict)
    cluster: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            object.__setattr__(self, "id", str(self.id))
        tags: Any = self.tags
        object.__setattr__(self, "tags", (tags,) if isinstance(tags, str) else tuple(
            str(t) for t in tags or ()))
        answers: Any = self.answers
        if isinstance(answers, str):
            answers = (answers,)
        elif answers is None:
            answers = ()
        answers = tuple(answers)
        if not all(isinstance(a, str) for a in answers):
            raise TypeError(f"case {self.id!r}: answers must be texts, got {answers!r}")
        if not all(a.strip() for a in answers):
            raise ValueError(f"case {self.id!r}: answers must not be empty or only white "
                             f"space, got {answers!r}; leave such an answer out")
        object.__setattr__(self, "answers", answers)
        relevance, relevant = self.relevance, self.relevant
        # ``expected`` given as a list of ids and no judgments: those ids are the relevant
        # set (label 1), so retrieval metrics score hand-built cases as they do loaded ones.
        if not relevance and not relevant and isinstance(self.expected, list | tuple):
            relevance = {str(x): 1 for x in self.expected}
        if relevant and not relevance:
            relevance = {d: 1 for d in relevant}
        if isinstance(relevant, _NotGiven):
            relevant = frozenset(d for d, g in relevance.items() if g >= 1)
        object.__setattr__(self, "relevance", relevance)
        object.__setattr__(self, "relevant", frozenset(relevant))

    def reference_answers(self) -> tuple[str, ...]:
        """The texts a generated answer is compared with: :attr:`answers` when the case
        gives any, else a text ``expected`` that is not blank (the judge's expected
        answer) as a one-answer tuple, else ``()`` (a list ``expected`` holds document ids, never
        answers)."""
        if self.answers:
            return tuple(self.answers)
        if isinstance(self.expected, str) and self.expected.strip():
            return (self.expected,)
        return ()

    @classmethod
    def from_judgments(
        cls,
        case_id: str,
        judgments: Mapping[str, int] | set[str] | frozenset[str],
        *,
        relevance_level: int = 1,
        query: str = "",
    ) -> GoldenCase:
        """Build a case from qrels of one query.

        ``judgments`` is either graded (``{doc: label}``) or a set of relevant ids (each
        treated as label 1). ``relevance_level`` is trec_eval's ``-l``: the smallest label
        that binary measures count as relevant (values below 1 are raised to 1, since a
        label <= 0 never counts as relevant).

        Raises:
            IdCollisionError: (a ``ValueError``) two ids become one as text (``7`` and
                ``"7"``); the message names both.
        """
        what = f"case {case_id!r}: judgments"
        if isinstance(judgments, set | frozenset):
            graded: dict[str, int] = dict.fromkeys(text_ids(judgments, what), 1)
        else:
            graded = {d: int(g) for d, g in zip(text_ids(judgments.keys(), what),
                                                judgments.values(), strict=True)}
        level = max(1, int(relevance_level))
        relevant = frozenset(d for d, g in graded.items() if g >= level)
        return cls(id=str(case_id), query=query, relevance=graded, relevant=relevant)
