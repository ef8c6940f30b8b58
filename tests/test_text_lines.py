"""The lines of the user's text files (:mod:`evalkit.io.text_lines`): every reader of a
golden set, labels, clusters or tags file splits records where its format does, so a
legal character inside a record (a line break in a quoted CSV cell; U+2028, U+2029,
U+0085, a form feed, ``\\x1c``-``\\x1e``) stays in it. Expected values are what Python's
own :mod:`csv` and :mod:`json` modules read from the same bytes."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.data.case_clusters import ClustersError, load_clusters
from evalkit.data.case_tags import load_tags
from evalkit.data.goldens import GoldenError, load_goldens
from evalkit.data.labels import LabelError, load_labels
from evalkit.data.result_files import is_artifact
from evalkit.io.input_files import sniff
from evalkit.io.text_lines import csv_lines, text_lines, universal_lines

#: characters str.splitlines() breaks at, none of which ends a record of these formats
BREAKERS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]


def csv_rows(path: Path) -> list[list[str]]:
    """The rows Python's csv module reads from ``path``."""
    with path.open(newline="", encoding="utf-8-sig") as fh:
        return list(csv.reader(fh, strict=True))


def json_records(path: Path) -> list[Any]:
    """The JSON value of each non-blank ``\\n``-separated line of ``path``'s bytes."""
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return path


def test_text_lines_end_at_newline_alone() -> None:
    text = "a\u2028b\r\nc\x0cd\re\n\nf"
    assert list(text_lines(text)) == [(1, "a\u2028b"), (2, "c\x0cd\re"), (3, ""), (4, "f")]
    assert list(text_lines("x\n")) == [(1, "x")] and list(text_lines("")) == []
    assert list(universal_lines(text)) == [(1, "a\u2028b"), (2, "c\x0cd"), (3, "e"), (4, ""),
                                           (5, "f")]


def test_csv_lines_are_those_of_a_file_opened_without_newline_translation(
        tmp_path: Path) -> None:
    text = "a,\"b\r\nc\"\rd,e\u2028f\n\"g\ng\"\r\n\x0c,h"
    p = tmp_path / "t.csv"
    p.write_bytes(text.encode())
    with p.open(newline="", encoding="utf-8") as fh:
        assert list(csv_lines(text)) == list(fh)


def test_csv_cells_keep_line_breaks_and_separators_exactly(tmp_path: Path) -> None:
    queries = ["Summarise:\n\nPara one.\r\nPara two.", "old\rmac", "tail\n",
               *(f"a{c}b" for c in BREAKERS), "".join(BREAKERS) + "x"]
    rows = [["id", "query", "answers"],
            *([f"q{i}", q, f"line1\nline2{q[-1]}"] for i, q in enumerate(queries))]
    p = write_csv(tmp_path / "g.csv", rows)
    expected = csv_rows(p)[1:]
    assert len(expected) == len(queries)
    cases = list(load_goldens(p))
    assert [(c.id, c.query, c.answers) for c in cases] == [
        (cid, query, (answers,)) for cid, query, answers in expected]


def test_a_csv_row_is_named_by_the_line_it_starts_on(tmp_path: Path) -> None:
    p = tmp_path / "g.csv"
    # row q1 spans lines 2-4, a U+2028 cell is on line 5, q3 (line 6) lacks a cell
    p.write_bytes('id,query,answers\nq1,"one\ntwo\nthree",x\nq2,a\u2028b,y\nq3,z\n'.encode())
    with pytest.raises(GoldenError, match=r"g\.csv:6: 2 cells but the header has 3 columns"):
        load_goldens(p)
    p.write_bytes(b'id,query,answers\nq1,x,y\nq2,"a\nb\nc"\n')
    with pytest.raises(GoldenError, match=r"g\.csv:3: 2 cells but the header has 3"):
        load_goldens(p)
    p.write_bytes(b'id,query,answers\nq1,"a\nb",x\nq1,c,d\n')
    with pytest.raises(GoldenError, match=r"g\.csv:4: duplicate case id 'q1' \(first on "
                                          r"line 2\)"):
        load_goldens(p)
    p.write_bytes(b'id,query,answers\nq1,x,y\nq2,"never closed\nmore\n')
    with pytest.raises(csv.Error):
        csv_rows(p)
    with pytest.raises(GoldenError, match=r"g\.csv:3: malformed CSV \(.*\) \(the row runs "
                                          r"to line 4\)"):
        load_goldens(p)


def test_jsonl_strings_keep_u2028_u2029_and_nel(tmp_path: Path) -> None:
    records = [{"id": f"q{i}", "query": f"first{c}second", "answers": [f"x{c}"]}
               for i, c in enumerate(["\u2028", "\u2029", "\x85"])]
    p = tmp_path / "g.jsonl"
    body = "\r\n".join(json.dumps(r, ensure_ascii=False) for r in records)
    # a lone carriage return between tokens is JSON white space, not a line end
    body += '\n{"id":\r"q9", "query": "y"}\n'
    p.write_bytes(body.encode())
    expected = json_records(p)
    assert len(expected) == 4
    cases = list(load_goldens(p))
    assert [(c.id, c.query, c.answers) for c in cases] == [
        (r["id"], r["query"], tuple(r.get("answers", ()))) for r in expected]
    p.write_bytes(body.encode() + b'{"id": "q5", "query": \n')
    with pytest.raises(GoldenError, match=r"g\.jsonl:5: not valid JSON"):
        load_goldens(p)


def test_a_labels_file_is_read_by_its_newline_separated_lines(tmp_path: Path) -> None:
    p = tmp_path / "labels.jsonl"
    p.write_bytes(b'{"id": "q1", "labels": {"m": 1}}\r\n{"id": "q2", "labels": {"m": 2}}\n')
    assert load_labels(p).labels == {r["id"]: r["labels"] for r in json_records(p)}
    p.write_bytes('{"id": "q1", "labels": {"m": 1}}\n{"id": "a\u2028b", "labels": {"m": 2}}\n'
                  .encode())
    assert json_records(p)[1]["id"] == "a\u2028b"  # valid JSON: refused for the id alone
    with pytest.raises(LabelError, match=r"labels\.jsonl:2: id 'a\\u2028b' holds") as err:
        load_labels(p)
    assert "not valid JSON" not in str(err.value)


@pytest.mark.parametrize("char", BREAKERS)
def test_clusters_and_tags_lines_end_at_newline_alone(tmp_path: Path, char: str) -> None:
    p = tmp_path / "c.tsv"
    p.write_bytes(f"# note{char}still the comment\n1\tA\r\n2\tB\r3\tC\n".encode())
    with p.open(encoding="utf-8") as fh:  # Python's text mode: lines end at \n, \r\n, \r
        pairs = [line.rstrip("\n").split("\t") for line in fh if not line.startswith("#")]
    assert load_clusters(p) == dict(pairs) == {"1": "A", "2": "B", "3": "C"}
    assert load_tags(p) == {q: (t,) for q, t in pairs}
    p.write_bytes(f"# note{char}x\n1\tA\n2\tB{char}C\n".encode())
    with pytest.raises(ClustersError, match=r"c\.tsv:3: cluster 'B.*' holds"):
        load_clusters(p)


def test_sniff_reads_a_golden_line_holding_u2028(tmp_path: Path) -> None:
    p = tmp_path / "g.jsonl"
    p.write_bytes(json.dumps({"id": "q1", "query": "a\u2028b"}, ensure_ascii=False)
                  .encode() + b"\n")
    assert sniff(p).kind == "goldens"


def test_is_artifact_reads_the_header_to_its_newline(tmp_path: Path) -> None:
    p = tmp_path / "a.jsonl"
    p.write_bytes(b'{"type":\r"header", "name": "x"}\n')
    assert json_records(p)[0]["type"] == "header"
    assert is_artifact(p)


def test_yaml_goldens_parse_as_pyyaml_and_name_an_editors_lines(tmp_path: Path) -> None:
    p = tmp_path / "g.yaml"
    head = "- id: q1\n  query: \"a\u2028b\x85c\"\n  answers: ['x\u2029y']\n"
    p.write_bytes(head.encode())
    data = yaml.safe_load(p.read_text(encoding="utf-8"))  # YAML 1.1: U+0085 folds
    assert [(c.id, c.query, c.answers) for c in load_goldens(p)] == [
        (r["id"], r["query"], tuple(r["answers"])) for r in data]
    raw = (head + "- id: q1\n  query: z\n").encode()
    p.write_bytes(raw)
    line = raw[:raw.rindex(b"- id: q1")].count(b"\n") + 1  # 4; pyyaml counts 7
    with pytest.raises(GoldenError, match=rf"g\.yaml:{line}: duplicate case id 'q1' "
                                          r"\(first on line 1\)"):
        load_goldens(p)
    raw = (head + "- id: q2\n  query: |\n    l1\n    l2\u2028l3\n").encode()
    p.write_bytes(raw)
    with pytest.raises(GoldenError, match=r"(?s)g\.yaml:8: invalid YAML .* line 7, column 8"):
        load_goldens(p)  # 'l3' (line 7, after 'l2' and U+2028) is a key without ':'


def test_first_line_readers_of_an_artifact_read_to_its_newline(tmp_path: Path) -> None:
    from evalkit.execute.rescore import recorded_goldens
    from evalkit.io.input_files import InputError, require_artifact_rows

    p = tmp_path / "a.jsonl"
    p.write_bytes(b'{"type":\r"header", "name": "x", "goldens": {"path": "g.jsonl"}}\n')
    header = json_records(p)[0]
    assert recorded_goldens(p) == Path(header["goldens"]["path"])
    with pytest.raises(InputError, match="no rows"):
        require_artifact_rows(p, "run")
    p.write_bytes(p.read_bytes() + b'{"type":\r"row", "id": "q1"}\n')
    require_artifact_rows(p, "run")  # a row follows: accepted


@pytest.mark.parametrize("data", [b"", b"a\n", b"ab\ncd", b"\n\n", b"abcdef\nx\n",
                                  b"ab\r\ncd\r\n", b"x\nabcdefgh", b"abcde\n"])
def test_bounded_lines_are_those_of_bytesio_with_offsets(data: bytes) -> None:
    import io

    from evalkit.io.text_lines import LongLineError, bounded_lines, long_line

    found = long_line(data, 5)
    if found is not None:  # the line long_line names, measured the same
        with pytest.raises(LongLineError) as caught:
            list(bounded_lines(io.BytesIO(data), 5))
        assert (caught.value.lineno, caught.value.length) == found
        return
    read = list(bounded_lines(io.BytesIO(data), 5, 10))  # offsets from byte 10
    assert [line for _, _, line in read] == list(io.BytesIO(data))
    assert [n for n, _, _ in read] == list(range(1, len(read) + 1))
    assert all(data[offset - 10:offset - 10 + len(line)] == line for _, offset, line in read)
