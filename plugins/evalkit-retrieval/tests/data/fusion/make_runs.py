"""Make the three small Vaswani runs the fusion tests fuse (run from the repository root):

    .venv/bin/python plugins/evalkit-retrieval/tests/data/fusion/make_runs.py

* ``terrier.run``: the bundled Terrier BM25 run (examples/vaswani/data/runs);
* ``bm25.run``, ``tfidf.run``: the example's own BM25 and TF-IDF (examples/vaswani/retrieval.py);

each cut to its best 20 documents on the first 10 queries (by number) on which none of the
three has two equal scores among those 20 (ranx orders equal scores by an unstable sort,
evalkit by document id: see evalkit_retrieval.fusion).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[5]
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "examples" / "vaswani"))

import retrieval  # noqa: E402

DEPTH = 20
N_QUERIES = 10


def terrier() -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    path = ROOT / "examples/vaswani/data/runs/run.vaswani.bm25.txt"
    for line in path.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        out.setdefault(q, {})[d] = float(s)
    return out


def top(run: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(run.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:DEPTH]


def main() -> None:
    documents = retrieval.load_documents()
    queries = retrieval.load_queries()
    bm25, tfidf = retrieval.build(documents)
    runs = {"terrier": terrier(), "bm25": bm25.score_all(queries),
            "tfidf": tfidf.score_all(queries)}
    chosen: list[str] = []
    for q in sorted(runs["terrier"], key=int):
        tops = [top(run.get(q, {})) for run in runs.values()]
        if all(len(t) == DEPTH and len({s for _, s in t}) == DEPTH for t in tops):
            chosen.append(q)
        if len(chosen) == N_QUERIES:
            break
    for name, run in runs.items():
        lines = [f"{q} Q0 {d} {i} {s!r} {name}"
                 for q in chosen for i, (d, s) in enumerate(top(run[q]), start=1)]
        (HERE / f"{name}.run").write_text("\n".join(lines) + "\n")
    print("queries:", " ".join(chosen))


if __name__ == "__main__":
    main()
