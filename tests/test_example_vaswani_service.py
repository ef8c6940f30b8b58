"""End to end: the Vaswani search service on 127.0.0.1, evaluated over HTTP, then stopped.

Expected means: trec_eval's values (pytrec_eval 0.5, same BM25 rankings as a TREC run)
map 0.2177, ndcg_cut_10 0.3645, P_10 0.2849, recall_100 0.4668, recip_rank 0.6654.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from evalkit.data.cases import GoldenCase
from evalkit.data.results import RunResult
from evalkit.data.targets import TargetError

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "vaswani_service"
sys.path.insert(0, str(EXAMPLE))

from evaluate_service import evaluate_service, vaswani_goldens  # noqa: E402
from service import SearchService  # noqa: E402

TREC_EVAL = {"ap": 0.2177, "ndcg@10": 0.3645, "precision@10": 0.2849, "recall@100": 0.4668,
             "rr": 0.6654}


@pytest.fixture(scope="module")
def service() -> Iterator[SearchService]:
    svc = SearchService().start()
    yield svc
    svc.stop()


def test_service_evaluated_end_to_end_over_http(service: SearchService, tmp_path: Path) -> None:
    before = service.requests
    run = evaluate_service(service.url, tmp_path / "run.jsonl", max_concurrency=8)
    assert service.requests - before == 93
    assert run.header["status"] == "complete" and len(run.per_query) == 93
    for metric, value in TREC_EVAL.items():
        assert round(run.mean(metric), 4) == value, metric
    aggs = run.header["aggregates"]
    assert 0.0 < aggs["max_item_share@10"] <= 1.0 and 0.0 < aggs["entropy"] <= 1.0
    assert aggs["latency_p50"] <= aggs["latency_p95"]
    back = RunResult.load(tmp_path / "run.jsonl")
    assert back.scores("ndcg@10") == run.scores("ndcg@10")
    assert back.per_query[0].response.meta.keys() == {"took_ms"}


def test_same_rankings_through_trec_eval(service: SearchService) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    goldens = vaswani_goldens()
    run = {c.id: {h["id"]: float(h["score"]) for h in service.search(c.query, 1000)}
           for c in goldens}
    qrels = {c.id: dict(c.relevance) for c in goldens}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    http = evaluate_service(service.url, None, max_concurrency=4)
    for qid, values in per_query.items():
        assert http.scores("ndcg@10")[qid] == pytest.approx(values["ndcg_cut_10"], abs=1e-9)


def test_bad_requests_and_stop() -> None:
    from evalkit_http import HttpTarget

    with SearchService() as svc:
        url = svc.url
        assert httpx.get(f"{url}/health").json()["documents"] == 11429
        with HttpTarget(f"{url}/search", name="bad", build_payload=lambda c: {"k": 5},
                        retry_backoff_s=0) as target, \
                pytest.raises(TargetError, match="'bad' failed on case 'x': HTTP 400"):
            target.invoke(GoldenCase("x", "q"))
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"{url}/search", json={"query": "x"}, timeout=1)
