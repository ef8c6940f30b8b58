"""Evaluate the Vaswani search service end to end over HTTP with evalkit.

Starts :class:`service.SearchService` on a free port of 127.0.0.1, builds the golden set
from the bundled queries and qrels, runs :func:`evalkit.evaluate` with an ``HttpTarget``
(8 calls in flight), writes the run artifact, prints the metric means and aggregates, and
stops the service. Run it from the repository root::

    .venv/bin/python examples/vaswani_service/evaluate_service.py
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from service import SearchService, retrieval  # noqa: E402  (both example modules)

from evalkit import GoldenCase, GoldenSet, HttpTarget, RunResult  # noqa: E402
from evalkit.execute.target_runner import evaluate  # noqa: E402

METRICS = ["ap", "ndcg@10", "precision@10", "recall@100", "rr"]
AGGREGATES = ["latency_p50", "latency_p95", "max_item_share@10", "entropy"]


def vaswani_goldens() -> GoldenSet:
    """One case per judged query: its text, and its relevant docnos as ``expected``."""
    qrels = retrieval.load_qrels()
    cases = []
    for q in retrieval.load_queries():
        relevant = sorted(qrels.get(q.id, set()))
        cases.append(GoldenCase(q.id, q.text, expected=relevant,
                                relevance={d: 1 for d in relevant},
                                relevant=frozenset(relevant)))
    return GoldenSet(cases)


def evaluate_service(url: str, artifact: Path | None = None, depth: int = 1000,
                     max_concurrency: int = 8) -> RunResult:
    """Run the golden set against the service at ``url`` (``POST {url}/search``)."""
    with HttpTarget(
        url=f"{url}/search",
        name="vaswani-bm25",
        build_payload=lambda case: {"query": case.query, "k": depth},
        extract=lambda body: [hit["id"] for hit in body["results"]],
        meta_keys=("took_ms",),
        timeout_s=10,
    ) as target:
        return evaluate(target, vaswani_goldens(), METRICS, AGGREGATES,
                        max_concurrency=max_concurrency, artifact=artifact, overwrite=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=HERE / "out" / "bm25-http.jsonl")
    args = parser.parse_args()
    with SearchService() as service:
        run = evaluate_service(service.url, args.out)
        calls = service.requests
    print(f"{len(run.per_query)} queries, {calls} HTTP calls, status {run.header['status']}")
    for name in METRICS:
        print(f"{name:<14}{run.mean(name):.4f}")
    for name, value in run.header["aggregates"].items():
        print(f"{name:<18}{value:.4f}")
    print(f"artifact: {args.out}")
    return 0 if run.header["status"] == "complete" else 1


if __name__ == "__main__":
    raise SystemExit(main())
