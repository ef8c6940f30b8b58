"""Measures of graded relevance and of judgment coverage, for every case at once.

Gains come from :class:`~.gains.Gains`; each function follows the source named in its
docstring (trec_eval 10.0's, or the TREC Web track's ``gdeval.pl`` for ERR). Sums run in
rank order, as those programs add them.
"""

from __future__ import annotations

import numpy as np

from evalkit_retrieval.gains import Gains, case_levels
from evalkit_retrieval.state import Floats, Ints, RankingState


def _segment_cumsum(values: Floats, case: Ints, n: int) -> Floats:
    """Running sums of ``values`` within each case (``case`` sorted)."""
    total = np.cumsum(values)
    count = np.bincount(case, minlength=n)
    start = np.cumsum(count) - count
    before = np.concatenate(([0.0], total))[start]
    out: Floats = total - before[case]
    return out


class _Graded:
    """The gain-bearing retrieved documents and the ideal ranking of one gain mapping."""

    def __init__(self, s: RankingState, gains: Gains) -> None:
        g = gains.of_labels(s.j_label)
        keep = g != 0
        self.case, self.rank, self.gain = s.j_case[keep], s.j_rank[keep], g[keep]
        self.disc = self.gain / np.log2(self.rank + 1.0)
        self.icase, self.ipos, self.igain = gains.ideal(s)
        self.idisc = self.igain / np.log2(self.ipos + 1.0)
        self.npos = np.bincount(self.icase, minlength=s.n).astype(np.int64)
        self.istart = np.cumsum(self.npos) - self.npos
        self.icum = _segment_cumsum(self.idisc, self.icase, s.n)
        self.cum = _segment_cumsum(self.disc, self.case, s.n)

    def ideal_prefix(self, case: Ints, length: Ints) -> Floats:
        """The ideal DCG of the first ``length`` positions (0 for length 0)."""
        out = np.zeros(len(case))
        some = length > 0
        out[some] = self.icum[self.istart[case[some]] + length[some] - 1]
        return out

    def dcg_prefix(self, s: RankingState, case: Ints, rank: Ints) -> Floats:
        """The DCG of ranks ``<= rank`` of each queried case."""
        width = int(max(self.rank.max(initial=0), rank.max(initial=0))) + 1
        keys = self.case * width + self.rank
        idx = np.searchsorted(keys, case * width + rank, side="right") - 1
        count = np.bincount(self.case, minlength=s.n)
        start = np.cumsum(count) - count
        out = np.zeros(len(case))
        inside = (idx >= 0) & (idx >= start[case])
        out[inside] = self.cum[idx[inside]]
        return out


def _graded(s: RankingState, gains: Gains) -> _Graded:
    return s.cached(("graded", gains), lambda: _Graded(s, gains))  # type: ignore[no-any-return]


def ndcg(s: RankingState, gains: Gains, k: int | None) -> Floats:
    """nDCG (m_ndcg.c) or nDCG@k (m_ndcg_cut.c): DCG / ideal DCG with a log2(rank + 1)
    discount; the ideal ranking holds every judged document with a positive gain, cut at
    ``k`` too. With ``Gains(exp=True)`` the gain is 2**label - 1 (gdeval's nDCG)."""
    d = _graded(s, gains)
    if k is None:
        dcg = s.per_case(d.case, d.disc)
        idcg = s.per_case(d.icase, d.idisc)
    else:
        keep, ikeep = d.rank <= k, d.ipos <= k
        dcg = s.per_case(d.case[keep], d.disc[keep])
        idcg = s.per_case(d.icase[ikeep], d.idisc[ikeep])
    return s.divide(dcg, idcg)


def dcg(s: RankingState, gains: Gains, k: int) -> Floats:
    """DCG@k, not normalised (Jaervelin and Kekaelaeinen 2002; ranx's ``dcg@k``): the sum
    over the top ``k`` of gain / log2(rank + 1), the gain the label (labels <= 0 gain
    nothing); with ``Gains(exp=True)`` 2**label - 1 (Burges et al. 2005; ranx's
    ``dcg_burges@k``)."""
    d = _graded(s, gains)
    keep = d.rank <= k
    return s.per_case(d.case[keep], d.disc[keep])


def ndcg_rel(s: RankingState, gains: Gains) -> Floats:
    """ndcg_rel (m_ndcg_rel.c): nDCG averaged over the relevant documents (positive
    gain): at each one retrieved, DCG so far / ideal DCG of as many positions (at most
    all of the ideal ranking); each one not retrieved counts DCG / ideal DCG of the
    whole ranking; the sum / the ideal ranking's length."""
    d = _graded(s, gains)
    pos = d.gain > 0
    case, rank = d.case[pos], d.rank[pos]
    idcg = d.ideal_prefix(case, np.minimum(rank, d.npos[case]))
    term = np.zeros(len(case))
    np.divide(d.cum[pos], idcg, out=term, where=idcg > 0)
    total = s.per_case(case, term)
    found = np.bincount(case, minlength=s.n)
    dcg_all = s.per_case(d.case, d.disc)
    idcg_all = s.per_case(d.icase, d.idisc)
    rest = s.divide((d.npos - found) * dcg_all, idcg_all)
    total = total + rest
    out = np.zeros(s.n)
    np.divide(total, d.npos, out=out, where=(total > 0) & (d.npos > 0))
    return out


def rndcg(s: RankingState, gains: Gains, num_rel: Ints) -> Floats:
    """Rndcg (m_Rndcg.c): nDCG averaged at the R levels, the positions where the ideal
    gain changes (and the end of the ideal ranking): DCG of the ranks before each / the
    ideal DCG there; plus DCG / ideal DCG of the whole ranking when it is longer than
    the ideal one by more than one. 0 when ``num_rel`` (at the relevance level) is 0."""
    d = _graded(s, gains)
    if not len(d.icase):
        return np.zeros(s.n)
    nxt = np.ones(len(d.icase), dtype=np.bool_)
    nxt[:-1] = (d.icase[1:] != d.icase[:-1]) | (d.igain[1:] != d.igain[:-1])
    bcase = d.icase[nxt]
    bpos = d.ipos[nxt]  # boundary before ideal position bpos + 1
    idcg = d.icum[np.flatnonzero(nxt)]
    upto = np.minimum(bpos, s.num_ret[bcase])
    dcg = d.dcg_prefix(s, bcase, upto)
    total = s.per_case(bcase, dcg / idcg)
    terms = s.per_case(bcase)
    extra = (d.npos + 1 < s.num_ret) & (d.npos > 0)
    dcg_all = s.per_case(d.case, d.disc)
    idcg_all = s.per_case(d.icase, d.idisc)
    total[extra] += dcg_all[extra] / idcg_all[extra]
    terms[extra] += 1
    out = s.divide(total, terms)
    out[num_rel == 0] = 0.0
    return out


def normalized_gain(s: RankingState, gains: Gains) -> Floats:
    """G (m_G.c): each retrieved document's gain / log2(2 + cost so far - gain so far),
    the cost of rank r being the sum of max(ideal gain, 1) over ranks 1..r (1 past the
    ideal ranking); summed, / the total ideal gain."""
    d = _graded(s, gains)
    cost_vals = np.maximum(d.igain, 1.0)
    cost_cum = _segment_cumsum(cost_vals, d.icase, s.n)
    npos = d.npos[d.case]
    within = np.minimum(d.rank, npos)
    cost = np.zeros(len(d.case))
    some = within > 0
    cost[some] = cost_cum[d.istart[d.case[some]] + within[some] - 1]
    cost = cost + np.maximum(d.rank - npos, 0)
    got = _segment_cumsum(d.gain, d.case, s.n)
    term = d.gain / np.log2(2 + cost - got)
    return s.divide(s.per_case(d.case, term), s.per_case(d.icase, d.igain))


def _powers(s: RankingState, p: float, upto: int) -> Floats:
    """``p**i`` for i = 0..upto by repeated multiplication, as trec_eval computes them."""
    def make() -> Floats:
        out = np.empty(upto + 1)
        out[0] = 1.0
        out[1:] = np.cumprod(np.full(upto, p))
        return out

    return s.cached(("powers", p, upto), make)  # type: ignore[no-any-return]


def rbp(s: RankingState, gains: Gains, p: float) -> Floats:
    """RBP (m_rbp.c), Moffat and Zobel's rank-biased precision: (1 - p) * the sum of
    gain * p**(rank - 1), the gains rescaled to [0, 1] per query when some lie outside
    ((gain - min) / (max - min) over the query's gain levels)."""
    levels = case_levels(s.n, s.q_case[s.q_label >= 0], s.q_label[s.q_label >= 0])
    low = np.zeros(s.n)
    high = np.zeros(s.n)
    for lv in np.unique(levels):
        low[levels == lv], high[levels == lv] = gains.entry_range(int(lv))
    g = gains.of_labels(s.j_label)
    rescale = ((low < 0) | (high > 1))[s.j_case] & (s.j_label >= 0)
    lo, hi = low[s.j_case], high[s.j_case]
    g[rescale] = (g[rescale] - lo[rescale]) / (hi[rescale] - lo[rescale])
    keep = g != 0
    pw = _powers(s, p, int(s.num_ret.max(initial=0)))
    return (1.0 - p) * s.per_case(s.j_case[keep], g[keep] * pw[s.j_rank[keep] - 1])


def rbp_residual(s: RankingState, p: float) -> Floats:
    """rbp_resid (m_rbp_resid.c): the most RBP could still rise if every unjudged
    retrieved document (not in the qrels, or labelled < 0) had gain 1: p**num_ret +
    (1 - p) * the sum of p**(rank - 1) over them; 0 when every retrieved one is judged."""
    pw = _powers(s, p, int(s.num_ret.max(initial=0)))
    judged = s.j_label >= 0
    all_terms = np.cumsum(pw)[np.maximum(s.num_ret - 1, 0)] * (s.num_ret > 0)
    judged_terms = s.per_case(s.j_case[judged], pw[s.j_rank[judged] - 1])
    unjudged = s.num_ret - s.per_case(s.j_case[judged]).astype(np.int64)
    out = pw[s.num_ret] + (1 - p) * (all_terms - judged_terms)
    out[unjudged == 0] = 0.0
    return out


def err(s: RankingState, k: int, max_grade: int) -> Floats:
    """ERR@k (gdeval.pl, TREC Web track), Chapelle et al.'s expected reciprocal rank:
    the sum over ranks i <= k of R_i / i * prod_{j<i} (1 - R_j), with R = (2**label - 1) /
    2**max_grade (labels <= 0 give 0), computed as 2**(label - max_grade) - 2**-max_grade
    so that any ``max_grade`` gives a finite R (2**1024 alone is beyond a double).

    Raises:
        ValueError: a label above ``max_grade``.
    """
    keep = (s.j_rank <= k) & (s.j_label > 0)
    case, rank, label = s.j_case[keep], s.j_rank[keep], s.j_label[keep]
    if len(label) and int(label.max()) > max_grade:
        raise ValueError(f"ERR: a label {int(label.max())} is above the highest grade "
                         f"{max_grade}; name it with ERR(max={int(label.max())})@{k}")
    # (2**label - 1) / 2**max as 2**(label - max) - 2**-max: equal (both sides exact in
    # binary for labels up to 53), and finite for any grade (2**1024 is beyond a double)
    r = np.exp2(label - float(max_grade)) - np.exp2(-float(max_grade))
    decay = np.ones(len(r))
    count = np.bincount(case, minlength=s.n)
    start = np.cumsum(count) - count
    nth = np.arange(len(case)) - start[case]
    for j in range(1, int(nth.max(initial=0)) + 1):
        at = np.flatnonzero(nth == j)
        decay[at] = decay[at - 1] * (1 - r[at - 1])
    return s.per_case(case, r * decay / rank)


def judged(s: RankingState, k: int) -> Floats:
    """Judged@k (ir_measures' judged provider): documents of the top ``k`` that the qrels
    judge (any label) / min(k, documents ranked)."""
    return s.divide(s.judged_within(k, pool_only=False), np.minimum(k, s.num_ret))


def unjudged(s: RankingState, k: int) -> Floats:
    """unj@k (m_unjudged.c): documents of the top ``k`` not in the qrels or labelled < 0,
    / ``k``."""
    top = np.minimum(k, s.num_ret).astype(np.float64)
    return (top - s.judged_within(k, pool_only=True)) / k
