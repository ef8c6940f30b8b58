"""Per-query values of ranx's f1@k, dcg@k, dcg_burges@k and hits@k, stored in
``ranx_measures.json`` for test_measures_ranx.py (run from the repository root in an
environment with ranx installed; ranx is not a test dependency):

    .venv/bin/pip install ranx==0.3.21
    .venv/bin/python plugins/evalkit-retrieval/tests/data/ranx_measures/make_ranx_measures.py

* ``vaswani``: the bundled Terrier BM25 run on the Vaswani qrels (binary), its scores
  replaced by len - i in trec_eval's order (ranx orders equal scores its own way);
* ``dl19``: the TREC 2019 Deep Learning passage qrels (grades 0-3; NIST, via
  castorini/anserini-tools, gzipped here) and ``run.dl19-synthetic.txt``, made below: for
  each query its judged passages and as many unjudged ids, shuffled (random.Random(19)),
  the first 50 kept, scores 50, 49, ... (distinct).
"""

from __future__ import annotations

import gzip
import json
import random
from importlib.metadata import version
from pathlib import Path

from ranx import Qrels, Run, evaluate

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[4]
VASWANI = ROOT / "examples" / "vaswani" / "data"
KS = (1, 5, 10, 100)
METRICS = [f"{m}@{k}" for m in ("f1", "dcg", "dcg_burges", "hits") for k in KS]
LEVEL2 = ["f1@10-l2", "hits@10-l2"]  # relevant: grade >= 2


def read_qrels(text: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        q, _, d, label = line.split()
        out.setdefault(q, {})[d] = int(label)
    return out


def vaswani_run() -> dict[str, dict[str, float]]:
    scored: dict[str, dict[str, float]] = {}
    for line in (VASWANI / "runs" / "run.vaswani.bm25.txt").read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        scored.setdefault(q, {})[d] = float(s)
    out = {}
    for q, docs in scored.items():
        ranked = sorted(docs, key=lambda d: (docs[d], d), reverse=True)  # trec_eval's order
        out[q] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return out


def dl19_run(qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, float]]:
    rng = random.Random(19)
    out = {}
    for q, judged in qrels.items():
        pool = sorted(judged) + [f"unjudged-{q}-{i}" for i in range(len(judged))]
        rng.shuffle(pool)
        out[q] = {d: float(50 - i) for i, d in enumerate(pool[:50])}
    return out


def per_query(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]],
              metrics: list[str]) -> dict[str, dict[str, float]]:
    scores = evaluate(Qrels(qrels), Run(run), metrics, return_mean=False)
    qids = sorted(qrels)  # ranx's order of queries
    return {m: {q: float(v) for q, v in zip(qids, scores[m], strict=True)} for m in metrics}


def main() -> None:
    vq = read_qrels((VASWANI / "qrels").read_text())
    dq = read_qrels(gzip.decompress((HERE / "qrels.dl19-passage.txt.gz").read_bytes()).decode())
    drun = dl19_run(dq)
    (HERE / "run.dl19-synthetic.txt").write_text("".join(
        f"{q} Q0 {d} {i} {s:g} synthetic\n"
        for q, docs in drun.items() for i, (d, s) in enumerate(docs.items(), start=1)))
    out = {"ranx": version("ranx"),
           "vaswani": per_query(vq, vaswani_run(), METRICS),
           "dl19": per_query(dq, drun, METRICS + LEVEL2)}
    (HERE / "ranx_measures.json").write_text(json.dumps(out, indent=0) + "\n")


if __name__ == "__main__":
    main()
