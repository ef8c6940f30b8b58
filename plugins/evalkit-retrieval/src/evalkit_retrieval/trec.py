"""TREC run and qrels files, read with trec_eval's tolerance and its refusals.

Formats (fields separated by any run of ASCII whitespace):

* run: ``qid iter docno rank score tag [anything else...]``: six fields or more; ``iter``
  (usually ``Q0``) and ``rank`` are ignored, fields after ``tag`` are ignored, and the
  ranking comes from the scores (:func:`evalkit_retrieval.ranking.rank_arrays`);
* qrels: ``qid iter docno label``: exactly four fields; ``iter`` is ignored, whatever it
  holds (``0``, ``Q0``, a round number), as trec_eval ignores it; ``label`` is an integer,
  labels <= 0 are judged non-relevant. Only when asked (``subtopics=True``: evalkit asks
  when a diversity measure is requested) is a file whose ``iter`` holds two or more
  distinct values (``Q0`` counted as ``0``) read as subtopic qrels
  (:mod:`evalkit_retrieval.subtopics`): a document may then be judged once per (query,
  subtopic).

Accepted as trec_eval accepts them: comment lines (first non-blank character ``#``; a
``#`` anywhere else belongs to the field, as in MS MARCO v2.1 segment ids), blank lines,
tabs and runs of spaces, CRLF line endings, a missing final newline, gzip compression
(``.gz`` or gzip magic bytes; decompressed as it is read, never held whole, to at most
:data:`evalkit.io.limits.MAX_INFLATED_BYTES`, 1 GiB, a larger stream is refused). Accepted
beyond trec_eval: a UTF-8 byte-order mark (trec_eval would read it as part of the first
query id).

Refused with :class:`TrecFormatError` (file, line and fix in the message): a document
listed twice for one query, in a run (:class:`DuplicateLineError`; when the judged queries
are known, only in one of them, as trec_eval, which reads no other query's ranking:
:func:`load_run`'s ``judged``) or in qrels (trec_eval: ``duplicate docs``); a line
longer than :data:`~evalkit_retrieval.trec_text.MAX_LINE` (16 MiB, refused unread); a line
with too few fields (or a qrels line with too many); a score that is not a number, or NaN
(``inf``, ``-inf`` and values beyond the range of a double, such as ``1e999``, are read
as infinities and ranked above or below every finite score, as trec_eval's ``atof``
reads them); a label that is not an integer or that trec_eval's ``atol`` would read as
another integer (an integral decimal such as ``1.0`` or ``-1.00``, what pandas and
ir_datasets exports write, and ``1e0`` are that integer; ``2.5``, ``1.5e0`` and ``1e3``,
which ``atol`` reads as 1, are refused:
:func:`~evalkit_retrieval.trec_text.label_of_text`) or beyond 64 bits; text that is not UTF-8;
NUL bytes; a file with no data lines; a query or document id longer than
:data:`evalkit.io.limits.MAX_ID_CHARS` (1024) bytes, or a run tag longer than
:data:`evalkit.io.limits.MAX_NAME_CHARS` (256).
A message echoes at most :data:`~evalkit_retrieval.trec_text.SHOWN_CHARS` characters of
a field, saying its length.

Speed: a well-formed file is parsed in bulk (:mod:`evalkit_retrieval.trec_bulk`:
``numpy.loadtxt`` into byte-string columns) and kept in arrays, ranked and grouped
without a string per line (:mod:`evalkit_retrieval.columns`). Anything unusual (non-ASCII
bytes, very long ids, a malformed line, a duplicate) sends the file through the careful
line-by-line reader here, which gives the same result or the precise error. The careful
reader reads the file (or the gzip stream) a buffer at a time and stops at the first
mistake; the first :data:`~evalkit_retrieval.trec_text.PROBE` bytes (16 KiB) of every
file go through it before the bulk reader, so that a mistake in the first lines is named
without a bulk read; and a gzip file that says it repeats itself
(:data:`~evalkit_retrieval.trec_text.REPETITIVE`) goes to it first. A duplicate the bulk
reader finds is located by the ids' bytes alone
(:func:`~evalkit_retrieval.trec_text.first_duplicate`).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

from evalkit.io.error_messages import reading
from evalkit.io.input_files import directory_message, utf8_fix
from evalkit.io.limits import MAX_ID_CHARS, MAX_INFLATED_BYTES, MAX_NAME_CHARS, label_problem
from evalkit.io.user_files import regular_file_problem
from evalkit_retrieval.columns import ranked_columns
from evalkit_retrieval.ranking import (
    NAN_FIX,
    DuplicateDocumentError,
    RankedRun,
    rank_arrays,
)
from evalkit_retrieval.tied_scores import all_tied, ranks_strict
from evalkit_retrieval.trec_bulk import RunTable, Stream, bulk_qrels, bulk_run, sha256_meanwhile
from evalkit_retrieval.trec_text import (
    LABEL_TEXT,
    MAX_LINE,
    DuplicateLineError,
    TrecFormatError,
    file_text,
    label_of_text,
    text_bytes,
)
from evalkit_retrieval.trec_text import SHOWN_CHARS as _SHOWN_CHARS
from evalkit_retrieval.trec_text import Text as _Text
from evalkit_retrieval.trec_text import first_duplicate as _first_duplicate
from evalkit_retrieval.trec_text import lines as _lines
from evalkit_retrieval.trec_text import open_text as _open_text
from evalkit_retrieval.trec_text import probe as _probe
from evalkit_retrieval.trec_text import shown as _shown

__all__ = ["DuplicateLineError", "RunScores", "TrecFormatError", "load_qrels", "load_run",
           "load_run_scores", "parse_qrels", "parse_run"]

# the bulk readers (evalkit_retrieval.trec_bulk), tried first
_bulk_run = bulk_run
_bulk_qrels = bulk_qrels

_SCORE = re.compile(
    rb"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity)\Z", re.IGNORECASE
)
_RUN_FIELDS = "qid iter docno rank score tag"
_QRELS_FIELDS = "qid iter docno label"
#: trec_eval's ``Q0`` in the qrels' second column, counted as ``0`` when told apart
_PLAIN_ITER = {b"Q0": b"0"}


#: what the qrels readers return: dicts, or (``lazy``) views
_Qrels = dict[str, dict[str, int]] | dict[str, Mapping[str, int]]


def _require_regular(p: Path, what: str) -> None:
    """Refuse a pipe, device, directory or link loop before it is opened (FIFOs block)."""
    if (problem := regular_file_problem(p, what)) is not None:
        if p.is_dir() or not p.exists():  # not existing: a symbolic link loop (or unreadable)
            raise TrecFormatError.whole(p, directory_message(p, what) if p.is_dir() else problem)
        raise TrecFormatError(p, None, "is a pipe or device, not a regular file",
                              f"Save the {what} to a file")


# --------------------------------------------------------------------------- public API
def load_run(path: str | Path, *, name: str | None = None,
             judged: Container[str] | None = None) -> RankedRun:
    """Read a TREC run file (plain or gzip) into a :class:`~evalkit.data.ranked_ids.RankedRun`.

    Args:
        path: the run file.
        name: the run's name; defaults to the tag of the file's last line (as trec_eval's
            ``runid``).
        judged: the query ids the qrels judge, when known: a document listed twice for a
            query outside them is read once (its first line kept), as trec_eval, which
            never reads an unjudged query's ranking, accepts it. None: every duplicate
            is refused.

    Returns:
        The rankings in trec_eval's order, with ``path`` and ``sha256`` (of the file's
        bytes) set; ``meta`` holds ``lines`` (result lines read) and ``parser``.

    Raises:
        FileNotFoundError: no such file.
        DuplicateLineError (TrecFormatError): a duplicate (see ``judged``), both lines
            named; the file is read up to the second of them, no further.
        TrecFormatError: see the module docstring; a pipe, device or directory.
    """
    p = Path(path)
    _require_regular(p, "run")
    digest = sha256_meanwhile(p)
    with reading(p, "run"):  # out of memory: one line naming the file (evalkit.cli)
        text = _file_text(p)
        _probe(text, p, _careful_run, judged=judged)
        # the list is the only reference to the parsed table, which _ranked frees once
        # it is ranked
        read = [None if _repetitive(text) else _bulk_run(text)]
        if read[0] is None:
            read = [_careful_run(text, p, judged)]
        run = _ranked(read, p, text, judged)
    run.sha256 = digest()
    run.path = str(p)
    if name:
        run.name = name
    return run


@dataclass
class RunScores:
    """A run with its scores, each query's documents in trec_eval's order.

    Attributes:
        name: the run tag (of the file's last line).
        queries: ``{query id: (doc ids best first, their scores)}``, queries in order of
            first appearance in the file.
        path: the file read.
    """

    name: str
    queries: dict[str, tuple[list[str], list[float]]]
    path: str


def load_run_scores(path: str | Path) -> RunScores:
    """Read a TREC run file (plain or gzip) keeping every document's score: what run
    fusion (:mod:`evalkit_retrieval.fusion`) works on.

    Documents are ranked as :func:`load_run` ranks them (score descending, equal scores by
    document id descending: :func:`evalkit_retrieval.ranking.rank_order`).

    Raises:
        FileNotFoundError: no such file.
        TrecFormatError: see the module docstring (a duplicate names both lines).
    """
    from evalkit_retrieval.ranking import rank_order

    p = Path(path)
    _require_regular(p, "run")
    text = _file_text(p)
    _probe(text, p, _careful_run)
    cols = (None if _repetitive(text) else _bulk_run(text)) or _careful_run(text, p)
    order = rank_order(cols.qids, cols.docids, cols.scores)
    docs = [d if isinstance(d, str) else d.decode("ascii")
            for d in order.ranked(np.asarray(cols.docids)).tolist()]
    scores = order.ranked(np.asarray(cols.scores, dtype=np.float64)).tolist()
    queries: dict[str, tuple[list[str], list[float]]] = {}
    for qid, st, en in zip(order.qids, order.starts.tolist(), order.ends.tolist(),
                           strict=True):
        ranked = docs[st:en]
        if len(set(ranked)) != len(ranked):
            _careful_run(text, p)  # names the two lines
            raise DuplicateDocumentError(qid, ranked[0])  # pragma: no cover
        queries[qid] = (ranked, scores[st:en])
    return RunScores(cols.tag, queries, str(p))


@overload
def load_qrels(path: str | Path, *, lazy: Literal[False] = False, subtopics: bool = False
               ) -> dict[str, dict[str, int]]: ...


@overload
def load_qrels(path: str | Path, *, lazy: bool, subtopics: bool = False
               ) -> dict[str, Mapping[str, int]]: ...


def load_qrels(path: str | Path, *, lazy: bool = False, subtopics: bool = False) -> _Qrels:
    """Read a TREC qrels file (plain or gzip): ``{qid: {docno: label}}``.

    Queries and documents keep the file's order. Labels are kept as given (negative
    labels included; every label <= 0 is non-relevant).

    Args:
        lazy: give each query a ``{docno: label}`` view of the parsed arrays, made into
            strings when read (:class:`~evalkit_retrieval.columns.ColumnJudged`, what
            evalkit's own evaluation uses), instead of a ``dict``.
        subtopics: read a file whose second column holds two or more distinct values as
            subtopic qrels (``qid subtopic docno label``,
            :class:`~evalkit_retrieval.subtopics.SubtopicJudgments` per query, ``lazy``
            not applying); by default the second column is ignored, as trec_eval ignores
            it, and a document judged twice for one query is refused.

    ``irds:DATASET_ID`` reads the qrels of an ir_datasets dataset instead
    (:func:`evalkit_retrieval.irds.load_qrels`, ``subtopics`` as for a file; ``lazy``
    does not apply).

    Raises:
        FileNotFoundError: no such file.
        TrecFormatError: see the module docstring; a pipe, device or directory.
        evalkit_retrieval.irds.IrdsError (ValueError): an ``irds:`` id that cannot be read.
    """
    if str(path).startswith("irds:"):
        from evalkit_retrieval import irds

        return dict(irds.load_qrels(str(path), subtopics=subtopics))
    p = Path(path)
    _require_regular(p, "qrels")
    with reading(p, "qrels"):  # out of memory: one line naming the file (evalkit.cli)
        return _qrels(_file_text(p), p, lazy, subtopics)


def parse_run(raw: bytes, *, source: str | Path = "<run>") -> RankedRun:
    """Parse the bytes of a TREC run file (``source`` names it in errors).

    A file the bulk reader takes is kept in arrays (:mod:`evalkit_retrieval.columns`):
    each query's ranking is a lazy view whose ids become strings when read.

    Raises:
        TrecFormatError: see the module docstring.
    """
    text = _text_bytes(raw, source)
    _probe(text, source, _careful_run)
    read: list[RunTable | None] = [None if _repetitive(text) else _bulk_run(text)]
    if read[0] is None:
        read = [_careful_run(text, source)]
    return _ranked(read, source, text)


def _ranked(read: list[RunTable | None], source: str | Path, text: _Text,
            judged: Container[str] | None = None) -> RankedRun:
    """The run of what a reader read, ``[table]`` (``text``: the file's text, for the
    careful reader to name a duplicate's lines, or to read past duplicates outside
    ``judged``). The list is emptied, so that the caller keeps no reference to the
    parsed table: a bulk table (41 MB at 1,000,000 lines) is freed before the run's keys
    are made, and before the careful reader reads the file again."""
    cols = read.pop()
    assert cols is not None and not read
    name, lines, parser = cols.tag, len(cols.scores), cols.path
    ignored = all_tied(cols.qids, cols.scores) and ranks_strict(text, source)
    rankings: dict[str, Sequence[str]] | None = None
    if parser == "bulk":
        parsed: list[Any] = [cols.qids, cols.docids, cols.scores]
        del cols  # the parsed table is freed once ranked
        columns = ranked_columns(parsed)
        if not columns.duplicate:
            rankings = dict(columns.views())
        del columns
        if rankings is None:  # raises naming the two lines, or reads past them
            _first_duplicate(text, source, judged)
            cols = _careful_run(text, source, judged)
            name, lines, parser = cols.tag, len(cols.scores), cols.path
    if rankings is None:
        try:
            rankings = dict(rank_arrays(cols.qids, cols.docids, cols.scores))
        except DuplicateDocumentError:  # pragma: no cover - the careful reader refuses them
            _careful_run(text, source)
            raise
    meta: dict[str, Any] = {"lines": lines, "parser": parser}
    if ignored:
        meta["rank_column_ignored"] = True
    return RankedRun(name=name, rankings=rankings, meta=meta)


@overload
def parse_qrels(raw: bytes, *, source: str | Path = "<qrels>", lazy: Literal[False] = False,
                subtopics: bool = False) -> dict[str, dict[str, int]]: ...


@overload
def parse_qrels(raw: bytes, *, source: str | Path = "<qrels>", lazy: bool,
                subtopics: bool = False) -> dict[str, Mapping[str, int]]: ...


def parse_qrels(raw: bytes, *, source: str | Path = "<qrels>", lazy: bool = False,
                subtopics: bool = False) -> _Qrels:
    """Parse the bytes of a TREC qrels file (``source`` names it in errors); ``lazy`` and
    ``subtopics`` as for :func:`load_qrels`.

    Raises:
        TrecFormatError: see the module docstring.
    """
    return _qrels(_text_bytes(raw, source), source, lazy, subtopics)


def _qrels(text: _Text, source: str | Path, lazy: bool, subtopics: bool) -> _Qrels:
    """The qrels of ``text``: subtopic qrels when asked and found, else by the bulk
    reader, else by the careful one."""
    if subtopics:
        found: _Qrels | None = _subtopic_qrels(text, source)  # qid subtopic docno label
        if found is not None:
            return found
    _probe(text, source, _careful_qrels)
    out = None if _repetitive(text) else _bulk_qrels(text)
    if out is None:
        return dict(_careful_qrels(text, source))
    return out if lazy else {q: dict(judged) for q, judged in out.items()}


# --------------------------------------------------------------------------- shared
def _file_text(p: Path) -> _Text:
    """The text of the file ``p`` (:func:`~evalkit_retrieval.trec_text.file_text`), gzip
    refused past :data:`MAX_INFLATED_BYTES`."""
    return file_text(p, MAX_INFLATED_BYTES)


def _repetitive(text: _Text) -> bool:
    """Whether ``text`` is gzip data that says it repeats itself
    (:data:`~evalkit_retrieval.trec_text.REPETITIVE`): the careful reader reads it first,
    in memory that grows with its distinct lines only, and stops at its first duplicate."""
    return isinstance(text, Stream) and text.repetitive


def _text_bytes(raw: bytes, source: str | Path) -> _Text:
    """The text of a file's bytes (:func:`~evalkit_retrieval.trec_text.text_bytes`), gzip
    refused past :data:`MAX_INFLATED_BYTES`."""
    return text_bytes(raw, source, MAX_INFLATED_BYTES)


#: the fix of a field longer than its limit, by what the field is
_TOO_LONG_FIX = {
    "run tag": "A run tag names the run in every report: shorten it (the tag of the "
               "file's last line names the run; was a line without separators passed?)",
    "subtopic": "A subtopic names one facet of a query: shorten it (was the wrong file, or "
                "a line without separators, passed?)",
}
_ID_TOO_LONG_FIX = ("Query and document ids name queries and documents in every report: "
                    "shorten it (was the wrong file, or a line without separators, passed?)")


def _decode(field: bytes, source: str | Path, lineno: int, what: str,
            limit: int | None = MAX_ID_CHARS) -> str:
    if limit is not None and len(field) > limit:
        raise TrecFormatError(
            source, lineno, f"the {what} is {len(field):,} bytes long (starts "
            f"{field[:20].decode('utf-8', 'replace')!r}); the limit is {limit}",
            _TOO_LONG_FIX.get(what, _ID_TOO_LONG_FIX),
        )
    try:
        return field.decode("utf-8")
    except UnicodeDecodeError:
        shown = repr(field) if len(field) <= _SHOWN_CHARS else (
            f"{field[:_SHOWN_CHARS]!r}... ({len(field):,} bytes)")
        raise TrecFormatError(
            source, lineno, f"the {what} {shown} is not valid UTF-8", utf8_fix(source),
        ) from None


def _empty(source: str | Path, kind: str, fields: str) -> TrecFormatError:
    return TrecFormatError(
        source, None,
        f"the {kind} file has no data lines (it is empty or holds only blank and "
        "comment lines)",
        f"Pass a TREC {kind} file with lines `{fields}`",
    )


# --------------------------------------------------------------------------- runs
def _careful_run(text: _Text, source: str | Path, judged: Container[str] | None = None,
                 *, head: bool = False) -> RunTable:
    """The run ``text`` holds, read line by line, stopping at the first line that is wrong
    (named with its problem and fix). A duplicate of a query outside ``judged`` (when
    given) is skipped: see :func:`load_run`. ``head``: ``text`` is the first lines of a
    file only (:func:`_probe`), so that no data line, or the last line's tag, say nothing.

    Memory: each line read keeps its document id (a ``str``), its score (8 bytes), a
    reference to its query's id (one ``str`` per query) and its line number in its
    query's ``{doc: line}``.

    Raises:
        TrecFormatError: see the module docstring; DuplicateLineError for a duplicate.
    """
    qids: list[str] = []
    docids: list[str] = []
    scores = array("d")
    # by query id: that id (one str per query, which every line of the query refers to)
    # and {doc: line}
    first_line: dict[str, tuple[str, dict[str, int]]] = {}
    tag, tag_line = "", 0
    for lineno, fields in _lines(text, source):
        if len(fields) < 6:
            qrels_like = len(fields) == 4 and LABEL_TEXT.match(fields[3]) is not None
            raise TrecFormatError(
                source, lineno,
                f"expected at least 6 fields `{_RUN_FIELDS}`, found {len(fields)}",
                f"This looks like a qrels line (`{_QRELS_FIELDS}`): were the run and the "
                "qrels swapped? Pass the ranked run as the run and this file as the qrels"
                if qrels_like else
                "Each run line needs a query id, an iteration (Q0), a document id, a rank, "
                "a score and a run tag, separated by whitespace",
            )
        qid = _decode(fields[0], source, lineno, "query id")
        doc = _decode(fields[2], source, lineno, "document id")
        token = fields[4]
        is_nan = token.lower() in (b"nan", b"+nan", b"-nan")
        if not is_nan and not _SCORE.match(token):
            raise TrecFormatError(
                source, lineno, f"the score {_shown(token)} is not a number",
                "Field 5 of a run line is the score, a decimal number",
            )
        score = float(token)  # inf, -inf, and beyond a double's range inf, as atof
        if is_nan:
            raise TrecFormatError(
                source, lineno,
                f"the score {_shown(token)} of document {_shown(doc)} is not a number (NaN)",
                f"Write a number in the score column (field 5): {NAN_FIX}",
            )
        tag = _decode(fields[5], source, lineno, "run tag", None)
        tag_line = lineno
        known = first_line.get(qid)
        if known is None:
            known = first_line[qid] = (qid, {})
        qid, lines_of = known
        if doc in lines_of:
            if judged is not None and qid not in judged:
                continue  # trec_eval never reads the ranking of a query it does not judge
            raise DuplicateLineError(source, lineno, lines_of[doc], qid, doc,
                                     judged=judged is not None)
        lines_of[doc] = lineno
        qids.append(qid)
        docids.append(doc)
        scores.append(score)
    if head or not qids:
        if head:
            return RunTable(qids=[], docids=[], scores=np.zeros(0), tag="", path="careful")
        raise _empty(source, "run", _RUN_FIELDS)
    # the last line's tag names the run (as in trec_eval); only that one is printed back
    _decode(tag.encode("utf-8"), source, tag_line, "run tag", MAX_NAME_CHARS)
    return RunTable(
        qids=qids, docids=docids, scores=np.frombuffer(scores, dtype=np.float64).copy(),
        tag=tag, path="careful",
    )


# --------------------------------------------------------------------------- qrels
def _subtopic_qrels(text: _Text, source: str | Path) -> dict[str, dict[str, int]] | None:
    """``{qid: SubtopicJudgments}`` (each a ``dict``) of subtopic qrels, or None when
    ``text`` is ordinary qrels (:func:`~evalkit_retrieval.subtopics.is_subtopic_qrels`).

    Raises:
        TrecFormatError: a line without four fields, a label that is not an integer, a
            document judged twice for one (query, subtopic) (both lines named).
    """
    from evalkit_retrieval.subtopics import SubtopicJudgments, is_subtopic_qrels

    with _open_text(text) as fh:
        # lines of at most MAX_LINE bytes: one without end is not held whole (the careful
        # reader refuses it)
        if not is_subtopic_qrels(iter(lambda: fh.readline(MAX_LINE), b"")):
            return None
    grouped: dict[str, dict[str, dict[str, int]]] = {}
    where: dict[tuple[str, str, str], int] = {}
    for lineno, fields in _lines(text, source):
        if len(fields) != 4:
            raise TrecFormatError(
                source, lineno, f"expected 4 fields (qid subtopic docno label), got "
                f"{len(fields)}", "Write one judgment per line: query id, subtopic, "
                "document id, integer label")
        qid = _decode(fields[0], source, lineno, "query id")
        sub = _decode(fields[1], source, lineno, "subtopic")
        doc = _decode(fields[2], source, lineno, "document id")
        label = _label(fields[3], source, lineno)
        key = (qid, sub, doc)
        if key in where:
            raise TrecFormatError(
                source, lineno, f"document {_shown(doc)} is judged twice for query "
                f"{_shown(qid)}, subtopic {_shown(sub)} (lines {where[key]} and {lineno})",
                "Keep one line per (query, subtopic, document)")
        where[key] = lineno
        grouped.setdefault(qid, {}).setdefault(sub, {})[doc] = label
    out: dict[str, dict[str, int]] = {qid: SubtopicJudgments(subs)
                                      for qid, subs in grouped.items()}
    return out


def _label(field: bytes, source: str | Path, lineno: int) -> int:
    """The relevance label of a qrels line (field 4), as
    :func:`~evalkit_retrieval.trec_text.label_of_text` reads it (``1.0`` and ``1e0`` are 1,
    as trec_eval's ``atol`` reads them).

    Raises:
        TrecFormatError: not an integer (``2.5``, ``1.5e0``), an integer trec_eval would
            read as another (``1e3``), or outside the 64-bit range (echoed cut).
    """
    fix = "Field 4 of a qrels line is an integer label (0 = not relevant)"
    label = label_of_text(field)
    if isinstance(label, str):
        raise TrecFormatError(source, lineno, label, fix)
    problem = label_problem(label)
    if problem is not None:
        raise TrecFormatError(source, lineno, problem, fix)
    return label


def _careful_qrels(text: _Text, source: str | Path, *, head: bool = False
                   ) -> dict[str, dict[str, int]]:
    """The qrels ``text`` holds, read line by line, stopping at the first line that is
    wrong (named with its problem and fix); ``head`` as for :func:`_careful_run`.

    Raises:
        TrecFormatError: see the module docstring.
    """
    out: dict[str, dict[str, int]] = {}
    first_line: dict[tuple[str, str], tuple[int, int, bytes]] = {}
    for lineno, fields in _lines(text, source):
        if len(fields) != 4:
            run_like = len(fields) >= 6 and _SCORE.match(fields[4]) is not None
            hint = (
                f"This looks like a run line (`{_RUN_FIELDS}`): were the run and the qrels "
                "swapped? Pass the judgments (4 fields) as the qrels and this file as the run"
                if run_like else
                "A qrels line has exactly 4 fields; a fifth field suggests another format "
                "(qrels_jg or prefs), which this loader does not read"
                if len(fields) > 4 else
                "Each qrels line needs a query id, an iteration (0), a document id and an "
                "integer relevance label"
            )
            raise TrecFormatError(
                source, lineno, f"expected 4 fields `{_QRELS_FIELDS}`, found {len(fields)}",
                hint,
            )
        qid = _decode(fields[0], source, lineno, "query id")
        doc = _decode(fields[2], source, lineno, "document id")
        label = _label(fields[3], source, lineno)
        key = (qid, doc)
        if key in first_line:
            prev_line, prev_label, prev_iter = first_line[key]
            detail = (
                f"with another label ({prev_label} on line {prev_line}, {label} here)"
                if prev_label != label else f"again (first on line {prev_line})"
            )
            subtopic = (
                "; the second column differs (subtopics?): it is ignored, as trec_eval "
                "ignores it, unless a diversity measure (alpha_ndcg@k, err_ia@k) is "
                "requested, which reads the file as subtopic qrels (qid subtopic docno "
                "label)" if _PLAIN_ITER.get(prev_iter, prev_iter)
                != _PLAIN_ITER.get(fields[1], fields[1]) else "")
            raise TrecFormatError(
                source, lineno,
                f"document {_shown(doc)} is judged {detail} for query {_shown(qid)}",
                "Qrels may judge each document once per query; trec_eval stops on this "
                "file with 'duplicate docs'. Keep one line per (query, document)" + subtopic,
            )
        first_line[key] = (lineno, label, fields[1])
        out.setdefault(qid, {})[doc] = label
    if not out and not head:
        raise _empty(source, "qrels", _QRELS_FIELDS)
    return out
