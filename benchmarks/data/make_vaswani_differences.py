"""Per-query differences of several pairs of Vaswani systems, for bench_calibration.py.

Builds the systems with the example's retrieval code (``examples/vaswani/retrieval.py``):
BM25 at four settings of ``k1`` and ``b``, TF-IDF (cosine), BM25 on a subset of each
query's terms, and the bundled Terrier BM25 run; scores each with ``evaluate_run`` against
the collection's qrels; and writes, for every pair below and every measure, the 93
per-query differences ``a - b`` (sorted by query id) to ``vaswani_differences.json``
beside this file. The benchmark reads that file, so it never re-runs retrieval.

    .venv/bin/python benchmarks/data/make_vaswani_differences.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).with_name("vaswani_differences.json")

#: The measures written, with the names the benchmark uses.
MEASURES = {"AP": "AP", "nDCG@10": "nDCG@10", "RR": "RR", "P@1": "P@1", "P@10": "P@10"}

#: (a, b) pairs: close and distant systems, so the pools range from mostly-zero to spread.
PAIRS = (
    ("bm25", "tfidf"),
    ("terrier", "bm25"),
    ("bm25", "bm25-k0.6-b0.3"),
    ("bm25-k2.0-b0.9", "bm25"),
    ("bm25-k0.6-b0.3", "tfidf"),
    ("bm25", "bm25-half-query"),
    ("tfidf", "bm25-half-query"),
)


def main() -> int:
    sys.path.insert(0, str(ROOT / "examples" / "vaswani"))
    import retrieval  # type: ignore[import-not-found, unused-ignore]

    from evalkit import evaluate_run

    data = retrieval.DATA_DIR
    queries = retrieval.load_queries()
    index = retrieval.Index(retrieval.load_documents())

    def half(q: retrieval.Query) -> retrieval.Query:
        """The query's terms of above-median document frequency left out (the rarer half
        kept, at least one term)."""
        toks = [t for t in retrieval.tokenize(q.text) if t in index.vocab]
        if len(toks) < 2:
            return q
        by_df = sorted(toks, key=lambda t: (index.df[index.vocab[t]], t))
        keep = set(by_df[: (len(toks) + 1) // 2])
        return retrieval.Query(q.id, " ".join(t for t in toks if t in keep))

    systems = {
        "bm25": (retrieval.BM25(index), queries),
        "bm25-k0.6-b0.3": (retrieval.BM25(index, k1=0.6, b=0.3), queries),
        "bm25-k2.0-b0.9": (retrieval.BM25(index, k1=2.0, b=0.9), queries),
        "tfidf": (retrieval.TfIdf(index), queries),
        "bm25-half-query": (retrieval.BM25(index), [half(q) for q in queries]),
    }
    metrics = list(MEASURES)
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (system, qs) in systems.items():
            f = retrieval.write_trec_run(Path(tmp) / f"{name}.txt", system.score_all(qs),
                                         tag=name)
            runs[name] = evaluate_run(f, data / "qrels", metrics)
    runs["terrier"] = evaluate_run(data / "runs" / "run.vaswani.bm25.txt", data / "qrels",
                                   metrics)
    ids = sorted(runs["bm25"].scores(runs["bm25"].metric_names()[0]))
    pools = []
    for a, b in PAIRS:
        for k, label in enumerate(MEASURES.values()):
            canon = runs[a].metric_names()[k]
            sa, sb = runs[a].scores(canon), runs[b].scores(canon)
            pools.append({"a": a, "b": b, "measure": label,
                          "differences": [round(sa[q] - sb[q], 12) for q in ids]})
    OUT.write_text(json.dumps({
        "source": "benchmarks/data/make_vaswani_differences.py",
        "collection": "Vaswani (NPL), examples/vaswani/data",
        "query_ids": ids,
        "pools": pools,
    }, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(pools)} pools of {len(ids)} differences to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
