"""The plugin's metric records: names, aliases, provenance, and the two scoring paths."""

from __future__ import annotations

import random

import pytest
from evalkit_retrieval import core
from evalkit_retrieval.measures import metric_records, trec_eval_name

from evalkit import GoldenCase, TargetResponse
from evalkit.core.registry import Registry
from evalkit.core.specs import MetricFamily, MetricSpec
from evalkit.execute.run_retriever import METRICS
from evalkit.execute.scoring import score_cases
from evalkit.plugins.default import default_registry, resolve, use_registry

ALIASES = {
    "recall@10": "recall@10", "R@10": "recall@10",
    "precision@5": "precision@5", "P@5": "precision@5",
    "ndcg@10": "ndcg@10", "nDCG@10": "ndcg@10", "ndcg_cut@10": "ndcg@10",
    "ndcg": "ndcg", "nDCG": "ndcg",
    "rr": "rr", "RR": "rr", "mrr": "rr", "MRR": "rr", "recip_rank": "rr",
    "rr@10": "rr@10", "RR@10": "rr@10", "mrr@10": "rr@10",
    "ap": "ap", "AP": "ap", "map": "ap", "MAP": "ap",
    "ap@100": "ap@100", "AP@100": "ap@100", "map@100": "ap@100", "map_cut@100": "ap@100",
    "success@5": "success@5", "hit_rate@5": "success@5",
    "r_precision": "r_precision", "Rprec": "r_precision",
    "num_rel": "num_rel", "num_relevant": "num_rel",
    "num_ret": "num_ret", "num_rel_ret": "num_rel_ret",
    "F1@10": "f1@10", "DCG@5": "dcg@5", "dcg_burges@10": "dcg(dcg=exp-log2)@10",
    "Hits@3": "hits@3",
}


@pytest.mark.parametrize(("alias", "canonical"), sorted(ALIASES.items()))
def test_aliases_resolve_to_canonical_names(alias: str, canonical: str) -> None:
    assert resolve(alias).name == canonical


def metric_spec(name: str) -> MetricSpec:
    spec = resolve(name)
    assert isinstance(spec, MetricSpec)
    return spec


def test_every_record_declares_polarity_description_and_version() -> None:
    records = metric_records()
    assert {r.name for r in records} == {
        "precision", "recall", "ndcg", "rr", "ap", "success", "r_precision",
        "num_ret", "num_rel", "num_rel_ret",
        "gm_map", "bpref", "iprec", "infap", "gm_bpref", "rprec_mult", "utility",
        "11pt_avg", "bin_g", "g", "ndcg_rel", "rndcg", "relative_precision", "set_p",
        "set_relative_p", "set_recall", "set_ap", "set_f", "num_nonrel_judged_ret", "rbp",
        "rbp_resid", "unj", "judged", "err", "f1", "dcg", "hits"}
    lower_is_better = {"unj"}
    for record in records:
        assert record.higher_is_better is (record.name not in lower_is_better)
        assert ("trec_eval" in record.description or "ranx" in record.description
                or record.name in ("judged", "err"))
        assert record.version == "1"
    counts = {r.name for r in records if isinstance(r, MetricSpec) and r.kind == "count"}
    assert counts == {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret",
                      "rbp_resid"}
    always = {r.name for r in records if isinstance(r, MetricSpec) and r.kind == "count"
              and r.always}
    assert always == {"num_ret", "num_rel", "num_rel_ret"}
    families = {r.name: r for r in records if isinstance(r, MetricFamily)}
    assert families["recall"].core is core.recall_at_k
    spec = families["precision"].factory(10)
    assert spec.name == "precision@10" and spec.family == "precision"
    assert "P_10" in spec.description


def test_provided_by_the_plugin_distribution() -> None:
    provider = default_registry().provider_of("nDCG@10")
    assert provider.distribution == "evalkit-retrieval"
    assert default_registry().polarity("map") is True


def test_seed_metrics_table_sees_the_families() -> None:
    assert METRICS["recall"] is core.recall_at_k
    assert {"recall", "precision", "ndcg", "rr", "ap", "success"} <= set(METRICS)


def test_register_retrieval_metric_as_the_seed_writes_it() -> None:
    from evalkit.metrics.core import recall_at_k
    from evalkit.metrics.retrieval import register_retrieval_metric

    with use_registry() as reg:
        assert isinstance(reg, Registry)
        register_retrieval_metric("recall", recall_at_k, 50, higher_is_better=True)
        register_retrieval_metric("recall", recall_at_k, 50, higher_is_better=True)  # no-op
        spec = reg.resolve("recall@50")
        assert isinstance(spec, MetricSpec)
        case = GoldenCase.from_judgments("q", {"a": 1, "b": 1})
        assert spec.fn(TargetResponse(ranked_ids=["a", "c"]), case) == 0.5


ALL_METRICS = [
    "P@1", "P@3", "P@10", "recall@1", "recall@5", "recall@50", "ndcg@1", "ndcg@4",
    "ndcg@20", "ndcg", "rr", "rr@1", "rr@3", "ap", "ap@2", "ap@10", "success@1",
    "success@3", "r_precision", "num_ret", "num_rel", "num_rel_ret",
]


def _random_batch(seed: int) -> tuple[list[TargetResponse], list[GoldenCase]]:
    rng = random.Random(seed)
    responses: list[TargetResponse] = []
    cases: list[GoldenCase] = []
    for i in range(60):
        pool = [f"d{j}" for j in range(rng.randint(0, 40))]
        ranked = rng.sample(pool, rng.randint(0, len(pool)))
        # at least one judgment: a case with none is refused before scoring (test_case_needs)
        judged = rng.sample([*pool, "x1", "x2", "x3"], rng.randint(1, len(pool) + 3))
        labels = {d: rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in judged}
        level = rng.choice([1, 1, 2, 3])
        responses.append(TargetResponse(ranked_ids=ranked))
        if i % 7 == 0:  # a golden case with relevant ids but no graded labels
            cases.append(GoldenCase(id=f"q{i}", relevant=frozenset(judged[:3])))
        else:
            cases.append(GoldenCase.from_judgments(f"q{i}", labels, relevance_level=level))
    return responses, cases


@pytest.mark.parametrize("seed", range(5))
def test_batch_path_agrees_with_per_case_functions(seed: int) -> None:
    responses, cases = _random_batch(seed)
    specs = [metric_spec(m) for m in ALL_METRICS]
    assert all(s.batch is not None for s in specs)
    batch = score_cases(responses, cases, specs)
    for response, case, values in zip(responses, cases, batch, strict=True):
        for spec in specs:
            expected = spec.fn(response, case)
            assert values[spec.name] == pytest.approx(expected, abs=1e-12), (case.id, spec.name)
            assert 0.0 <= values[spec.name] <= (1.0 if spec.kind == "metric" else 10**6)


def test_metrics_share_one_prepared_state() -> None:
    specs = [metric_spec(m) for m in ALL_METRICS]
    prepares = {id(s.prepare) for s in specs}
    assert len(prepares) == 1


def test_ndcg_ignores_the_relevance_level_like_trec_eval() -> None:
    judged = {"a": 1, "b": 2}
    level2 = GoldenCase.from_judgments("q", judged, relevance_level=2)
    level1 = GoldenCase.from_judgments("q", judged, relevance_level=1)
    response = TargetResponse(ranked_ids=["a", "b"])
    ndcg = metric_spec("ndcg")
    assert ndcg.fn(response, level2) == ndcg.fn(response, level1)
    assert metric_spec("P@1").fn(response, level2) == 0.0
    assert metric_spec("P@1").fn(response, level1) == 1.0


def test_trec_eval_names() -> None:
    expected = {"precision@10": "P_10", "recall@100": "recall_100", "ndcg@5": "ndcg_cut_5",
                "ndcg": "ndcg", "ap": "map", "ap@10": "map_cut_10", "rr": "recip_rank",
                "success@1": "success_1", "r_precision": "Rprec", "num_rel": "num_rel",
                "rr@10": None, "latency_p95": None}
    for name, trec in expected.items():
        assert trec_eval_name(name) == trec
