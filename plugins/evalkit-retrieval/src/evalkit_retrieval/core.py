"""Ranking measures on one ranked list: ``(retrieved, relevant, k) -> float``.

These are the plain-Python reference definitions (``evalkit.metrics.core`` re-exports
them). Each follows the trec_eval measure named in its docstring, with trec_eval's
conventions:

* ``retrieved`` is the ranking, best first, already in trec_eval's order (see
  :mod:`evalkit_retrieval.ranking`); a document id may appear only once (:class:`ValueError`
  otherwise, naming the document);
* ``relevant`` is the set of ids binary measures count as relevant (labels at or above the
  relevance level, trec_eval ``-l``); a ``{doc: label}`` mapping is accepted too and
  counts its labels >= 1 as relevant; a query with no relevant document scores 0;
* ``k`` is a positive integer cut-off; a list shorter than ``k`` is not padded, but
  precision still divides by ``k``;
* nDCG takes graded labels (a ``{doc: label}`` mapping) as linear gains; labels <= 0 give
  no gain; the discount is ``log2(rank + 1)``; the ideal ranking sorts every judged
  positive label, whatever was retrieved.

Every function returns a float in [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

__all__ = [
    "ap_at_k",
    "average_precision",
    "dcg_at_k",
    "ndcg",
    "ndcg_at_k",
    "precision_at_k",
    "r_precision",
    "recall_at_k",
    "reciprocal_rank",
    "rr_at_k",
    "success_at_k",
]

Relevance = Collection[str] | Mapping[str, int]


def precision_at_k(retrieved: Sequence[str], relevant: Relevance, k: int) -> float:
    """Precision at cut-off ``k`` (trec_eval ``P_k``).

    ``|relevant ∩ retrieved[:k]| / k``; the denominator stays ``k`` when fewer than ``k``
    documents were retrieved.

    Raises:
        ValueError: ``k`` is not a positive integer, or ``retrieved`` repeats an id.
    """
    _check_k(k)
    _check_unique(retrieved)
    return _hits(retrieved[:k], _binary(relevant)) / k


def recall_at_k(retrieved: Sequence[str], relevant: Relevance, k: int) -> float:
    """Recall at cut-off ``k`` (trec_eval ``recall_k``).

    ``|relevant ∩ retrieved[:k]| / |relevant|``: the denominator is every relevant
    document, not ``min(k, |relevant|)``; 0 when there is no relevant document.

    Raises:
        ValueError: bad ``k`` or a repeated id.
    """
    _check_k(k)
    _check_unique(retrieved)
    rel = _binary(relevant)
    if not rel:
        return 0.0
    return _hits(retrieved[:k], rel) / len(rel)


def success_at_k(retrieved: Sequence[str], relevant: Relevance, k: int) -> float:
    """1.0 if a relevant document is in the top ``k``, else 0.0 (trec_eval ``success_k``).

    Raises:
        ValueError: bad ``k`` or a repeated id.
    """
    _check_k(k)
    _check_unique(retrieved)
    return 1.0 if _hits(retrieved[:k], _binary(relevant)) else 0.0


def rr_at_k(retrieved: Sequence[str], relevant: Relevance, k: int) -> float:
    """Reciprocal rank of the first relevant document within the top ``k``, else 0.

    Without a cut-off this is trec_eval ``recip_rank`` (see :func:`reciprocal_rank`).

    Raises:
        ValueError: bad ``k`` or a repeated id.
    """
    _check_k(k)
    _check_unique(retrieved)
    rel = _binary(relevant)
    for rank, doc in enumerate(retrieved[:k], start=1):
        if doc in rel:
            return 1.0 / rank
    return 0.0


def reciprocal_rank(retrieved: Sequence[str], relevant: Relevance) -> float:
    """Reciprocal rank of the first relevant document (trec_eval ``recip_rank``); 0 if none.

    Raises:
        ValueError: a repeated id.
    """
    return rr_at_k(retrieved, relevant, max(1, len(retrieved)))


def ap_at_k(retrieved: Sequence[str], relevant: Relevance, k: int) -> float:
    """Average precision cut at ``k`` (trec_eval ``map_cut_k``).

    The sum of precision at each relevant document ranked within the top ``k``, divided by
    the number of relevant documents (all of them, not only those within ``k``).

    Raises:
        ValueError: bad ``k`` or a repeated id.
    """
    _check_k(k)
    _check_unique(retrieved)
    rel = _binary(relevant)
    if not rel:
        return 0.0
    found = 0
    total = 0.0
    for rank, doc in enumerate(retrieved[:k], start=1):
        if doc in rel:
            found += 1
            total += found / rank
    return total / len(rel)


def average_precision(retrieved: Sequence[str], relevant: Relevance) -> float:
    """Average precision over the whole ranking (trec_eval ``map``, per query).

    Raises:
        ValueError: a repeated id.
    """
    return ap_at_k(retrieved, relevant, max(1, len(retrieved)))


def r_precision(retrieved: Sequence[str], relevant: Relevance) -> float:
    """Precision at rank R, R being the number of relevant documents (trec_eval ``Rprec``).

    0 when there is no relevant document.

    Raises:
        ValueError: a repeated id.
    """
    _check_unique(retrieved)
    rel = _binary(relevant)
    r = len(rel)
    if r == 0:
        return 0.0
    return _hits(retrieved[:r], rel) / r


def dcg_at_k(retrieved: Sequence[str], relevance: Relevance, k: int | None) -> float:
    """Discounted cumulative gain of the top ``k`` (all of the list when ``k`` is None).

    Gains are the labels of ``relevance`` (a mapping) with labels <= 0 giving 0, or 1 for
    each member of a plain collection; the document at rank ``r`` is discounted by
    ``log2(r + 1)``.

    Raises:
        ValueError: bad ``k`` or a repeated id.
    """
    if k is not None:
        _check_k(k)
    _check_unique(retrieved)
    gains = _gains(relevance)
    top = retrieved if k is None else retrieved[:k]
    return math.fsum(
        gains[doc] / math.log2(rank + 1)
        for rank, doc in enumerate(top, start=1)
        if gains.get(doc, 0) > 0
    )


def ndcg_at_k(retrieved: Sequence[str], relevant: Relevance, k: int) -> float:
    """nDCG at cut-off ``k`` (trec_eval ``ndcg_cut_k``).

    ``DCG@k / IDCG@k``, where the ideal ranking orders every judged document with a
    positive gain by gain, whatever was retrieved, and is cut at ``k`` too. ``relevant``
    is a ``{doc: label}`` mapping (graded, linear gains) or a collection of ids (gain 1
    each). 0 when no document has a positive gain.

    Raises:
        ValueError: bad ``k`` or a repeated id.
    """
    _check_k(k)
    return _ndcg(retrieved, relevant, k)


def ndcg(retrieved: Sequence[str], relevance: Relevance) -> float:
    """nDCG of the whole ranking (trec_eval ``ndcg`` with its default gains).

    Raises:
        ValueError: a repeated id.
    """
    return _ndcg(retrieved, relevance, None)


# --------------------------------------------------------------------------- helpers
def _ndcg(retrieved: Sequence[str], relevance: Relevance, k: int | None) -> float:
    dcg = dcg_at_k(retrieved, relevance, k)
    ideal = sorted((g for g in _gains(relevance).values() if g > 0), reverse=True)
    if k is not None:
        ideal = ideal[:k]
    idcg = math.fsum(g / math.log2(rank + 1) for rank, g in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def _gains(relevance: Relevance) -> Mapping[str, int]:
    if isinstance(relevance, Mapping):
        return relevance
    return dict.fromkeys(relevance, 1)


def _binary(relevant: Relevance) -> Collection[str]:
    # A graded mapping counts its positive labels as relevant (trec_eval's default -l1).
    if isinstance(relevant, Mapping):
        return {doc for doc, label in relevant.items() if label > 0}
    return relevant


def _hits(top: Sequence[str], relevant: Collection[str]) -> int:
    return sum(1 for doc in top if doc in relevant)


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def _check_unique(retrieved: Sequence[str]) -> None:
    if len(set(retrieved)) == len(retrieved):
        return
    first: dict[str, int] = {}
    for rank, doc in enumerate(retrieved, start=1):
        if doc in first:
            raise ValueError(
                f"document {doc!r} appears twice in the ranked list (ranks {first[doc]} "
                f"and {rank}); a ranking may hold each document once"
            )
        first[doc] = rank
