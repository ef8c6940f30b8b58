"""Runs and qrels given as DataFrames in PyTerrier's shape, read as TREC files are read.

* a run: columns ``qid``, ``docno`` and ``score`` (others, such as PyTerrier's ``docid``,
  ``query`` or ``rank``, are ignored: as with a TREC run file, the ranking comes from the
  scores, descending, ties broken by ``docno`` descending, :func:`evalkit_retrieval.ranking.
  rank_arrays`); an optional ``name`` column holding one value names the run;
* qrels: columns ``qid``, ``docno`` and ``label`` (integers; labels <= 0 are judged
  non-relevant), and ``iteration``, the subtopic, read for a diversity measure
  (:func:`qrels_from_frame`).

Refused with :class:`FrameFormatError` (a ValueError naming the row by its index label and
saying what to do), as the TREC loader refuses the same faults in a file: a missing
column; an empty frame; a document listed twice for one query; a score that is not a
number (NaN, a missing value, text; ``inf`` and ``-inf`` rank above or below every finite
score, as in trec_eval); a label that is not an integer (NaN, 1.5, ``"high"``;
integer text such as ``"2"``, ``"2.0"`` or ``"2e0"`` is read as a TREC file's text is); a missing
or non-text id (None, NaN, a float column, whose ``1.0`` would never match a qrels ``1``); a column
holding two values that are one id as text (``1`` and ``"1"``, ``IdCollisionError``);
an id longer than :data:`evalkit.io.limits.MAX_ID_CHARS`; a ``name`` column with several
runs in it. Nothing here imports pandas: a frame is recognised by its type's module.
"""

from __future__ import annotations

from typing import Any

from evalkit.data.ranked_ids import RankedRun
from evalkit.data.text_ids import text_ids
from evalkit.io.dataframes import is_dataframe as is_dataframe
from evalkit.io.limits import MAX_ID_CHARS, MAX_NAME_CHARS

#: The columns a run DataFrame needs (PyTerrier's names).
RUN_COLUMNS = ("qid", "docno", "score")
#: The columns a qrels DataFrame needs (PyTerrier's names).
QRELS_COLUMNS = ("qid", "docno", "label")


class FrameFormatError(ValueError):
    """A DataFrame that cannot be read as a run or as qrels; the message names the row
    (its index label) and the fix."""


def _require_columns(df: Any, needed: tuple[str, ...], kind: str) -> None:
    have = [str(c) for c in df.columns]
    lacking = [c for c in needed if c not in have]
    if lacking:
        raise FrameFormatError(
            f"the {kind} DataFrame has no column {', '.join(repr(c) for c in lacking)} (it "
            f"has: {', '.join(have) or 'none'}); a {kind} frame needs the columns "
            f"{', '.join(needed)}, as PyTerrier's (rename yours, e.g. "
            f"df.rename(columns={{'docid': 'docno'}}))")
    if len(df) == 0:
        raise FrameFormatError(f"the {kind} DataFrame has no rows")


def _where(df: Any, pos: int) -> str:
    label = df.index[pos]
    return f"row {label.item() if hasattr(label, 'item') else label!r}"


def _ids(df: Any, column: str, kind: str) -> list[str]:
    """The text of an id column; refuses missing values, floats and overlong ids."""
    col = df[column]
    if col.dtype.kind == "f":
        raise FrameFormatError(
            f"the {kind} DataFrame's {column!r} column holds floats ({col.iloc[0]!r}), which "
            f"would never match ids written as text; convert it: df[{column!r}] = "
            f"df[{column!r}].astype('int64').astype(str)")
    missing = col.isna().to_numpy().nonzero()[0]
    if len(missing) or col.dtype.kind == "b":
        pos = int(missing[0]) if len(missing) else 0
        raise FrameFormatError(
            f"the {kind} DataFrame's {_where(df, pos)} has no {column} "
            f"({col.iloc[pos]!r}); every row needs a query id and a document id, as text "
            "or integers")
    values = col.tolist()
    if col.dtype.kind in "iu":
        return [str(int(v)) for v in values]
    out = text_ids(values, f"the {kind} DataFrame's {column!r} column")
    for pos, v in enumerate(out):
        if len(v) > MAX_ID_CHARS:
            raise FrameFormatError(
                f"the {kind} DataFrame's {_where(df, pos)}: the {column} is {len(v)} "
                f"characters long (starts {v[:20]!r}); the limit is {MAX_ID_CHARS}")
    return out


def _first_duplicate(df: Any, qids: list[str], docs: list[str]) -> tuple[int, int] | None:
    """``(position of the first row, position of its repeat)`` of the first (qid, docno)
    listed twice, or None."""
    import pandas as pd  # a frame was given: pandas is imported already

    again = pd.DataFrame({"q": qids, "d": docs}).duplicated().to_numpy().nonzero()[0]
    if not len(again):
        return None
    pos = int(again[0])
    key = (qids[pos], docs[pos])
    return next(i for i in range(pos) if (qids[i], docs[i]) == key), pos


def run_from_frame(df: Any, name: str | None = None) -> RankedRun:
    """A run DataFrame as a :class:`~evalkit.data.ranked_ids.RankedRun` in trec_eval's order.

    Args:
        df: a ``pandas.DataFrame`` with ``qid``, ``docno``, ``score`` (see the module
            docstring).
        name: the run's name; default: the ``name`` column's one value, else ``"run"``.

    Raises:
        FrameFormatError: see the module docstring.
    """
    import numpy as np

    from evalkit_retrieval.ranking import NAN_FIX, rank_arrays

    _require_columns(df, RUN_COLUMNS, "run")
    qids, docs = _ids(df, "qid", "run"), _ids(df, "docno", "run")
    col = df["score"]
    if col.dtype.kind not in "iuf":
        values = col.tolist()
        bad = next((pos for pos, v in enumerate(values) if not _is_number(v)), 0)
        raise FrameFormatError(
            f"the run DataFrame's score column holds {col.dtype} values, not numbers "
            f"({values[bad]!r} in {_where(df, bad)}); convert it: df['score'] = "
            "pd.to_numeric(df['score'])")
    scores = col.to_numpy(dtype="float64", na_value=np.nan)
    bad_pos = np.flatnonzero(np.isnan(scores))  # inf and -inf rank, as trec_eval's
    if len(bad_pos):
        pos = int(bad_pos[0])
        raise FrameFormatError(
            f"the run DataFrame's {_where(df, pos)}: the score of document "
            f"{docs[pos]!r} for query {qids[pos]!r} is NaN (or missing); "
            f"{NAN_FIX}")
    dup = _first_duplicate(df, qids, docs)
    if dup is not None:
        first, again = dup
        raise FrameFormatError(
            f"the run DataFrame's {_where(df, again)}: document {docs[again]!r} is listed "
            f"again for query {qids[again]!r} (first in {_where(df, first)}); a run ranks "
            "each document once per query (trec_eval stops with 'duplicate docs' when the "
            "qrels judge the query): keep one row per (qid, docno), e.g. "
            "df.drop_duplicates(['qid', 'docno'])")
    run_name = name or _run_name(df)
    rankings = rank_arrays(np.asarray(qids, dtype=object), np.asarray(docs, dtype=object),
                           scores)
    return RankedRun(name=run_name, rankings=rankings,
                     meta={"lines": len(scores), "parser": "dataframe"})


def _is_number(v: Any) -> bool:
    if isinstance(v, bool | str | bytes):
        return False
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _run_name(df: Any) -> str:
    if "name" not in df.columns:
        return "run"
    names = list(dict.fromkeys(str(x) for x in df["name"].tolist()))
    if len(names) > 1:
        shown = ", ".join(repr(n) for n in names[:5]) + (", ..." if len(names) > 5 else "")
        raise FrameFormatError(
            f"the run DataFrame holds {len(names)} runs in its 'name' column ({shown}); "
            "pass one run per frame, e.g. df[df['name'] == "
            f"{names[0]!r}], or compare them with evalkit.compare(*(g for _, g in "
            "df.groupby('name')), qrels=...)")
    if len(names[0]) > MAX_NAME_CHARS:
        raise FrameFormatError(
            f"the run DataFrame's name is {len(names[0])} characters long; the limit is "
            f"{MAX_NAME_CHARS}")
    return names[0]


def qrels_from_frame(df: Any, *, subtopics: bool = False
                     ) -> dict[str, dict[str, int]] | dict[str, dict[str, dict[str, int]]]:
    """A qrels DataFrame (``qid``, ``docno``, ``label``) as ``{qid: {docno: label}}``, in
    the frame's order.

    With ``subtopics`` (evalkit asks for them when a diversity measure is computed, as
    for a qrels file), a frame whose ``iteration`` column (ir_measures' and PyTerrier's
    name for TREC qrels' second column) holds two or more distinct values (``Q0``
    counted as ``0``) is read as subtopic qrels: ``{qid: {subtopic: {docno: label}}}``,
    a document judged once per (query, subtopic); otherwise that column is ignored, as
    trec_eval ignores it.

    Raises:
        FrameFormatError: see the module docstring.
    """
    _require_columns(df, QRELS_COLUMNS, "qrels")
    qids, docs = _ids(df, "qid", "qrels"), _ids(df, "docno", "qrels")
    labels: list[int] = []
    for pos, v in enumerate(df["label"].tolist()):
        label = _label(v)
        if label is None:
            raise FrameFormatError(
                f"the qrels DataFrame's {_where(df, pos)}: the relevance label {v!r} of "
                f"document {docs[pos]!r} for query {qids[pos]!r} is not an integer; labels "
                "are integers (0 = not relevant)")
        labels.append(label)
    subs = ["0"] * len(qids)
    if subtopics and "iteration" in [str(c) for c in df.columns]:
        subs = ["0" if str(v) == "Q0" else str(v) for v in df["iteration"].tolist()]
    by_sub = len(set(subs)) >= 2
    nested: dict[str, dict[str, dict[str, int]]] = {}
    first: dict[tuple[str, str, str], int] = {}
    for pos, (q, s, d, label) in enumerate(zip(qids, subs, docs, labels, strict=True)):
        key = (q, s if by_sub else "0", d)
        if key in first:
            prev = first[key]
            detail = (f"with another label ({labels[prev]} in {_where(df, prev)}, {label} "
                      "here)" if labels[prev] != label else f"again (first in "
                      f"{_where(df, prev)})")
            once = (f"for query {q!r}, subtopic {s!r}; subtopic qrels judge each document "
                    "once per (query, subtopic): keep one row per (qid, iteration, docno)"
                    if by_sub else f"for query {q!r}; qrels judge each document once per "
                    "query (trec_eval stops with 'duplicate docs'): keep one row per (qid, "
                    "docno)")
            raise FrameFormatError(
                f"the qrels DataFrame's {_where(df, pos)}: document {d!r} is judged "
                f"{detail} {once}")
        first[key] = pos
        nested.setdefault(q, {}).setdefault(key[1], {})[d] = label
    if by_sub:
        return nested
    return {q: judged["0"] for q, judged in nested.items()}


def _label(v: Any) -> int | None:
    """An integer label (ints, numpy integers, integral floats), else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str):  # as a qrels file's field 4 (2.0 and 2e0 are 2; 2e1 is refused)
        from evalkit_retrieval.trec_text import label_of_text

        label = label_of_text(v.strip().encode("utf-8", "surrogatepass"))
        return label if isinstance(label, int) else None
    try:
        number = float(v)
    except (TypeError, ValueError):
        return None
    if not number.is_integer():
        return None
    return int(number)


__all__ = ["QRELS_COLUMNS", "RUN_COLUMNS", "FrameFormatError", "is_dataframe",
           "qrels_from_frame", "run_from_frame"]
