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
from typing import IO, Any

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


#: the longest line of a JSON Lines golden set or labels file (bytes), as of a TREC file,
#: a checks file or a clusters file: a case or a label is never near it
MAX_JSONL_LINE_BYTES = 16 << 20
#: the longest line of a run artifact (bytes): a row holds a response's text and ranked
#: ids (an HTTP target reads at most 10 MB of a response by default) and its raw body cut
#: to 64 KiB; 256 MiB is 25 times that, and refuses a line that would take gigabytes to
#: decode
MAX_ARTIFACT_LINE_BYTES = 256 << 20


def long_line(data: bytes | str, max_len: int) -> tuple[int, int] | None:
    """``(1-based line number, length)`` of the first line of ``data`` (lines end at
    ``\n``; the length without it) longer than ``max_len``, or None.

    Linear in ``len(data)`` and quick: windows of ``max_len // 2`` are searched for a line
    break (every line longer than ``max_len`` holds one without); only a window without
    one has its line measured. Nothing is copied.
    """
    nl: Any = b"\n" if isinstance(data, bytes) else "\n"
    if len(data) <= max_len:
        return None
    step = max(1, max_len // 2)
    pos = 0
    while pos < len(data):
        end = min(pos + step, len(data))
        if data.find(nl, pos, end) < 0 and end - pos == step:
            start = data.rfind(nl, 0, pos) + 1
            stop = data.find(nl, end)
            stop = len(data) if stop < 0 else stop
            if stop - start > max_len:
                return data.count(nl, 0, start) + 1, stop - start
            pos = stop + 1
            continue
        pos = end
    return None


class LongLineError(ValueError):
    """A line longer than the cap of :func:`bounded_lines`: ``lineno`` (1-based) and
    ``length`` (bytes, without its newline)."""

    def __init__(self, lineno: int, length: int) -> None:
        super().__init__(f"line {lineno} is {length:,} bytes long")
        self.lineno, self.length = lineno, length


def bounded_lines(fh: IO[bytes], max_len: int, offset: int = 0
                  ) -> Iterator[tuple[int, int, bytes]]:
    """``(1-based line number, byte offset, line)`` of the binary file ``fh`` read from
    its position (at byte ``offset`` of the file) one line at a time, each line with its
    ``\n`` (the last one without, when the file does not end with one): what
    ``io.BytesIO(data)`` yields, holding one line at a time.

    Raises:
        LongLineError: a line longer than ``max_len`` bytes without its newline (as
            :func:`long_line` finds it), measured without being kept: at most
            ``max_len + 1`` bytes of it are read at once.
    """
    lineno = 0
    while True:
        line = fh.readline(max_len + 1)
        if not line:
            return
        lineno += 1
        if len(line) > max_len and not line.endswith(b"\n"):  # longer than the cap
            length = len(line)
            while not line.endswith(b"\n"):
                line = fh.readline(max_len + 1)
                if not line:
                    break
                length += len(line)
            raise LongLineError(lineno, length - line.endswith(b"\n"))
        yield lineno, offset, line
        offset += len(line)


def is_blank(line: str) -> bool:
    """Whether ``line`` holds ASCII white space alone (:data:`ASCII_SPACE`): a line the
    JSON Lines readers skip. Other white space (U+00A0, U+2028) is not blank: JSON does
    not skip it."""
    return not line.strip(ASCII_SPACE)


__all__ = ["ASCII_SPACE", "MAX_ARTIFACT_LINE_BYTES", "MAX_JSONL_LINE_BYTES", "LongLineError",
           "bounded_lines", "csv_lines", "is_blank", "long_line", "text_lines", "universal_lines"]
