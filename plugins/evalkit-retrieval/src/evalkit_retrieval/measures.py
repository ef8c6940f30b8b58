"""The retrieval metrics as evalkit records, each with a per-case and a vectorised path.

Per case, ``fn(response, case)`` calls the reference definitions of
:mod:`evalkit_retrieval.core` on ``response.ranked_ids`` and the case's judgments.

For a whole evaluation, :func:`prepare` (shared by every metric here, so it runs once)
reduces the rankings to the positions of the documents that matter: relevant documents
(binary measures) and documents with a positive label (nDCG), plus each case's ideal gains;
``batch`` functions then compute every case at once with numpy (:mod:`._vector`, imported
on first use). Both paths follow the trec_eval measures named in the descriptions and agree
to rounding error.

Judgments come from :class:`~evalkit.cases.GoldenCase`: ``case.relevant`` (labels at or above
the relevance level, trec_eval ``-l``) for binary measures, ``case.relevance`` (graded labels,
linear gains, labels <= 0 giving nothing; ``-l`` does not apply, as in trec_eval) for nDCG.
A case with ``relevance`` empty but ``relevant`` given counts gain 1 for each relevant id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalkit.specs import MetricFamily, MetricKind, MetricSpec
from evalkit_retrieval import core

if TYPE_CHECKING:
    from evalkit.cases import GoldenCase
    from evalkit.targets import TargetResponse
    from evalkit_retrieval._vector import Floats, RankingState

#: Definition version of every metric here; bump it when a value could change.
VERSION = "1"


def prepare(responses: Sequence[TargetResponse], cases: Sequence[GoldenCase]) -> RankingState:
    """Build the shared state of a batch (one for every metric of this plugin).

    See :func:`evalkit_retrieval._vector.build_state`; numpy is imported on first use.

    Raises:
        MetricError: a ranking lists a document twice (names the case, the document and
            both ranks).
    """
    from evalkit_retrieval._vector import build_state

    return build_state(responses, cases)


def case_gains(case: GoldenCase) -> Mapping[str, int] | frozenset[str]:
    """The gains nDCG uses: the graded labels, or gain 1 for each relevant id of a case
    that has no labels (a golden case listing only relevant ids)."""
    return case.relevance if case.relevance else case.relevant


# --------------------------------------------------------------------------- records
CaseFn = Callable[["TargetResponse", "GoldenCase"], float]
BatchFn = Callable[["RankingState"], "Floats"]


def _ids(response: TargetResponse) -> list[str]:
    return list(response.ranked_ids)


def _spec(
    name: str, fn: CaseFn, batch: BatchFn, description: str, *,
    aliases: tuple[str, ...] = (), kind: MetricKind = "metric", family: str | None = None,
) -> MetricSpec:
    return MetricSpec(
        name=name, fn=fn, higher_is_better=True, kind=kind, description=description,
        version=VERSION, aliases=aliases, prepare=prepare, batch=_as_list(batch),
        family=family, needs_judgments=kind == "metric",
    )


def _as_list(batch: BatchFn) -> Callable[[Any], Sequence[float]]:
    def run(state: Any) -> Sequence[float]:
        values: list[float] = batch(state).tolist()
        return values

    return run


def _family(
    name: str,
    make: Callable[[int], tuple[CaseFn, BatchFn]],
    core_fn: Callable[..., float],
    description: str,
    aliases: tuple[str, ...],
) -> MetricFamily:
    """``description`` is a template: ``{k}`` becomes the cut-off (``k`` for the family)."""

    def factory(k: int) -> MetricSpec:
        fn, batch = make(k)
        return _spec(f"{name}@{k}", fn, batch, description.format(k=k), family=name)

    return MetricFamily(
        name=name, factory=factory, higher_is_better=True,
        description=description.format(k="k"),
        version=VERSION, aliases=aliases, core=core_fn,
    )


def _precision(k: int) -> tuple[CaseFn, BatchFn]:
    return (lambda r, c: core.precision_at_k(_ids(r), c.relevant, k),
            lambda s: s.precision(k))


def _recall(k: int) -> tuple[CaseFn, BatchFn]:
    return (lambda r, c: core.recall_at_k(_ids(r), c.relevant, k),
            lambda s: s.recall(k))


def _success(k: int) -> tuple[CaseFn, BatchFn]:
    return (lambda r, c: core.success_at_k(_ids(r), c.relevant, k),
            lambda s: s.success(k))


def _ndcg_cut(k: int) -> tuple[CaseFn, BatchFn]:
    return (lambda r, c: core.ndcg_at_k(_ids(r), case_gains(c), k),
            lambda s: s.ndcg(k))


def _rr_cut(k: int) -> tuple[CaseFn, BatchFn]:
    return (lambda r, c: core.rr_at_k(_ids(r), c.relevant, k),
            lambda s: s.rr(k))


def _ap_cut(k: int) -> tuple[CaseFn, BatchFn]:
    return (lambda r, c: core.ap_at_k(_ids(r), c.relevant, k),
            lambda s: s.ap(k))


def _ndcg_full(r: TargetResponse, c: GoldenCase) -> float:
    return core.ndcg(_ids(r), case_gains(c))


def _rr_full(r: TargetResponse, c: GoldenCase) -> float:
    return core.reciprocal_rank(_ids(r), c.relevant)


def _ap_full(r: TargetResponse, c: GoldenCase) -> float:
    return core.average_precision(_ids(r), c.relevant)


def _rprec(r: TargetResponse, c: GoldenCase) -> float:
    return core.r_precision(_ids(r), c.relevant)


def _unique_ids(response: TargetResponse) -> list[str]:
    ids = _ids(response)
    if len(set(ids)) != len(ids):
        core.r_precision(ids, ())  # raises the ValueError naming the repeated document
    return ids


def _num_ret(r: TargetResponse, c: GoldenCase) -> float:
    return float(len(_unique_ids(r)))


def _num_rel(r: TargetResponse, c: GoldenCase) -> float:
    _unique_ids(r)  # a ranking with a repeated id is refused by every measure
    return float(len(c.relevant))


def _num_rel_ret(r: TargetResponse, c: GoldenCase) -> float:
    relevant = c.relevant
    return float(sum(1 for doc in _unique_ids(r) if doc in relevant))


_TREC_FIXED = {
    "ap": "map", "rr": "recip_rank", "ndcg": "ndcg", "r_precision": "Rprec",
    "num_ret": "num_ret", "num_rel": "num_rel", "num_rel_ret": "num_rel_ret",
}
_TREC_CUT = {
    "precision": "P_{k}", "recall": "recall_{k}", "ndcg": "ndcg_cut_{k}",
    "ap": "map_cut_{k}", "success": "success_{k}",
}


def trec_eval_name(name: str) -> str | None:
    """The trec_eval measure a canonical metric name equals (``"precision@10"`` ->
    ``"P_10"``, ``"ap"`` -> ``"map"``), or None when trec_eval has no such measure
    (``rr@k``: trec_eval's ``recip_rank`` needs ``-M k`` instead)."""
    if name in _TREC_FIXED:
        return _TREC_FIXED[name]
    family, _, k = name.partition("@")
    if k.isdigit() and family in _TREC_CUT:
        return _TREC_CUT[family].format(k=k)
    return None


def metric_records() -> list[MetricSpec | MetricFamily]:
    """Every metric and family of the plugin, as returned by its metrics hook."""
    return [
        _family("precision", _precision, core.precision_at_k,
                "Precision@{k}: relevant documents in the top {k} / {k} (trec_eval P_{k}, "
                "-m P.{k})", ("P",)),
        _family("recall", _recall, core.recall_at_k,
                "Recall@{k}: relevant documents in the top {k} / all relevant documents "
                "(trec_eval recall_{k}, -m recall.{k})", ("R",)),
        _family("ndcg", _ndcg_cut, core.ndcg_at_k,
                "nDCG@{k}: linear gains, log2(rank+1) discount, ideal ranking cut at {k} "
                "(trec_eval ndcg_cut_{k}, -m ndcg_cut.{k})", ("nDCG", "ndcg_cut")),
        _family("rr", _rr_cut, core.rr_at_k,
                "RR@{k}: 1/rank of the first relevant document if within the top {k}, "
                "else 0 (trec_eval recip_rank with -M{k})", ("RR", "mrr")),
        _family("ap", _ap_cut, core.ap_at_k,
                "AP@{k}: precision at each relevant document in the top {k}, summed, / all "
                "relevant documents (trec_eval map_cut_{k}, -m map_cut.{k})",
                ("AP", "map", "map_cut")),
        _family("success", _success, core.success_at_k,
                "Success@{k}: 1 if a relevant document is in the top {k}, else 0 "
                "(trec_eval success_{k}, -m success.{k})", ("hit_rate",)),
        _spec("ndcg", _ndcg_full, lambda s: s.ndcg(None),
              "nDCG over the whole ranking: linear gains, log2(rank+1) discount "
              "(trec_eval ndcg, -m ndcg)", aliases=("nDCG",)),
        _spec("rr", _rr_full, lambda s: s.rr(None),
              "Reciprocal rank of the first relevant document (trec_eval recip_rank, "
              "-m recip_rank); its mean is MRR", aliases=("RR", "mrr", "recip_rank")),
        _spec("ap", _ap_full, lambda s: s.ap(None),
              "Average precision (trec_eval map, -m map); its mean is MAP",
              aliases=("AP", "map")),
        _spec("r_precision", _rprec, lambda s: s.r_precision(),
              "R-precision: precision at rank R = number of relevant documents "
              "(trec_eval Rprec, -m Rprec)", aliases=("Rprec",)),
        _spec("num_ret", _num_ret, lambda s: s.num_ret.astype(float),
              "Documents ranked for the query, after any depth cut (trec_eval num_ret)",
              kind="count", aliases=("num_retrieved",)),
        _spec("num_rel", _num_rel, lambda s: s.num_rel.astype(float),
              "Relevant documents judged for the query at the relevance level "
              "(trec_eval num_rel)", kind="count", aliases=("num_relevant",)),
        _spec("num_rel_ret", _num_rel_ret, lambda s: s.hits(None),
              "Relevant documents ranked (trec_eval num_rel_ret)", kind="count",
              aliases=("num_relevant_retrieved",)),
    ]
