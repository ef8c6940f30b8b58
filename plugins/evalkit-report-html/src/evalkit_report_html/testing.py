"""A synthetic TREC collection for the report's tests and benchmarks: many systems, one
seed, nothing downloaded.

:func:`write_collection` writes graded qrels, a topic file (``qid<TAB>text``) and one TREC
run file per system into a folder. Every number comes from ``numpy.random.default_rng``
with the given seed, so the same arguments write the same bytes. The systems differ in
how well their scores separate relevant documents from the rest (system 1 best, then
some better, some worse), so a comparison finds some differences significant and some
not. By default the baseline leaves out 2 judged queries and the last system 3, so every
row of a comparison carries one input warning (a run that lacks judged queries) and the
rows of the last system a second one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Collection:
    """The files :func:`write_collection` wrote.

    Attributes:
        qrels: the TREC qrels (``qid 0 docno grade``, grades 0-2).
        topics: ``qid<TAB>text``, one line per query.
        runs: the TREC run files, the baseline first (``sys1.txt``, ``sys2.txt``, ...).
        query_ids: the query ids, in the files' order.
    """

    qrels: Path
    topics: Path
    runs: tuple[Path, ...]
    query_ids: tuple[str, ...]


#: How strongly each system's scores follow the grades (the baseline first).
SKILL = (1.0, 1.08, 0.97, 1.0, 0.9, 1.15, 0.8)

_WORDS = ("retrieval", "ranking", "neural", "sparse", "query", "expansion", "passage",
          "dense", "index", "relevance", "feedback", "lexical", "semantic", "document",
          "length", "bias", "click", "model", "judgment", "pooling", "topic", "drift")


def write_collection(directory: Path, *, systems: int = 7, queries: int = 225,
                     depth: int = 100, lacking: Mapping[int, int] | None = None,
                     seed: int = 2024) -> Collection:
    """Write a synthetic collection of ``systems`` TREC runs over ``queries`` queries.

    Args:
        directory: where to write (created when missing).
        systems: the number of runs; the first is the baseline of a comparison.
        queries: the number of judged queries (ids ``"1"`` .. ``str(queries)``).
        depth: documents ranked per query in each run.
        lacking: ``{system: n}``: system 1 (the baseline) leaves out the first ``n``
            queries, any other the last ``n``; default ``{1: 2, systems: 3}``.
        seed: the seed of every random draw.

    Returns:
        The paths written (:class:`Collection`).
    """
    import numpy as np

    lacking = {1: 2, systems: 3} if lacking is None else lacking
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    ids = tuple(str(q) for q in range(1, queries + 1))
    pool = 2 * depth
    # per query: a pool of documents, 60% of them and every relevant one judged, grades
    # 0-2; some queries are harder than others
    grades = rng.choice(3, size=(queries, pool), p=[0.9, 0.07, 0.03])
    judged = rng.random((queries, pool)) < 0.6
    difficulty = rng.uniform(0.2, 1.6, queries)
    qrels = directory / "qrels.txt"
    with qrels.open("w", encoding="utf-8") as fh:
        for q, qid in enumerate(ids):
            for d in np.flatnonzero(judged[q] | (grades[q] > 0)):
                fh.write(f"{qid} 0 D{q:03d}-{d:04d} {grades[q, d]}\n")
    topics = directory / "topics.tsv"
    with topics.open("w", encoding="utf-8") as fh:
        for qid in ids:
            words = rng.choice(len(_WORDS), size=int(rng.integers(3, 8)), replace=False)
            fh.write(f"{qid}\t{' '.join(_WORDS[w] for w in words)}\n")
    runs = []
    for k in range(systems):
        skill = SKILL[k % len(SKILL)]
        path = directory / f"sys{k + 1}.txt"
        n = lacking.get(k + 1, 0)
        leave_out = set() if not n else set(ids[:n] if k == 0 else ids[-n:])
        with path.open("w", encoding="utf-8") as fh:
            for q, qid in enumerate(ids):
                if qid in leave_out:
                    continue
                scores = skill * grades[q] / difficulty[q] + rng.normal(0, 1.6, pool)
                top = np.argsort(-scores, kind="stable")[:depth]
                fh.write("".join(f"{qid} Q0 D{q:03d}-{d:04d} {rank} {scores[d]:.6f} sys{k + 1}\n"
                                 for rank, d in enumerate(top, 1)))
        runs.append(path)
    return Collection(qrels=qrels, topics=topics, runs=tuple(runs), query_ids=ids)


__all__ = ["Collection", "write_collection"]
