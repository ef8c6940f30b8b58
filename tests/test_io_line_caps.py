"""JSON Lines golden sets and labels files refuse a line over 16 MiB, and run artifacts
a line over 256 MiB, before the text is decoded (evalkit.io.text_lines.long_line), naming
the file and line; a value echoed in a message is cut (evalkit.io.limits.shown), so a
200 MB label is never printed back whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.io import text_lines
from evalkit.io.text_lines import long_line


def test_long_line_finds_the_first_long_line() -> None:
    data = b"a\n" + b"b" * 50 + b"\nc\n" + b"d" * 70 + b"\n"
    assert long_line(data, 60) == (4, 70)
    assert long_line(data, 40) == (2, 50)
    assert long_line(data, 70) is None
    assert long_line(data.decode(), 40) == (2, 50)
    assert long_line(b"x" * 100, 99) == (1, 100)


def test_golden_and_labels_jsonl_line_cap(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit import load_goldens
    from evalkit.data import goldens as goldens_module
    from evalkit.data.goldens import GoldenError
    from evalkit.data.labels import LabelError, load_labels

    monkeypatch.setattr(text_lines, "MAX_JSONL_LINE_BYTES", 1 << 20)
    monkeypatch.setattr(goldens_module, "MAX_JSONL_LINE_BYTES", 1 << 20)
    goldens = tmp_path / "g.jsonl"
    goldens.write_text('{"id": "a", "query": "q"}\n'
                       + json.dumps({"id": "b", "query": "x" * (2 << 20)}) + "\n")
    with pytest.raises(GoldenError, match=r"g.jsonl:2: the line is 2,097,\d+ bytes long, "
                                          r"more than the 1 MiB"):
        load_goldens(goldens)
    labels = tmp_path / "l.jsonl"
    labels.write_text(json.dumps({"id": "a", "labels": {"c": "x" * (2 << 20)}}) + "\n")
    with pytest.raises(LabelError, match=r"l.jsonl:1: the line is .* labels file"):
        load_labels(labels)


def test_a_huge_label_value_is_not_echoed_whole(tmp_path: Path) -> None:
    from evalkit.data.labels import LabelError, load_labels

    labels = tmp_path / "l.jsonl"
    labels.write_text(json.dumps({"id": "a", "labels": {"c": "x" * 1_000_000}}) + "\n")
    with pytest.raises(LabelError) as info:
        load_labels(labels)
    message = str(info.value)
    assert len(message) < 400 and "(1,000,000 characters)" in message, message


def test_artifact_line_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit.data.artifact import ArtifactError, read_artifact
    from evalkit.execute.artifact_writer import read_partial

    monkeypatch.setattr(text_lines, "MAX_ARTIFACT_LINE_BYTES", 1 << 20)
    path = tmp_path / "run.jsonl"
    path.write_text('{"type": "header", "schema_version": 2}\n'
                    + json.dumps({"type": "row", "id": "a", "text": "x" * (2 << 20)}) + "\n")
    with pytest.raises(ArtifactError, match=r"run.jsonl:2: the line is .* run artifact"):
        read_artifact(path)
    with pytest.raises(ArtifactError, match=r"run.jsonl:2: the line is"):
        read_partial(path)
    from evalkit.data.artifact import read_artifact_rows

    with pytest.raises(ArtifactError) as whole:
        read_artifact(path)
    with pytest.raises(ArtifactError) as by_line:  # line by line: the same message
        read_artifact_rows(path, dict)
    assert str(by_line.value) == str(whole.value)


def test_every_json_lines_reader_caps_its_lines(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit.data import goldens as goldens_module
    from evalkit.data.goldens import GoldenError, json_objects

    monkeypatch.setattr(goldens_module, "MAX_JSONL_LINE_BYTES", 100)
    text = '{"id": "a"}\n' + json.dumps({"id": "b", "text": "x" * 200}) + "\n"
    with pytest.raises(GoldenError, match=r"c.jsonl:2: the line is 2\d\d bytes long"):
        list(json_objects(text, tmp_path / "c.jsonl"))
