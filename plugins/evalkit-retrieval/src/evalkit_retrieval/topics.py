"""Query text from topic files: TREC topics (``<top> <num> <title> <desc> <narr>``) and
``qid<TAB>text`` TSV, plain or gzipped.

:func:`load_topics` gives ``{query id: text}``, the mapping ``evalkit.compare(topics=...)``
and ``evalkit compare --topics`` take, so the reports show each query beside its numbers.

TREC topic files come in two spellings, and both are read:

* the classic one of the ad hoc tracks (TREC-1 to TREC-8, Robust), whose fields are not
  closed: ``<num> Number: 401``, ``<title> foreign minorities, Germany``, ``<desc>
  Description:`` and ``<narr> Narrative:`` each run up to the next tag;
* the closed one (``<num>1</num><title>...</title>``), as in the Vaswani collection's
  ``query-text.trec``.

Labels (``Number:``, ``Topic:``, ``Description:``, ``Narrative:``) are removed and
whitespace runs become one space. A file whose first character (after a byte order mark
and blank space) is not ``<``, and that holds no ``<top>``, is read as TSV or BEIR
``queries.jsonl`` by :func:`evalkit_retrieval.beir.load_queries`. Only the standard library
is imported.
"""

from __future__ import annotations

import re
from os import PathLike
from pathlib import Path

#: Text read from one topic file at most (after decompression), in bytes; a topic file is
#: kilobytes, so more is not a topic file (or is a compression bomb).
MAX_BYTES = 256 << 20

#: The TREC topic fields, in the order a topic holds them.
FIELDS = ("title", "desc", "narr")

#: any tag: fields other than num, title, desc and narr (TREC-1's <dom>, <con>, <fac>...)
#: end the field before them and are left out
_TAG = re.compile(r"<\s*(/?)\s*([A-Za-z]+)\s*>")
_KEPT = ("num", *FIELDS)
_TOP = re.compile(r"<\s*top\s*>", re.I)
_LABELS = {
    "num": re.compile(r"^\s*number\s*:\s*", re.I),
    "title": re.compile(r"^\s*topic\s*:\s*", re.I),
    "desc": re.compile(r"^\s*description\s*:\s*", re.I),
    "narr": re.compile(r"^\s*narrative\s*:\s*", re.I),
}


class TopicsError(ValueError):
    """A topic file that cannot be read; the message names the file, the line and what to
    fix."""


def _read_text(path: Path) -> str:
    if str(path) == "-":
        raise TopicsError("topics -: standard input is not read here; save the topics to a "
                          "file and pass its path")
    from evalkit.io.symlink_loops import refuse_symlink_loop

    refuse_symlink_loop(path, "topics", error=TopicsError)
    if path.exists() and not path.is_file() and not path.is_dir():
        raise TopicsError(f"topics {path}: is a pipe or device, not a regular file; save "
                          "the topics to a file and pass its path")
    try:
        raw = path.read_bytes() if path.stat().st_size <= MAX_BYTES else b""
    except FileNotFoundError:
        raise TopicsError(f"topics {path}: no such file") from None
    except IsADirectoryError:
        raise TopicsError(f"topics {path}: is a directory; pass the topic file itself"
                          ) from None
    if not raw and path.stat().st_size > MAX_BYTES:
        raise TopicsError(f"topics {path}: larger than {MAX_BYTES >> 20} MiB; not a topic file")
    from evalkit.io.user_files import gunzipped

    raw = gunzipped(raw, f"topics {path}", "topic", max_bytes=MAX_BYTES, error=TopicsError)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        from evalkit.io.input_files import utf8_fix

        line = raw.count(b"\n", 0, exc.start) + 1
        raise TopicsError(f"topics {path}:{line}: not UTF-8 text (byte "
                          f"0x{raw[exc.start]:02x} on line {line}). {utf8_fix(path)}"
                          ) from None


def _clean(field: str, text: str) -> str:
    label = _LABELS.get(field)
    if label is not None:
        text = label.sub("", text, count=1)
    return " ".join(text.split())


def parse_trec_topics(text: str, source: str = "<text>") -> dict[str, dict[str, str]]:
    """``{topic number: {"title": ..., "desc": ..., "narr": ...}}`` of TREC topic text
    (fields a topic lacks are absent), in file order.

    Raises:
        TopicsError: no ``<top>``; a topic without ``<num>`` or with two; a number used
            twice; text outside any topic. The message names ``source`` and the line.
    """
    topics: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    start_line = 0
    field: str | None = None
    pos = 0

    def line_of(offset: int) -> int:
        return text.count("\n", 0, offset) + 1

    def flush_field(end: int) -> None:
        if current is not None and field in _KEPT:
            value = _clean(field, text[pos:end])
            if current.get(field):
                raise TopicsError(f"{source}:{line_of(end)}: a second <{field}> in the topic "
                                  f"that starts on line {start_line}")
            current[field] = value

    for m in _TAG.finditer(text):
        closing, tag = m.group(1) == "/", m.group(2).lower()
        if current is None:
            if tag != "top" or closing:
                raise TopicsError(f"{source}:{line_of(m.start())}: <{'/' if closing else ''}"
                                  f"{tag}> outside a <top> ... </top> topic")
            if text[pos:m.start()].strip():
                raise TopicsError(f"{source}:{line_of(pos)}: text outside a <top> ... </top> "
                                  "topic")
            current, start_line, field, pos = {}, line_of(m.start()), None, m.end()
            continue
        flush_field(m.start())
        field, pos = (None if closing else tag), m.end()
        if tag == "top":
            if not closing:
                raise TopicsError(f"{source}:{line_of(m.start())}: <top> inside the topic that "
                                  f"starts on line {start_line}; close it with </top>")
            num = current.pop("num", "")
            if not num:
                raise TopicsError(f"{source}:{start_line}: a topic without a <num>")
            if num in topics:
                raise TopicsError(f"{source}:{start_line}: topic number {num!r} given twice")
            topics[num] = {k: v for k, v in current.items() if v}
            current = None
    if current is not None:
        raise TopicsError(f"{source}:{start_line}: the topic that starts here has no </top>")
    if text[pos:].strip():
        raise TopicsError(f"{source}:{line_of(pos)}: text outside a <top> ... </top> topic")
    if not topics:
        raise TopicsError(f"{source}: no <top> topic found")
    return topics


def load_topics(path: str | PathLike[str], field: str = "title") -> dict[str, str]:
    """``{query id: text}`` from a topic file (see the module docstring for the formats).

    Args:
        path: a TREC topic file, a ``qid<TAB>text`` TSV or a BEIR ``queries.jsonl``; gzip
            is recognised by its bytes, not its name. ``irds:DATASET_ID``: the queries of
            an ir_datasets dataset (:func:`evalkit_retrieval.irds.load_topics`).
        field: for TREC topics, the field that becomes the text: ``"title"`` (the short
            query, the default), ``"desc"`` or ``"narr"``. A topic that lacks it takes the
            first of title, description, narrative that it has.

    Raises:
        TopicsError: a missing file or a directory, more than :data:`MAX_BYTES`, not
            UTF-8, or malformed TREC topics (file and line named); an unknown ``field``.
        evalkit_retrieval.beir.BeirError: a malformed TSV or JSON Lines file (file and line named).
        evalkit_retrieval.irds.IrdsError (ValueError): an ``irds:`` id that cannot be read.
    """
    if field not in FIELDS:
        raise TopicsError(f"topics field {field!r}: expected one of {', '.join(FIELDS)}")
    if str(path).startswith("irds:"):  # an ir_datasets id (evalkit_retrieval.irds)
        from evalkit_retrieval import irds

        return irds.load_topics(str(path), field)
    p = Path(path)
    text = _read_text(p)
    if not text.lstrip().startswith("<") and not _TOP.search(text):
        from evalkit_retrieval.beir import load_queries

        return load_queries(p)
    out: dict[str, str] = {}
    for num, fields in parse_trec_topics(text, str(p)).items():
        chosen = fields.get(field) or next((fields[f] for f in FIELDS if fields.get(f)), "")
        out[num] = chosen
    return out


__all__ = ["FIELDS", "MAX_BYTES", "TopicsError", "load_topics", "parse_trec_topics"]
