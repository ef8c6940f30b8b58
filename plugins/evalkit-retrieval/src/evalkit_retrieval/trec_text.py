"""The text of a TREC run or qrels file as the readers of :mod:`evalkit_retrieval.trec`
read it: the bytes of a file read into memory, a plain file on disk, or gzip data
decompressed as it is read (a :class:`~evalkit_retrieval.trec_bulk.Stream`, never held
whole, refused past a cap); and its data lines read a buffer at a time
(:func:`lines`), so that a reader that stops at a bad line has read no further.
:class:`TrecFormatError` is the error of every reader.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Container, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from evalkit.io.limits import MAX_INFLATE_RATIO
from evalkit_retrieval.trec_bulk import BOM, Stream

#: bytes the careful reader's file objects read at a time
BUFFER = 1 << 20
#: the longest line the careful reader reads (a longer one is refused unread)
MAX_LINE = 16 << 20
#: bytes at the start of a file read carefully before the bulk reader reads it all, so
#: that a mistake in the first lines is named at once (:func:`probe`)
PROBE = 1 << 14
#: a gzip text that decompresses to more than this many times its compressed size (and
#: to more than 16 MiB) repeats itself: valid TREC lines, whose ids differ, compress about
#: 3-10 times; the careful reader reads it first, and stops at its first duplicate,
#: instead of the bulk reader holding every line of it
REPETITIVE = 100
#: the most characters of a field a message echoes (a longer one is cut, its length said)
SHOWN_CHARS = 40


class TrecFormatError(ValueError):
    """A TREC run or qrels file that cannot be read as such.

    Attributes:
        path: the file.
        line: the 1-based line number, or ``None`` for whole-file problems.
    """

    def __init__(self, path: str | Path, line: int | None, problem: str, fix: str) -> None:
        self.path = str(path)
        self.line = line
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}. {fix}")

    @classmethod
    def whole(cls, path: str | Path, message: str) -> TrecFormatError:
        """The error of the file ``path`` with ``message`` as its whole text (one a
        shared wording gives, such as :func:`evalkit.io.input_files.directory_message`)."""
        exc = cls(path, None, "", "")
        exc.args = (message,)
        return exc


class DuplicateLineError(TrecFormatError):
    """A run file listing document ``docid`` twice for query ``qid`` (on lines ``first``
    and ``line``). Raised for a query the qrels judge (``judged``), or for any query
    when the run is read without its qrels (trec_eval stops on a duplicate in a judged
    query, and never reads the rankings of the others)."""

    def __init__(self, path: str | Path, line: int, first: int, qid: str, docid: str, *,
                 judged: bool) -> None:
        why = ("A run may rank each document once per query; trec_eval stops on this file "
               "with 'duplicate docs' too, as the qrels judge this query" if judged else
               "A run may rank each document once per query (trec_eval stops with "
               "'duplicate docs' when the qrels judge the query)")
        super().__init__(
            path, line, f"document {shown(docid)} is listed again for query {shown(qid)} "
            f"(first on line {first})", f"{why}. Keep one line per (query, document)")
        self.first = first
        self.qid = qid
        self.docid = docid

    def in_judged_query(self) -> DuplicateLineError:
        """The same duplicate, told as one in a query the qrels judge."""
        return DuplicateLineError(self.path, self.line or 0, self.first, self.qid,
                                  self.docid, judged=True)


def shown(field: bytes | str) -> str:
    """A field of the file as a message echoes it: quoted, and cut after
    :data:`SHOWN_CHARS` characters with its length said (a 200 KB field in one line of
    a message says nothing more than its start)."""
    text = field.decode("utf-8", "replace") if isinstance(field, bytes) else field
    if len(text) <= SHOWN_CHARS:
        return repr(text)
    unit = "bytes" if isinstance(field, bytes) else "characters"
    return f"{text[:SHOWN_CHARS]!r}... ({len(field):,} {unit})"


#: a relevance label as written: digits, then an optional fraction and exponent
#: (``1``, ``-1.0``, ``+2.``, ``2.5``, ``1e3``)
LABEL_TEXT = re.compile(rb"([+-]?\d+)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\Z")
#: the digits of a 64-bit integer
_LABEL_DIGITS = 19


def label_of_text(field: bytes) -> int | str:
    """The relevance label ``field`` writes (a qrels line's field 4), or why it is not one.

    trec_eval 10.0 reads the label with ``atol`` (get_qrels.c): the sign and digits before
    anything else, so ``1.0`` is 1 and ``1.5`` is 1, ``1e3`` is 1 and ``2.0e1`` is 2.
    A label is taken when the number it writes is an integer and ``atol`` reads that
    integer: ``1``, ``1.0``, ``-1.00``, ``+2.``, ``1e0``, ``1.0E+0``, ``0e5``; a spelling
    trec_eval would silently read as another number is refused: not an integer (``2.5``,
    ``1.5e0``, ``.5``, ``1e-3``), or an integer written with an exponent that ``atol``
    cuts (``1e3`` is 1000, read as 1: write ``1000``). The value is computed exactly
    (digits and exponent, never a float).

    Returns:
        The label (an ``int`` within 64 bits), or the problem (a ``str`` to print).
    """
    m = LABEL_TEXT.match(field)
    if m is None:
        return f"the relevance label {shown(field)} is not an integer"
    whole, frac, exp = m.group(1), m.group(2) or b"", m.group(3)
    if len(whole.lstrip(b"+-").lstrip(b"0")) > _LABEL_DIGITS:  # int() stops at 4300
        return (f"the relevance label {shown(whole)} is outside the range of a 64-bit "
                "integer; labels are small grades such as 0-3")
    atol = int(whole)
    if exp is None:
        return atol if not frac.strip(b"0") else \
            f"the relevance label {shown(field)} is not an integer"
    digits = whole.lstrip(b"+-") + frac
    core = digits.rstrip(b"0")
    if len(exp.lstrip(b"+-")) <= 6:
        places = int(exp)
    else:  # beyond any label either way
        places = -10**7 if exp.startswith(b"-") else 10**7
    places += len(digits) - len(core) - len(frac)  # the power of 10 after core
    core = core.lstrip(b"0")
    if not core:
        value = 0
    elif places < 0:
        return f"the relevance label {shown(field)} is not an integer"
    elif len(core) + places > _LABEL_DIGITS:
        return (f"the relevance label {shown(field)} is outside the range of a 64-bit "
                "integer; labels are small grades such as 0-3")
    else:
        value = int(core) * 10**places * (-1 if whole.startswith(b"-") else 1)
    if value != atol:
        return (f"the relevance label {shown(field)} is {value} written with an exponent, "
                f"which trec_eval reads as {atol} (it reads the digits before the "
                f"'{'.' if b'.' in field else 'e'}'): write {value}")
    return value


#: a TREC file's text as the readers take it: bytes (a file read into memory), a plain
#: file on disk, or gzip data decompressed each time it is read (never whole)
Text = bytes | Path | Stream


def file_text(p: Path, cap: int) -> Text:
    """The text of the file ``p``: the file itself, or a :class:`Stream` of it when it is
    gzip data (its magic bytes)."""
    from evalkit.io.gzip_data import is_gzip

    with p.open("rb") as fh:
        head = fh.read(2)
    return gzip_text(p, p, cap) if is_gzip(head) else p


def text_bytes(raw: bytes, source: str | Path, cap: int) -> Text:
    """The text of a file's bytes ``raw``: themselves, or a :class:`Stream` of them when
    they are gzip data."""
    from evalkit.io.gzip_data import is_gzip

    return gzip_text(raw, source, cap) if is_gzip(raw) else raw


def gzip_text(data: Path | bytes, source: str | Path, cap: int) -> Stream:
    """A :class:`Stream` of the gzip file or bytes ``data``: each read decompresses the
    next piece, and a read past ``cap`` bytes or into damaged data raises
    :class:`TrecFormatError` naming ``source``."""

    def opened() -> io.BufferedIOBase:
        fh = data.open("rb") if isinstance(data, Path) else io.BytesIO(data)
        return io.BufferedReader(_Inflated(fh, source, cap), BUFFER)

    if isinstance(data, Path):
        with data.open("rb") as fh:
            packed = fh.seek(0, 2)
            fh.seek(max(0, packed - 4))
            trailer = fh.read(4)
    else:
        packed, trailer = len(data), data[-4:]
    # gzip's last 4 bytes: the size of the last member's data, modulo 2**32 (RFC 1952)
    size = int.from_bytes(trailer, "little") if len(trailer) == 4 else 0
    return Stream(opened, repetitive=size > max(REPETITIVE * packed, 16 << 20))


class _Inflated(io.RawIOBase):
    """:class:`evalkit.io.gzip_data.GzipReader` refusing, as :class:`TrecFormatError`,
    damaged data, more than ``cap`` bytes, and data past 16 MiB that decompresses to more
    than :data:`~evalkit.io.limits.MAX_INFLATE_RATIO` times its compressed size (a
    decompression bomb stops there, with what is held in memory one buffer's worth)."""

    def __init__(self, fh: BinaryIO, source: str | Path, cap: int) -> None:
        from evalkit.io.gzip_data import GzipReader

        super().__init__()
        self._fh = fh
        self._source = source
        self._reader = GzipReader(fh, cap, refuse_more=True, max_ratio=MAX_INFLATE_RATIO)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        from evalkit.io.gzip_data import DamagedGzipError, InflateLimitError, InflateRatioError

        try:
            return self._reader.readinto(buffer)
        except DamagedGzipError as exc:
            raise TrecFormatError(self._source, None, str(exc),
                                  "Copy or download the file again") from None
        except InflateRatioError as exc:
            raise TrecFormatError(
                self._source, None, f"{exc}: a decompression bomb (TREC text compresses 4 "
                "to 10 times), refused before it is read whole", "If the file really is "
                "such text, decompress it (gunzip -k) and pass the plain file") from None
        except InflateLimitError as exc:
            raise TrecFormatError(
                self._source, None, f"{exc}, the most evalkit decompresses of a gzip input "
                "(a decompression bomb stops there)", "If the file really is that large, "
                "decompress it (gunzip -k) and pass the plain file") from None

    def close(self) -> None:
        self._fh.close()
        super().close()


def open_text(text: Text) -> io.BufferedIOBase:
    """A binary file object reading ``text`` from its start."""
    if isinstance(text, bytes):
        return io.BytesIO(text)
    if isinstance(text, Stream):
        return text.open()
    return io.BufferedReader(io.FileIO(text), BUFFER)


def probe(text: Text, source: str | Path, read: Callable[..., object], **kw: Any) -> None:
    """Read the whole lines of the first :data:`PROBE` bytes of ``text`` with the careful
    reader ``read`` (``kw`` its options), so that their first mistake (a duplicate on line
    2, a malformed line) is raised before the bulk reader reads the whole file: the
    careful reader stops at a file's first mistake, so one found here is the one it names.

    Raises:
        TrecFormatError: the first mistake of those lines.
    """
    with open_text(text) as fh:
        head = fh.read(PROBE)
    if len(head) == PROBE:
        head = head[:head.rfind(b"\n") + 1]
    if head:
        read(head, source, head=True, **kw)


#: a byte that is not ASCII white space (what ``bytes.split()`` splits on)
_NOT_BLANK = re.compile(rb"[^ \t\r\n\x0b\x0c]")


def _too_long(source: str | Path, lineno: int, start: bytes) -> TrecFormatError:
    return TrecFormatError(
        source, lineno, f"the line is longer than {MAX_LINE >> 20} MiB (starts "
        f"{start[:20].decode('utf-8', 'replace')!r})" + (
            ", and holds NUL bytes" if b"\x00" in start else ""),
        "A TREC line holds a few short fields: was a binary file, or a file without line "
        "breaks, passed?")


def _filled_lines(fh: io.BufferedIOBase, source: str | Path) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of the lines of ``fh`` (every line that holds something but
    white space, and some blank ones), read :data:`BUFFER` bytes at a time: where the
    lines are mostly line breaks, runs of blank lines are skipped at C speed (a gigabyte
    of line breaks is not a billion Python steps).

    Raises:
        TrecFormatError: a line longer than :data:`MAX_LINE` (named when reached).
    """
    lineno, rest = 1, b""
    while chunk := fh.read(BUFFER):
        data = rest + chunk if rest else chunk
        cut = data.rfind(b"\n") + 1
        if not cut:  # the line goes on
            if len(data) > MAX_LINE:
                raise _too_long(source, lineno, data)
            rest = data
            continue
        block, rest = data[:cut], data[cut:]
        breaks = block.count(b"\n")
        if breaks * 8 < len(block):  # lines of 8 bytes or more on average: each in turn
            for line in block.split(b"\n")[:-1]:
                if len(line) > MAX_LINE:
                    raise _too_long(source, lineno, line)
                yield lineno, line
                lineno += 1
            if len(rest) > MAX_LINE:
                raise _too_long(source, lineno, rest)
            continue
        pos = 0  # mostly line breaks: runs of blank lines skipped by a search
        while found := _NOT_BLANK.search(block, pos):
            start = max(pos, block.rfind(b"\n", pos, found.start()) + 1)  # pos: a line's start
            end = block.index(b"\n", found.start()) + 1
            lineno += block.count(b"\n", pos, start)
            if end - start > MAX_LINE:
                raise _too_long(source, lineno, block[start:end])
            yield lineno, block[start:end]
            lineno, pos = lineno + 1, end
        lineno += block.count(b"\n", pos)
        if len(rest) > MAX_LINE:
            raise _too_long(source, lineno, rest)
    if _NOT_BLANK.search(rest):
        yield lineno, rest


def lines(text: Text, source: str | Path) -> Iterator[tuple[int, list[bytes]]]:
    """``(line number, fields)`` of every data line (blank and comment lines skipped), read
    from the file a buffer at a time: a caller that stops at a bad line has read the file
    no further, and no line is kept once its fields are handed over.

    Raises:
        TrecFormatError: a line longer than :data:`MAX_LINE`, a NUL byte, JSON.
    """
    with open_text(text) as fh:
        data_seen = False
        for lineno, line in _filled_lines(fh, source):
            if lineno == 1 and line.startswith(BOM):
                line = line[len(BOM):]
            fields = line.split()  # ASCII whitespace only, like isspace()
            if not fields or fields[0].startswith(b"#"):
                continue
            if b"\x00" in line:
                raise TrecFormatError(
                    source, lineno, "the line contains a NUL byte",
                    "The file may be binary or in UTF-16; save it as UTF-8 text",
                )
            if not data_seen and fields[0][:1] in (b"{", b"["):
                raise TrecFormatError(
                    source, lineno, "the file is JSON, not whitespace-separated TREC fields",
                    "A run artifact (JSON Lines written by `evalkit run`) is read by `evalkit "
                    "compare`, `gate` and `pairwise`; this command needs a TREC run or qrels "
                    "file",
                )
            data_seen = True
            yield lineno, fields


def first_duplicate(text: Text, source: str | Path, judged: Container[str] | None
                    ) -> None:
    """Raise the first duplicate of a run the bulk reader read whole (so every line of it
    is well formed, and the careful reader's first error would be this duplicate), in a
    query of ``judged`` (any query when None): its lines found by the ids' bytes alone,
    about three times faster a line than the careful reader.

    Raises:
        DuplicateLineError: the first such duplicate; returns when there is none.
    """
    seen: dict[bytes, dict[bytes, int]] = {}
    for lineno, fields in lines(text, source):
        docs = seen.get(fields[0])
        if docs is None:
            docs = seen[fields[0]] = {}
        first = docs.setdefault(fields[2], lineno)
        if first != lineno:
            qid = fields[0].decode("ascii")
            if judged is None or qid in judged:
                raise DuplicateLineError(source, lineno, first, qid,
                                         fields[2].decode("ascii"), judged=judged is not None)


__all__ = [
    "BUFFER",
    "LABEL_TEXT",
    "MAX_LINE",
    "PROBE",
    "REPETITIVE",
    "SHOWN_CHARS",
    "DuplicateLineError",
    "Text",
    "TrecFormatError",
    "file_text",
    "first_duplicate",
    "gzip_text",
    "label_of_text",
    "lines",
    "open_text",
    "probe",
    "shown",
    "text_bytes",
]
