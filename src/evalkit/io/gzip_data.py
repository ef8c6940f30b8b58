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

import zlib

#: The first two bytes of every gzip member (RFC 1952, section 2.3.1).
MAGIC = b"\x1f\x8b"
#: Compressed bytes fed at a time while looking for the byte where the data fails.
_STEP = 4096


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


def _failing_byte(raw: bytes, start: int) -> int:
    """The offset of the byte at which decompressing the member that starts at ``start``
    fails (zlib reports no position: the data is fed again, in steps, then byte by byte in
    the step that fails). Output is thrown away as it comes, at most one step's worth."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    pos = start
    while pos < len(raw):
        saved = d.copy()
        try:
            d.decompress(raw[pos:pos + _STEP])
        except zlib.error:
            d = saved
            for i in range(pos, min(pos + _STEP, len(raw))):
                try:
                    d.decompress(raw[i:i + 1])
                except zlib.error:
                    return i
            return pos
        if d.eof:
            break
        pos += _STEP
    return pos


def inflate(raw: bytes, max_bytes: int | None = None, *, complete: bool = True) -> bytes:
    """The decompressed bytes of gzip data ``raw`` (every member), at most ``max_bytes + 1``
    of them when ``max_bytes`` is given (the caller refuses more: a bomb stops there).

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
    out: list[bytes] = []
    size = 0
    start = 0
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        room = 0 if max_bytes is None else max_bytes + 1 - size
        try:
            piece = d.decompress(raw[start:], room)
        except zlib.error as exc:
            at = _failing_byte(raw, start)
            reason = str(exc).split(": ", 1)[-1]
            raise DamagedGzipError(
                f"the gzip stream is damaged at byte {at:,} of {len(raw):,} ({reason})",
                at, truncated=False) from None
        out.append(piece)
        size += len(piece)
        if max_bytes is not None and size > max_bytes:
            break
        if not d.eof:
            if complete and not d.unconsumed_tail:
                raise DamagedGzipError(
                    f"the gzip stream is cut short: the file ends at byte {len(raw):,} "
                    f"before the stream does ({size:,} bytes decompressed)",
                    len(raw), truncated=True)
            break  # only the first bytes were given, or the limit was reached
        rest = d.unused_data
        if not rest or not rest.strip(b"\x00"):
            break
        start = len(raw) - len(rest)
        if not is_gzip(rest):
            raise DamagedGzipError(
                f"the gzip stream is damaged at byte {start:,} of {len(raw):,} (data after "
                "the end of the compressed stream)", start, truncated=False)
    return b"".join(out)


__all__ = ["MAGIC", "DamagedGzipError", "inflate", "is_gzip"]
