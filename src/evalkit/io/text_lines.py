"""The lines of a user's text file, as its format defines them.

JSON Lines files (golden sets, labels, BEIR ``corpus.jsonl`` and ``queries.jsonl``) are
split at ``\\n`` alone, a ``\\r`` before it dropped (:func:`text_lines`): the other
characters :meth:`str.splitlines` breaks at (U+2028, U+2029, U+0085, ``\\x0b``,
``\\x0c``, ``\\x1c``-``\\x1e``, a lone ``\\r``) are legal inside a JSON string (a lone
``\\r`` between its tokens), and stay in the record. Tab-separated files (BEIR queries and
qrels, ``query id<TAB>value`` files) end lines at ``\\n``, ``\\r\\n`` or ``\\r``, as
Python's ``open(path)`` reads them and BEIR's own reader does (:func:`universal_lines`).
CSV is read as :func:`csv.reader` reads a file opened with ``newline=""``
(:func:`csv_lines`): lines end at ``\\n``, ``\\r\\n`` or ``\\r``, kept on the line, so
that a quoted cell keeps its line breaks exactly. Only the standard library is imported.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: what a blank line of a JSON Lines or tab-separated file holds (ASCII white space, as
#: :meth:`bytes.isspace`; the artifact reader's blank line too)
ASCII_SPACE = " \t\n\r\x0b\x0c"

#: one line of a file opened with ``newline=""``: up to and with its end (``\r\n``,
#: ``\r`` or ``\n``), or the last line without one
_UNIVERSAL_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+\Z")


def text_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(1-based line number, line)`` of ``text`` split at ``\\n`` alone, each line
    without its end (``\\n``, or ``\\r\\n``). A trailing ``\\n`` ends the last line (no
    empty line after it)."""
    lines = text.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    for lineno, line in enumerate(lines, start=1):
        yield lineno, line[:-1] if line.endswith("\r") else line


def universal_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(1-based line number, line)`` of ``text`` split at ``\\n``, ``\\r\\n`` or a lone
    ``\\r`` (as a file opened with ``open(path)`` is read), each line without its end;
    U+2028, U+0085, form feeds and the like are characters of their line."""
    for lineno, line in enumerate(csv_lines(text), start=1):
        yield lineno, line.rstrip("\r\n")


def csv_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` with their ends, as a file opened with ``newline=""`` gives
    them (ends ``\\r\\n``, ``\\r`` or ``\\n``): what :func:`csv.reader` reads a file from,
    so that its cells and :attr:`line_num` are those of ``csv.reader(open(path,
    newline=""))``. Read lazily (no copy of ``text``)."""
    for m in _UNIVERSAL_LINE.finditer(text):
        yield m.group()


def is_blank(line: str) -> bool:
    """Whether ``line`` holds ASCII white space alone (:data:`ASCII_SPACE`): a line the
    JSON Lines readers skip. Other white space (U+00A0, U+2028) is not blank: JSON does
    not skip it."""
    return not line.strip(ASCII_SPACE)


__all__ = ["ASCII_SPACE", "csv_lines", "is_blank", "text_lines", "universal_lines"]
