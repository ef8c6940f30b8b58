"""Diversity measures on subtopic qrels: alpha-nDCG@k and ERR-IA@k, as ndeval computes
them (the TREC Web track's ndeval 4.5, which ir_measures runs through pyndeval).

Judgments come from :mod:`evalkit_retrieval.subtopics` (``qid subtopic docno label``
qrels); ordinary qrels count as one subtopic per query. With ``rel`` the relevance
level (1 by default), a document covers subtopic ``j`` when its label for ``j`` is at
least ``rel`` (ndeval's judgments are binary). Only subtopics that some document covers
count (ndeval's ``actualSubtopics``, ``m`` below); a query with none scores 0.

For the ranking ``d_1, d_2, ...`` (evalkit's, the one every measure uses), with
``c_j(i)`` the number of documents above rank ``i`` that cover ``j``, the gain at rank
``i`` is ``G(i) = sum over the subtopics j that d_i covers of (1 - alpha) ** c_j(i)``
(Clarke et al., SIGIR 2008):

* ``alpha_ndcg(alpha=a)@k`` = ``sum_{i<=k} G(i) / log2(i + 1)``, divided by the same sum
  for the ideal ranking, which, as in ndeval, is the greedy one: at each rank the judged
  document of largest gain given those above it, a tie going to the larger docno
  (ndeval's ``strcmp``); 0 when the run's sum is 0;
* ``err_ia@k`` = ``sum_{i<=k} G(i) / i`` (alpha 0.5) over ``m * sum_{i<=k} 0.5 ** (i-1) / i``,
  ndeval's "ideal ideal" (collection-independent) normalisation of intent-aware ERR
  (Chapelle et al., CIKM 2009) with binary grades: each subtopic weighs 1/m and a
  covering document stops a user of that subtopic with probability 1/2.

Where evalkit differs from ndeval / pyndeval: any cut-off (ndeval stops at 20); at
``k = 1`` ERR-IA is normalised as at every other cut-off (ndeval leaves its first rank
unnormalised, so its ERR-IA@1 can exceed 1); unjudged documents and judged queries the
run lacks are as elsewhere in evalkit (not relevant; scored 0 under ``--missing zero``).
pyndeval ranks a run by score, ties by ascending docno; evalkit ranks ties as trec_eval
does (descending docno), so on tied scores the two can differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from evalkit.core.metric_names import canonical
from evalkit.core.specs import MetricFamily, MetricSpec
from evalkit_retrieval.definitions import VERSION, check_bool, check_level, check_number

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse

#: ndeval's and ir_measures' default alpha
ALPHA = 0.5


def _coverage(judgments: Mapping[str, int], rel: int
              ) -> tuple[list[str], dict[str, int], npt.NDArray[np.bool_]]:
    """``(judged docnos in ascending order, {docno: row}, rows x covered-subtopic
    matrix)``: the subtopics no document covers left out."""
    import numpy as np

    from evalkit_retrieval.subtopics import subtopics_of

    subs = subtopics_of(judgments)
    docs = sorted({str(d) for judged in subs.values() for d in judged})
    row = {d: i for i, d in enumerate(docs)}
    cover = np.zeros((len(docs), len(subs)), dtype=bool)
    for j, judged in enumerate(subs.values()):
        for doc, label in judged.items():
            if label >= rel:
                cover[row[str(doc)], j] = True
    return docs, row, cover[:, cover.any(axis=0)]


def _gains(cover: npt.NDArray[np.bool_], alpha: float) -> npt.NDArray[np.float64]:
    """``G(i)`` of each row of ``cover`` in order (a ranking's rows)."""
    import numpy as np

    seen: npt.NDArray[np.int64] = np.cumsum(cover, axis=0, dtype=np.int64) - cover
    gains: npt.NDArray[np.float64] = np.where(cover, (1.0 - alpha) ** seen, 0.0).sum(axis=1)
    return gains


def _ideal_gains(cover: npt.NDArray[np.bool_], alpha: float, k: int
                 ) -> npt.NDArray[np.float64]:
    """The gains of ndeval's greedy ideal ranking of every judged document, first ``k``."""
    import numpy as np

    n = len(cover)
    weight = np.ones(cover.shape[1])
    taken = np.zeros(n, dtype=bool)
    out = np.zeros(min(k, n))
    for rank in range(len(out)):
        scores = np.where(taken, -1.0, np.where(cover, weight, 0.0).sum(axis=1))
        best = n - 1 - int(np.argmax(scores[::-1]))  # a tie: the larger docno
        out[rank] = scores[best]
        taken[best] = True
        weight[cover[best]] *= 1.0 - alpha
    return out


def _top(ids: Sequence[str], judgments: Mapping[str, int], k: int, rel: int,
         judged_only: bool, alpha: float
         ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]] | None:
    """``(G(i) of the top k, every judged document's coverage rows)``; None when no
    subtopic is covered."""
    import numpy as np

    _, row, cover = _coverage(judgments, rel)
    if cover.shape[1] == 0:
        return None
    ranked = [str(d) for d in ids]
    if len(set(ranked)) != len(ranked):
        from evalkit_retrieval import core

        core.r_precision(ranked, ())  # raises the ValueError naming the repeated document
    if judged_only:
        ranked = [d for d in ranked if d in row]
    top = ranked[:k]
    rows = np.zeros((len(top), cover.shape[1]), dtype=bool)
    for i, doc in enumerate(top):
        if doc in row:
            rows[i] = cover[row[doc]]
    return _gains(rows, alpha), cover


def alpha_ndcg(ids: Sequence[str], judgments: Mapping[str, int], k: int, *,
               alpha: float = ALPHA, rel: int = 1, judged_only: bool = False) -> float:
    """alpha-nDCG@k of the ranking ``ids`` (see the module docstring), in [0, 1].

    Raises:
        ValueError: ``ids`` lists a document twice.
    """
    import numpy as np

    if (found := _top(ids, judgments, k, rel, judged_only, alpha)) is None:
        return 0.0
    discount = np.log(2.0) / np.log(np.arange(k) + 2.0)  # ndeval's discount(i)
    dcg = float(found[0] @ discount[:len(found[0])])
    if dcg == 0.0:
        return 0.0
    ideal = _ideal_gains(found[1], alpha, k)
    return dcg / float(ideal @ discount[:len(ideal)])


def err_ia(ids: Sequence[str], judgments: Mapping[str, int], k: int, *, rel: int = 1,
           judged_only: bool = False) -> float:
    """ERR-IA@k of the ranking ``ids`` with ndeval's collection-independent
    normalisation (see the module docstring), in [0, 1].

    Raises:
        ValueError: ``ids`` lists a document twice.
    """
    import numpy as np

    if (found := _top(ids, judgments, k, rel, judged_only, ALPHA)) is None:
        return 0.0
    gains, cover = found
    ranks = np.arange(1, k + 1, dtype=float)
    err = float((gains / ranks[:len(gains)]).sum())
    ideal_ideal = int(cover.shape[1]) * float(((1.0 - ALPHA) ** (ranks - 1) / ranks).sum())
    return err / ideal_ideal


# ------------------------------------------------------------------ the records
_ALPHA = check_number("alpha", 0.0, 1.0)
_JUDGED = check_bool("judged_only")
_DEFAULTS = {"alpha": ALPHA, "rel": 1, "judged_only": False}


def _spec(base: str, k: Any, given: Mapping[str, Any], description: str) -> MetricSpec:
    unknown = set(given) - set(_DEFAULTS) - ({"alpha"} if base == "alpha_ndcg" else set())
    if base == "err_ia" and "alpha" in given:
        unknown.add("alpha")
    if unknown:
        raise ValueError(f"{base} takes no parameter {', '.join(sorted(unknown))}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"{base}@k: k must be an integer >= 1, got {k!r}")
    values: dict[str, Any] = {"rel": check_level(given.get("rel", 1)),
                              "judged_only": _JUDGED(given.get("judged_only", False))}
    if base == "alpha_ndcg":
        values["alpha"] = _ALPHA(given.get("alpha", ALPHA))
    shown = {p: v for p, v in values.items() if v != _DEFAULTS[p]}

    def fn(response: TargetResponse, case: GoldenCase) -> float:
        ids = list(response.ranked_ids)
        if base == "alpha_ndcg":
            return alpha_ndcg(ids, case.relevance, k, **values)
        return err_ia(ids, case.relevance, k, **values)

    return MetricSpec(
        name=canonical(base, shown, k), fn=fn, higher_is_better=True,
        description=description.format(k=k), version=VERSION, family=base,
        needs=("relevance",), value_type="continuous", bounds=(0.0, 1.0), nonblocking=True)


_ALPHA_TEXT = ("alpha-nDCG@{k} on subtopic qrels (qid subtopic docno label): novelty-"
               "discounted gain (1-alpha)**(times the subtopic was seen), ndeval's greedy "
               "ideal (ndeval, Clarke et al. 2008; ir_measures alpha_nDCG@{k})")
_ERR_TEXT = ("ERR-IA@{k} on subtopic qrels (qid subtopic docno label): intent-aware ERR "
             "with binary grades, ndeval's collection-independent normalisation (ndeval, "
             "Chapelle et al. 2009; ir_measures ERR_IA@{k})")


def diversity_records() -> list[MetricSpec | MetricFamily]:
    """The families ``alpha_ndcg@k`` (aliases ir_measures' ``alpha_nDCG``) and
    ``err_ia@k`` (``ERR_IA``)."""
    return [
        MetricFamily(
            name="alpha_ndcg", higher_is_better=True, description=_ALPHA_TEXT.format(k="k"),
            factory=lambda k, **given: _spec("alpha_ndcg", k, given, _ALPHA_TEXT),
            version=VERSION, aliases=("alpha_nDCG",),
            params=("alpha", "rel", "judged_only"), value_type="continuous",
            bounds=(0.0, 1.0), needs=("relevance",)),
        MetricFamily(
            name="err_ia", higher_is_better=True, description=_ERR_TEXT.format(k="k"),
            factory=lambda k, **given: _spec("err_ia", k, given, _ERR_TEXT),
            version=VERSION, aliases=("ERR_IA",), params=("rel", "judged_only"),
            value_type="continuous", bounds=(0.0, 1.0), needs=("relevance",)),
    ]


__all__ = ["ALPHA", "alpha_ndcg", "diversity_records", "err_ia"]
