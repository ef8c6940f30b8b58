"""Gains of graded measures, and the ideal ranking they imply, as trec_eval builds them.

By default a label is its own gain (trec_eval); ``Gains(pairs=((1, 3.0), (2, 9.0)))`` is
trec_eval's ``-m ndcg.1=3,2=9`` (levels not named keep their label as gain), and
``Gains(exp=True)`` is gdeval's and ranx's exponential gain ``2**label - 1``. Labels below 0
(unjudged) and documents not in the qrels have no gain.

The ideal ranking follows trec_eval's ``setup_gains`` (gain_init.c): one entry per level
named in ``pairs`` and per label from 0 to the case's highest, sorted by gain with glibc's
merge sort and trec_eval's comparison, which truncates the difference of two gains to an
integer (so gains less than 1 apart compare equal and keep their order); the ideal
ranking then takes each entry's documents from the highest entry down, until an entry
with documents has a gain <= 0. For integer gains this is simply every positive gain,
highest first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from evalkit.execute.scoring import MetricError
from evalkit_retrieval.state import Floats, Ints, RankingState

Entry = tuple[int, float]


#: the largest label whose exponential gain 2**label - 1 is a finite double
MAX_EXP_LABEL = 1023

@dataclass(frozen=True)
class Gains:
    """A gain mapping: trec_eval's ``level=gain`` pairs, or gdeval's exponential gain."""

    pairs: tuple[Entry, ...] = ()
    exp: bool = False

    def __post_init__(self) -> None:
        levels = [lvl for lvl, _ in self.pairs]
        if any(lvl < 0 for lvl in levels):
            raise ValueError("gain levels must be labels >= 0 (unjudged documents, labelled "
                             "below 0, have no gain)")
        if len(set(levels)) != len(levels):
            raise ValueError("a gain level is given twice")
        if self.exp and self.pairs:
            raise ValueError("exponential gains (dcg=exp-log2) and a gain map exclude each "
                             "other")

    def of_labels(self, labels: Ints) -> Floats:
        """The gain of each label (0 for labels below 0).

        Raises:
            MetricError: (a ``ValueError``) exponential gains of a label above 1023,
                whose 2**label - 1 is beyond the largest double (the nDCG would be NaN):
                in a target run the metric's error on those cases, not a crash.
        """
        if self.exp:
            if labels.size and int(labels.max()) > MAX_EXP_LABEL:
                raise MetricError(
                    f"exponential gains (dcg=exp-log2) take labels up to {MAX_EXP_LABEL}: "
                    f"2**{int(labels.max())} - 1 is beyond the largest double; use the "
                    "linear gains (the default)")
            return np.where(labels > 0, np.exp2(np.maximum(labels, 0)) - 1.0, 0.0)
        out = np.where(labels >= 0, labels, 0).astype(np.float64)
        for level, gain in self.pairs:
            out[labels == level] = gain
        return out

    def ideal(self, s: RankingState) -> tuple[Ints, Ints, Floats]:
        """Every case's ideal ranking as ``(case, 1-based position, gain)``, sorted by
        case then position (cached on the state)."""
        return s.cached(("ideal", self), lambda: _ideal(self, s))  # type: ignore[no-any-return]

    def entry_range(self, levels: int) -> tuple[float, float]:
        """The smallest and largest gain among a case's entries (``levels`` labels)."""
        gains = [g for _, g in _entries(self.pairs, levels)]
        return (min(gains), max(gains)) if gains else (0.0, 0.0)


def _entries(pairs: tuple[Entry, ...], levels: int) -> list[Entry]:
    named = {lvl for lvl, _ in pairs}
    return list(pairs) + [(lvl, float(lvl)) for lvl in range(levels) if lvl not in named]


def _glibc_msort(items: list[Entry], cmp: Callable[[Entry, Entry], int]) -> list[Entry]:
    """glibc's ``qsort`` for small arrays (msort_with_tmp): a top-down merge sort taking
    from the left run while ``cmp(left, right) <= 0``."""
    if len(items) <= 1:
        return items
    half = len(items) // 2
    left, right = _glibc_msort(items[:half], cmp), _glibc_msort(items[half:], cmp)
    out: list[Entry] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if cmp(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def _trec_cmp(a: Entry, b: Entry) -> int:
    return int(a[1] - b[1])  # comp_rel_gain: a double difference returned as int


@lru_cache(maxsize=256)
def walk_order(pairs: tuple[Entry, ...], levels: int) -> tuple[Entry, ...]:
    """A case's gain entries from the highest down, as trec_eval's ideal ranking walks
    them (``levels``: the case's highest label >= 0, plus 1)."""
    return tuple(reversed(_glibc_msort(_entries(pairs, levels), _trec_cmp)))


def _ideal(gains: Gains, s: RankingState) -> tuple[Ints, Ints, Floats]:
    judged = s.q_label >= 0
    if not gains.pairs:  # every positive label, highest first (q arrays are sorted so)
        keep = s.q_label > 0
        case = s.q_case[keep]
        gain = gains.of_labels(s.q_label[keep])
    else:
        case, gain = _ideal_from_entries(gains.pairs, s.n, s.q_case[judged], s.q_label[judged])
    count = np.bincount(case, minlength=s.n)
    start = np.cumsum(count) - count
    pos = np.arange(len(case), dtype=np.int64) - start[case] + 1
    return case.astype(np.int64), pos, gain.astype(np.float64)


def case_levels(n: int, case: Ints, label: Ints) -> Ints:
    """Per case, the highest label >= 0 plus 1 (0 without one): trec_eval's
    ``num_rel_levels``."""
    levels = np.zeros(n, dtype=np.int64)
    if len(case):
        np.maximum.at(levels, case, label + 1)
    return levels


def _ideal_from_entries(pairs: tuple[Entry, ...], n: int, case: Ints, label: Ints
                        ) -> tuple[Ints, Floats]:
    levels = case_levels(n, case, label)
    width = int(levels.max()) if n else 0
    hist = np.zeros((n, max(width, 1)), dtype=np.int64)
    np.add.at(hist, (case, label), 1)
    out_case: list[Ints] = []
    out_gain: list[Floats] = []
    for lv in np.unique(levels):
        rows = np.flatnonzero(levels == lv)
        order = walk_order(pairs, int(lv))
        if not order or order[0][1] <= 0:
            continue  # trec_eval starts from the top entry's gain: no ideal ranking
        counts = np.zeros((len(rows), len(order)), dtype=np.int64)
        ended = np.zeros(len(rows), dtype=np.bool_)
        for e, (level, gain) in enumerate(order):
            have = hist[rows, level] if level < lv else np.zeros(len(rows), dtype=np.int64)
            ended |= (have > 0) & (gain <= 0)
            counts[:, e] = np.where(ended, 0, have)
        values = np.array([g for _, g in order])
        per_row = counts.sum(axis=1)
        out_case.append(np.repeat(rows, per_row))
        out_gain.append(np.repeat(np.tile(values, len(rows)), counts.ravel()))
    if not out_case:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    all_case = np.concatenate(out_case)
    order_idx = np.argsort(all_case, kind="stable")
    return all_case[order_idx], np.concatenate(out_gain)[order_idx]
