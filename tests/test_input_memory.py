"""Inputs never exhaust memory silently: a gzip TREC run or qrels file is decompressed to
at most ``MAX_INFLATED_BYTES`` (a text "decompression bomb" is refused naming the file and
the cap), and running out of memory anywhere in a command is one ``error:`` line naming
the file being read (exit 2), never a traceback."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import evalkit_retrieval.trec as trec
import evalkit_retrieval.trec_text as trec_text
import pytest
from typer.testing import CliRunner

from evalkit.io.limits import MAX_INFLATED_BYTES


def invoke(*args: str) -> Any:
    from evalkit.cli.app import app

    return CliRunner().invoke(app, list(args))


#: distinct lines before a bomb's repeated one: more than the first lines the careful
#: reader reads before the bulk reader (trec_text.PROBE bytes), so that the cap, not the
#: duplicate, is met first
HEAD_LINES = 2000


def _bomb(path: Path, size: int) -> Path:
    qrels = path.name.startswith("bomb.qrels")
    line = b"q1 0 d1 1\n" if qrels else b"q1 Q0 d1 1 0.5 s\n"
    head = b"".join((f"q0 0 h{i} 1\n" if qrels else f"q0 Q0 h{i} 1 0.5 s\n").encode()
                    for i in range(HEAD_LINES))
    assert len(head) > trec_text.PROBE
    path.write_bytes(gzip.compress(head + line * (size // len(line) + 1), 1))
    return path


def test_cap_is_a_gibibyte() -> None:
    assert MAX_INFLATED_BYTES == 1 << 30


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_gzip_bomb_refused_at_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      kind: str) -> None:
    cap = 1 << 20  # the same code path as 1 GiB, without inflating a gibibyte in a test
    monkeypatch.setattr(trec, "MAX_INFLATED_BYTES", cap)
    bomb = _bomb(tmp_path / f"bomb.{kind}.gz", 4 * cap)
    assert bomb.stat().st_size < cap // 20  # compressed far smaller than the cap
    load = trec.load_run if kind == "run" else trec.load_qrels
    with pytest.raises(trec.TrecFormatError) as err:
        load(bomb)
    text = str(err.value)
    assert text.startswith(f"{bomb}: decompresses to more than 1 MiB")
    assert "gunzip -k" in text
    # under the cap, the same data reads (its duplicate document is then named by line)
    monkeypatch.setattr(trec, "MAX_INFLATED_BYTES", 8 * cap)
    with pytest.raises(trec.TrecFormatError, match=f":{HEAD_LINES + 2}: "):
        load(bomb)


def test_out_of_memory_is_one_line_naming_the_file(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "q.qrels").write_text("q1 0 d1 1\n")
    run = tmp_path / "big.run"
    run.write_text("q1 Q0 d1 1 0.5 s\n")

    def exhausted(*args: Any, **kwargs: Any) -> Any:
        raise MemoryError("Unable to allocate output buffer.")

    monkeypatch.setattr(trec, "_bulk_run", exhausted)
    res = invoke("eval", str(run), "--qrels", str(tmp_path / "q.qrels"), "-m", "ap")
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.output
    assert lines[0].startswith(f"error: out of memory while reading the run file {run} (")
    assert "bytes on disk)" in lines[0]
