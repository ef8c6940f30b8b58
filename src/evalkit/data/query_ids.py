"""Query ids of a run and its qrels that were meant to match but do not, and rankings
whose scores carry no order: what ``evalkit eval`` and ``evalkit compare`` warn about
(the run header's ``notes.near_ids`` and ``notes.rank_column_ignored``, read by
:func:`evalkit.data.coverage.notes_of`). Only the standard library is imported."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence


def _id_key(qid: str) -> str:
    """``qid`` without white space, invisible (format) characters such as U+FEFF at its
    ends, and without leading zeros: what two ids that look alike share."""
    i, j = 0, len(qid)
    while i < j and (qid[i].isspace() or unicodedata.category(qid[i]) == "Cf"):
        i += 1
    while j > i and (qid[j - 1].isspace() or unicodedata.category(qid[j - 1]) == "Cf"):
        j -= 1
    core = qid[i:j]
    return core.lstrip("0") or ("0" if core else "")


def near_ids(run_ids: Sequence[str], judged_ids: Sequence[str], limit: int = 5
             ) -> list[list[str]]:
    """Up to ``limit`` pairs ``[run topic, judged query]`` from run topics without
    judgments (``run_ids``) and judged queries the run lacks (``judged_ids``) whose ids
    are equal but for leading zeros (``51``, ``051``) or white space and invisible
    characters at their ends (a U+FEFF byte-order mark left in the middle of a file by
    ``cat``), in ``run_ids`` order: ids that were meant to match, which trec_eval and
    evalkit compare as text."""
    if not run_ids or not judged_ids:
        return []
    by_key: dict[str, str] = {}
    for j in judged_ids:
        by_key.setdefault(_id_key(j), j)
    out: list[list[str]] = []
    for r in run_ids:
        judged = by_key.get(_id_key(r))
        if judged is not None and _id_key(r):
            out.append([r, judged])
            if len(out) == limit:
                break
    return out


def near_ids_warning(pairs: Sequence[Sequence[str]]) -> str:
    """The sentence ``evalkit eval`` and ``evalkit compare`` print for :func:`near_ids`'
    pairs (ids shown as Python literals, so an invisible character is written ``\ufeff``)."""
    shown = ", ".join(f"run {r!r} ~ qrels {j!r}" for r, j in pairs)
    return (f"some run topics without judgments look like judged queries the run lacks, "
            f"differing only by leading zeros, white space or invisible characters "
            f"({shown}); ids match only when equal as text (as in trec_eval): make them "
            "equal in the run or the qrels")


def rank_column_warning(path: object) -> str:
    """What ``evalkit eval`` and ``evalkit compare`` say when every query's scores in the
    TREC run ``path`` are tied while its rank column orders them (the header's
    ``notes.rank_column_ignored``): the ranking is by document id, as trec_eval's."""
    return (f"{path}: every query's documents share one score, while the rank column "
            "orders them; the rank column is ignored, as trec_eval ignores it, so each "
            "query is ranked by document id (descending). Write the scores the system gave "
            "(or, to keep the rank order, a score that falls with the rank, such as -rank)")
