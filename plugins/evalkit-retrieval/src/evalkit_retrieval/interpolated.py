"""Interpolated precision and precision at multiples of R, for every case at once.

As :mod:`.binary`: ``level`` is the relevance level (``None``: the run's), and each
function follows the trec_eval 10.0 source file named in its docstring.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalkit_retrieval.state import Floats, Ints, RankingState

Level = int | None


def lround(values: Floats) -> Ints:
    """C's ``lround``: to the nearest integer, halves away from zero."""
    a = np.abs(values)
    whole = np.floor(a)
    up = (a - whole) >= 0.5
    out: Ints = (np.sign(values) * (whole + up)).astype(np.int64)
    return out


def _best_from(s: RankingState, level: Level, threshold: Ints) -> Floats:
    """Per case, the highest precision at a relevant document whose 1-based position
    among the relevant retrieved is ``>= threshold`` (0 when there is none)."""
    rel = s.relevant(level)
    terms = rel.nth / rel.rank
    vals = np.where(rel.nth >= threshold[rel.case], terms, 0.0)
    out = np.zeros(s.n)
    some = rel.count > 0
    if len(vals):
        out[some] = np.maximum.reduceat(vals, rel.start[some])
    return out


def iprec_at_recall(s: RankingState, level: Level, recall: float) -> Floats:
    """Interpolated precision at a recall level (m_iprec_at_recall.c, 10.0): with
    c = lround(recall * R), the highest precision at or after the c-th relevant retrieved
    document (any rank when c <= 0); 0 when fewer than c relevant documents were
    retrieved. (trec_eval 9.0.8 computed c as (long)(recall * R + 0.9).)"""
    c = lround(recall * s.num_rel_at(level).astype(np.float64))
    out = _best_from(s, level, np.maximum(c, 1))
    out[c > s.relevant(level).count] = 0.0
    return out


def eleven_point_average(s: RankingState, level: Level, recalls: Sequence[float]) -> Floats:
    """11pt_avg (m_11pt_avg.c): the mean of the interpolated precision at ``recalls``
    (default 0.0, 0.1, ..., 1.0), walked as trec_eval walks them: from the last level to
    the first, each matched when the ranking reaches its number of relevant documents; a
    level that cannot be matched any more (a level out of order, or c <= 0) takes, with
    every level before it, the highest precision of the ranking."""
    num_rel = s.num_rel_at(level).astype(np.float64)
    nrr = s.relevant(level).count
    final = _best_from(s, level, np.ones(s.n, dtype=np.int64))
    total = np.zeros(s.n)
    skipping = np.ones(s.n, dtype=np.bool_)
    stuck = np.zeros(s.n, dtype=np.bool_)
    last = nrr.copy()
    for recall in reversed(list(recalls)):
        c = lround(recall * num_rel)
        skipping &= c > nrr
        live = ~skipping
        match = live & ~stuck & (c >= 1) & (c <= last)
        stuck |= live & ~match
        value = np.where(match, _best_from(s, level, np.maximum(c, 1)), final)
        total = np.where(live, total + value, total)
        last = np.where(match, c, last)
    return total / len(recalls)


def rprec_mult(s: RankingState, level: Level, multiple: float) -> Floats:
    """Rprec_mult (m_Rprec_mult.c): precision at rank c = (long)(multiple * R + 0.9);
    ranks beyond the ranking count as non-relevant, and c = 0 scores 0."""
    c = np.trunc(multiple * s.num_rel_at(level).astype(np.float64) + 0.9).astype(np.int64)
    rel = s.relevant(level)
    hits = s.per_case(rel.case[rel.rank <= c[rel.case]])
    return s.divide(hits, c)
