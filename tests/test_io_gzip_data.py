"""Gzip input (:mod:`evalkit.io.gzip_data`): every member read, and a damaged or cut-short
file refused with what is wrong and at which byte, by every reader of gzip files (runs and
qrels, topic files, the sniffing of an input).

The expected offsets come from the gzip format itself (RFC 1952): ``gzip.compress``
writes a 10-byte header, so the first byte of deflate data is byte 10, and its bits 1-2
are the block type, where ``11`` is reserved (RFC 1951, section 3.2.3): setting them makes
byte 10 invalid. The decompressed bytes are compared with the standard library's
``gzip.decompress``.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import pytest
from evalkit_retrieval.topics import TopicsError, load_topics
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.io.gzip_data import DamagedGzipError, inflate
from evalkit.io.input_files import sniff

RUN = b"".join(f"{q} Q0 d{i} {i} {10 - i} tag\n".encode() for q in range(1, 40)
               for i in range(1, 9))
QRELS = b"".join(f"{q} 0 d1 1\n".encode() for q in range(1, 40))
runner = CliRunner()


def damaged(data: bytes) -> bytes:
    raw = bytearray(gzip.compress(data, mtime=0))
    raw[10] |= 0b110  # the first block's type: 11, reserved
    return bytes(raw)


def test_every_member_is_read() -> None:
    members = gzip.compress(RUN[:500]) + gzip.compress(RUN[500:])
    raw = members + b"\x00" * 8  # zero padding after the last member
    assert inflate(raw) == gzip.decompress(members) == RUN
    assert inflate(raw, 100) == RUN[:101]  # the caller refuses more than 100


def test_damaged_and_cut_short_data_say_where() -> None:
    raw = damaged(RUN)
    with pytest.raises(DamagedGzipError) as err:
        inflate(raw)
    assert (err.value.offset, err.value.truncated) == (10, False)
    assert str(err.value) == (f"the gzip stream is damaged at byte 10 of {len(raw):,} "
                              "(invalid block type)")
    whole = gzip.compress(RUN)
    with pytest.raises(DamagedGzipError) as err:
        inflate(whole[:100])
    assert (err.value.offset, err.value.truncated) == (100, True)
    assert str(err.value).startswith("the gzip stream is cut short: the file ends at byte "
                                     "100 before the stream does (")
    assert inflate(whole[:100], complete=False) == zlib.decompressobj(31).decompress(
        whole[:100])  # the first bytes of a file: no end expected
    with pytest.raises(DamagedGzipError, match=f"damaged at byte {len(whole):,} of "
                       f"{len(whole) + 4:,} .data after the end"):
        inflate(whole + b"junk")


def test_commands_name_the_damage_not_nul_bytes(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_bytes(QRELS)
    bad = tmp_path / "run.gz"
    bad.write_bytes(damaged(RUN))
    assert sniff(bad).kind == "damaged"
    res = runner.invoke(app, ["eval", str(bad), "--qrels", str(tmp_path / "qrels")])
    assert res.exit_code == 2
    assert res.output == (f"error: {bad}: the gzip stream is damaged at byte 10 of "
                          f"{bad.stat().st_size:,} (invalid block type); copy or download "
                          "the file again\n")
    cut = tmp_path / "qrels.gz"
    cut.write_bytes(gzip.compress(QRELS)[:40])
    (tmp_path / "ok.gz").write_bytes(gzip.compress(RUN))
    res = runner.invoke(app, ["eval", str(tmp_path / "ok.gz"), "--qrels", str(cut)])
    assert res.exit_code == 2
    assert res.output.startswith(f"error: --qrels {cut}: the gzip stream is cut short: the "
                                 "file ends at byte 40 before the stream does (")
    # a long run damaged beyond the first 64 KiB: the TREC reader names the byte
    long_run = b"".join(f"{q} Q0 doc{i} {i} {-i} t\n".encode() for q in range(1, 3000)
                        for i in range(1, 40))
    whole = gzip.compress(long_run)
    assert len(whole) > 3 * 65536
    late = tmp_path / "late.gz"
    late.write_bytes(whole[:3 * 65536])
    res = runner.invoke(app, ["eval", str(late), "--qrels", str(tmp_path / "qrels")])
    assert res.exit_code == 2
    assert f"{late}: the gzip stream is cut short: the file ends at byte 196,608" in res.output


def test_a_cut_short_topic_file_is_refused(tmp_path: Path) -> None:
    topics = tmp_path / "topics.tsv.gz"
    whole = gzip.compress(b"1\tfirst query\n2\tsecond query\n")
    topics.write_bytes(whole[:20])  # decompresses to a part of the first line
    with pytest.raises(TopicsError, match=rf"topics {topics}: the gzip stream is cut "
                       r"short: the file ends at byte 20 before the stream does"):
        load_topics(topics)


def test_the_reader_streams_what_inflate_returns(tmp_path: Path) -> None:
    """:class:`GzipReader` reads a file a piece at a time: every member, zero padding,
    the same damage at the same byte, and a limit refused at its first byte past."""
    import io

    from evalkit.io.gzip_data import GzipReader, InflateLimitError

    members = gzip.compress(RUN[:500]) + gzip.compress(RUN[500:]) + b"\x00" * 8
    path = tmp_path / "run.gz"
    path.write_bytes(members)
    with path.open("rb") as fh:
        reader = io.BufferedReader(GzipReader(fh), 64)
        assert list(reader) == RUN.splitlines(keepends=True)
    with path.open("rb") as fh:
        limited = GzipReader(fh, 100, refuse_more=True)
        assert limited.read(100) == RUN[:100]
        with pytest.raises(InflateLimitError, match="more than 100 bytes"):
            limited.read(100)
        assert limited.inflated == 101
    path.write_bytes(damaged(RUN))
    with path.open("rb") as fh, pytest.raises(DamagedGzipError) as err:
        GzipReader(fh).readall()
    assert str(err.value) == (f"the gzip stream is damaged at byte 10 of "
                              f"{path.stat().st_size:,} (invalid block type)")


def test_max_ratio_refuses_past_the_floor_only() -> None:
    import gzip
    import io

    import pytest

    from evalkit.io.gzip_data import RATIO_FLOOR, GzipReader, InflateRatioError

    small = gzip.compress(b"\n" * (RATIO_FLOOR // 2))  # ratio near 1000, under the floor
    assert len(GzipReader(io.BytesIO(small), max_ratio=100).readall()) == RATIO_FLOOR // 2
    bomb = gzip.compress(b"\n" * (3 * RATIO_FLOOR))
    reader = GzipReader(io.BytesIO(bomb), max_ratio=100)
    with pytest.raises(InflateRatioError, match="more than 100 times its compressed size"):
        reader.readall()
    assert RATIO_FLOOR < reader.inflated < 2 * RATIO_FLOOR
    assert len(GzipReader(io.BytesIO(bomb)).readall()) == 3 * RATIO_FLOOR  # no ratio: read
