"""``evalkit.io.input_files``: a file whose first data line (a run artifact's header) is
refused names ``file:line`` in every command that reads a run, a baseline or qrels, as
the artifact reader names a refused row; the line is counted here from what was written
(blank lines before the header count). :func:`~evalkit.io.input_files.sniff` finds the
first line of data after more blank or comment lines than its first block holds, and
names that line; it reads no more than ``SKIP_BYTES`` of them, plain or gzip (counted
by wrappers around the file and the gzip reader)."""

from __future__ import annotations

import gzip
import io
import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.results import ArtifactError
from evalkit.io import gzip_data
from evalkit.io.input_files import SKIP_BYTES, SNIFF_BYTES, sniff
from evalkit.io.limits import MAX_ARTIFACT_DEPTH

runner = CliRunner()
HEADER = {"type": "header", "schema_version": 2, "run": "a", "config": {"metrics": ["m"]}}
ROW = {"type": "row", "id": "q1", "metrics": {"m": 1.0}}


def nested(levels: int) -> dict[str, object]:
    """An object ``levels`` objects deep, the outermost included."""
    value: dict[str, object] = {"x": 1}
    for _ in range(levels - 1):
        value = {"d": value}
    return value


def commands(path: Path, tmp_path: Path) -> list[list[str]]:
    """Every command line that reads ``path`` as a run, a baseline or qrels."""
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n  - id: floor\n    metric: m\n    op: '>='\n"
                      "    threshold: 0\n")
    trec = tmp_path / "run.txt"
    trec.write_text("q1 Q0 d1 1 1.0 t\n")
    return [["eval", str(path)], ["compare", str(path), str(path)],
            ["gate", "--checks", str(checks), "--run", str(path)],
            ["baseline", "promote", str(path)],
            ["eval", str(trec), "--qrels", str(path)]]


def error_line(args: list[str]) -> str:
    res = runner.invoke(app, args)
    assert res.exit_code == 2, (args, res.exit_code, res.output)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.output
    return lines[0]


@pytest.mark.parametrize("blank", [0, 2])
def test_a_header_nested_too_deeply_is_named_by_file_and_line(tmp_path: Path,
                                                              blank: int) -> None:
    path = tmp_path / "deep.jsonl"
    # the header's "extra" value one level deeper than the limit allows the whole line
    header = {**HEADER, "extra": nested(MAX_ARTIFACT_DEPTH)}
    path.write_text("\n" * blank + json.dumps(header) + "\n" + json.dumps(ROW) + "\n")
    line = blank + 1
    expected = (f"{path}:{line}: nested more than {MAX_ARTIFACT_DEPTH} levels deep (lists "
                "and objects); evalkit refuses deeper JSON")
    for args in commands(path, tmp_path):
        assert expected in error_line(args), args
    from evalkit.data.artifact import read_artifact

    with pytest.raises(ArtifactError) as info:  # the reader's own words, the same place
        read_artifact(path)
    assert str(info.value) == expected


@pytest.mark.parametrize(("content", "phrase"), [
    ("[1, 2]", "JSON (a list)"),
    ('{"a": 1}', "a JSON object that is not a run header"),
    (json.dumps(ROW), "the rows of a run artifact without its header line"),
    (json.dumps(HEADER)[:-1] + "}}", "a JSON document (not JSON Lines)"),
])
def test_a_first_line_that_is_no_header_is_named_by_file_and_line(
        tmp_path: Path, content: str, phrase: str) -> None:
    path = tmp_path / "wrong.jsonl"
    path.write_text("# a comment\n\n" + content + "\n")
    for args in commands(path, tmp_path):
        line = error_line(args)
        assert f"{path}:3: {phrase}, not " in line, (args, line)
        assert line.count("not an evalkit run artifact") <= 1, line


def artifact_text(header: dict[str, object], rows: int = 1) -> str:
    return json.dumps(header) + "\n" + "".join(
        json.dumps({**ROW, "id": f"q{i}"}) + "\n" for i in range(rows))


def test_a_header_after_blank_lines_is_read_and_its_fields_name_its_line(
        tmp_path: Path) -> None:
    good = tmp_path / "good.jsonl"
    good.write_text("\n  \n" + artifact_text({**HEADER, "name": "ok"}))
    res = runner.invoke(app, ["eval", str(good), "--allow-incomplete"])
    assert res.exit_code == 0, res.output  # was: "is an evalkit run artifact. This
    assert "1.0000" in res.stdout          # command takes ... a run artifact"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n\n" + artifact_text({**HEADER, "name": "a\u0007b"}))
    for args in commands(bad, tmp_path)[:4]:
        line = error_line([*args, *(["--allow-incomplete"] if args[0] != "gate"
                                    and args[0] != "baseline" else [])])
        assert f"{bad}:3: the run name 'a\\x07b' holds a control character" in line, args


def test_a_header_after_blank_lines_without_rows_is_refused_as_such(tmp_path: Path) -> None:
    path = tmp_path / "no_rows.jsonl"
    path.write_text("\n\n" + json.dumps(HEADER) + "\n")
    for args in commands(path, tmp_path)[:4]:
        assert "the run artifact has no rows" in error_line(args), args


def test_comment_lines_before_a_header_are_named_with_the_headers_line(
        tmp_path: Path) -> None:
    path = tmp_path / "commented.jsonl"
    path.write_text("# written by hand\n\n" + artifact_text(HEADER))
    for args in commands(path, tmp_path)[:4]:
        line = error_line(args)
        assert f"{path}:3: a run artifact's header after comment lines" in line, args
        assert "remove the lines before it" in line


def write(path: Path, text: str, compressed: bool) -> Path:
    data = text.encode()
    if compressed:
        path = path.with_suffix(".gz")
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("compressed", [False, True])
def test_an_artifact_after_a_long_blank_line_is_an_artifact_on_its_line(
        tmp_path: Path, compressed: bool) -> None:
    # line 1: 3 blocks of spaces; lines 2-3 empty; line 4 the header
    text = " " * (3 * SNIFF_BYTES) + "\n\n\n" + json.dumps(HEADER) + "\n"
    found = sniff(write(tmp_path / "a.jsonl", text, compressed))
    assert (found.kind, found.line) == ("artifact", 4)


@pytest.mark.parametrize("compressed", [False, True])
def test_qrels_after_comment_lines_longer_than_a_block(tmp_path: Path, compressed: bool) -> None:
    # line 1 a comment of 2.5 blocks, lines 2-1001 short comments, line 1002 blank,
    # line 1003 the first qrels line
    text = ("#" + "x" * (5 * SNIFF_BYTES // 2) + "\n" + "# note\n" * 1000 + "  \t\n"
            + "q1 0 d1 1\nq1 0 d2 0\n")
    found = sniff(write(tmp_path / "q.txt", text, compressed))
    assert (found.kind, found.line) == ("qrels", 1003)


def test_a_comment_line_split_across_blocks_is_skipped_to_its_end(tmp_path: Path) -> None:
    # the comment's "#" is the last byte of the first block
    text = " " * (SNIFF_BYTES - 1) + "#" + " q1 Q0 d1 1 2.0 t" * 10 + "\nq1 Q0 d1 1 2.0 tag\n"
    found = sniff(write(tmp_path / "r.txt", text, False))
    assert (found.kind, found.line) == ("run", 2)


def test_a_file_of_only_blank_or_comment_lines_is_called_so(tmp_path: Path) -> None:
    blank = sniff(write(tmp_path / "b.txt", " \n" * SNIFF_BYTES, False))
    assert blank.kind == "empty" and "only white space" in blank.looks_like
    comments = sniff(write(tmp_path / "c.txt", " " * SNIFF_BYTES + "\n# x\n" * 10, False))
    assert comments.kind == "empty" and "blank or comment lines" in comments.looks_like


RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n"


def gzip_of_newlines(mib: int, then: str) -> bytes:
    """Gzip data of ``mib`` MiB of line breaks, then ``then``: one member of 1 MiB of line
    breaks (about 1 KB) repeated, and a member of ``then`` (``cat a.gz b.gz`` is gzip)."""
    member = gzip.compress(b"\n" * (1 << 20))
    return member * mib + gzip.compress(then.encode())


class Counted:
    """Bytes read from every file and every gzip reader opened while it is installed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.from_disk = 0
        self.inflated = 0
        counted = self
        real_open = Path.open

        class File(io.BufferedReader):
            def read(self, n: int | None = -1) -> bytes:
                data = super().read(n)
                counted.from_disk += len(data)
                return data

        def open_counted(path: Path, mode: str = "r", *args: Any, **kw: Any) -> Any:
            if mode != "rb":
                return real_open(path, mode, *args, **kw)
            return File(io.FileIO(path, "rb"))

        class Reader(gzip_data.GzipReader):
            def readinto(self, buffer: Any) -> int:
                n = super().readinto(buffer)
                counted.inflated += n
                return n

        monkeypatch.setattr(Path, "open", open_counted)
        monkeypatch.setattr(gzip_data, "GzipReader", Reader)


def test_a_gzip_file_of_blank_lines_is_read_only_to_the_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 200 MiB of line breaks (about 200 KB on disk), then a run: read 200 MiB before
    path = tmp_path / "r.gz"
    path.write_bytes(gzip_of_newlines(200, RUN))
    assert path.stat().st_size < 300_000
    counted = Counted(monkeypatch)
    found = sniff(path)
    assert found.kind == "text" and found.line is None
    assert found.looks_like == "a text file whose first 4 MiB hold only blank or comment lines"
    # the bound, the first block and the block that ends the head, decompressed
    assert counted.inflated <= SKIP_BYTES + 2 * SNIFF_BYTES + 1
    # the first block, then the 4 MiB's 4 KB in one read of the gzip reader (the whole
    # 200 KB before)
    assert counted.from_disk <= 2 * SNIFF_BYTES + 1


def test_a_plain_file_of_blank_lines_is_read_only_to_the_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "r.txt", "\n" * (3 * SKIP_BYTES) + RUN, False)
    counted = Counted(monkeypatch)
    found = sniff(path)
    assert (found.kind, found.line) == ("text", None)
    assert "first 4 MiB hold only blank or comment lines" in found.looks_like
    assert counted.from_disk <= SKIP_BYTES + 2 * SNIFF_BYTES + 1


@pytest.mark.parametrize("compressed", [False, True])
def test_data_within_the_bound_is_found_on_its_line(tmp_path: Path, compressed: bool) -> None:
    # the run's first line starts in the last block of the bound, after blank lines and
    # comment lines
    blank = SKIP_BYTES - SNIFF_BYTES // 2 - 4000
    text = "\n" * blank + "# x\n" * 1000 + RUN
    found = sniff(write(tmp_path / "r.txt", text, compressed))
    assert (found.kind, found.line) == ("run", blank + 1001)


def test_a_gzip_run_after_the_bound_is_scored_as_without_its_blank_lines(
        tmp_path: Path) -> None:
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 1\n")
    plain = tmp_path / "plain.gz"
    plain.write_bytes(gzip.compress(RUN.encode()))
    padded = tmp_path / "padded.gz"
    padded.write_bytes(gzip_of_newlines(SKIP_BYTES // (1 << 20) + 1, RUN))
    assert zlib.decompress(padded.read_bytes(), 31)[:SKIP_BYTES].strip() == b""
    out = []
    for path in (plain, padded):
        res = runner.invoke(app, ["eval", str(path), "--qrels", str(qrels), "-m", "ndcg@10",
                                  "--json"])
        assert res.exit_code == 0, res.output
        out.append(json.loads(res.stdout))
    for doc in out:  # the same scores, but for the file's name
        doc.pop("source")
    assert out[0] == out[1]
