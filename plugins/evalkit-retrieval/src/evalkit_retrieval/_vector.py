"""The vectorised path of the retrieval metrics: one :class:`RankingState` per evaluation.

:func:`build_state` reduces every ranking to the positions of the documents that matter
(relevant ones for binary measures, positively labelled ones for nDCG) plus each case's
ideal gains; the methods of :class:`RankingState` then compute a measure for every case at
once with numpy. Imported on first use, so that loading the plugin does not import numpy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from evalkit.scoring import MetricError
from evalkit_retrieval.measures import case_gains

if TYPE_CHECKING:
    from evalkit.cases import GoldenCase
    from evalkit.targets import TargetResponse

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass
class RankingState:
    """What every retrieval metric needs, for ``n`` cases at once.

    Attributes:
        n: number of cases.
        num_ret: documents ranked per case (after any depth cut).
        num_rel: relevant documents per case (binary, ``case.relevant``).
        rel_case, rel_rank: every relevant ranked document as (case index, 1-based rank),
            sorted by case then rank.
        gain_case, gain_rank, gain: every ranked document with a positive gain.
        ideal_case, ideal_pos, ideal_gain: each case's positive gains sorted descending,
            with their 1-based position in the ideal ranking.
    """

    n: int
    num_ret: Ints
    num_rel: Ints
    rel_case: Ints
    rel_rank: Ints
    gain_case: Ints
    gain_rank: Ints
    gain: Floats
    ideal_case: Ints
    ideal_pos: Ints
    ideal_gain: Floats
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    # ---- derived, cached
    def _rel_counts(self) -> tuple[Ints, Ints]:
        if "counts" not in self._cache:
            counts = np.bincount(self.rel_case, minlength=self.n).astype(np.int64)
            start = np.cumsum(counts) - counts
            self._cache["counts"] = (counts, start)
        return self._cache["counts"]  # type: ignore[no-any-return]

    def _precision_terms(self) -> Floats:
        """Precision at each relevant ranked document (the terms of AP)."""
        if "prec" not in self._cache:
            _, start = self._rel_counts()
            nth = np.arange(len(self.rel_case)) - start[self.rel_case] + 1
            self._cache["prec"] = nth / self.rel_rank
        return self._cache["prec"]  # type: ignore[no-any-return]

    def _per_case(self, cases: Ints, weights: Floats | None = None) -> Floats:
        return np.bincount(cases, weights=weights, minlength=self.n).astype(np.float64)

    def _over_num_rel(self, values: Floats) -> Floats:
        out = np.zeros(self.n)
        np.divide(values, self.num_rel, out=out, where=self.num_rel > 0)
        return out

    # ---- measures (k=None: no cut-off)
    def hits(self, k: int | None) -> Floats:
        if k is None:
            return self._rel_counts()[0].astype(np.float64)
        return self._per_case(self.rel_case[self.rel_rank <= k])

    def precision(self, k: int) -> Floats:
        return self.hits(k) / k

    def recall(self, k: int) -> Floats:
        return self._over_num_rel(self.hits(k))

    def success(self, k: int) -> Floats:
        return (self.hits(k) > 0).astype(np.float64)

    def rr(self, k: int | None) -> Floats:
        counts, start = self._rel_counts()
        has = counts > 0
        first = np.zeros(self.n, dtype=np.int64)
        first[has] = self.rel_rank[start[has]]
        if k is not None:
            has &= first <= k
        out = np.zeros(self.n)
        np.divide(1.0, first, out=out, where=has)
        return out

    def ap(self, k: int | None) -> Floats:
        terms = self._precision_terms()
        if k is None:
            total = self._per_case(self.rel_case, terms)
        else:
            keep = self.rel_rank <= k
            total = self._per_case(self.rel_case[keep], terms[keep])
        return self._over_num_rel(total)

    def r_precision(self) -> Floats:
        keep = self.rel_rank <= self.num_rel[self.rel_case]
        return self._over_num_rel(self._per_case(self.rel_case[keep]))

    def ndcg(self, k: int | None) -> Floats:
        disc = self.gain / np.log2(self.gain_rank + 1.0)
        ideal = self.ideal_gain / np.log2(self.ideal_pos + 1.0)
        if k is None:
            dcg = self._per_case(self.gain_case, disc)
            idcg = self._per_case(self.ideal_case, ideal)
        else:
            keep = self.gain_rank <= k
            dcg = self._per_case(self.gain_case[keep], disc[keep])
            ikeep = self.ideal_pos <= k
            idcg = self._per_case(self.ideal_case[ikeep], ideal[ikeep])
        out = np.zeros(self.n)
        np.divide(dcg, idcg, out=out, where=idcg > 0)
        return out


def build_state(responses: Sequence[TargetResponse], cases: Sequence[GoldenCase]
                ) -> RankingState:
    """The :class:`RankingState` of a batch of (response, case) pairs.

    Raises:
        MetricError: a ranking lists a document twice (names the case, the document and
            both ranks).
    """
    n = len(cases)
    num_ret = np.zeros(n, dtype=np.int64)
    num_rel = np.zeros(n, dtype=np.int64)
    n_rel_hits = np.zeros(n, dtype=np.int64)
    n_gain_hits = np.zeros(n, dtype=np.int64)
    n_ideal = np.zeros(n, dtype=np.int64)
    rel_rank: list[int] = []
    gain_rank: list[int] = []
    gain: list[int] = []
    ideal_gain: list[int] = []
    positive = (0).__lt__
    for i, (response, case) in enumerate(zip(responses, cases, strict=True)):
        ids = response.ranked_ids
        m = len(ids)
        rank_of = dict(zip(ids, range(1, m + 1), strict=True))
        if len(rank_of) != m:
            _raise_duplicate(ids, case)
        num_ret[i] = m
        relevant = case.relevant
        num_rel[i] = len(relevant)
        ranked = rank_of.__contains__
        rank = rank_of.__getitem__
        hits = list(filter(ranked, relevant))
        n_rel_hits[i] = len(hits)
        rel_rank.extend(map(rank, hits))
        gains = case_gains(case)
        if isinstance(gains, Mapping):
            label = gains.__getitem__
            pos_docs = list(compress(gains, map(positive, gains.values())))
            pos_gains = sorted(map(label, pos_docs), reverse=True)
        else:
            pos_docs = list(gains)
            pos_gains = [1] * len(pos_docs)
            label = _one
        n_ideal[i] = len(pos_gains)
        ideal_gain.extend(pos_gains)
        ghits = list(filter(ranked, pos_docs))
        n_gain_hits[i] = len(ghits)
        gain_rank.extend(map(rank, ghits))
        gain.extend(map(label, ghits))
    case_index = np.arange(n, dtype=np.int64)
    rc = np.repeat(case_index, n_rel_hits)
    rr = np.asarray(rel_rank, dtype=np.int64)
    if len(rc):
        order = np.argsort(rc * (int(rr.max()) + 1) + rr, kind="stable")
        rc, rr = rc[order], rr[order]
    ideal_case = np.repeat(case_index, n_ideal)
    ideal_start = np.cumsum(n_ideal) - n_ideal
    return RankingState(
        n=n, num_ret=num_ret, num_rel=num_rel, rel_case=rc, rel_rank=rr,
        gain_case=np.repeat(case_index, n_gain_hits),
        gain_rank=np.asarray(gain_rank, dtype=np.int64),
        gain=np.asarray(gain, dtype=np.float64),
        ideal_case=ideal_case,
        ideal_pos=np.arange(len(ideal_case), dtype=np.int64) - ideal_start[ideal_case] + 1,
        ideal_gain=np.asarray(ideal_gain, dtype=np.float64),
    )


def _one(doc: str) -> int:
    return 1


def _raise_duplicate(ids: Sequence[str], case: GoldenCase) -> None:
    first: dict[str, int] = {}
    for rank, doc in enumerate(ids, start=1):
        if doc in first:
            raise MetricError(
                f"case {case.id!r}: document {doc!r} appears twice in the ranked list "
                f"(ranks {first[doc]} and {rank}); a ranking may hold each document once"
            )
        first[doc] = rank
