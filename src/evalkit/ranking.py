"""How scores become rankings: trec_eval's convention, in one place.

Documents are ordered by score descending, and ties by document id descending (byte
order, as ``strcmp`` in trec_eval's ``form_res_rels.c``). The rank column of a TREC run is
ignored. Every loader and every API that accepts ``{doc: score}`` uses these functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RankedRun:
    """A run whose per-query rankings are already ordered by the convention above.

    Attributes:
        name: the run tag (TREC column 6) or a caller-given name.
        rankings: ``{query id: [doc id, ...]}`` best first.
        path: the source file, when loaded from one.
        sha256: the source file's hash, when loaded from one.
    """

    name: str
    rankings: dict[str, list[str]]
    path: str | None = None
    sha256: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def rank_mapping(scores: Mapping[str, float]) -> list[str]:
    """Doc ids of one query ordered by score descending, ties by doc id descending."""
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def rank_run(run: Mapping[str, Mapping[str, float]], name: str = "run") -> RankedRun:
    """Rank every query of ``{qid: {doc: score}}``."""
    return RankedRun(
        name=name, rankings={str(q): rank_mapping(docs) for q, docs in run.items()}
    )


def rank_arrays(
    qids: Sequence[str], docids: Sequence[str], scores: Sequence[float]
) -> dict[str, list[str]]:
    """Vectorised ranking of parallel arrays (one entry per run line).

    Duplicate (qid, docid) pairs must have been rejected by the caller.
    """
    import numpy as np

    if len(qids) == 0:
        return {}
    q = np.asarray(qids)
    d = np.asarray(docids)
    s = np.asarray(scores, dtype=np.float64)
    q_uniq, q_code = np.unique(q, return_inverse=True)
    _, d_code = np.unique(d, return_inverse=True)
    order = np.lexsort((-d_code, -s, q_code))
    q_sorted = q_code[order]
    bounds = np.flatnonzero(np.diff(q_sorted)) + 1
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [len(order)]))
    d_sorted = d[order].tolist()
    out: dict[str, list[str]] = {}
    for st, en in zip(starts.tolist(), ends.tolist(), strict=True):
        out[str(q_uniq[q_sorted[st]])] = d_sorted[st:en]
    return out
