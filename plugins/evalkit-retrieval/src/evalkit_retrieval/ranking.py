"""How scores become rankings: trec_eval's convention, implemented once.

Within a query, documents are ordered by score descending; documents with equal scores are
ordered by document id descending, comparing the UTF-8 bytes as ``strcmp`` does in
trec_eval's ``form_res_rels.c`` (for UTF-8 text that is the same as comparing code
points, which is what Python's ``str`` comparison does). The rank column of a TREC run file
and the order of its lines play no part.

Every score must be a number other than NaN, which has no place in the order (refused,
naming the query, document and value). An infinite score ranks as in trec_eval, which
reads scores with ``atof``: ``inf`` above every finite score, ``-inf`` (a log-probability
of 0) below, equal infinite scores by document id like any tie; a value beyond the range
of a double (``1e400``, an integer too large for a float) is that infinity, as ``atof``
reads it.

:func:`rank_arrays` is the single implementation of that order. :func:`rank_mapping` and
:func:`rank_run` (``{qid: {doc: score}}`` input) and the TREC run loader of the
TREC run loader of this plugin all call it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from evalkit.data.ranked_ids import RankedIds, RankedRun
from evalkit.data.text_ids import text_ids
from evalkit.io.limits import first_repeated

if TYPE_CHECKING:  # numpy is imported on first use: `import evalkit` stays light
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DuplicateDocumentError",
    "RankOrder",
    "RankedIds",
    "RankedRun",
    "group_queries",
    "rank_arrays",
    "rank_mapping",
    "rank_order",
    "rank_run",
]

#: Above this many queries per document a single ``lexsort`` beats one argsort per query.
_MANY_SMALL_QUERIES = 20


class DuplicateDocumentError(ValueError):
    """A query lists the same document twice (trec_eval stops with ``duplicate docs``).

    Attributes:
        qid: the query id.
        docid: the repeated document id.
    """

    def __init__(self, qid: str, docid: str) -> None:
        self.qid = qid
        self.docid = docid
        super().__init__(
            f"query {qid!r} lists document {docid!r} more than once; a ranking may hold "
            "each document once (trec_eval refuses this as 'duplicate docs'). Keep one "
            "entry per (query, document)"
        )


def rank_mapping(scores: Mapping[str, float]) -> list[str]:
    """Doc ids of one query, ordered by score descending, ties by doc id descending.

    Raises:
        ValueError: a score is NaN or not a number.
    """
    return list(rank_run({"": scores}).rankings[""])


def rank_run(run: Mapping[str, Mapping[str, float]], name: str = "run") -> RankedRun:
    """Rank every query of ``{qid: {doc: score}}`` (a query with ``{}`` keeps ``[]``).

    Raises:
        ValueError: a score is NaN, not a number, or a bool, or a query's value is not a
            mapping.
        IdCollisionError: (a ``ValueError``) two query ids, or two document ids of one
            query, become one id as text (``1`` and ``"1"``); the message names both.
    """
    qids: list[str] = []
    docids: list[str] = []
    scores: list[float] = []
    order: list[str] = []
    for qid, docs in zip(text_ids(run.keys(), "run (query ids)"), run.values(), strict=True):
        if not isinstance(docs, Mapping):
            raise ValueError(
                f"run query {qid!r}: expected a mapping {{doc id: score}}, got "
                f"{type(docs).__name__}"
            )
        order.append(qid)
        ids = text_ids(docs.keys(), f"run query {qid!r}")
        qids.extend([qid] * len(ids))
        docids.extend(ids)
        scores.extend([v if type(v) is float and v == v else score_of(qid, d, v)
                       for d, v in zip(ids, docs.values(), strict=True)])
    ranked = rank_arrays(qids, docids, scores)
    rankings: dict[str, Sequence[str]] = {q: ranked.get(q, []) for q in order}
    return RankedRun(name=name, rankings=rankings)


def rank_arrays(
    qids: Sequence[str] | npt.NDArray[Any],
    docids: Sequence[str] | npt.NDArray[Any],
    scores: Sequence[float] | npt.NDArray[np.float64],
) -> dict[str, list[str]]:
    """Rank parallel arrays (one entry per run line) in trec_eval's order.

    Args:
        qids: query id of each entry: a sequence of ``str`` or a numpy array of ``str``
            or ASCII ``bytes`` (dtype ``U``, ``S`` or ``object``).
        docids: document id of each entry, same forms as ``qids``.
        scores: score of each entry (converted to float64).

    Returns:
        ``{query id: [doc id, ...]}`` best first, queries in order of first appearance.

    Raises:
        ValueError: the arrays differ in length, or a score is NaN.
        DuplicateDocumentError: a query lists one document twice.
    """
    d = _text_array(docids)
    order = rank_order(qids, d, scores)
    docs = _str_list(order.ranked(d))
    out: dict[str, list[str]] = {}
    for qid, st, en in zip(order.qids, order.starts.tolist(), order.ends.tolist(),
                           strict=True):
        ranked = docs[st:en]
        if len(set(ranked)) != len(ranked):
            raise DuplicateDocumentError(qid, str(first_repeated(ranked)))
        out[qid] = ranked
    return out


class RankOrder(NamedTuple):
    """Where every query's ranking lies once a run's lines are put in trec_eval's order.

    Attributes:
        qids: the query ids, in order of first appearance.
        starts, ends: each query's positions ``[start, end)`` in the ranked order.
        perm: the line (index into the input arrays) at each ranked position, or ``None``
            when the lines already are in that order (most run files) but perhaps for
            ``patch``.
        patch: with ``perm`` ``None``, the positions whose line is not their own, and
            the line each holds (runs of equal scores put in id order), or ``None``.
    """

    qids: list[str]
    starts: npt.NDArray[np.int64]
    ends: npt.NDArray[np.int64]
    perm: npt.NDArray[np.int64] | None
    patch: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None

    def ranked(self, values: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """``values`` (one per input line) in ranked order (a new array, or ``values``
        itself when the lines already are in that order)."""
        if self.perm is not None:
            return values[self.perm]
        if self.patch is None:
            return values
        at, source = self.patch
        out = values.copy()
        out[at] = values[source]
        return out


def rank_order(
    qids: Sequence[str] | npt.NDArray[Any],
    docids: Sequence[str] | npt.NDArray[Any],
    scores: Sequence[float] | npt.NDArray[np.float64],
) -> RankOrder:
    """trec_eval's order of parallel arrays, as positions: the single implementation of
    the order (:func:`rank_arrays` and the TREC run loader build on it).

    Lines are grouped by query (in order of first appearance; a query that comes back
    later joins its first block, its lines keeping their order), then ordered by score
    descending, equal scores by document id descending (bytes compared as ``strcmp``,
    ``str`` by code point: the same order for UTF-8 text). Duplicates are not looked
    for here.

    Raises:
        ValueError: the arrays differ in length, or a score is NaN.
    """
    import numpy as np

    q = _text_array(qids)
    d = _text_array(docids)
    s = np.asarray(scores, dtype=np.float64)
    n = len(s)
    if len(q) != n or len(d) != n:
        raise ValueError(
            f"rank_arrays: qids, docids and scores differ in length ({len(q)}, {len(d)}, {n})"
        )
    empty = np.zeros(0, dtype=np.int64)
    if n == 0:
        return RankOrder([], empty, empty, None)
    nan = np.isnan(s)
    if nan.any():
        i = int(np.flatnonzero(nan)[0])
        raise ValueError(_not_finite(_text(q[i]), _text(d[i]), _shown(float(s[i]))))

    grouped = group_queries(q)
    perm, starts, ends = grouped.perm, grouped.starts, grouped.ends
    if perm is not None:
        s = s[perm]

    # Score descending within each query (most run files already are: then no reordering).
    in_order = s[1:] <= s[:-1]
    in_order[ends[:-1] - 1] = True  # a new query may start with any score
    if not in_order.all():
        if len(starts) * _MANY_SMALL_QUERIES > n:
            block_of = np.repeat(np.arange(len(starts)), ends - starts)
            by_score = np.lexsort((-s, block_of))
        else:
            neg = -s
            by_score = np.empty(n, dtype=np.int64)
            for st, en in zip(starts.tolist(), ends.tolist(), strict=True):
                by_score[st:en] = st + np.argsort(neg[st:en])  # ties: id order below
        s = s[by_score]
        perm = by_score if perm is None else perm[by_score]

    # Equal scores: document ids descending.
    tied = s[1:] == s[:-1]
    tied[ends[:-1] - 1] = False  # never across two queries
    if not tied.any():
        return RankOrder(grouped.qids, starts, ends, perm)
    at, source = _order_ties(tied, d, perm)
    if perm is None:  # only ties move: a few positions, no permutation of every line
        return RankOrder(grouped.qids, starts, ends, None, (at, source))
    perm[at] = source
    return RankOrder(grouped.qids, starts, ends, perm)


def group_queries(qids: npt.NDArray[Any]) -> RankOrder:
    """The lines of each query brought together: contiguous blocks of one query id, in
    order of first appearance; a query that comes back later joins its first block, its
    lines keeping their order (``perm``, or ``None`` when no query comes back)."""
    import numpy as np

    starts, ends, block_qids = _blocks(qids)
    if len(set(block_qids)) == len(block_qids):
        return RankOrder(block_qids, starts, ends, None)
    code: dict[str, int] = {}
    block_code = np.fromiter(
        (code.setdefault(b, len(code)) for b in block_qids), np.int64, len(block_qids)
    )
    perm = np.argsort(np.repeat(block_code, ends - starts), kind="stable")
    starts, ends, block_qids = _blocks(qids[perm])
    return RankOrder(block_qids, starts, ends, perm)


def _order_ties(tied: npt.NDArray[np.bool_], d: npt.NDArray[Any],
                perm: npt.NDArray[np.int64] | None
                ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Every run of equal scores (``tied[i]``: positions i and i+1 tie) reordered by
    document id descending: the positions that belong to a run and the line each takes
    (``perm``: the line at each position so far, ``None`` for line i at position i)."""
    import numpy as np

    pairs = np.flatnonzero(tied)  # i: positions i and i + 1 tie
    opens = np.ones(len(pairs), dtype=np.bool_)
    opens[1:] = pairs[1:] != pairs[:-1] + 1
    first = pairs[opens]  # each group's first position
    size = np.diff(np.append(np.flatnonzero(opens), len(pairs))) + 1
    offset = np.cumsum(size) - size  # each group's first index in the arrays below
    group = np.repeat(np.arange(len(first)), size)
    within = np.arange(len(group)) - offset[group]
    at = first[group] + within
    lines = at if perm is None else perm[at]
    ascending = lines[np.lexsort((d[lines], group))]
    # the k-th position of a group of m takes the group's (m - 1 - k)-th smallest id
    source: npt.NDArray[np.int64] = ascending[offset[group] + size[group] - 1 - within]
    return at, source


# --------------------------------------------------------------------------- helpers
def _text_array(values: Sequence[str] | npt.NDArray[Any]) -> npt.NDArray[Any]:
    import numpy as np

    if isinstance(values, np.ndarray):
        if values.dtype.kind not in "SUO":
            raise TypeError(f"expected an array of text, got dtype {values.dtype}")
        return values
    arr = np.empty(len(values), dtype=object)
    arr[:] = [str(v) for v in values]
    return arr


def _text(value: Any) -> str:
    if isinstance(value, bytes):  # numpy.bytes_ is a bytes subclass
        return bytes(value).decode("utf-8")
    return str(value)


def _str_list(arr: npt.NDArray[Any]) -> list[str]:
    items = arr.tolist()
    if arr.dtype.kind == "S":
        return list(map(bytes.decode, items))
    return [str(x) for x in items] if arr.dtype.kind == "O" else list(items)


def _blocks(q: npt.NDArray[Any]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[str]]:
    import numpy as np

    change = np.flatnonzero(_differs_from_previous(q)) + 1
    starts = np.concatenate(([0], change)).astype(np.int64)
    ends = np.concatenate((change, [len(q)])).astype(np.int64)
    return starts, ends, [_text(x) for x in q[starts]]


def _differs_from_previous(q: npt.NDArray[Any]) -> npt.NDArray[np.bool_]:
    """``q[1:] != q[:-1]``; byte strings compared as raw bytes (same result: the padding
    is NUL bytes), 8 bytes at a time where the width is a multiple of 8 (numpy compares
    raw bytes one by one: 11-16 ms against 6-7 ms on a 1,000,000-line run's query
    column, docs/performance.md)."""
    import numpy as np

    if q.dtype.kind != "S" or len(q) < 2:
        out: npt.NDArray[np.bool_] = q[1:] != q[:-1]
        return out
    size = q.dtype.itemsize
    if size % 8:
        raw = q.view(f"V{size}")  # bytes compared as they are, no copy
        change: npt.NDArray[np.bool_] = raw[1:] != raw[:-1]
        return change
    # the same bytes as 64-bit words, fields of one record (no copy, any stride)
    words = q.view(np.dtype([(f"w{j}", np.uint64) for j in range(size // 8)]))
    first = words["w0"]
    change = first[1:] != first[:-1]
    for j in range(1, size // 8):
        word = words[f"w{j}"]
        change |= word[1:] != word[:-1]
    return change




def _shown(value: float) -> str:
    return "NaN" if math.isnan(value) else repr(value)


#: What to do with a NaN score, for every reader of runs (files, mappings, frames).
NAN_FIX = ("give the document a number that puts it where it belongs: NaN has no place in "
           "a ranking (it is neither above nor below any other score)")


def _not_finite(qid: str, doc: str, shown: str) -> str:
    return (f"query {qid!r}, document {doc!r}: the score {shown} is not a number; "
            f"{NAN_FIX}")


def score_of(qid: str, doc: str, value: object) -> float:
    """A score given in memory as a float: NaN, text and bools refused (ValueError naming
    the query and document), an integer beyond a float's range as ``inf`` or ``-inf``."""
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", "") == "b":
        raise ValueError(
            f"query {qid!r}, document {doc!r}: score {value!r} is a bool, not a number "
            "(a bool label is refused too); give scores as numbers, e.g. float(x) for a "
            "true/false signal")
    try:
        s = float(value)  # type: ignore[arg-type]
    except OverflowError:  # an integer beyond the range of a float: atof's infinity
        return math.inf if value > 0 else -math.inf  # type: ignore[operator]
    except (TypeError, ValueError):
        raise ValueError(
            f"query {qid!r}, document {doc!r}: score {value!r} is not a number"
        ) from None
    if math.isnan(s):
        shown = _shown(s) if isinstance(value, float) else repr(value)
        raise ValueError(_not_finite(qid, doc, shown))
    return s
