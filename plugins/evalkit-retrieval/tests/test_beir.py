"""BEIR readers on the SciFact test fixture (CC BY-NC, tests only) and small hand files."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import pytest
from evalkit_retrieval.beir import (
    BeirError,
    goldens_from_qrels,
    load_beir,
    load_corpus,
    load_qrels,
    load_queries,
)
from evalkit_retrieval.topics import load_topics

from evalkit.plugins.default import default_registry

SCIFACT = Path(__file__).resolve().parents[3] / "tests" / "data" / "scifact"
TOPICS = "topics.beir-v1.0.0-scifact.test.tsv.gz"


def trec_qrels_by_hand(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for line in path.read_text().splitlines():
        qid, _, doc, label = line.split()
        out.setdefault(qid, {})[doc] = int(label)
    return out


def test_scifact_qrels_match_the_trec_copy() -> None:
    qrels = load_qrels(SCIFACT / "qrels" / "test.tsv")  # CRLF, with header
    assert len(qrels) == 300
    assert sum(len(v) for v in qrels.values()) == 339
    assert qrels["1"] == {"31715818": 1}
    assert qrels == trec_qrels_by_hand(SCIFACT / "qrels.beir-v1.0.0-scifact.test.txt")
    assert all(k == k.strip() for q in qrels.values() for k in q)  # no '\r' left


def test_scifact_queries_from_gzip_tsv() -> None:
    queries = load_queries(SCIFACT / TOPICS)
    assert len(queries) == 300
    assert queries["1"] == "0-dimensional biomaterials show inductive properties."
    assert queries["5"] == "1/2000 in UK have abnormal PrP positivity."


def test_load_beir_from_a_root_the_caller_chooses() -> None:
    ds = load_beir(SCIFACT, "test", corpus=False, queries_path=TOPICS)
    assert ds.root == SCIFACT
    assert len(ds.queries) == 300 and len(ds.qrels) == 300
    gs = ds.goldens()
    assert len(gs) == 300
    case = gs.get("3")
    assert case.query.startswith("1,000 genomes project enables mapping")
    assert case.relevant == frozenset({"14717500"})
    assert dict(case.relevance) == {"14717500": 1}


def test_train_split_queries_have_no_text_in_the_test_topics() -> None:
    with pytest.raises(BeirError, match=r"train.tsv: \d+ judged queries have no text"):
        load_beir(SCIFACT, "train", corpus=False, queries_path=TOPICS)


def test_missing_pieces_are_named() -> None:
    with pytest.raises(BeirError, match=r"no queries\.jsonl"):
        load_beir(SCIFACT, "test", corpus=False)
    with pytest.raises(BeirError, match=r"no qrels/dev\.tsv"):
        load_beir(SCIFACT, "dev", corpus=False, queries_path=TOPICS)
    with pytest.raises(BeirError, match=r"no corpus\.jsonl"):
        load_beir(SCIFACT, "test", queries_path=TOPICS)


def test_full_layout_with_corpus_bom_crlf(tmp_path: Path) -> None:
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_bytes(
        b'\xef\xbb\xbf{"_id": "d1", "title": "T1", "text": "one"}\r\n'
        b'{"_id": 2, "title": "", "text": "two", "metadata": {"y": 1}}\r\n\r\n'
    )
    (tmp_path / "queries.jsonl").write_text(
        '{"_id": "007", "text": "first"}\n{"_id": "7", "text": "second"}\n'
    )
    (tmp_path / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n007\td1\t2\n7\t2\t0\n"
    )
    ds = load_beir(tmp_path)
    assert ds.corpus == {"d1": {"title": "T1", "text": "one"},
                         "2": {"title": "", "text": "two", "metadata": {"y": 1}}}
    assert ds.queries == {"007": "first", "7": "second"}
    assert ds.qrels == {"007": {"d1": 2}, "7": {"2": 0}}
    gs = ds.goldens()
    assert gs.ids() == ["007", "7"]
    assert gs.get("7").relevant == frozenset()
    assert gs.get("007").relevant == frozenset({"d1"})


def test_u2028_u2029_and_nel_stay_inside_jsonl_strings_and_tsv_texts(tmp_path: Path) -> None:
    seps = ["\u2028", "\u2029", "\x85"]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_bytes("\r\n".join(json.dumps({"_id": f"d{i}", "text": f"a{c}b"},
                                               ensure_ascii=False) for i, c in enumerate(seps))
                       .encode() + b"\n")
    by_json = [json.loads(line) for line in corpus.read_bytes().split(b"\n") if line.strip()]
    assert load_corpus(corpus) == {r.pop("_id"): r for r in by_json}
    queries = tmp_path / "queries.jsonl"
    queries.write_bytes(corpus.read_bytes())
    assert load_queries(queries) == {f"d{i}": f"a{c}b" for i, c in enumerate(seps)}
    tsv = tmp_path / "topics.tsv"
    tsv.write_bytes(b"query-id\ttext\n" + "".join(
        f"{i}\tx{c}y{end}" for i, (c, end) in enumerate(zip(
            [*seps, "\x0b", "\x0c", "\x1c"], ["\r\n", "\n", "\r"] * 2, strict=True))).encode())
    with tsv.open(newline="", encoding="utf-8") as fh:  # lines end at \n, \r\n, \r
        rows = list(csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert len(rows) == 7
    assert load_queries(tsv) == dict(rows[1:]) == load_topics(tsv)  # topics read it alike
    qrels = tmp_path / "test.tsv"
    qrels.write_bytes("query-id\tcorpus-id\tscore\nq1\td\u20281\t1\n".encode())
    with qrels.open(newline="", encoding="utf-8") as fh:
        assert len(list(csv.reader(fh, delimiter="\t"))[1]) == 3
    with pytest.raises(BeirError, match=r"test\.tsv:2: corpus-id 'd\\u20281' holds"):
        load_qrels(qrels)  # the id is refused, not the line's field count


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("q1\t0\td1\t1\n", r"q.tsv:1: expected the BEIR header"),
        ("query-id\tcorpus-id\tscore\nq1\td1\n", r"q.tsv:2: expected 3 fields, got 2"),
        ("query-id\tcorpus-id\tscore\nq1\td1\tx\n", r"q.tsv:2: score 'x' is not an integer"),
        ("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t0\n",
         r"q.tsv:3: query 'q1' judges document 'd1' twice"),
        ("query-id\tcorpus-id\tscore\n", r"q.tsv: no judgments"),
    ],
)
def test_qrels_errors(tmp_path: Path, text: str, pattern: str) -> None:
    p = tmp_path / "q.tsv"
    p.write_text(text)
    with pytest.raises(BeirError, match=pattern):
        load_qrels(p)


def test_queries_and_corpus_errors(tmp_path: Path) -> None:
    p = tmp_path / "queries.jsonl"
    p.write_text('{"_id": "a", "text": "x"}\n{"_id": "a", "text": "y"}\n')
    with pytest.raises(BeirError, match=r"queries.jsonl:2: duplicate query id 'a'"):
        load_queries(p)
    p.write_text('{"_id": "a", "text": "x", "text": "y"}\n')  # which text is meant?
    with pytest.raises(BeirError, match=r"queries.jsonl:1: .*'text'"):
        load_queries(p)
    t = tmp_path / "topics.tsv"
    t.write_text("query-id\ttext\n1\tone\nbroken line\n")
    with pytest.raises(BeirError, match=r"topics.tsv:3: expected '<query id><TAB><text>'"):
        load_queries(t)
    z = tmp_path / "topics.tsv.gz"
    z.write_bytes(gzip.compress(b"query-id\ttext\r\n1\tone\r\n"))
    assert load_queries(z) == {"1": "one"}
    c = tmp_path / "corpus.jsonl"
    c.write_text('{"title": "no id"}\n')
    with pytest.raises(BeirError, match=r"corpus.jsonl:1: missing '_id'"):
        load_corpus(c)
    c.write_text("")
    with pytest.raises(BeirError, match=r"corpus.jsonl: empty file"):
        load_corpus(c)
    with pytest.raises(BeirError, match="has no text"):
        goldens_from_qrels({"1": "x"}, {"2": {"d": 1}})


def test_beir_readers_are_registered_loaders(tmp_path: Path) -> None:
    """The registered loaders are the BEIR readers, imported when first called."""
    reg = default_registry()
    for kind, spec in [("qrels", reg.loader("qrels", path="qrels/test.tsv")),
                       ("queries", reg.loader("queries", name="beir")),
                       ("corpus", reg.loader("corpus", path="corpus.jsonl"))]:
        assert (spec.fn.__module__, spec.fn.__name__) == ("evalkit_retrieval.beir", f"load_{kind}")
    qrels = tmp_path / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t2\n")
    assert reg.loader("qrels", path="qrels/test.tsv").fn(qrels) == load_qrels(qrels) == {
        "q1": {"d1": 2}}


def test_a_tsv_qrels_file_goes_by_its_first_line(tmp_path: Path) -> None:
    """MS MARCO's qrels.dev.small.tsv is TREC's four columns in a .tsv file: read by the
    TREC loader; a .tsv with BEIR's header line still goes to the BEIR loader."""
    from evalkit.execute.run_evaluator import evaluate_run

    trec_tsv = tmp_path / "qrels.dev.small.tsv"
    trec_tsv.write_text("q1\t0\td2\t1\nq2\t0\td5\t1\n")
    beir_tsv = tmp_path / "test.tsv"
    beir_tsv.write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\nq2\td5\t1\n")
    beir_gz = tmp_path / "test.tsv.gz"
    beir_gz.write_bytes(gzip.compress(beir_tsv.read_bytes()))
    trec_gz = tmp_path / "qrels.tsv.gz"
    trec_gz.write_bytes(gzip.compress(trec_tsv.read_bytes()))
    reg = default_registry()
    assert reg.loader("qrels", path=str(trec_tsv)).name == "trec"
    assert reg.loader("qrels", path=str(beir_tsv)).name == "beir"
    assert reg.loader("qrels", path=str(beir_gz)).name == "beir"
    assert reg.loader("qrels", path=str(trec_gz)).name == "trec"
    run = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d5": 3.0, "d6": 1.0}}
    for qrels in (trec_tsv, beir_tsv, beir_gz, trec_gz):
        result = evaluate_run(run, qrels, ["ap"])
        # q1: the relevant document at rank 2 (AP 1/2); q2: at rank 1 (AP 1)
        assert result.mean("ap") == pytest.approx(0.75)


def test_a_deep_queries_line_names_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "queries.jsonl"
    p.write_text('{"_id": "a", "text": "x"}\n{"_id": "b", "text": "y", "m": '
                 + "[" * 1000 + "]" * 1000 + "}\n")
    with pytest.raises(BeirError, match=r"queries.jsonl:2: nested more than 100 levels"):
        load_queries(p)
