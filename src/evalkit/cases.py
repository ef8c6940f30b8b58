"""Golden cases: what a target is asked and what a good answer looks like.

A :class:`GoldenCase` is the unit every per-case metric receives as its second argument.
Retrieval evaluation builds one per judged query from the qrels; golden-set files
(jsonl, yaml, csv) build them from hand-written cases.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


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
    """

    id: str
    query: str = ""
    expected: Any = None
    relevance: Mapping[str, int] = field(default_factory=dict)
    relevant: frozenset[str] = frozenset()
    context: Mapping[str, Any] = field(default_factory=dict)

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
        """
        if isinstance(judgments, set | frozenset):
            graded: dict[str, int] = {str(d): 1 for d in judgments}
        else:
            graded = {str(d): int(g) for d, g in judgments.items()}
        level = max(1, int(relevance_level))
        relevant = frozenset(d for d, g in graded.items() if g >= level)
        return cls(id=str(case_id), query=query, relevance=graded, relevant=relevant)
