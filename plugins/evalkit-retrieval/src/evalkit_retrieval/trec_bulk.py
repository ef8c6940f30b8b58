"""The bulk reader of TREC runs and qrels: numpy's C tokenizer into byte-string columns.

A well-formed ASCII file (the usual case) is read by ``numpy.loadtxt`` into fixed-width
byte-string columns for the ids, a float column for run scores or an integer column for
qrels labels (labels written ``1.0`` are read as text and checked to be integral); the run
is then ranked and the qrels grouped as arrays
(:mod:`evalkit_retrieval.columns`). The reader declines (returns ``None``) on anything it
is unsure about: bytes outside ASCII, control characters, a lone CR, an id longer than
the widths it tried, a malformed line, a NaN score, a label that is not an integer, a
duplicate. The careful
line-by-line reader of :mod:`evalkit_retrieval.trec` then reads the file, with the same
result or the precise error. Comment lines (first non-blank character ``#``) are removed
first; a ``#`` elsewhere stays part of its field.

A plain file (ASCII text without CR or comment lines, the usual case) is handed to numpy
as a file, so that its bytes are never all in memory at once; so is a gzip file whose text
is plain (a :class:`Stream`, decompressed as numpy reads it, after one decompressing pass
that checks it). Any other ASCII file is read into memory and made ready first (CRLF
endings, comment lines, a byte-order mark); a file with other bytes is left to the
careful reader without being read into memory. :func:`sha256_meanwhile` hashes a file
from disk in a thread while it is parsed.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import threading
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from evalkit.io.limits import MAX_NAME_CHARS
from evalkit_retrieval.columns import QrelsColumns

_COMMENT_LINE = re.compile(rb"^[ \t\r\x0b\x0c]*#[^\n]*(?:\n|\Z)", re.MULTILINE)
#: every ASCII byte but the control characters that Python or numpy might take as line
#: breaks or separators where trec_eval does not (and NUL): a file holding any other byte
#: (one of those, or one outside ASCII) goes to the careful reader
_PLAIN_ASCII = bytes(b for b in range(128) if not (b <= 0x08 or 0x0E <= b <= 0x1F or b == 0x7F))
#: bytes of the file inspected to size the fixed-width id columns of the bulk reader
_SAMPLE = 1 << 16
#: what ``bytes.split()`` splits on (ASCII whitespace)
_WHITESPACE = b" \t\r\n\x0b\x0c"
#: widest id column the bulk reader allocates (bytes per row); longer ids go the careful way
_MAX_WIDTH = 512
#: bytes scanned at a time by :func:`plain_file`
_CHUNK = 1 << 20
#: a UTF-8 byte-order mark (accepted at the start of a file, beyond trec_eval)
BOM = b"\xef\xbb\xbf"
#: the longest last line a :class:`Stream`'s scan keeps to read the run tag from
_MAX_LAST_LINE = 1 << 20


class Stream(NamedTuple):
    """Text read by opening it afresh each time: a gzip file, decompressed as it is read
    (never held whole). ``open()`` gives a binary file object of the text; ``tail`` is
    its end (from the start of its last line that holds anything), filled in by the scan
    of :func:`bulk_run` and :func:`bulk_qrels`; ``repetitive``: the text says of itself
    that it repeats (a gzip file whose trailer gives a size over
    :data:`~evalkit_retrieval.trec_text.REPETITIVE` times its own: the same lines, most
    likely, which TREC files refuse), for the careful reader to read first."""

    open: Callable[[], io.BufferedIOBase]
    tail: bytes = b""
    repetitive: bool = False


#: what the bulk reader reads: a file's bytes, the file itself, or a :class:`Stream`
Source = bytes | Path | Stream
#: suffixes ``numpy.loadtxt`` decompresses when given a path (numpy.lib._datasource)
_NUMPY_OPENS = frozenset({".gz", ".bz2", ".xz", ".lzma"})


class RunTable(NamedTuple):
    """A run as read, one entry per line: arrays from the bulk reader, lists of ``str``
    from the careful one (``path``), and the tag of the last line. (A named tuple: defined
    on every ``eval`` at a quarter of a frozen dataclass's cost, docs/performance.md.)"""

    qids: npt.NDArray[Any] | list[str]
    docids: npt.NDArray[Any] | list[str]
    scores: npt.NDArray[np.float64]
    tag: str
    path: str  # "bulk" or "careful"


def plain_file(path: Path) -> bool:
    """Whether numpy can read ``path`` as it is on disk, without a copy of its bytes in
    memory: plain ASCII text (no control character but whitespace), no CR, no comment
    line, not empty. (Gzip data and a byte-order mark are not ASCII.) The file is scanned
    in chunks of :data:`_CHUNK` bytes."""
    with path.open("rb") as fh:
        return scan(fh)[0] == "plain"


#: what :func:`scan` finds: text numpy reads as it is, text to make ready in memory
#: (:func:`bulk_ready`: CRLF endings, comment lines, a byte-order mark), or neither
Kind = Literal["plain", "ready"] | None


def scan(fh: io.BufferedIOBase, *, tail: bool = False) -> tuple[Kind, bytes]:
    """What the bulk reader can do with the text ``fh`` reads (:data:`Kind`), read once
    in chunks of :data:`_CHUNK` bytes; with ``tail``, the text's end from the start of
    its last line that holds anything (what :func:`_last_line` reads; ``None`` when that
    line is longer than :data:`_MAX_LAST_LINE`). Stops at the first byte that is neither
    plain ASCII nor a CR. An empty text is ``None``."""
    buf = bytearray(_CHUNK)
    seen = 0
    kind: Kind = "plain"
    _plain = _Plain()
    end = b""  # the text's end: its last line holding anything, with what follows it
    while size := fh.readinto(buf):
        chunk: bytes | bytearray = buf if size == _CHUNK else buf[:size]
        if not seen and chunk.startswith(BOM):
            kind, chunk = "ready", chunk[len(BOM):]
        if not _plain(chunk):
            if b"\r" not in chunk or not _plain(bytes(chunk).replace(b"\r", b"")):
                return None, b""
            kind = "ready"  # CR: CRLF endings are made ready (bulk_ready), a lone CR refused
        # a chunk may begin inside a line: taking its start for a line's only errs
        # towards reading the text in memory
        if kind == "plain" and b"#" in chunk and _COMMENT_LINE.search(chunk):
            kind = "ready"
        if tail:
            end = _text_end(end, bytes(chunk))
            if len(end) > _MAX_LAST_LINE + _SAMPLE:
                return None, b""
        seen += size
    return (kind if seen else None), end


class _Plain:
    """:func:`_plain_bytes` of chunks of at most :data:`_CHUNK` bytes, in buffers made once
    per scan."""

    def __init__(self) -> None:
        self.scratch = np.empty(_CHUNK, dtype=np.uint8)
        self.outside = np.empty(_CHUNK, dtype=np.bool_)
        self.other = np.empty(_CHUNK, dtype=np.bool_)

    def __call__(self, chunk: bytes | bytearray) -> bool:
        n = len(chunk)
        return _plain_bytes(np.frombuffer(chunk, dtype=np.uint8), self.scratch[:n],
                            self.outside[:n], self.other[:n])


def _text_end(end: bytes, chunk: bytes) -> bytes:
    """``end`` (the text read so far from the start of its last line holding anything,
    after up to :data:`_SAMPLE` bytes of the lines before it) once ``chunk`` is read."""
    last = len(chunk.rstrip(_WHITESPACE))
    if not last:  # white space only: one byte of it keeps the line break, if any
        return end + (b"\n" if b"\n" in chunk else b" ")
    start = chunk.rfind(b"\n", 0, last) + 1
    if not start:  # the chunk continues the last line
        return end + chunk
    before = end[-_SAMPLE:]
    return (before + chunk)[max(0, len(before) + start - _SAMPLE):]


def _plain_bytes(v: npt.NDArray[np.uint8], scratch: npt.NDArray[np.uint8],
                 outside: npt.NDArray[np.bool_], other: npt.NDArray[np.bool_]) -> bool:
    """Whether every byte of ``v`` is in :data:`_PLAIN_ASCII` and none is a CR: printable
    ASCII (0x20-0x7E) or TAB, LF, VT, FF (0x09-0x0C). Two wrapping subtractions and
    comparisons in buffers the caller keeps (``v``'s size; about 4x faster than
    ``bytes.translate`` on the same bytes, docs/performance.md)."""
    np.subtract(v, 0x20, out=scratch)  # uint8 wraps: 0x20-0x7E become 0-0x5E
    np.greater(scratch, 0x7E - 0x20, out=outside)
    np.subtract(v, 0x09, out=scratch)  # 0x09-0x0C become 0-3
    np.greater(scratch, 0x0C - 0x09, out=other)
    outside &= other
    return not outside.any()


def bulk_ready(data: bytes) -> bytes | None:
    """``data`` prepared for the bulk reader (a byte-order mark dropped, CRLF endings and
    comment lines made plain), or None when only the careful one will do."""
    if data.startswith(BOM):
        data = data[len(BOM):]
    if data.translate(None, _PLAIN_ASCII):  # one pass: nothing but plain ASCII is left
        return None
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
        if b"\r" in data:
            return None  # a lone CR is whitespace to trec_eval, a line break to io
    if b"#" in data and _COMMENT_LINE.search(data):
        data = _COMMENT_LINE.sub(b"", data)
    return data


def _column_widths(head: bytes, tail: bytes, columns: tuple[int, ...]) -> list[int]:
    """Fixed widths for the id columns, from the longest ids of the whole lines among the
    file's first and last :data:`_SAMPLE` bytes: twice the longest, at least 16 bytes, or
    8 when the longest has at most 4 (query numbers: 8 bytes a line less to parse into
    and keep, and still one 64-bit word to compare query blocks by)."""
    widest = [1] * len(columns)
    sampled = head[:_SAMPLE].split(b"\n")[:-1] or [head[:_SAMPLE]]
    sampled += tail[-_SAMPLE:].split(b"\n")[1:]  # the first may be cut
    for line in sampled:
        fields = line.split()
        for j, c in enumerate(columns):
            if c < len(fields):
                widest[j] = max(widest[j], len(fields[c]))
    return [8 if w <= 4 else max(16, 2 * w) for w in widest]


def _width_attempts(head: bytes, tail: bytes) -> list[tuple[int, int]]:
    """Widths to try for the query and document id columns (:func:`_column_widths`),
    then eight times those, never beyond ``_MAX_WIDTH`` (the careful reader takes over)."""
    wq, wd = _column_widths(head, tail, (0, 2))
    return [(q, d) for q, d in ((wq, wd), (wq * 8, wd * 8))
            if q <= _MAX_WIDTH and d <= _MAX_WIDTH]


def _fits(table: npt.NDArray[Any], *names: str) -> bool:
    """No entry of the named fixed-width byte-string fields fills its field (none was cut)."""
    if len(table) == 0:
        return True
    raw = table.view(np.uint8).reshape(len(table), table.dtype.itemsize)
    fields = table.dtype.fields
    assert fields is not None
    last = [fields[name][1] + fields[name][0].itemsize - 1 for name in names]
    return not raw[:, last].any()  # one pass over the table for every field


def _loadtxt(data: Source, dtype: list[tuple[str, str]], usecols: tuple[int, ...] | None
             ) -> npt.NDArray[Any] | None:
    with warnings.catch_warnings(), contextlib.ExitStack() as stack:
        warnings.simplefilter("ignore", UserWarning)  # "input contained no data"
        try:
            return np.loadtxt(
                _loadtxt_source(data, stack), dtype=dtype, usecols=usecols, comments=None,
                ndmin=1, encoding="ascii",  # only plain ASCII comes here
            )
        except (ValueError, OverflowError):
            return None


def _loadtxt_source(data: Source, stack: contextlib.ExitStack) -> str | io.IOBase:
    """What :func:`_loadtxt` hands numpy: the path of a plain file, else a binary file.

    Given a path, ``numpy.loadtxt`` reads the file in large chunks; given a file object,
    it iterates over it, one Python ``bytes`` object and one decoding per line (about 90
    ms more CPU on a 1,000,000-line run, docs/performance.md). numpy opens a path by its
    suffix (``.gz``, ``.bz2``, ``.xz``, ``.lzma`` as compressed), so a plain file with
    such a suffix is opened here instead; a plain file (:func:`plain_file`) holds no CR,
    so numpy's text mode reads the same lines.
    """
    if isinstance(data, bytes):
        return stack.enter_context(io.BytesIO(data))
    if isinstance(data, Stream):
        return stack.enter_context(data.open())
    if data.suffix.lower() in _NUMPY_OPENS:
        return stack.enter_context(data.open("rb"))
    return os.fspath(data)


def _bulk_table(
    data: Source,
    dtype: Callable[[int, int], list[tuple[str, str]]],
    usecols: tuple[int, ...] | None,
) -> npt.NDArray[Any] | None:
    """Parse ``data`` with fixed-width id columns, widening them until no id is cut.

    ``dtype(query_width, doc_width)`` gives the record layout. ``None`` when the bulk
    parse cannot read the text (the careful per-line reader then names the line).
    """
    for wq, wd in _width_attempts(_head(data), _tail(data)):
        table = _loadtxt(data, dtype(wq, wd), usecols)
        if table is None or len(table) == 0:
            return None
        if _fits(table, "q", "d"):
            return table
    return None


def _ready(source: Source) -> Source | None:
    """What the bulk reader reads: a plain file or stream as it is (a stream with its
    tail), bytes made ready (those of an ASCII file or stream that is not plain: read into
    memory here), or None (the careful reader's, without reading it into memory)."""
    if isinstance(source, bytes):
        return bulk_ready(source)
    with _open(source) as fh:
        kind, end = scan(fh, tail=isinstance(source, Stream))
    if kind is None:
        return None
    if kind == "ready":
        with _open(source) as fh:
            return bulk_ready(fh.read())
    return source._replace(tail=end) if isinstance(source, Stream) else source


def _open(source: Path | Stream) -> io.BufferedIOBase:
    return source.open() if isinstance(source, Stream) else source.open("rb")


def _head(data: Source) -> bytes:
    if isinstance(data, bytes):
        return data[:_SAMPLE]
    with _open(data) as fh:
        return fh.read(_SAMPLE)


def _tail(data: Source) -> bytes:
    """The file's end, from the start of its last line that holds anything (what
    :func:`_last_line` reads). Whitespace after that line is skipped a block at a time, so
    a file ending in a gigabyte of spaces costs a scan at C speed, not a read into memory."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, Stream):
        return data.tail
    with data.open("rb") as fh:
        end = fh.seek(0, 2)
        while end:  # the end of the last byte that is not whitespace
            start = max(0, end - _SAMPLE)
            fh.seek(start)
            kept = len(fh.read(end - start).rstrip(_WHITESPACE))
            end = start + kept
            if kept:
                break
        take = _SAMPLE
        while True:  # back to the newline before it (or the start of the file)
            start = max(0, end - take)
            fh.seek(start)
            tail = fh.read(end - start)
            if not start or b"\n" in tail:
                return tail
            take *= 4


def bulk_run(source: Source) -> RunTable | None:
    """A run read in bulk from its bytes, or from a plain file (:func:`plain_file`)
    without a copy of its bytes; None when only the careful reader will do."""
    data = _ready(source)
    if data is None:
        return None
    table = _bulk_table(
        data, lambda wq, wd: [("q", f"S{wq}"), ("d", f"S{wd}"), ("s", "f8"), ("t", "S1")],
        (0, 2, 4, 5),
    )
    if table is None:
        return None
    scores = np.ascontiguousarray(table["s"])  # read once from the table, then compact
    tag = _last_line(_tail(data)).split()[5]
    if np.isnan(scores).any() or len(tag) > MAX_NAME_CHARS:
        return None  # the careful reader names the line
    return RunTable(
        qids=table["q"], docids=table["d"], scores=scores, tag=tag.decode("ascii"),
        path="bulk",
    )


def _last_line(data: bytes) -> bytes:
    """The last line of ``data`` that holds anything, up to its last non-whitespace byte
    (the whitespace after it skipped a block at a time)."""
    end = len(data)
    while end:
        start = max(0, end - _SAMPLE)
        kept = len(data[start:end].rstrip(_WHITESPACE))
        end = start + kept
        if kept:
            break
    return data[data.rfind(b"\n", 0, end) + 1:end]


def bulk_qrels(source: Source) -> dict[str, Mapping[str, int]] | None:
    """Qrels read in bulk, as :func:`bulk_run`."""
    data = _ready(source)
    if data is None:
        return None
    table = _bulk_table(
        data, lambda wq, wd: [("q", f"S{wq}"), ("i", "S3"), ("d", f"S{wd}"), ("r", "i8")],
        None,
    )
    labels = None if table is None else table["r"]
    if table is None:  # labels such as 1.0 (pandas' exports): read as text, then checked
        table = _bulk_table(
            data, lambda wq, wd: [("q", f"S{wq}"), ("i", "S3"), ("d", f"S{wd}"),
                                  ("r", "S24")], None)
        labels = None if table is None else _integral_labels(table["r"])
    if table is None or labels is None:
        return None  # the second column ("i") is ignored, as trec_eval ignores it
    columns = QrelsColumns(table["q"], table["d"], labels)
    if columns.duplicate:
        return None  # the careful reader names the two lines
    return columns.views()


def _integral_labels(text: npt.NDArray[np.bytes_]) -> npt.NDArray[np.int64] | None:
    """Labels written as integers or integral decimals (``1``, ``-1.0``, ``2.00``) as
    integers, as the careful reader reads them; None when any is another spelling (the
    careful reader names it)."""
    head, _, frac = (np.char.partition(text, b".")[:, i] for i in range(3))
    body = np.char.lstrip(head, b"+-")
    ok = (np.char.isdigit(body) & (np.char.str_len(head) - np.char.str_len(body) <= 1)
          & (np.char.str_len(body) <= 18) & (np.char.strip(frac, b"0") == b""))
    if not ok.all():
        return None
    out: npt.NDArray[np.int64] = head.astype(np.int64)
    return out


def sha256_meanwhile(path: Path) -> Callable[[], str]:
    """Hash the file in a thread (hashlib releases the GIL), so that it is hashed while
    parsed; the function returned waits for the hex digest.

    Raises:
        FileNotFoundError: no such file (raised here, not in the thread).
    """
    fh = path.open("rb")
    out: list[str | OSError] = []

    def work() -> None:
        with fh:
            try:
                out.append(hashlib.file_digest(fh, "sha256").hexdigest())
            except OSError as exc:  # raised by result(), in the caller's thread
                out.append(exc)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()

    def result() -> str:
        thread.join()  # the hash of a regular file (load_run refuses pipes): its size bounds it
        if isinstance(out[0], OSError):
            raise out[0]
        return out[0]

    return result
