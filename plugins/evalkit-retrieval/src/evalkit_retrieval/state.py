"""The shared ranking work of a batch: one :class:`RankingState` per evaluation.

:func:`build_state` looks every judged document of every case up in its ranking once and
keeps, for the judged documents that were retrieved, their case, rank and label (the
documents trec_eval marks "not in pool" are the ranks in between); it keeps every case's
judgments too, sorted by label. Every measure of the plugin is then computed for all
cases at once with numpy from these arrays (:mod:`.binary`, :mod:`.interpolated`,
:mod:`.graded`), and what several measures need (relevant ranks at a relevance level,
gain tables) is computed once and cached on the state. Imported on first use, so that
loading the plugin does not import numpy.

Labels follow trec_eval: a label >= the relevance level is relevant, a label in
``[0, level)`` is judged non-relevant, a negative label is "in the pool but unjudged"
(``-1`` in qrels; infAP, bpref and the unjudged measures tell it apart).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
import numpy.typing as npt

from evalkit.execute.scoring import MetricError

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]


def case_labels(case: GoldenCase) -> Mapping[str, int]:
    """A case's graded labels, or label 1 for each relevant id of a case that has none
    (a golden case listing only relevant ids)."""
    return case.relevance if case.relevance else dict.fromkeys(case.relevant, 1)


@dataclass
class Hits:
    """Some retrieved judged documents (a selection of a state's), sorted by case, rank.

    Attributes:
        case, rank: the case index and 1-based rank of each.
        nth: each one's 1-based position among its case's selected documents.
        count: selected documents per case.
        start: index of each case's first one.
    """

    case: Ints
    rank: Ints
    nth: Ints
    count: Ints
    start: Ints


@dataclass
class RankingState:
    """What every retrieval measure needs, for ``n`` cases at once.

    Attributes:
        n: number of cases.
        num_ret: documents ranked per case (after any depth cut).
        num_rel: relevant documents per case at the run's level (``case.relevant``).
        j_case, j_rank, j_label, j_rel: every retrieved judged document: case index,
            1-based rank, label, and whether it is in ``case.relevant``; sorted by case
            then rank.
        q_case, q_label, q_rel: every judgment of every case (label, and whether the
            document is in ``case.relevant``), sorted by case then label descending.
    """

    n: int
    num_ret: Ints
    num_rel: Ints
    j_case: Ints
    j_rank: Ints
    j_label: Ints
    j_rel: Bools
    q_case: Ints
    q_label: Ints
    q_rel: Bools
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------------ helpers
    def cached(self, key: Any, make: Any) -> Any:
        """``make()``, computed once per state for ``key``."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def per_case(self, cases: Ints, weights: Floats | None = None) -> Floats:
        """Sum of ``weights`` (or a count) per case, in array order (trec_eval's order of
        summation when the array is in rank order)."""
        return np.bincount(cases, weights=weights, minlength=self.n).astype(np.float64)

    def divide(self, num: Floats, den: Any) -> Floats:
        """``num / den`` where ``den > 0``, else 0."""
        den = np.broadcast_to(np.asarray(den, dtype=np.float64), num.shape)
        out = np.zeros(self.n)
        np.divide(num, den, out=out, where=den > 0)
        return out

    def select(self, mask: Bools) -> Hits:
        """The retrieved judged documents where ``mask`` holds."""
        case = self.j_case[mask]
        count = np.bincount(case, minlength=self.n).astype(np.int64)
        start = np.cumsum(count) - count
        nth = np.arange(len(case), dtype=np.int64) - start[case] + 1
        return Hits(case=case, rank=self.j_rank[mask], nth=nth, count=count, start=start)

    # --------------------------------------------------------- relevance levels
    def rel_mask(self, level: int | None) -> Bools:
        """Relevant retrieved documents: in ``case.relevant`` (``level=None``, the run's
        relevance level) or labelled ``>= level``."""
        if level is None:
            return self.j_rel
        return self.cached(("rel_mask", level), lambda: self.j_label >= level)  # type: ignore[no-any-return]

    def nonrel_mask(self, level: int | None) -> Bools:
        """Judged non-relevant retrieved documents (label >= 0, not relevant)."""
        return self.cached(("nonrel_mask", level),  # type: ignore[no-any-return]
                           lambda: (self.j_label >= 0) & ~self.rel_mask(level))

    def relevant(self, level: int | None) -> Hits:
        """The relevant retrieved documents at ``level`` (see :meth:`rel_mask`)."""
        return self.cached(("relevant", level),  # type: ignore[no-any-return]
                           lambda: self.select(self.rel_mask(level)))

    def num_rel_at(self, level: int | None) -> Ints:
        """Relevant documents per case (trec_eval ``num_rel``) at ``level``."""
        if level is None:
            return self.num_rel

        def count() -> Ints:
            return np.bincount(self.q_case[self.q_label >= level], minlength=self.n
                               ).astype(np.int64)

        return self.cached(("num_rel", level), count)  # type: ignore[no-any-return]

    def num_nonrel_judged(self, level: int | None) -> Ints:
        """Judged non-relevant documents per case (label >= 0, not relevant)."""
        def count() -> Ints:
            rel = self.q_rel if level is None else self.q_label >= level
            keep = (self.q_label >= 0) & ~rel
            return np.bincount(self.q_case[keep], minlength=self.n).astype(np.int64)

        return self.cached(("num_nonrel", level), count)  # type: ignore[no-any-return]

    def hits(self, level: int | None, k: int | None = None) -> Floats:
        """Relevant documents retrieved per case (within the top ``k``)."""
        rel = self.relevant(level)
        if k is None:
            return rel.count.astype(np.float64)
        return self.per_case(rel.case[rel.rank <= k])

    def judged_only(self) -> RankingState:
        """This state with every retrieved document that is not judged (no label, or a
        label < 0) taken out of each ranking, the rest moved up in order: trec_eval's
        ``-J`` (form_res_rels.c, applied after the ``-M`` depth cut) and ir_measures'
        ``judged_only=True``, the condensed lists of Sakai (SIGIR 2007). ``num_ret``
        becomes the number of judged documents ranked; the judgments are unchanged."""
        def make() -> RankingState:
            keep = self.j_label >= 0
            hits = self.select(keep)
            return RankingState(
                n=self.n, num_ret=hits.count, num_rel=self.num_rel, j_case=hits.case,
                j_rank=hits.nth, j_label=self.j_label[keep], j_rel=self.j_rel[keep],
                q_case=self.q_case, q_label=self.q_label, q_rel=self.q_rel)

        return self.cached("judged_only", make)  # type: ignore[no-any-return]

    def judged_within(self, k: int, *, pool_only: bool) -> Floats:
        """Retrieved judged documents within the top ``k`` per case; ``pool_only``
        counts only those with a label >= 0 (trec_eval's judged), else every document
        of the qrels (ir_measures' judged)."""
        keep = self.j_rank <= k
        if pool_only:
            keep &= self.j_label >= 0
        return self.per_case(self.j_case[keep])


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
    j_count = np.zeros(n, dtype=np.int64)
    q_count = np.zeros(n, dtype=np.int64)
    j_rank: list[int] = []
    j_label: list[int] = []
    j_rel: list[bool] = []
    q_label: list[int] = []
    q_rel: list[bool] = []
    for i, (response, case) in enumerate(zip(responses, cases, strict=True)):
        ids = response.ranked_ids
        m = len(ids)
        rank_of = dict(zip(ids, range(1, m + 1), strict=True))
        if len(rank_of) != m:
            _raise_duplicate(ids, case)
        labels = case_labels(case)
        relevant = case.relevant
        num_ret[i] = m
        num_rel[i] = len(relevant)
        q_count[i] = len(labels)
        q_label.extend(labels.values())
        q_rel.extend(map(relevant.__contains__, labels))
        found = list(filter(rank_of.__contains__, labels))
        j_count[i] = len(found)
        j_rank.extend(map(rank_of.__getitem__, found))
        j_label.extend(map(labels.__getitem__, found))
        j_rel.extend(map(relevant.__contains__, found))
    index = np.arange(n, dtype=np.int64)
    try:
        q_labels = np.asarray(q_label, dtype=np.int64)
    except OverflowError:
        _raise_label_overflow(cases)
    return state_from(
        n, num_ret, num_rel,
        np.repeat(index, j_count), np.asarray(j_rank, dtype=np.int64),
        np.asarray(j_label, dtype=np.int64), np.asarray(j_rel, dtype=np.bool_),
        np.repeat(index, q_count), q_labels, np.asarray(q_rel, dtype=np.bool_),
    )


def _raise_label_overflow(cases: Sequence[GoldenCase]) -> NoReturn:
    """Name the first case whose judgments hold a label outside the 64-bit range (one
    built in Python: the loaders refuse such labels with their file and line), as a
    :class:`MetricError`: in a target run, that case's error on the retrieval metrics."""
    from evalkit.io.limits import label_problem

    for case in cases:
        for doc, label in case_labels(case).items():
            problem = label_problem(label)
            if problem is not None:
                raise MetricError(f"case {case.id!r}, document {doc!r}: {problem}")
    raise MetricError("a relevance label is outside the range of a 64-bit integer")


def state_from(n: int, num_ret: Ints, num_rel: Ints, jc: Ints, jr: Ints, jl: Ints,
               jrel: Bools, qc: Ints, ql: Ints, qrel: Bools) -> RankingState:
    """A :class:`RankingState` from its arrays in any order: the retrieved judged
    documents are sorted by case then rank, the judgments by case then label
    descending (both builders, :func:`build_state` and :mod:`.bulk_state`, end here)."""
    if len(jc):
        order = np.argsort(jc * (int(jr.max()) + 1) + jr, kind="stable")
        jc, jr, jl, jrel = jc[order], jr[order], jl[order], jrel[order]
    if len(qc):
        qorder = np.lexsort((-ql, qc))
        qc, ql, qrel = qc[qorder], ql[qorder], qrel[qorder]
    return RankingState(
        n=n, num_ret=num_ret, num_rel=num_rel, j_case=jc, j_rank=jr, j_label=jl,
        j_rel=jrel, q_case=qc, q_label=ql, q_rel=qrel,
    )


def _raise_duplicate(ids: Sequence[str], case: GoldenCase) -> None:
    first: dict[str, int] = {}
    for rank, doc in enumerate(ids, start=1):
        if doc in first:
            raise MetricError(
                f"case {case.id!r}: document {doc!r} appears twice in the ranked list "
                f"(ranks {first[doc]} and {rank}); a ranking may hold each document once"
            )
        first[doc] = rank
