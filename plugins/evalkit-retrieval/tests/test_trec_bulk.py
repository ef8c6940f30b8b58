"""The bulk reader's fast paths against their plain definitions: the plain-file check
against ``bytes.translate`` over every byte value, a plain file handed to numpy by path
(a compressor's suffix by file object) against its bytes parsed, and the query blocks'
word-wise comparison against numpy's ``!=`` on strided fixed-width columns."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evalkit_retrieval import trec_bulk
from evalkit_retrieval.ranking import _differs_from_previous
from evalkit_retrieval.trec import load_qrels, load_run, parse_qrels, parse_run


def _by_translate(data: bytes) -> bool:
    """The definition: only bytes of _PLAIN_ASCII, no CR, no comment line, not empty."""
    return (bool(data) and not data.translate(None, trec_bulk._PLAIN_ASCII)
            and b"\r" not in data and not trec_bulk._COMMENT_LINE.search(data))


@pytest.mark.parametrize("chunk", [7, 1 << 20])
def test_the_plain_file_check_agrees_with_translate_for_every_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(trec_bulk, "_CHUNK", chunk)
    path = tmp_path / "run.txt"
    for value in range(256):
        # first byte, in a line, at and past a chunk's end (no chunk starts a line
        # at 5, 6 or 20, so a '#' there is no comment line in either reading)
        for at in (0, 5, 6, 20):
            data = bytearray(b"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.25 t\n")
            data[at] = value
            path.write_bytes(bytes(data))
            assert trec_bulk.plain_file(path) is _by_translate(bytes(data)), (value, at)
    path.write_bytes(b"")
    assert trec_bulk.plain_file(path) is False


@pytest.mark.parametrize("name", ["run.txt", "run", "run.gz", "run.TXT.BZ2", "run.xz"])
def test_a_plain_file_read_from_disk_equals_its_bytes_whatever_its_suffix(
        tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    text = "".join(f"q{i % 3} Q0 d{i:03d} {i} {i % 7}.5 tag\n" for i in range(50))
    path.write_text(text)
    run = load_run(path)
    assert run.meta["parser"] == "bulk"
    assert run.rankings == parse_run(text.encode(), source=path).rankings
    qrels = tmp_path / name.replace("run", "qrels")
    qtext = "".join(f"q{i % 3} 0 d{i:03d} {i % 4}\n" for i in range(0, 50, 3))
    qrels.write_text(qtext)
    assert load_qrels(qrels) == parse_qrels(qtext.encode())


@pytest.mark.parametrize("width", [1, 8, 16, 18, 24, 40])
def test_query_changes_compared_by_words_equal_numpys_comparison(width: int) -> None:
    rng = random.Random(width)
    ids = [bytes(rng.choice(b"ab\x00") for _ in range(rng.randint(0, width)))
           for _ in range(2000)]
    ids = [x.rstrip(b"\x00") for x in ids]  # numpy drops trailing NULs of S values
    ids.sort(key=lambda x: rng.random() < 0.5)  # runs of equal and unequal neighbours
    table = np.zeros(len(ids), dtype=[("s", "f8"), ("q", f"S{width}"), ("t", "S1")])
    table["q"] = ids
    for column in (table["q"], np.ascontiguousarray(table["q"])):  # strided and packed
        expected = np.array([a != b for a, b in zip(ids[1:], ids[:-1], strict=True)])
        assert (_differs_from_previous(column) == expected).all()
        assert (_differs_from_previous(column) == (column[1:] != column[:-1])).all()
    assert len(_differs_from_previous(table["q"][:1])) == 0


def test_id_widths_come_from_whole_lines_at_both_ends_of_the_file() -> None:
    head = b"".join(f"{q} Q0 D{q:04d} 1 1.0 t\n".encode() for q in range(1, 3000))
    tail = b"x" * 70_000 + b"\n123456789 Q0 D1 1 1.0 t\n"  # its cut first line is not read
    # query numbers of up to 4 digits: one 64-bit word; longer ids: twice the longest
    assert trec_bulk._column_widths(head, head, (0, 2)) == [8, 16]
    assert trec_bulk._column_widths(head, tail, (0, 2)) == [18, 16]
    assert trec_bulk._width_attempts(head, b"") == [(8, 16), (64, 128)]


@pytest.mark.parametrize("where", ["middle", "end"])
def test_query_ids_wider_than_the_first_width_are_read_whole(where: str) -> None:
    lines = [f"{q} Q0 D{d} {d} {100 - d} t\n" for q in range(1, 2000) for d in range(3)]
    wide = f"{'7' * 12} Q0 D1 1 1.0 t\n"
    lines.insert(len(lines) // 2 if where == "middle" else len(lines), wide)
    parsed = parse_run("".join(lines).encode())
    assert parsed.meta["parser"] == "bulk"
    assert list(parsed.rankings["7" * 12]) == ["D1"] and len(parsed.rankings) == 2000


class _CountingReads:
    """Wraps ``Path.open`` of one path: the bytes read through it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
        self.read = 0
        real_open = Path.open
        counter = self

        class Reader:
            def __init__(self, fh: Any) -> None:
                self.fh = fh

            def __enter__(self) -> Reader:
                return self

            def __exit__(self, *exc: object) -> None:
                self.fh.close()

            def seek(self, *args: int) -> int:
                return int(self.fh.seek(*args))

            def read(self, n: int = -1) -> bytes:
                data: bytes = self.fh.read(n)
                counter.read += len(data)
                return data

        def open_(p: Path, *args: Any, **kwargs: Any) -> Any:
            fh = real_open(p, *args, **kwargs)
            return Reader(fh) if p == path else fh

        monkeypatch.setattr(Path, "open", open_)


@pytest.mark.parametrize("blank", [b" ", b"\t\r\n\x0b\x0c"])
def test_whitespace_after_the_last_line_is_skipped_by_blocks_not_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blank: bytes) -> None:
    tail = blank * (4_000_000 // len(blank))  # 4 MB of whitespace after the last line
    text = b"q1 Q0 d1 1 2.0 first\nq1 Q0 d2 2 1.0 last-tag" + tail
    path = tmp_path / "run.txt"
    path.write_bytes(text)
    counting = _CountingReads(monkeypatch, path)
    assert trec_bulk._last_line(trec_bulk._tail(path)) == b"q1 Q0 d2 2 1.0 last-tag"
    # each block of whitespace is read once: the file's size plus one block at most
    assert counting.read <= len(text) + trec_bulk._SAMPLE
    monkeypatch.undo()
    assert trec_bulk._last_line(text) == b"q1 Q0 d2 2 1.0 last-tag"
    run = load_run(path)
    assert run.name == "last-tag" and list(run.rankings["q1"]) == ["d1", "d2"]
    assert parse_run(text).name == "last-tag"


def test_a_last_line_longer_than_a_block_is_read_whole(tmp_path: Path) -> None:
    doc = "d" * (3 * trec_bulk._SAMPLE)
    text = f"q1 Q0 d1 1 2.0 t\nq1 Q0 {doc} 2 1.0 tag\n\n  \n".encode()
    path = tmp_path / "run.txt"
    path.write_bytes(text)
    assert trec_bulk._last_line(trec_bulk._tail(path)) == f"q1 Q0 {doc} 2 1.0 tag".encode()
    assert trec_bulk._last_line(text) == f"q1 Q0 {doc} 2 1.0 tag".encode()
