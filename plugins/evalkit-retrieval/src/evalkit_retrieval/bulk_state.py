"""The ranking state of a TREC run and qrels held in arrays, joined in bulk.

:func:`bulk_state` builds the same :class:`~.state.RankingState` as
:func:`~.state.build_state` when an evaluation is made of views over
:mod:`.columns` (what :func:`evalkit.evaluate_run` sees for a TREC run and qrels read
by this plugin): every judgment of every query is looked up among the run's sorted
(query, document) keys at once, and each match confirmed on the ids' bytes, instead of
one dictionary per ranking. Anything else (rankings or judgments given as Python
objects, a judgment changed after loading, a file built so that many ids share their
keys) returns ``None`` and the general builder takes over.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from evalkit.data.judged_queries import JudgedQueries
from evalkit_retrieval.columns import ColumnIds, ColumnJudged, QrelsColumns, RunColumns
from evalkit_retrieval.doc_keys import Bools, Ints, pair_keys
from evalkit_retrieval.state import RankingState, state_from

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse


def bulk_state(responses: Sequence[TargetResponse], cases: Sequence[GoldenCase]
               ) -> RankingState | None:
    """The state of a batch of views over one run's and one qrels' columns, or None."""
    if not isinstance(cases, JudgedQueries) or len(responses) != len(cases):
        return None
    found = _run_blocks(responses)
    judged = _qrels_blocks(cases)
    if found is None or judged is None:
        return None
    run, run_block, num_ret = found
    qrels, qrels_block = judged
    n = len(cases)
    # every judgment of every case, in the qrels' order
    size = qrels.ends[qrels_block] - qrels.starts[qrels_block]
    q_case = np.repeat(np.arange(n, dtype=np.int64), size)
    row = np.repeat(qrels.starts[qrels_block] - (np.cumsum(size) - size), size) + np.arange(
        len(q_case), dtype=np.int64)
    q_label = qrels.labels[row]
    q_rel = q_label >= cases.level
    num_rel = np.bincount(q_case[q_rel], minlength=n).astype(np.int64)
    # the judged documents each ranking holds (within its depth)
    j_case = j_rank = j_label = np.zeros(0, dtype=np.int64)
    if run is not None:
        ranked = run_block[q_case] >= 0
        case, at = q_case[ranked], row[ranked]
        block = run_block[case]
        first = run.starts[block]

        def matches(i: Ints, pos: Ints) -> Bools:
            ok = (pos >= first[i]) & (pos < first[i] + num_ret[case[i]])
            ok[ok] = run.docs[pos[ok]] == qrels.docs[at[i[ok]]]
            return ok

        pos = run.keys.lookup(pair_keys(qrels.hashes[at], block), matches)
        if pos is None:
            return None  # too many ids share hash bits: the general path
        hit = pos >= 0
        j_case, j_rank, j_label = case[hit], pos[hit] - first[hit] + 1, qrels.labels[at[hit]]
    return state_from(n, num_ret, num_rel, j_case, j_rank, j_label, j_label >= cases.level,
                      q_case, q_label, q_rel)


def _run_blocks(responses: Sequence[TargetResponse]
                ) -> tuple[RunColumns | None, Ints, Ints] | None:
    """The run every ranking is a view of, each one's block (-1: empty ranking) and
    length; None unless each is a view from rank 1 of one run, or empty."""
    run: RunColumns | None = None
    blocks: list[int] = []
    lengths: list[int] = []
    for response in responses:
        ids = response.ranked_ids
        if isinstance(ids, ColumnIds) and ids.whole_from_top:
            if run is None:
                run = ids.columns
            elif ids.columns is not run:
                return None
            blocks.append(ids.block)
            lengths.append(len(ids))
        elif len(ids) == 0:
            blocks.append(-1)
            lengths.append(0)
        else:
            return None
    return run, np.array(blocks, dtype=np.int64), np.array(lengths, dtype=np.int64)


def _qrels_blocks(cases: JudgedQueries) -> tuple[QrelsColumns, Ints] | None:
    """The qrels every case's judgments are an unchanged view of, and each one's block;
    None unless there is one such set of columns."""
    qrels: QrelsColumns | None = None
    blocks: list[int] = []
    for qid in cases.ids:
        judged = cases.judgments[qid]
        if not isinstance(judged, ColumnJudged) or not judged.as_loaded:
            return None
        if qrels is None:
            qrels = judged.columns
        elif judged.columns is not qrels:
            return None
        blocks.append(judged.block)
    if qrels is None:
        return None
    return qrels, np.array(blocks, dtype=np.int64)
