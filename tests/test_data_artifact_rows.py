"""read_artifact_rows (one line held at a time, what ``evalkit rescore`` reads) gives the
header, rows, integrity and errors of read_artifact (the whole file at once) on finished,
cut, altered and malformed files; the byte spans it gives hold each row's line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.data.artifact import ArtifactError, read_artifact, read_artifact_rows

HEAD = '{"type": "header", "schema_version": 2, "name": "r", "kind": "target"}\n'
ROW = '{"type": "row", "id": "q%d", "metrics": {}, "response": {"ranked_ids": ["a"]}}\n'


def _finished(n: int) -> str:
    import hashlib

    body = HEAD + "".join(ROW % i for i in range(n))
    digest = hashlib.sha256(body.encode()).hexdigest()
    return body + json.dumps({"type": "trailer", "rows": n, "sha256": digest}) + "\n"


CASES = {
    "finished": _finished(3),
    "bom_and_blank_lines": "\ufeff\n \n" + _finished(2),
    "cut_mid_line": HEAD + ROW % 0 + (ROW % 1)[:20],
    "unterminated_row": HEAD + ROW % 0 + (ROW % 1).rstrip("\n"),
    "altered": _finished(3).replace('"q1"', '"q9"'),
    "row_lost": _finished(3).replace(ROW % 1, ""),
    "after_trailer": _finished(1) + ROW % 5,
    "bad_json": HEAD + '{"type": "row", "id": \n' + ROW % 1,
    "not_a_row": HEAD + '{"type": "other"}\n',
    "no_header": ROW % 0,
    "empty": "\n\n",
    "schema_1_cut": HEAD.replace('"schema_version": 2', '"schema_version": 1') + ROW[:10],
    "crlf": (HEAD + ROW % 0).replace("\n", "\r\n"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_as_reading_the_whole_file(name: str, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(CASES[name].encode("utf-8"))
    try:
        expected = read_artifact(path)
    except ArtifactError as exc:
        with pytest.raises(ArtifactError) as caught:
            read_artifact_rows(path, dict)
        assert str(caught.value) == str(exc)
        return
    header, rows, integrity, spans = read_artifact_rows(path, dict)
    assert (header, rows, integrity) == expected
    data = path.read_bytes()
    for (_, obj), (offset, length) in zip(rows, spans, strict=True):
        assert json.loads(data[offset:offset + length]) == obj


def test_light_rows_drop_the_body(tmp_path: Path) -> None:
    from evalkit.data.rows import without_response_body_json

    path = tmp_path / "run.jsonl"
    row = {"type": "row", "id": "q0", "metrics": {"m": 1.0}, "retrieved": ["a", "b"],
           "response": {"ranked_ids": ["a", "b"], "text": "hello", "raw": {"x": 1},
                        "raw_cut": None, "meta": {"k": 1}}}
    path.write_text(HEAD + json.dumps(row) + "\n")
    _, rows, _, _ = read_artifact_rows(path, without_response_body_json)
    assert rows[0][1] == {"type": "row", "id": "q0", "metrics": {"m": 1.0},
                          "response": {"ranked_ids": ["a"], "text": "h", "raw_cut": None,
                                       "meta": {"k": 1}}}
