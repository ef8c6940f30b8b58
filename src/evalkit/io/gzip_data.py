"""Gzip data decompressed in one place, so that a damaged or cut-short file says so.

Every reader of gzip input (topic files, BEIR files, the first bytes :mod:`.input_files`
inspects, TREC runs and qrels of the retrieval plugin) calls :func:`inflate`. A gzip file
is one or more members (``cat a.gz b.gz`` is valid gzip); all are read. Damaged data
raises :class:`DamagedGzipError`, whose message says which of two things went wrong and
where, in bytes of the compressed file:

* ``the gzip stream is damaged at byte 1,234 of 5,678 (invalid block type)``: the bytes
  there are not valid deflate data or fail the CRC check (a corrupt download, a
  disk error, a file edited as text);
* ``the gzip stream is cut short: the file ends at byte 5,678 before the stream does
  (12,345 bytes decompressed)``: a copy or download stopped early.

Only the standard library (:mod:`zlib`) is imported.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO

#: The first two bytes of every gzip member (RFC 1952, section 2.3.1).
MAGIC = b"\x1f\x8b"
#: Compressed bytes fed at a time while looking for the byte where the data fails.
_STEP = 4096
#: Compressed bytes read from the file at a time.
_READ = 1 << 16


class DamagedGzipError(ValueError):
    """Gzip data that is damaged (``truncated`` False) or cut short (``truncated`` True);
    ``offset`` is the byte of the compressed data where it fails (for a cut-short file,
    its size). ``str()`` is one phrase, e.g. ``"the gzip stream is damaged at byte 30 of
    2,048 (invalid block type)"``, for a message that names the file first."""

    def __init__(self, message: str, offset: int, truncated: bool) -> None:
        super().__init__(message)
        self.offset = offset
        self.truncated = truncated


def is_gzip(raw: bytes) -> bool:
    """Whether ``raw`` starts like gzip data (its magic bytes)."""
    return raw[:2] == MAGIC


def _failing_byte(read: Callable[[int, int], bytes], start: int, total: int) -> int:
    """The offset of the byte at which decompressing the member that starts at ``start``
    fails (zlib reports no position: the data is fed again, in steps, then byte by byte in
    the step that fails). ``read(offset, n)`` gives the compressed bytes there; output is
    thrown away as it comes, at most one step's worth."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    pos = start
    while pos < total:
        saved = d.copy()
        step = read(pos, _STEP)
        try:
            d.decompress(step)
        except zlib.error:
            d = saved
            for i in range(len(step)):
                try:
                    d.decompress(step[i:i + 1])
                except zlib.error:
                    return pos + i
            return pos
        if d.eof or not step:
            break
        pos += _STEP
    return pos


class InflateLimitError(ValueError):
    """Gzip data that decompresses to more than the ``max_bytes`` a
    :class:`GzipReader` was given with ``refuse_more`` (a decompression bomb); raised as
    soon as byte ``max_bytes + 1`` is decompressed."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        size = (f"{max_bytes / (1 << 20):,.0f} MiB" if max_bytes >= 1 << 20
                else f"{max_bytes:,} bytes")
        super().__init__(f"decompresses to more than {size}")


class InflateRatioError(InflateLimitError):
    """Gzip data that decompresses to more than ``max_ratio`` times the compressed bytes
    read so far, once past :data:`RATIO_FLOOR` (a decompression bomb: text that really is
    text compresses some 3 to 20 times); raised as soon as it is seen, so that reading
    stays in proportion to the file's size."""

    def __init__(self, max_ratio: int, inflated: int, packed: int) -> None:
        ValueError.__init__(
            self, f"decompresses to more than {max_ratio} times its compressed size "
            f"({inflated:,} bytes from the first {packed:,})")
        self.max_bytes = inflated
        self.max_ratio = max_ratio


#: the decompressed bytes before :class:`GzipReader`'s ``max_ratio`` applies
RATIO_FLOOR = 16 << 20


class GzipReader(io.RawIOBase):
    """The decompressed bytes of the gzip data in the binary file ``fh`` (every member), read
    a piece at a time: memory does not grow with the decompressed size. Wrap it in
    :class:`io.BufferedReader` to read lines.

    Args:
        fh: a seekable binary file positioned at the gzip data (its size is taken from a
            seek to its end; a damaged member is read again to find the failing byte).
        max_bytes: the most bytes to decompress; None for no limit. The reader gives at
            most ``max_bytes + 1`` bytes and then ends (``over_limit`` is set), or, with
            ``refuse_more``, raises :class:`InflateLimitError` at byte ``max_bytes + 1``.
        complete: ``fh`` holds the whole file; False for its first bytes only (then the
            data ending early is not an error).
        max_ratio: past :data:`RATIO_FLOOR` decompressed bytes, refuse data that has
            decompressed to more than this many times the compressed bytes consumed
            (:class:`InflateRatioError`); None for no such bound.

    Raises (from ``read``/``readinto``):
        DamagedGzipError: as :func:`inflate`. InflateLimitError: see ``refuse_more``.
        InflateRatioError: see ``max_ratio``.
    """

    def __init__(self, fh: BinaryIO, max_bytes: int | None = None, *, complete: bool = True,
                 refuse_more: bool = False, max_ratio: int | None = None) -> None:
        super().__init__()
        self._fh = fh
        self._base = fh.tell()
        self._total = fh.seek(0, 2) - self._base
        fh.seek(self._base)
        self._max = max_bytes
        self._complete = complete
        self._refuse = refuse_more
        self._ratio = max_ratio
        self.inflated = 0
        self.over_limit = False
        self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._member = 0  # offset of the current member in the data
        self._pending = b""  # compressed bytes not yet consumed, from offset self._at
        self._at = 0
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        while not self._done:
            room = len(view)
            if self._max is not None:
                room = min(room, self._max + 1 - self.inflated)
            if room <= 0:
                self._done = True
                break
            if not self._pending:
                self._pending = self._fh.read(_READ)
                if not self._pending:
                    if self._complete:
                        raise DamagedGzipError(
                            f"the gzip stream is cut short: the file ends at byte "
                            f"{self._total:,} before the stream does ({self.inflated:,} "
                            "bytes decompressed)", self._total, truncated=True)
                    self._done = True
                    break
            try:
                piece = self._d.decompress(self._pending, room)
            except zlib.error as exc:
                raise self._damaged(str(exc)) from None
            if self._d.eof:
                rest = self._d.unused_data
                self._at += len(self._pending) - len(rest)
                self._pending = rest
                self._next_member()
            else:
                tail = self._d.unconsumed_tail
                self._at += len(self._pending) - len(tail)
                self._pending = tail
            if piece:
                view[:len(piece)] = piece
                self.inflated += len(piece)
                if self._max is not None and self.inflated > self._max:
                    self.over_limit = True
                    if self._refuse:
                        raise InflateLimitError(self._max)
                if (self._ratio is not None and self.inflated > RATIO_FLOOR
                        and self.inflated > self._ratio * max(self._at, 1)):
                    raise InflateRatioError(self._ratio, self.inflated, self._at)
                return len(piece)
        return 0

    def readall(self) -> bytes:
        out = bytearray()
        piece = bytearray(_READ)
        while n := self.readinto(piece):
            out += piece[:n]
        return bytes(out)

    def _damaged(self, message: str) -> DamagedGzipError:
        def read(pos: int, n: int) -> bytes:
            self._fh.seek(self._base + pos)
            return self._fh.read(n)

        at = _failing_byte(read, self._member, self._total)
        reason = message.split(": ", 1)[-1]
        return DamagedGzipError(
            f"the gzip stream is damaged at byte {at:,} of {self._total:,} ({reason})",
            at, truncated=False)

    def _next_member(self) -> None:
        """After a member's end: the next member, or the end of the data (nothing, or only
        zero bytes, left).

        Raises:
            DamagedGzipError: other data after the member.
        """
        while len(self._pending) < len(MAGIC):
            more = self._fh.read(_READ)
            if not more:
                break
            self._pending += more
        rest = self._pending
        if not rest:
            self._done = True
            return
        if rest[:len(MAGIC)] == MAGIC:
            self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            self._member = self._at
            return
        if not rest.strip(b"\x00"):  # zero padding: the end, if zeros run to the end
            while more := self._fh.read(_READ):
                if more.strip(b"\x00"):
                    break
            else:
                self._done = True
                return
        raise DamagedGzipError(
            f"the gzip stream is damaged at byte {self._at:,} of {self._total:,} (data "
            "after the end of the compressed stream)", self._at, truncated=False)


def inflate(raw: bytes, max_bytes: int | None = None, *, complete: bool = True) -> bytes:
    """The decompressed bytes of gzip data ``raw`` (every member), at most ``max_bytes + 1``
    of them when ``max_bytes`` is given (the caller refuses more: a bomb stops there).
    (:class:`GzipReader` reads a file without holding what it decompresses.)

    Args:
        raw: gzip data (see :func:`is_gzip`).
        max_bytes: the most bytes the caller reads; None for no limit.
        complete: ``raw`` is the whole file; False for its first bytes only (then the
            data ending early is not an error).

    Raises:
        DamagedGzipError: invalid data, a failed checksum, data after the last member
            that is not a gzip member (zero padding is accepted), or, when
            ``complete``, a stream cut short.
    """
    return GzipReader(io.BytesIO(raw), max_bytes, complete=complete).readall()


__all__ = ["MAGIC", "RATIO_FLOOR", "DamagedGzipError", "GzipReader", "InflateLimitError",
           "InflateRatioError", "inflate", "is_gzip"]
