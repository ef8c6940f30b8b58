"""Measures of binary relevance, for every case of a :class:`~.state.RankingState` at once.

Each function takes the state and ``level``, the relevance level (``None``: the run's
level, ``case.relevant``; an integer: labels ``>= level``, a measure's ``rel=``), and
returns one value per case. Each follows the trec_eval 10.0 source file named in its
docstring, including its conventions: a cut-off beyond the ranking counts the missing
ranks as non-relevant, a query without relevant documents scores 0, and sums run in rank
order, as trec_eval adds them.
"""

from __future__ import annotations

import numpy as np

from evalkit_retrieval.state import Floats, Ints, RankingState

Level = int | None
#: trec_eval's MIN_GEO_MEAN and INFAP_EPSILON (trec_eval.h)
MIN_GEO_MEAN = 0.00001
INFAP_EPSILON = 0.00001


def precision(s: RankingState, level: Level, k: int) -> Floats:
    """P@k (m_P.c): relevant documents in the top ``k`` / ``k``."""
    return s.hits(level, k) / k


def recall(s: RankingState, level: Level, k: int) -> Floats:
    """R@k (m_recall.c): relevant documents in the top ``k`` / relevant documents."""
    return s.divide(s.hits(level, k), s.num_rel_at(level))


def success(s: RankingState, level: Level, k: int) -> Floats:
    """Success@k (m_success.c): 1 if a relevant document is in the top ``k``."""
    return (s.hits(level, k) > 0).astype(np.float64)


def f1(s: RankingState, level: Level, k: int) -> Floats:
    """F1@k (ranx's ``f1@k``): 2 P R / (P + R) with P = hits in the top ``k`` / ``k`` and
    R = hits in the top ``k`` / relevant documents; 0 without a relevant document in the
    top ``k``."""
    hits = s.hits(level, k)
    some = hits > 0
    p = hits[some] / k
    r = hits[some] / s.num_rel_at(level)[some]
    out = np.zeros(s.n)
    out[some] = 2.0 * (p * r / (p + r))
    return out


def hits(s: RankingState, level: Level, k: int) -> Floats:
    """Hits@k (ranx's ``hits@k``): relevant documents in the top ``k``."""
    return s.hits(level, k)


def relative_precision(s: RankingState, level: Level, k: int) -> Floats:
    """relative_P@k (m_rel_P.c): relevant documents in the top ``k`` / min(k, R)."""
    return s.divide(s.hits(level, k), np.minimum(k, s.num_rel_at(level)))


def reciprocal_rank(s: RankingState, level: Level, k: int | None = None) -> Floats:
    """RR (m_recip_rank.c): 1 / rank of the first relevant document (within ``k``)."""
    rel = s.relevant(level)
    first = rel.nth == 1
    if k is not None:
        first &= rel.rank <= k
    out = np.zeros(s.n)
    out[rel.case[first]] = 1.0 / rel.rank[first]
    return out


def _ap_terms(s: RankingState, level: Level) -> Floats:
    """Precision at each relevant retrieved document, the terms of AP."""
    rel = s.relevant(level)
    return s.cached(("ap_terms", level), lambda: rel.nth / rel.rank)  # type: ignore[no-any-return]


def average_precision(s: RankingState, level: Level, k: int | None = None) -> Floats:
    """AP (m_map.c), or AP cut at ``k`` (m_map_cut.c): the precision at each relevant
    document ranked (within the top ``k``), summed, / all relevant documents."""
    rel = s.relevant(level)
    terms = _ap_terms(s, level)
    if k is None:
        total = s.per_case(rel.case, terms)
    else:
        keep = rel.rank <= k
        total = s.per_case(rel.case[keep], terms[keep])
    return s.divide(total, s.num_rel_at(level))


def r_precision(s: RankingState, level: Level) -> Floats:
    """R-precision (m_Rprec.c): relevant documents in the top R / R."""
    rel = s.relevant(level)
    num_rel = s.num_rel_at(level)
    return s.divide(s.per_case(rel.case[rel.rank <= num_rel[rel.case]]), num_rel)


def log_floor(values: Floats) -> Floats:
    """``ln(max(value, MIN_GEO_MEAN))``: a per-query term of trec_eval's geometric means
    (m_gm_map.c, m_gm_bpref.c); the summary is ``exp`` of their mean."""
    return np.log(np.maximum(values, MIN_GEO_MEAN))


def _before(s: RankingState, mask: np.ndarray, at: np.ndarray) -> Ints:
    """For the retrieved judged documents at indexes ``at``: how many documents where
    ``mask`` holds rank above them in their case (``at`` itself not counted)."""
    count = np.bincount(s.j_case, minlength=s.n)
    start = np.cumsum(count) - count
    running = np.cumsum(mask) - mask
    out: Ints = (running[at] - running[start[s.j_case[at]]]).astype(np.int64)
    return out


def _rel_index(s: RankingState, level: Level) -> np.ndarray:
    return s.cached(("rel_index", level),  # type: ignore[no-any-return]
                    lambda: np.flatnonzero(s.rel_mask(level)))


def bpref(s: RankingState, level: Level) -> Floats:
    """bpref (m_bpref.c): for each relevant retrieved document, 1 - min(N_above, R) /
    min(N, R), where N_above counts the judged non-relevant documents ranked above it and
    N all judged non-relevant ones (1 when none is above); summed, / R. Unjudged
    documents (not in the qrels, or labelled < 0) are skipped."""
    at = _rel_index(s, level)
    case = s.j_case[at]
    above = _before(s, s.nonrel_mask(level), at)
    num_rel = s.num_rel_at(level)
    r = num_rel[case]
    den = np.minimum(s.num_nonrel_judged(level)[case], r).astype(np.float64)
    term = np.ones(len(at))
    some = above > 0
    term[some] = 1.0 - np.minimum(above[some], r[some]) / den[some]
    return s.divide(s.per_case(case, term), num_rel)


def infap(s: RankingState, level: Level) -> Floats:
    """infAP (m_infap.c), Yilmaz and Aslam's inferred AP: at a relevant document at
    0-based position j > 0, ``1/(j+1) + j/(j+1) * ((r-1 + n + u)/j) * ((r-1 + e) /
    (r-1 + n + 2e))`` with r the relevant documents so far (this one included), n the
    judged non-relevant and u the unjudged-in-pool (label < 0) documents above it,
    e = 0.00001; 1 at j = 0; summed, / R."""
    at = _rel_index(s, level)
    case = s.j_case[at]
    j = (s.j_rank[at] - 1).astype(np.float64)
    rel_before = _before(s, s.rel_mask(level), at)
    nonrel = _before(s, s.nonrel_mask(level), at)
    unjudged = _before(s, s.j_label < 0, at)
    term = np.ones(len(at))
    later = j > 0
    fj, r1 = j[later], rel_before[later]
    nr, uj = nonrel[later], unjudged[later]
    term[later] = (1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r1 + nr + uj) / fj)
                   * ((r1 + INFAP_EPSILON) / (r1 + nr + 2 * INFAP_EPSILON)))
    return s.divide(s.per_case(case, term), s.num_rel_at(level))


def binary_g(s: RankingState, level: Level) -> Floats:
    """binG (m_binG.c): for each relevant retrieved document, 1 / log2(2 + the
    non-relevant documents ranked above it); summed, / R."""
    rel = s.relevant(level)
    term = 1.0 / np.log2((2 + rel.rank - rel.nth).astype(np.float64))
    return s.divide(s.per_case(rel.case, term), s.num_rel_at(level))


# ------------------------------------------------------------------ set measures
def set_precision(s: RankingState, level: Level) -> Floats:
    """set_P (m_set_P.c): relevant retrieved / retrieved."""
    return s.divide(s.hits(level), s.num_ret)


def set_recall(s: RankingState, level: Level) -> Floats:
    """set_recall (m_set_recall.c): relevant retrieved / relevant."""
    return s.divide(s.hits(level), s.num_rel_at(level))


def set_relative_precision(s: RankingState, level: Level) -> Floats:
    """set_relative_P (m_set_rel_P.c): relevant retrieved / min(retrieved, relevant)."""
    return s.divide(s.hits(level), np.minimum(s.num_ret, s.num_rel_at(level)))


def set_ap(s: RankingState, level: Level) -> Floats:
    """set_map (m_set_map.c): relevant retrieved squared / (retrieved * relevant)."""
    hits = s.hits(level)
    return s.divide(hits * hits, s.num_ret.astype(np.float64) * s.num_rel_at(level))


def set_f(s: RankingState, level: Level, beta: float) -> Floats:
    """set_F (m_set_F.c): (beta+1) * P * R / (beta * P + R) on the retrieved set."""
    hits = s.hits(level)
    some = hits > 0
    p = hits[some] / s.num_ret[some]
    r = hits[some] / s.num_rel_at(level)[some]
    out = np.zeros(s.n)
    out[some] = (beta + 1.0) * p * r / (beta * p + r)
    return out


def utility(s: RankingState, level: Level, coefficients: tuple[float, ...]) -> Floats:
    """utility (m_utility.c): p1 * relevant retrieved + p2 * non-relevant retrieved +
    p3 * relevant not retrieved + p4 * (non-relevant not retrieved - N), N (trec_eval
    ``-N``) being 0. An empty ranking (a judged query the run lacks, scored under
    ``missing="zero"``) follows the same formula: p3 * R - p4 * R."""
    p1, p2, p3, p4 = coefficients
    a = s.hits(level)
    ret = s.num_ret.astype(np.float64)
    rel = s.num_rel_at(level).astype(np.float64)
    return p1 * a + p2 * (ret - a) + p3 * (rel - a) + p4 * (0 + a - ret - rel)


# ------------------------------------------------------------------ counts
def num_ret(s: RankingState) -> Floats:
    """num_ret (m_num_ret.c): documents ranked (after any depth cut)."""
    return s.num_ret.astype(np.float64)


def num_rel(s: RankingState, level: Level) -> Floats:
    """num_rel (m_num_rel.c): relevant documents judged for the query."""
    return s.num_rel_at(level).astype(np.float64)


def num_rel_ret(s: RankingState, level: Level) -> Floats:
    """num_rel_ret (m_num_rel_ret.c): relevant documents ranked."""
    return s.hits(level)


def num_nonrel_judged_ret(s: RankingState, level: Level) -> Floats:
    """num_nonrel_judged_ret (m_num_nonrel_judged_ret.c): judged non-relevant documents
    ranked (labels in ``[0, level)``)."""
    return s.per_case(s.j_case[s.nonrel_mask(level)])
