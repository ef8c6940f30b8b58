"""Every retrieval measure of the plugin, as the records its metrics hook returns.

The measures of trec_eval 10.0's ``-m all_trec`` (with trec_eval's cut-offs and
parameters), plus ERR@k (gdeval.pl) and Judged@k (ir_measures), each computed for a
whole evaluation at once from one shared :class:`~.state.RankingState`
(:mod:`.binary`, :mod:`.interpolated`, :mod:`.graded`; :mod:`.definitions` turns each into
a record). Today's measures keep their reference per-case functions (:mod:`.core`).

Names: canonical names (``precision@10``, ``ap``, ``ndcg(dcg=exp-log2)@10``), with
ir_measures' and trec_eval's spellings as aliases; ``rel=`` on any binary measure
overrides the run's relevance level. Judgments come from the
:class:`~evalkit.data.cases.GoldenCase`: ``case.relevant`` for binary measures at the run's
level, ``case.relevance`` (graded labels) for graded ones and for ``rel=``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from evalkit.core.specs import MetricFamily, MetricSpec, ValueType
from evalkit_retrieval import core
from evalkit_retrieval.definitions import (
    JUDGED_ONLY,
    REL,
    VERSION,
    CaseFn,
    Measure,
    Param,
    check_bool,
    check_choice,
    check_gains,
    check_int,
    check_number,
    check_recalls,
    prepare,
)

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse
    from evalkit_retrieval.gains import Gains
    from evalkit_retrieval.state import Floats, RankingState

__all__ = ["MEASURES", "VERSION", "case_gains", "metric_records", "prepare", "trec_eval_name"]


def case_gains(case: GoldenCase) -> Mapping[str, int] | frozenset[str]:
    """The gains nDCG uses: the graded labels, or gain 1 for each relevant id of a case
    that has no labels (a golden case listing only relevant ids)."""
    return case.relevance if case.relevance else case.relevant


def _ids(response: TargetResponse) -> list[str]:
    return list(response.ranked_ids)


def _gains(values: Mapping[str, Any]) -> Gains:
    from evalkit_retrieval.gains import Gains

    pairs = tuple(sorted((values.get("gains") or {}).items()))
    return Gains(pairs=pairs, exp=values.get("dcg") == "exp-log2")


# --------------------------------------------------------------- compute adapters
def _b(name: str, *extra: str) -> Callable[[RankingState, Any, Mapping[str, Any]], Floats]:
    """A binary measure of :mod:`.binary` or :mod:`.interpolated`: called with the state,
    the level, the cut-off (when it has one) and ``extra`` parameters."""
    def compute(s: RankingState, k: Any, v: Mapping[str, Any]) -> Floats:
        from evalkit_retrieval import binary, interpolated

        fn = getattr(binary, name, None) or getattr(interpolated, name)
        args = [v[e] for e in extra]
        return fn(s, v["rel"], *args) if k is None else fn(s, v["rel"], k, *args)  # type: ignore[no-any-return]

    return compute


def _log_of(name: str) -> Callable[[RankingState, Any, Mapping[str, Any]], Floats]:
    inner = _b(name)

    def compute(s: RankingState, k: Any, v: Mapping[str, Any]) -> Floats:
        from evalkit_retrieval.binary import log_floor

        return log_floor(inner(s, k, v))

    return compute


def _g(name: str) -> Callable[[RankingState, Any, Mapping[str, Any]], Floats]:
    """A graded measure of :mod:`.graded` taking gains (and a cut-off when it has one)."""
    def compute(s: RankingState, k: Any, v: Mapping[str, Any]) -> Floats:
        from evalkit_retrieval import graded

        fn = getattr(graded, name)
        if name in ("ndcg", "dcg"):
            return fn(s, _gains(v), k)  # type: ignore[no-any-return]
        if name == "rndcg":
            return graded.rndcg(s, _gains(v), s.num_rel_at(v["rel"]))
        if name == "rbp":
            return graded.rbp(s, _gains(v), v["p"])
        return fn(s, _gains(v))  # type: ignore[no-any-return]

    return compute


Compute = Callable[['RankingState', Any, Mapping[str, Any]], 'Floats']


def _c(fn: Callable[..., Floats], *extra: str) -> Compute:
    """A measure of :mod:`.graded` without gains: ``fn(state, [k,] *extra)``."""
    def compute(s: RankingState, k: Any, v: Mapping[str, Any]) -> Floats:
        args = [v[e] for e in extra]
        return fn(s, *args) if k is None else fn(s, k, *args)

    return compute


def _lazy(name: str) -> Callable[..., Floats]:
    def call(*args: Any) -> Floats:
        from evalkit_retrieval import graded

        return getattr(graded, name)(*args)  # type: ignore[no-any-return]

    return call


def _counts(name: str) -> Callable[[RankingState, Any, Mapping[str, Any]], Floats]:
    def compute(s: RankingState, k: Any, v: Mapping[str, Any]) -> Floats:
        from evalkit_retrieval import binary

        fn = getattr(binary, name)
        return fn(s) if name == "num_ret" else fn(s, v["rel"])  # type: ignore[no-any-return]

    return compute


# --------------------------------------------------------------- reference functions
def _cut_fn(core_fn: Callable[[list[str], Any, int], float], gains: bool = False
            ) -> Callable[[Any], CaseFn]:
    def make(k: Any) -> CaseFn:
        if gains:
            return lambda r, c: core_fn(_ids(r), case_gains(c), k)
        return lambda r, c: core_fn(_ids(r), c.relevant, k)

    return make


def _fixed_fn(fn: CaseFn) -> Callable[[Any], CaseFn]:
    return lambda k: fn


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


# --------------------------------------------------------------- parameters
GAINS = Param("gains", None, check_gains)
DCG = Param("dcg", "log2", check_choice("dcg", ("log2", "exp-log2")))
#: gm_map and gm_bpref's per-query values: ln(max(value, 0.00001)), value in [0, 1]
LOG_BOUNDS = (math.log(0.00001), 0.0)
RBP_P = Param("p", 0.9, check_number("p", 0.0, 1.0, open_low=True, open_high=True))
_DEFAULT_RECALLS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _num_ret_redirect(values: Mapping[str, Any]) -> MetricSpec | None:
    """ir_measures' ``NumRet(rel=2)`` counts the relevant retrieved: num_rel_ret(rel=2)."""
    return None if values["rel"] is None else _by_base["num_rel_ret"].spec(None, values)


def _set_p_redirect(values: Mapping[str, Any]) -> MetricSpec | None:
    """ir_measures' ``SetP(relative=True)`` is trec_eval's set_relative_P."""
    if not values.get("relative"):
        return None
    return _by_base["set_relative_p"].spec(
        None, {"rel": values["rel"], "judged_only": values["judged_only"]})


def _steps_of_one_over_k(k: Any) -> ValueType:
    """A count of documents in the top k over k: 0 or 1 at k = 1, else one of k + 1
    levels."""
    return "binary" if k == 1 else "discrete"


def _hits_value(k: Any) -> ValueType:
    """Hits@1 is 0 or 1; Hits@k a whole number from 0 to k."""
    return "binary" if k == 1 else "discrete"


def _binary_at_one(k: Any) -> ValueType:
    """RR@1 is 1 or 0 (the first document is relevant or not); RR@k is 1/rank or 0."""
    return "binary" if k == 1 else "continuous"


def _measures() -> list[Measure]:
    b, g = _b, _g
    dcg_text = "linear gains, log2(rank+1) discount"
    return [
        # ---- today's measures (names and per-case functions unchanged)
        Measure("precision", b("precision"), "Precision@{k}: relevant documents in the "
                "top {k} / {k} (trec_eval P_{k}, -m P.{k}; m_P.c)", (REL, JUDGED_ONLY),
                aliases=("P", "Precision"), cutoff="int", core=core.precision_at_k,
                fns=_cut_fn(core.precision_at_k), value_type=_steps_of_one_over_k),
        Measure("recall", b("recall"), "Recall@{k}: relevant documents in the top {k} / "
                "all relevant documents (trec_eval recall_{k}, -m recall.{k}; m_recall.c)",
                (REL, JUDGED_ONLY), aliases=("R", "Recall"), cutoff="int", core=core.recall_at_k,
                fns=_cut_fn(core.recall_at_k)),
        Measure("ndcg", g("ndcg"), "nDCG@{k}: " + dcg_text + ", ideal ranking cut at {k} "
                "(trec_eval ndcg_cut_{k}, -m ndcg_cut.{k}; m_ndcg_cut.c); dcg=exp-log2: "
                "gain 2**label - 1 (gdeval, ranx ndcg_burges@{k})", (DCG, GAINS, JUDGED_ONLY),
                aliases=("nDCG", "NDCG", "ndcg_cut", "ndcg_burges"), cutoff="int",
                presets={"ndcg_burges": {"dcg": "exp-log2"}}, core=core.ndcg_at_k,
                fns=_cut_fn(core.ndcg_at_k, gains=True)),
        Measure("rr", b("reciprocal_rank"), "RR@{k}: 1/rank of the first relevant "
                "document if within the top {k}, else 0 (trec_eval recip_rank with -M{k})",
                (REL, JUDGED_ONLY), aliases=("RR", "mrr", "MRR"), cutoff="int", core=core.rr_at_k,
                fns=_cut_fn(core.rr_at_k), value_type=_binary_at_one),
        Measure("ap", b("average_precision"), "AP@{k}: precision at each relevant "
                "document in the top {k}, summed, / all relevant documents (trec_eval "
                "map_cut_{k}, -m map_cut.{k}; m_map_cut.c)", (REL, JUDGED_ONLY),
                aliases=("AP", "map", "map_cut", "MAP"), cutoff="int", core=core.ap_at_k,
                fns=_cut_fn(core.ap_at_k)),
        Measure("success", b("success"), "Success@{k}: 1 if a relevant document is in the "
                "top {k}, else 0 (trec_eval success_{k}, -m success.{k}; m_success.c)",
                (REL, JUDGED_ONLY), aliases=("hit_rate", "Success"), cutoff="int",
                core=core.success_at_k, fns=_cut_fn(core.success_at_k),
                value_type="binary"),
        # ---- ranx's measures trec_eval lacks
        Measure("f1", b("f1"), "F1@{k}: 2 P R / (P + R) of P@{k} and R@{k} (ranx f1@{k})",
                (REL,), aliases=("F1",), cutoff="int"),
        Measure("dcg", g("dcg"), "DCG@{k}, not normalised: " + dcg_text + " (ranx "
                "dcg@{k}); dcg=exp-log2: gain 2**label - 1 (ranx dcg_burges@{k})",
                (DCG, GAINS), aliases=("DCG", "dcg_burges"), cutoff="int",
                presets={"dcg_burges": {"dcg": "exp-log2"}}, bounds=None),
        Measure("hits", b("hits"), "Hits@{k}: relevant documents in the top {k}, a count "
                "(ranx hits@{k})", (REL,), aliases=("Hits",), cutoff="int",
                value_type=_hits_value, bounds=None),
        Measure("ndcg", g("ndcg"), "nDCG over the whole ranking: " + dcg_text +
                " (trec_eval ndcg, -m ndcg; m_ndcg.c; gains= is -m ndcg.1=3,2=9); "
                "dcg=exp-log2: gain 2**label - 1 (ranx ndcg_burges)",
                (DCG, GAINS, JUDGED_ONLY), aliases=("nDCG", "NDCG", "ndcg_burges"),
                presets={"ndcg_burges": {"dcg": "exp-log2"}},
                fns=_fixed_fn(lambda r, c: core.ndcg(_ids(r), case_gains(c)))),
        Measure("rr", b("reciprocal_rank"), "Reciprocal rank of the first relevant "
                "document (trec_eval recip_rank; m_recip_rank.c); its mean is MRR",
                (REL, JUDGED_ONLY),
                aliases=("RR", "mrr", "MRR", "recip_rank"),
                fns=_fixed_fn(lambda r, c: core.reciprocal_rank(_ids(r), c.relevant))),
        Measure("ap", b("average_precision"), "Average precision (trec_eval map; "
                "m_map.c); its mean is MAP", (REL, JUDGED_ONLY), aliases=("AP", "map", "MAP"),
                fns=_fixed_fn(lambda r, c: core.average_precision(_ids(r), c.relevant))),
        Measure("r_precision", b("r_precision"), "R-precision: precision at rank R = "
                "number of relevant documents (trec_eval Rprec; m_Rprec.c)",
                (REL, JUDGED_ONLY),
                aliases=("Rprec", "RPrec", "r-precision"),
                fns=_fixed_fn(lambda r, c: core.r_precision(_ids(r), c.relevant))),
        Measure("num_ret", _counts("num_ret"), "Documents ranked for the query, after any "
                "depth cut (trec_eval num_ret; m_num_ret.c)", (REL,), kind="count",
                aliases=("num_retrieved", "NumRet"), fns=_fixed_fn(_num_ret),
                redirect=_num_ret_redirect),
        Measure("num_rel", _counts("num_rel"), "Relevant documents judged for the query "
                "at the relevance level (trec_eval num_rel; m_num_rel.c)", (REL,),
                kind="count", aliases=("num_relevant", "NumRel"), fns=_fixed_fn(_num_rel)),
        Measure("num_rel_ret", _counts("num_rel_ret"), "Relevant documents ranked "
                "(trec_eval num_rel_ret; m_num_rel_ret.c)", (REL,), kind="count",
                aliases=("num_relevant_retrieved", "NumRelRet"), fns=_fixed_fn(_num_rel_ret)),
        # ---- the rest of trec_eval's all_trec
        Measure("gm_map", _log_of("average_precision"), "Geometric mean AP (trec_eval "
                "gm_map; m_gm_map.c): per query ln(max(AP, 0.00001)), summarised as exp of "
                "the mean", (REL,), summary="exp_mean",
                bounds=LOG_BOUNDS),
        Measure("bpref", b("bpref"), "bpref (trec_eval bpref; m_bpref.c; Buckley and "
                "Voorhees 2004): judged non-relevant documents ranked above each relevant "
                "one, unjudged ones skipped", (REL,), aliases=("Bpref", "BPref")),
        Measure("iprec", b("iprec_at_recall"), "Interpolated precision at recall {k} "
                "(trec_eval iprec_at_recall_{k}; m_iprec_at_recall.c, 10.0's lround)",
                (REL, JUDGED_ONLY), aliases=("IPrec", "iprec_at_recall"), cutoff="float"),
        Measure("infap", b("infap"), "Inferred AP (trec_eval infAP; m_infap.c; Yilmaz "
                "and Aslam 2006): documents labelled < 0 are in the pool but unjudged",
                (REL,), aliases=("infAP", "InfAP"), bounds=None),
        Measure("gm_bpref", _log_of("bpref"), "Geometric mean bpref (trec_eval gm_bpref; "
                "m_gm_bpref.c): per query ln(max(bpref, 0.00001)), summarised as exp of the "
                "mean", (REL,), summary="exp_mean",
                bounds=LOG_BOUNDS),
        Measure("rprec_mult", b("rprec_mult"), "Precision at rank (long)({k} * R + 0.9) "
                "(trec_eval Rprec_mult_{k}; m_Rprec_mult.c)", (REL,),
                aliases=("Rprec_mult",), cutoff="float"),
        Measure("utility", b("utility", "coefficients"), "Set utility p1*a + p2*b + p3*c "
                "+ p4*d over relevant/non-relevant x retrieved/not (trec_eval utility; "
                "m_utility.c; -N taken as 0)",
                (REL, Param("coefficients", (1.0, -1.0, 0.0, 0.0), _four)), bounds=None),
        Measure("11pt_avg", b("eleven_point_average", "recalls"), "Interpolated precision "
                "averaged over recall levels 0.0, 0.1, ..., 1.0 (trec_eval 11pt_avg; "
                "m_11pt_avg.c)", (REL, Param("recalls", _DEFAULT_RECALLS, check_recalls))),
        Measure("bin_g", b("binary_g"), "Binary G: 1/log2(2 + non-relevant above) per "
                "relevant document, / R (trec_eval binG; m_binG.c)", (REL,),
                aliases=("binG",)),
        Measure("g", g("normalized_gain"), "Normalized gain G (trec_eval G; m_G.c)",
                (GAINS,), aliases=("G",), bounds=None),
        Measure("ndcg_rel", g("ndcg_rel"), "nDCG averaged over the relevant documents "
                "(trec_eval ndcg_rel; m_ndcg_rel.c)", (GAINS,)),
        Measure("rndcg", g("rndcg"), "nDCG averaged at the R levels (trec_eval Rndcg; "
                "m_Rndcg.c)", (REL, GAINS), aliases=("Rndcg",)),
        Measure("relative_precision", b("relative_precision"), "Relative precision@{k}: "
                "relevant in the top {k} / min({k}, R) (trec_eval relative_P_{k}; m_rel_P.c)",
                (REL,), aliases=("relative_P",), cutoff="int",
                value_type=_steps_of_one_over_k),
        Measure("set_p", b("set_precision"), "Set precision: relevant retrieved / "
                "retrieved (trec_eval set_P; m_set_P.c)",
                (REL, Param("relative", False, check_bool("relative")), JUDGED_ONLY),
                aliases=("set_P", "SetP"), redirect=_set_p_redirect),
        Measure("set_relative_p", b("set_relative_precision"), "Relative set precision: "
                "relevant retrieved / min(retrieved, R) (trec_eval set_relative_P; "
                "m_set_rel_P.c)", (REL, JUDGED_ONLY), aliases=("set_relative_P", "SetRelP")),
        Measure("set_recall", b("set_recall"), "Set recall: relevant retrieved / R "
                "(trec_eval set_recall; m_set_recall.c)", (REL,), aliases=("SetR",)),
        Measure("set_ap", b("set_ap"), "Set AP: relevant retrieved squared / (retrieved "
                "* R) (trec_eval set_map; m_set_map.c)", (REL, JUDGED_ONLY),
                aliases=("set_map", "SetAP")),
        Measure("set_f", b("set_f", "beta"), "Set F: (beta+1) P R / (beta P + R) "
                "(trec_eval set_F; m_set_F.c)",
                (REL, Param("beta", 1.0, check_number("beta", 0.0)), JUDGED_ONLY),
                aliases=("set_F", "SetF")),
        Measure("num_nonrel_judged_ret", _counts("num_nonrel_judged_ret"), "Judged "
                "non-relevant documents ranked (trec_eval num_nonrel_judged_ret; "
                "m_num_nonrel_judged_ret.c)", (REL,), kind="count", always=False),
        Measure("rbp", g("rbp"), "Rank-biased precision, persistence p (trec_eval rbp; "
                "m_rbp.c; Moffat and Zobel 2008; ir_measures' RBP is p=0.8)",
                (RBP_P, GAINS), aliases=("RBP",), presets={"RBP": {"p": 0.8}}, bounds=None),
        Measure("rbp_resid", _c(_lazy("rbp_residual"), "p"), "RBP's residual: how much "
                "RBP could rise if every unjudged retrieved document were relevant "
                "(trec_eval rbp_resid; m_rbp_resid.c)", (RBP_P,), kind="count",
                summary="mean", always=False),
        Measure("unj", _c(_lazy("unjudged")), "Unjudged documents in the top {k} / {k} "
                "(trec_eval unj_{k}; m_unjudged.c); lower is better covered",
                higher_is_better=False, cutoff="int", value_type=_steps_of_one_over_k),
        Measure("judged", _c(_lazy("judged")), "Judged documents in the top {k} / "
                "min({k}, ranked) (ir_measures Judged@{k})", aliases=("Judged",),
                cutoff="int", value_type=_steps_of_one_over_k),
        Measure("err", _c(_lazy("err"), "max"), "Expected reciprocal rank@{k} (gdeval.pl, "
                "TREC Web track; Chapelle et al. 2009): grades up to max (4)",
                (Param("max", 4, check_int("max", 1)),), aliases=("ERR",), cutoff="int"),
    ]


def _four(value: Any) -> tuple[float, ...]:
    if not isinstance(value, tuple | list) or len(value) != 4:
        raise ValueError(f"utility takes 4 coefficients (p1, p2, p3, p4), got {value!r}")
    return tuple(check_number("a utility coefficient")(v) for v in value)


MEASURES: list[Measure] = _measures()
_by_base: dict[str, Measure] = {m.base: m for m in MEASURES if m.cutoff is None}


def metric_records() -> list[MetricSpec | MetricFamily]:
    """Every metric and family of the plugin, as returned by its metrics hook."""
    return [m.record() for m in MEASURES]


def trec_eval_name(name: str) -> str | None:
    """The trec_eval measure a canonical metric name equals (``"precision@10"`` ->
    ``"P_10"``, ``"ap"`` -> ``"map"``), or None when trec_eval has no such measure
    (``rr@k``: trec_eval's ``recip_rank`` needs ``-M k`` instead); see
    :mod:`evalkit_retrieval.trec_names`."""
    from evalkit_retrieval.trec_names import trec_label

    return trec_label(name)
