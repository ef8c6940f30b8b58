"""NUL and other control characters, and white space around an id, are refused after
JSON/YAML/CSV decoding (an escaped \\u0000 as well as a raw byte), in every golden format,
in BEIR files and in checks files, with the file, the line and the id to write."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evalkit import load_goldens
from evalkit.data.goldens import GoldenError


def jsonl(tmp_path: Path, record: dict[str, object]) -> Path:
    path = tmp_path / "g.jsonl"
    path.write_text('{"id": "ok", "query": "q"}\n' + json.dumps(record) + "\n")
    assert "\\u" in path.read_text() or " " in json.dumps(record)  # escaped, not raw
    return path


@pytest.mark.parametrize(("record", "says"), [
    ({"id": "a\x00", "query": "q"},
     "g.jsonl:2: id 'a\\x00' holds a control character ('\\x00' at position 1)"),
    ({"id": "a\tb", "query": "q"}, "id 'a\\tb' holds a control character"),
    ({"id": "q\x85c", "query": "q"}, "id 'q\\x85c' holds a control character ('\\x85' "
     "at position 1)"),  # NEL, a C1 control
    ({"id": "q\u2028b", "query": "q"}, "id 'q\\u2028b' holds a control character"),
    ({"id": " a ", "query": "q"}, "g.jsonl:2: id ' a ' has white space at its start"),
    ({"id": "a ", "query": "q"}, "has white space at its end, so it can never match an "
     "id of a TREC file or a ranking; write 'a'"),
    ({"id": "a", "query": "q\x00"}, "g.jsonl:2: case 'a': 'query' holds a NUL character "
     "(\\u0000 at position 1)"),
    ({"id": "a", "query": "q", "expected": ["d1 "]}, "'expected' item 'd1 ' has white "
     "space at its end"),
    ({"id": "a", "query": "q", "relevant": ["d\x00"]}, "'relevant' item 'd\\x00' holds a "
     "control character"),
    ({"id": "a", "query": "q", "relevance": {" d": 1}}, "'relevance' key ' d' has white "
     "space at its start"),
    ({"id": "a", "query": "q", "expected": "x\x00"}, "'expected' holds a NUL character"),
    ({"id": "a", "query": "q", "answers": ["x\x00"]}, "'answers' holds a NUL character"),
])
def test_jsonl_escaped_controls_and_padded_ids(tmp_path: Path, record: dict[str, object],
                                               says: str) -> None:
    with pytest.raises(GoldenError) as err:
        load_goldens(jsonl(tmp_path, record))
    assert says in str(err.value)


def test_padded_and_plain_ids_were_two_cases(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text('{"id": "a", "query": "q"}\n{"id": " a ", "query": "q"}\n')
    with pytest.raises(GoldenError, match=re.escape("g.jsonl:2: id ' a ' has white space")):
        load_goldens(path)


def test_inner_space_and_text_controls_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(json.dumps({"id": "a b", "query": "line 1\n\tline 2"}) + "\n")
    case = next(iter(load_goldens(path)))
    assert (case.id, case.query) == ("a b", "line 1\n\tline 2")


@pytest.mark.parametrize(("name", "text", "says"), [
    ("g.yaml", '- id: "a\\0"\n  query: q\n', "g.yaml:1: id 'a\\x00' holds a control"),
    ("g.yaml", '- id: " a"\n  query: q\n', "g.yaml:1: id ' a' has white space"),
    ("g.yaml", '- id: a\n  query: "q\\0"\n', "'query' holds a NUL character"),
    ("g.csv", 'id,query\n" a",q\n', "g.csv:2: id ' a' has white space at its start"),
    ("g.csv", 'id,query,expected\na,q,"[""d\\u0000""]"\n', "g.csv:2: case 'a': 'expected' "
     "item 'd\\x00' holds a control character"),
])
def test_yaml_and_csv(tmp_path: Path, name: str, text: str, says: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(GoldenError) as err:
        load_goldens(tmp_path / name)
    assert says in str(err.value)


def test_beir_ids(tmp_path: Path) -> None:
    from evalkit_retrieval.beir import BeirError, load_qrels, load_queries

    q = tmp_path / "queries.jsonl"
    q.write_text('{"_id": "q1\\u0000", "text": "x"}\n')
    with pytest.raises(BeirError, match=r"queries.jsonl:1: '_id' 'q1\\x00' holds a control"):
        load_queries(q)
    t = tmp_path / "queries.tsv"
    t.write_text("q1\tx\x00y\n")
    with pytest.raises(BeirError,
                       match=re.escape("queries.tsv:1: the line contains a NUL byte")):
        load_queries(t)
    r = tmp_path / "test.tsv"
    r.write_text("query-id\tcorpus-id\tscore\nq1\td\x01\t1\n")
    with pytest.raises(BeirError,
                       match=re.escape("test.tsv:2: corpus-id 'd\\x01' holds a control")):
        load_qrels(r)


@pytest.mark.parametrize(("check", "says"), [
    ('  - id: " x"\n', "check id ' x' has white space at its start"),
    ('  - id: "x\\0"\n', "check id 'x\\x00' holds a control character"),
    ('  - id: x\n    scope: ["q1 "]\n', "'scope' case id 'q1 ' has white space at its end"),
])
def test_checks_file_ids(tmp_path: Path, check: str, says: str) -> None:
    from evalkit.gate.checks import CheckError, load_checks

    path = tmp_path / "checks.yaml"
    path.write_text("checks:\n" + check + "    metric: ap\n    op: '>='\n    threshold: 0.1\n")
    with pytest.raises(CheckError) as err:
        load_checks(path)
    assert says in str(err.value) and str(path) in str(err.value)
