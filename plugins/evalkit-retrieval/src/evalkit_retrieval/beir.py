"""BEIR-format corpus, queries and qrels, read from a data root the caller chooses.

A BEIR dataset directory holds ``corpus.jsonl`` (``{"_id", "title", "text", ...}`` per
line), ``queries.jsonl`` (``{"_id", "text", ...}``) and ``qrels/<split>.tsv`` (a header
``query-id<TAB>corpus-id<TAB>score`` then one judgment per line). Query files may also be
``<id><TAB><text>`` TSV (as Anserini's topic files). Every reader accepts gzip (``.gz``),
a UTF-8 byte order mark and CRLF line ends, keeps ids as text, and raises
:class:`BeirError` naming the file and line on malformed input or an empty file. A JSON
Lines record ends at ``\\n`` (or ``\\r\\n``) alone, a TSV line at ``\\n``, ``\\r\\n`` or
``\\r``: a U+2028, U+2029 or U+0085 in a JSON string or a query's text is a character of
it, as JSON and BEIR's own readers take it.

Nothing here looks next to the installed package: pass the directory or the files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet, json_objects
from evalkit.io.limits import LimitError, check_id, label_problem, text_problem
from evalkit.io.text_lines import ASCII_SPACE, universal_lines

QRELS_HEADER = ("query-id", "corpus-id", "score")
#: what separates the fields of a qrels line: tabs, or runs of ASCII white space (as a
#: TREC file's fields are separated), never a U+00A0 or U+2028 inside an id
_FIELD_BREAK = re.compile(f"[{re.escape(ASCII_SPACE)}]+")


class BeirError(ValueError):
    """A BEIR file that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class BeirDataset:
    """A loaded BEIR split.

    Attributes:
        root: the data directory.
        corpus: ``{doc id: {"title": ..., "text": ..., other fields}}`` (empty when the
            directory has no corpus file and ``corpus=False`` was passed).
        queries: ``{query id: text}`` for the queries judged in this split.
        qrels: ``{query id: {doc id: label}}``.
    """

    root: Path
    corpus: dict[str, dict[str, Any]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]

    def goldens(self, relevance_level: int = 1) -> GoldenSet:
        """A :class:`GoldenSet` of this split, one case per judged query, in qrels order."""
        return goldens_from_qrels(self.queries, self.qrels, relevance_level=relevance_level)


def _text(path: Path) -> str:
    """The text of a BEIR file, gzip or plain, BOM-free (UTF-8, no NUL byte)."""
    from evalkit.io.user_files import MAX_GOLDEN_BYTES, gunzipped, read_input

    raw = read_input(path, "BEIR", max_bytes=MAX_GOLDEN_BYTES, error=BeirError)
    raw = gunzipped(raw, str(path), "BEIR", max_bytes=MAX_GOLDEN_BYTES, error=BeirError)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BeirError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    nul = text.find("\x00")
    if nul >= 0:
        raise BeirError(f"{path}:{text.count(chr(10), 0, nul) + 1}: the line contains a NUL "
                        "byte; the file may be binary or UTF-16: save it as UTF-8 text")
    return text


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, line without its end)`` of a TSV file, gzip or plain, BOM-free:
    lines end at ``\\n``, ``\\r\\n`` or ``\\r``
    (:func:`evalkit.io.text_lines.universal_lines`), so a U+2028 or a form feed in a
    query's text stays in it."""
    yield from universal_lines(_text(path))


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of a JSON Lines file, read as golden files are
    (:func:`evalkit.data.goldens.json_objects`: bounded depth, a repeated key refused)."""
    objects = list(json_objects(_text(path), path, BeirError))
    if not objects:
        raise BeirError(f"{path}: empty file")
    yield from objects


def _doc_id(obj: Mapping[str, Any], path: Path, lineno: int) -> str:
    value = obj.get("_id")
    if isinstance(value, bool) or value is None or value == "":
        raise BeirError(f"{path}:{lineno}: missing '_id'")
    if not isinstance(value, str | int):
        raise BeirError(f"{path}:{lineno}: '_id' must be text, got {value!r}")
    return _checked(str(value), path, lineno, "'_id'")


def _checked(text: str, path: Path, lineno: int, what: str) -> str:
    """``text`` as an id (:func:`evalkit.io.limits.check_id`: bounded, printable, no white
    space around it)."""
    try:
        return check_id(text, what)
    except LimitError as exc:
        raise BeirError(f"{path}:{lineno}: {exc}") from None


def load_corpus(path: str | Path) -> dict[str, dict[str, Any]]:
    """``{doc id: record}`` from a BEIR ``corpus.jsonl`` (``_id`` removed from the record).

    Raises:
        BeirError: malformed line, missing ``_id``, duplicate id, or an empty file.
    """
    p = Path(path)
    out: dict[str, dict[str, Any]] = {}
    for lineno, obj in _jsonl(p):
        doc = _doc_id(obj, p, lineno)
        if doc in out:
            raise BeirError(f"{p}:{lineno}: duplicate document id {doc!r}")
        out[doc] = {k: v for k, v in obj.items() if k != "_id"}
    return out


#: The first column of a queries TSV's header line.
_QUERY_HEADERS = ("query-id", "_id", "id", "qid")
#: Header names of the column that holds a query's text.
_TEXT_HEADERS = ("text", "query", "title", "query_text", "querytext")


def _columns_message(path: Path, lineno: int, parts: list[str], header: bool) -> str:
    """Why a queries TSV line is refused, and how to make the file two columns."""
    if len(parts) == 2:  # two columns, the first empty
        return f"{path}:{lineno}: the query id (before the tab) is empty"
    if len(parts) == 1:
        return f"{path}:{lineno}: expected '<query id><TAB><text>', found no tab"
    names = [x.strip().lower() for x in parts]
    what = "the header names" if header else "the line has"
    found = f"{what} {len(parts)} tab-separated columns"
    if header:
        found += f" ({', '.join(repr(x.strip()) for x in parts)})"
    column = next((i + 1 for i, x in enumerate(names) if i and x in _TEXT_HEADERS),
                  None) if header else None
    n = "N" if column is None else str(column)
    gz = path.name.lower().endswith(".gz")
    cut = f"zcat {path} | cut -f1,{n}" if gz else f"cut -f1,{n} {path}"
    keep = cut + " > queries.tsv" + ("" if column is not None else
                                     ", N being the text's column")
    return (f"{path}:{lineno}: {found}; a queries TSV has two, '<query id><TAB><text>', "
            "and evalkit never joins columns into a query's text. Write a file of the id "
            f"and the text ({keep}); a tab inside a query's text must be a space")


def load_queries(path: str | Path) -> dict[str, str]:
    """``{query id: text}`` from ``queries.jsonl`` or a ``<id><TAB><text>`` TSV.

    The format is chosen by suffix (``.jsonl``/``.json`` vs anything else, ``.gz``
    ignored). A TSV whose first line is ``query-id<TAB>text`` (or ``_id``/``id``/``qid``)
    treats it as a header. Every line of a TSV has exactly two tab-separated columns: a
    file with more (``qid<TAB>original id<TAB>text``) is refused at its first such line,
    naming the columns and the ``cut`` command that keeps the id and the text, never read
    with the extra columns in the text.

    Raises:
        BeirError: malformed line (a line without a tab, or with more than one, or an empty
            id), duplicate id, or an empty file; file and line named.
    """
    p = Path(path)
    name = p.name.lower().removesuffix(".gz")
    out: dict[str, str] = {}
    if name.endswith((".jsonl", ".json")):
        for lineno, obj in _jsonl(p):
            qid = _doc_id(obj, p, lineno)
            text = obj.get("text")
            if not isinstance(text, str):
                raise BeirError(f"{p}:{lineno}: query {qid!r} has no 'text'")
            if text_problem(text, "") is not None:
                raise BeirError(f"{p}:{lineno}: {text_problem(text, f'query {qid!r}')}")
            if qid in out:
                raise BeirError(f"{p}:{lineno}: duplicate query id {qid!r}")
            out[qid] = text
        return out
    first = True
    for lineno, line in _lines(p):
        if not line.strip():
            continue
        parts = line.split("\t")
        header = first and parts[0].strip().lower() in _QUERY_HEADERS
        if len(parts) != 2 or not parts[0].strip():
            raise BeirError(_columns_message(p, lineno, parts, header))
        qid, text = parts[0].strip(), parts[1].strip()
        if header:
            first = False
            continue
        first = False
        qid = _checked(qid, p, lineno, "query id")
        if qid in out:
            raise BeirError(f"{p}:{lineno}: duplicate query id {qid!r}")
        out[qid] = text
    if not out:
        raise BeirError(f"{p}: empty file; no queries")
    return out


def load_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """``{query id: {doc id: label}}`` from a BEIR qrels TSV with its header line.

    Columns are separated by tabs (runs of spaces are accepted too: ASCII white space). The header
    ``query-id corpus-id score`` is required, so a TREC qrels file given by mistake is
    refused instead of misread.

    Raises:
        BeirError: missing header, a line without three fields, a non-integer score, a
            repeated (query, doc) pair, or no judgments.
    """
    p = Path(path)
    out: dict[str, dict[str, int]] = {}
    header_seen = False
    for lineno, line in _lines(p):
        if not line.strip():
            continue
        fields = _FIELD_BREAK.split(line.strip(ASCII_SPACE))
        if not header_seen:
            if tuple(f.lower() for f in fields) != QRELS_HEADER:
                raise BeirError(
                    f"{p}:{lineno}: expected the BEIR header 'query-id<TAB>corpus-id<TAB>"
                    f"score', got {line.strip()!r} (a TREC qrels file has four columns and "
                    "no header; read it with the qrels loader of evalkit-retrieval)"
                )
            header_seen = True
            continue
        if len(fields) != 3:
            raise BeirError(f"{p}:{lineno}: expected 3 fields, got {len(fields)}")
        qid, doc, score = (_checked(fields[0], p, lineno, "query-id"),
                           _checked(fields[1], p, lineno, "corpus-id"), fields[2])
        try:
            label = int(score)
        except ValueError:
            raise BeirError(f"{p}:{lineno}: score {score!r} is not an integer") from None
        problem = label_problem(label)
        if problem is not None:
            raise BeirError(f"{p}:{lineno}: {problem}")
        judged = out.setdefault(qid, {})
        if doc in judged:
            raise BeirError(f"{p}:{lineno}: query {qid!r} judges document {doc!r} twice")
        judged[doc] = label
    if not out:
        raise BeirError(f"{p}: no judgments")
    return out


def goldens_from_qrels(
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    relevance_level: int = 1,
) -> GoldenSet:
    """One :class:`GoldenCase` per judged query (graded relevance kept).

    Raises:
        BeirError: a judged query has no text in ``queries``.
    """
    cases = []
    for qid, judged in qrels.items():
        if qid not in queries:
            raise BeirError(f"query {qid!r} is judged in the qrels but has no text")
        cases.append(
            GoldenCase.from_judgments(qid, dict(judged), relevance_level=relevance_level,
                                      query=queries[qid])
        )
    return GoldenSet(cases)


def _find(root: Path, stem: str) -> Path | None:
    for suffix in (".jsonl", ".jsonl.gz", ".tsv", ".tsv.gz"):
        candidate = root / f"{stem}{suffix}"
        if candidate.exists():
            return candidate
    return None


def load_beir(
    root: str | Path,
    split: str = "test",
    *,
    corpus: bool = True,
    queries_path: str | Path | None = None,
    qrels_path: str | Path | None = None,
) -> BeirDataset:
    """Load one split of a BEIR dataset from ``root``.

    Args:
        root: the dataset directory (``corpus.jsonl``, ``queries.jsonl``, ``qrels/``).
        split: the qrels split (``qrels/<split>.tsv``).
        corpus: read ``corpus.jsonl``; pass ``False`` when only queries and qrels exist.
        queries_path, qrels_path: override the file locations (relative to ``root``).

    Returns:
        A :class:`BeirDataset` whose queries are restricted to those judged in the split.

    Raises:
        BeirError: a file is missing or malformed, or a judged query has no text.
    """
    base = Path(root)
    if not base.is_dir():
        raise BeirError(f"{base}: not a directory")
    qrels_file = base / qrels_path if qrels_path else _find(base / "qrels", split)
    if qrels_file is None:
        raise BeirError(f"{base}: no qrels/{split}.tsv")
    queries_file = base / queries_path if queries_path else _find(base, "queries")
    if queries_file is None:
        raise BeirError(f"{base}: no queries.jsonl (pass queries_path=)")
    qrels = load_qrels(qrels_file)
    all_queries = load_queries(queries_file)
    missing = [q for q in qrels if q not in all_queries]
    if missing:
        raise BeirError(
            f"{qrels_file}: {len(missing)} judged queries have no text in {queries_file} "
            f"(first: {missing[0]!r})"
        )
    docs: dict[str, dict[str, Any]] = {}
    if corpus:
        corpus_file = _find(base, "corpus")
        if corpus_file is None:
            raise BeirError(f"{base}: no corpus.jsonl (pass corpus=False to skip it)")
        docs = load_corpus(corpus_file)
    return BeirDataset(
        root=base, corpus=docs, queries={q: all_queries[q] for q in qrels}, qrels=qrels,
    )
