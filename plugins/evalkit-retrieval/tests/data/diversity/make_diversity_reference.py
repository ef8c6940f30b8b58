"""Make the subtopic qrels of this folder and store what ir_measures (through its
pyndeval provider, ndeval's C code) computes on them in ``ir_measures_diversity.json``.
Run from the repository root, in an environment with pyndeval (not a test dependency):

    .venv/bin/pip install pyndeval==0.0.8
    .venv/bin/python plugins/evalkit-retrieval/tests/data/diversity/make_diversity_reference.py

* ``vaswani.subtopics.qrels``: the Vaswani qrels given subtopics by a fixed rule on the
  document number (below), some labels 2, judged non-relevant documents (the 2nd and 6th
  document of the bundled BM25 run when not relevant) and two queries (5, 9) whose
  judgments are all 0;
* ``edge.qrels`` / ``edge.run``: hand-made cases (tied scores, unjudged documents, a query
  without relevant documents, a run shorter than the cut-off, a document covering
  several subtopics, ideal-ranking ties, a judged query the run lacks, a run query
  without judgments).

Each run is ranked here as trec_eval ranks it (score descending, ties by docno
descending), and handed to ir_measures with score = -rank, so that pyndeval (which
breaks ties by ascending docno) sees the same order evalkit evaluates.
"""

from __future__ import annotations

import json
from collections import defaultdict
from importlib.metadata import version
from pathlib import Path

import ir_measures

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[4]
VASWANI = REPO / "examples" / "vaswani" / "data"
FUSION = HERE.parent / "fusion"
RUNS = {
    "bm25": VASWANI / "runs" / "run.vaswani.bm25.txt",
    "fusion_tfidf": FUSION / "tfidf.run",
    "fusion_terrier": FUSION / "terrier.run",
}
MEASURES = [
    "alpha_nDCG@2", "alpha_nDCG@5", "alpha_nDCG@10", "alpha_nDCG@20",
    "alpha_nDCG(alpha=0.3)@10", "alpha_nDCG(alpha=0.9)@20", "alpha_nDCG(rel=2)@10",
    "alpha_nDCG(judged_only=True)@10",
    "ERR_IA@2", "ERR_IA@5", "ERR_IA@10", "ERR_IA@20", "ERR_IA(rel=2)@20",
    "ERR_IA(judged_only=True)@10",
]

EDGE_QRELS = """\
# 101: tied scores across subtopics; 102: unjudged documents; 103: no relevant document
101 1 a 1
101 2 b 1
101 1 c 0
101 3 d 1
102 1 e 1
102 2 f 1
102 2 g 2
103 1 h 0
103 2 i 0
# 104: a run shorter than the cut-offs; 105: one document covering every subtopic, and
# documents tied in the ideal ranking (equal gains, broken by docno)
104 1 j 1
104 2 k 1
104 3 l 1
105 1 m 1
105 2 m 1
105 3 m 1
105 1 n 1
105 2 o 1
105 3 p 1
105 1 q 1
# 106: judged, not in the run (scored 0 by both; 107, in the run only, by neither)
106 1 r 1
"""

EDGE_RUN = """\
101 Q0 a 1 2.0 edge
101 Q0 d 2 2.0 edge
101 Q0 b 3 2.0 edge
101 Q0 c 4 1.0 edge
101 Q0 zz 5 1.0 edge
102 Q0 u1 1 9.0 edge
102 Q0 f 2 8.0 edge
102 Q0 u2 3 7.0 edge
102 Q0 g 4 6.0 edge
102 Q0 e 5 5.0 edge
103 Q0 h 1 3.0 edge
103 Q0 i 2 2.0 edge
104 Q0 k 1 1.0 edge
105 Q0 q 1 5.0 edge
105 Q0 n 2 4.0 edge
105 Q0 p 3 3.0 edge
105 Q0 m 4 2.0 edge
105 Q0 o 5 1.0 edge
107 Q0 a 1 1.0 edge
"""


def read_run(path: Path) -> dict[str, list[tuple[str, float]]]:
    """Each query's documents in trec_eval's order: score descending, docno descending."""
    by_query: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            by_query[fields[0]].append((fields[2], float(fields[4])))
    return {q: sorted(docs, key=lambda d: (d[1], d[0]), reverse=True)
            for q, docs in by_query.items()}


def vaswani_subtopics() -> str:
    """The Vaswani qrels with subtopics: a relevant document d covers subtopic
    1 + d % 3, and also 4 when d % 4 == 0; its label is 2 when d % 5 == 0, else 1."""
    bm25 = read_run(RUNS["bm25"])
    lines: list[str] = []
    relevant: dict[str, set[str]] = defaultdict(set)
    for line in (VASWANI / "qrels").read_text(encoding="utf-8").splitlines():
        qid, _, doc, _ = line.split()
        relevant[qid].add(doc)
    for qid in sorted(relevant, key=int):
        for doc in sorted(relevant[qid], key=int):
            n = int(doc)
            label = 0 if qid in ("5", "9") else (2 if n % 5 == 0 else 1)
            subs = [1 + n % 3] + ([4] if n % 4 == 0 else [])
            lines += [f"{qid} {s} {doc} {label}" for s in subs]
        for rank in (1, 5):  # the 2nd and 6th document, judged non-relevant
            ranked = bm25.get(qid, [])
            if rank < len(ranked) and ranked[rank][0] not in relevant[qid]:
                lines.append(f"{qid} 1 {ranked[rank][0]} 0")
    return "\n".join(lines) + "\n"


def qrels_of(text: str) -> list[ir_measures.Qrel]:
    out = []
    for line in text.splitlines():
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            qid, sub, doc, label = fields
            out.append(ir_measures.Qrel(qid, doc, int(label), sub))
    return out


def reference(qrels: list[ir_measures.Qrel], run: dict[str, list[tuple[str, float]]]
              ) -> dict[str, dict[str, float]]:
    """``{measure: {qid: value}}``, one ir_measures call per measure: ir_measures 0.4.3's
    pyndeval provider hands the run, an iterator, to its first pyndeval invocation only
    (a measure needing a second one, another alpha or rel, scores 0 when asked for in the
    same call), and fails on ``judged_only=True`` (it indexes that iterator); so a
    ``judged_only`` measure is computed as the provider means to, on the run kept to the
    documents judged for the query, without the parameter."""
    scored = [ir_measures.ScoredDoc(q, d, -float(rank))
              for q, docs in run.items() for rank, (d, _) in enumerate(docs, start=1)]
    judged = {(q.query_id, q.doc_id) for q in qrels}
    out: dict[str, dict[str, float]] = {}
    for name in MEASURES:
        given = scored
        if "judged_only=True" in name:
            given = [s for s in scored if (s.query_id, s.doc_id) in judged]
            name_used = name.replace("(judged_only=True)", "")
        else:
            name_used = name
        measure = ir_measures.parse_measure(name_used)
        out[name] = {m.query_id: float(m.value)
                     for m in ir_measures.iter_calc([measure], qrels, given)}
    return out


def providers() -> dict[str, str]:
    """The provider ir_measures chose for each measure."""
    found = {}
    for name in MEASURES:
        measure = ir_measures.parse_measure(name)
        for provider in ir_measures.DefaultPipeline.providers:
            if provider.supports(measure):
                found[name] = provider.NAME
                break
    return found


def main() -> None:
    (HERE / "vaswani.subtopics.qrels").write_text(vaswani_subtopics(), encoding="utf-8")
    (HERE / "edge.qrels").write_text(EDGE_QRELS, encoding="utf-8")
    (HERE / "edge.run").write_text(EDGE_RUN, encoding="utf-8")
    vaswani = qrels_of(vaswani_subtopics())
    edge = qrels_of(EDGE_QRELS)
    values = {name: reference(vaswani, read_run(path)) for name, path in RUNS.items()}
    values["edge"] = reference(edge, read_run(HERE / "edge.run"))
    stored = {
        "made_by": "make_diversity_reference.py",
        "versions": {"ir_measures": version("ir_measures"), "pyndeval": version("pyndeval")},
        "providers": providers(),
        "runs": {name: str(path.relative_to(REPO)) for name, path in RUNS.items()}
        | {"edge": str((HERE / "edge.run").relative_to(REPO))},
        "qrels": {name: "vaswani.subtopics.qrels" for name in RUNS} | {"edge": "edge.qrels"},
        "values": values,
    }
    (HERE / "ir_measures_diversity.json").write_text(
        json.dumps(stored, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
