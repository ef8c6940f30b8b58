"""A TREC run or qrels file with a mistake is read no further than the mistake, and a
gzip file is decompressed as it is read: what a bad file costs does not grow with what
follows the bad line, nor with what a gzip file decompresses to.

Measured on generated files: the bytes the careful (line-by-line) reader reads, counted
on its file objects, and the peak of Python's and numpy's allocations (``tracemalloc``).
"""

from __future__ import annotations

import gzip
import io
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import evalkit_retrieval.trec as trec
import evalkit_retrieval.trec_text as trec_text
import pytest

LINES = 200_000  # about 5 MB of run lines


def run_lines(n: int, *, dup_at: int | None = None) -> bytes:
    """``n`` lines of distinct documents (10 queries); line ``dup_at`` (1-based) repeats
    line 1."""
    out = [f"q{i % 10} Q0 doc{i:07d} {i} {1 / (i + 1):.6f} sys\n" for i in range(n)]
    if dup_at is not None:
        out[dup_at - 1] = out[0]
    return "".join(out).encode()


class Counted(io.RawIOBase):
    """A file object that counts the bytes read through it."""

    def __init__(self, inner: Any, tally: list[int]) -> None:
        self.inner, self.tally = inner, tally

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n: int = self.inner.readinto(b)
        self.tally[0] += n
        return n

    def close(self) -> None:
        self.inner.close()
        super().close()


@pytest.fixture()
def careful_bytes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The bytes the careful reader (and its first-lines probe) reads, in ``[0]``."""
    tally = [0]
    opened: Callable[..., Any] = trec_text.open_text
    monkeypatch.setattr(trec_text, "open_text",
                        lambda text: io.BufferedReader(Counted(opened(text), tally)))
    return tally


@contextmanager
def peak() -> Iterator[list[int]]:
    """The peak of traced allocations within the block, in bytes, in ``[0]``."""
    out = [0]
    tracemalloc.start()
    try:
        yield out
    finally:
        out[0] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


@pytest.mark.parametrize("packed", [False, True], ids=["plain", "gzip"])
def test_a_duplicate_on_line_2_is_named_having_read_the_first_lines_only(
        tmp_path: Path, careful_bytes: list[int], monkeypatch: pytest.MonkeyPatch,
        packed: bool) -> None:
    data = run_lines(LINES, dup_at=2)
    path = tmp_path / ("run.gz" if packed else "run")
    path.write_bytes(gzip.compress(data, 1) if packed else data)
    monkeypatch.setattr(trec, "_bulk_run", lambda *a: pytest.fail("the bulk reader ran"))
    with peak() as most, pytest.raises(trec.DuplicateLineError, match=r"run(\.gz)?:2: "):
        trec.load_run(path)
    assert careful_bytes[0] <= 2 * trec_text.BUFFER < len(data) / 2
    assert most[0] < len(data) / 2  # 5 MB file: no copy of it, no table of its lines


def test_a_duplicate_past_the_first_lines_stops_the_careful_reader_there(
        tmp_path: Path, careful_bytes: list[int]) -> None:
    """The bulk reader reads the whole file, finds a duplicate and hands the file to the
    careful reader, which stops at the duplicate's line (the 5,000th of 200,000)."""
    data = run_lines(LINES, dup_at=5000)
    (tmp_path / "run").write_bytes(data)
    with pytest.raises(trec.DuplicateLineError, match=r":5000: .*first on line 1"):
        trec.load_run(tmp_path / "run")
    line = len(data) // LINES
    # the probe's first lines, then buffered reads up to line 5,000 (one buffer past it)
    assert careful_bytes[0] <= trec_text.PROBE + 5000 * line + trec_text.BUFFER < len(data)


def test_the_careful_reader_keeps_a_small_multiple_of_the_file(tmp_path: Path) -> None:
    """A file only the careful reader reads (a non-ASCII id) with its mistake on the last
    line: every line is read and kept until then, at a few times the file's size (about
    100 bytes a line), with no copy of the file or list of its lines besides."""
    data = run_lines(LINES, dup_at=LINES).replace(b"doc0000001", "dóc0000001".encode())
    (tmp_path / "run").write_bytes(data)
    with peak() as most, pytest.raises(trec.DuplicateLineError, match=f":{LINES}: "):
        trec.load_run(tmp_path / "run")
    assert most[0] < 6 * len(data), (most[0], len(data))


@pytest.mark.parametrize(("kind", "body"), [("run", "distinct"), ("run", "blank"),
                                            ("qrels", "blank")])
def test_a_gzip_bomb_is_refused_in_memory_that_does_not_grow_with_the_cap(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, body: str) -> None:
    """Valid lines past the cap (distinct ones: the bulk reader's decompressing scan meets
    the cap), or valid first lines and then line breaks past it (a text that repeats
    itself: the careful reader meets it)."""
    cap = 32 << 20
    monkeypatch.setattr(trec, "MAX_INFLATED_BYTES", cap)
    head = run_lines(1000) if kind == "run" else b"".join(
        f"q0 0 h{i} 1\n".encode() for i in range(2000))
    bomb = tmp_path / f"bomb.{kind}.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as fh:
        fh.write(head)
        if body == "distinct":
            while fh.tell() <= cap:
                fh.write(run_lines(100_000))
        else:
            for _ in range(2 * cap >> 20):
                fh.write(b"\n" * (1 << 20))
    load = trec.load_run if kind == "run" else trec.load_qrels
    said = ("decompresses to more than 32 MiB" if body == "distinct" else
            "decompresses to more than 100 times its compressed size")
    with peak() as most, pytest.raises(trec.TrecFormatError, match=said):
        load(bomb)
    assert most[0] < cap // 3, most[0]  # buffers of about a megabyte, never the text


def test_a_line_without_end_is_refused_at_its_first_16_mib(tmp_path: Path) -> None:
    path = tmp_path / "run.gz"
    import base64
    import random

    with gzip.open(path, "wb", compresslevel=1) as fh:  # 40 MiB without a line break
        fh.write(b"q1 Q0 a" + base64.b64encode(random.Random(0).randbytes(30 << 20)))
    with pytest.raises(trec.TrecFormatError,
                       match=r"run.gz:1: the line is longer than 16 MiB \(starts 'q1 Q0 a"):
        trec.load_run(path)


def test_a_repeated_line_of_an_unjudged_query_is_refused_by_its_ratio(
        tmp_path: Path) -> None:
    """trec_eval accepts a document listed twice for a query the qrels do not judge, and so
    does evalkit; a gzip file of one such line repeated (400 times smaller than its text)
    is refused once 16 MiB are decompressed, in proportion to its size, not at the 1 GiB
    cap."""
    import re

    from evalkit.io.gzip_data import RATIO_FLOOR

    bomb = tmp_path / "bomb.run.gz"
    with gzip.open(bomb, "wb") as fh:
        for _ in range(48):
            fh.write(b"q1 Q0 d1 1 1.0 r\n" * (1 << 16))
    with pytest.raises(trec.TrecFormatError, match="more than 100 times") as info:
        trec.load_run(bomb, judged={"q2"})
    found = re.search(r"\(([\d,]+) bytes", str(info.value))
    assert found is not None
    read = int(found[1].replace(",", ""))
    assert read <= RATIO_FLOOR + (2 << 20)


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_a_gzip_file_that_repeats_itself_is_read_carefully_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Valid first lines, then one line repeated to 48 MiB (2,000 times the compressed
    size, past the first lines the probe reads): the careful reader reads it before any
    bulk read, and stops at the duplicate, in memory that does not grow with the rest."""
    line = b"q1 Q0 d1 1 0.5 s\n" if kind == "run" else b"q1 0 d1 1\n"
    head = run_lines(1000) if kind == "run" else b"".join(
        f"q0 0 h{i} 1\n".encode() for i in range(2000))
    packed = tmp_path / f"{kind}.gz"
    with gzip.open(packed, "wb", compresslevel=9) as fh:
        fh.write(head)
        for _ in range(48):
            fh.write(line * ((1 << 20) // len(line)))
    assert packed.stat().st_size * trec_text.REPETITIVE < 48 << 20
    monkeypatch.setattr(trec, "_bulk_run", lambda *a: pytest.fail("the bulk reader ran"))
    monkeypatch.setattr(trec, "_bulk_qrels", lambda *a: pytest.fail("the bulk reader ran"))
    at = head.count(b"\n") + 2
    load = trec.load_run if kind == "run" else trec.load_qrels
    with peak() as most, pytest.raises(trec.TrecFormatError, match=f"{kind}.gz:{at}: "):
        load(packed)
    assert most[0] < 16 << 20, most[0]  # a buffer and its lines; the text is 48 MiB


@pytest.mark.parametrize("buffer", [1, 2, 3, 7, 64])
def test_lines_read_a_buffer_at_a_time_are_numbered_as_the_file_is(
        monkeypatch: pytest.MonkeyPatch, buffer: int) -> None:
    """Blank lines skipped a block at a time, lines cut across buffers: the same lines and
    numbers as splitting the whole text."""
    import random

    rng = random.Random(buffer)
    pieces = [b"", b" ", b"\t", b"\r", b"a b", b"# c", b"q1 Q0 d 1 2 t", b"  x  "]
    for _ in range(50):
        text = b"\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        expected = [(i, ln.split()) for i, ln in enumerate(text.split(b"\n"), start=1)
                    if ln.split() and not ln.split()[0].startswith(b"#")]
        monkeypatch.setattr(trec_text, "BUFFER", buffer)
        try:
            got = list(trec_text.lines(text, "<t>"))
        finally:
            monkeypatch.undo()
        assert got == expected, text
