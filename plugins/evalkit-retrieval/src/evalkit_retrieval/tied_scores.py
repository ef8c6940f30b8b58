"""Runs whose scores carry no order: every query's documents share one score, so the
ranking is by document id (trec_eval's tie order) whatever the rank column says.
:func:`evalkit_retrieval.trec.load_run` marks such a run (``meta["rank_column_ignored"]``)
when the rank column orders each query's documents, for ``evalkit eval`` and ``evalkit
compare`` to warn (:func:`evalkit.data.query_ids.rank_column_warning`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from evalkit_retrieval.trec_text import Text, lines


def all_tied(qids: Any, scores: Any) -> bool:
    """Whether every query's documents share one score (and some query has two or more):
    the ranking is then by document id alone. Lines of one query usually follow each
    other, so a different score on the next line of the same query answers at once."""
    q, sc = np.asarray(qids), np.asarray(scores, dtype=np.float64)
    if len(sc) < 2:
        return False
    same_query = q[1:] == q[:-1]
    if (same_query & (sc[1:] != sc[:-1])).any():
        return False
    first: dict[Any, float] = {}
    for qid, score in zip(q.tolist(), sc.tolist(), strict=True):  # queries split in blocks
        if first.setdefault(qid, score) != score:
            return False
    return True


def ranks_strict(text: Text, source: str | Path) -> bool:
    """Whether the rank column (field 4) of the run ``text`` gives each query's documents
    distinct integer ranks (read only when every score is tied, a rare file)."""
    seen: dict[bytes, set[bytes]] = {}
    for _, fields in lines(text, source):
        ranks = seen.setdefault(fields[0], set())
        if not _INT_RANK.fullmatch(fields[3]) or fields[3] in ranks:
            return False
        ranks.add(fields[3])
    return any(len(r) > 1 for r in seen.values())


_INT_RANK = re.compile(rb"[+]?[0-9]+")
