"""Topic files: TREC ``<top>`` topics (classic and closed spellings, plain or gzipped) and
``qid<TAB>text`` TSV, read by :func:`evalkit_retrieval.topics.load_topics`, given to
``evalkit.compare`` as ``topics=PATH`` and to ``evalkit compare`` as ``--topics``.

Expected texts are read off the files by eye (the fixtures are written here by hand, in the
layout of the TREC-8 ad hoc and TREC-1 topics), or parsed by the Vaswani example's own
regular expression (examples/vaswani/retrieval.py), not by evalkit.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from evalkit_retrieval.beir import BeirError
from evalkit_retrieval.topics import TopicsError, load_topics, parse_trec_topics
from typer.testing import CliRunner

import evalkit
from evalkit.cli.app import app

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
VASWANI = REPO / "examples" / "vaswani" / "data"
runner = CliRunner()


def test_classic_trec_topics_with_labels_and_unclosed_fields() -> None:
    path = DATA / "topics" / "robust-style.trec"
    assert load_topics(path) == {
        "401": "foreign minorities, Germany",
        "402": "behavioral genetics",
        "051": "Airbus Subsidies",  # "Topic:" removed; <head>, <dom>, <con> left out
    }
    desc = load_topics(path, field="desc")
    assert desc["401"] == ("What language and cultural differences impede the integration "
                           "of foreign minorities in Germany?")
    assert desc["051"] == "Document will discuss government assistance to Airbus Industrie."
    narr = load_topics(path, field="narr")
    assert narr["402"] == "A relevant document identifies research on heredity."
    assert narr["051"] == "Airbus Subsidies"  # no narrative: the title stands in
    fields = parse_trec_topics(path.read_text())
    assert set(fields["401"]) == {"title", "desc", "narr"}
    assert set(fields["051"]) == {"title", "desc"}


def test_closed_trec_topics_gzipped_by_content_not_name(tmp_path: Path) -> None:
    assert load_topics(DATA / "topics" / "closed.trec.gz") == {"7": "DESIGN OF FILTERS"}
    renamed = tmp_path / "topics.txt"  # no .gz suffix: the bytes say gzip
    renamed.write_bytes((DATA / "topics" / "closed.trec.gz").read_bytes())
    assert load_topics(renamed) == {"7": "DESIGN OF FILTERS"}


def test_vaswani_query_text_matches_the_examples_own_parser() -> None:
    text = (VASWANI / "query-text.trec").read_text()
    pattern = re.compile(r"<top>\s*<num>\s*(.*?)\s*</num>\s*<title>(.*?)</title>\s*</top>",
                         re.S)
    expected = {m.group(1): " ".join(m.group(2).split()) for m in pattern.finditer(text)}
    assert len(expected) == 93
    assert load_topics(VASWANI / "query-text.trec") == expected
    assert expected["1"] == ("MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS BY THE USE OF "
                             "MICROWAVE TECHNIQUES")


def test_tsv_topics_plain_and_gzipped(tmp_path: Path) -> None:
    gz = DATA / "scifact" / "topics.beir-v1.0.0-scifact.test.tsv.gz"
    lines = gzip.decompress(gz.read_bytes()).decode().splitlines()
    topics = load_topics(gz)
    assert len(topics) == len(lines) == 300
    assert topics["1"] == "0-dimensional biomaterials show inductive properties."
    plain = tmp_path / "topics.dl19.txt"
    plain.write_text("156493\tdo goldfish grow\n1110199\twhat is wifi vs bluetooth\n")
    assert load_topics(plain) == {"156493": "do goldfish grow",
                                  "1110199": "what is wifi vs bluetooth"}


@pytest.mark.parametrize(("text", "message"), [
    ("<top>\n<title> no number\n</top>\n", ":1: a topic without a <num>"),
    ("<top><num>1</num><title>a</title></top>\n<top><num>1</num><title>b</title></top>",
     ":2: topic number '1' given twice"),
    ("<top>\n<num> Number: 3\n<title> never closed\n", ":1: the topic that starts here has "
     "no </top>"),
    ("stray words\n<top><num>1</num></top>", ":1: text outside a <top> ... </top> topic"),
    ("<top><num>1</num><title>a</title>\n<title>b</title></top>", ":2: a second <title>"),
    ("<num>1</num>", ":1: <num> outside a <top> ... </top> topic"),
])
def test_malformed_trec_topics_name_the_file_and_line(tmp_path: Path, text: str,
                                                      message: str) -> None:
    path = tmp_path / "bad.trec"
    path.write_text(text)
    with pytest.raises(TopicsError) as err:
        load_topics(path)
    assert str(err.value).startswith(str(path)) and message in str(err.value)


def test_unreadable_topic_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TopicsError, match="no such file"):
        load_topics(tmp_path / "missing.trec")
    with pytest.raises(TopicsError, match="is a directory"):
        load_topics(tmp_path)
    tsv = tmp_path / "bad.tsv"
    tsv.write_text("q1 no tab here\n")
    with pytest.raises(BeirError, match=r"bad.tsv:1: expected '<query id><TAB><text>'"):
        load_topics(tsv)
    with pytest.raises(TopicsError, match="field 'body'"):
        load_topics(DATA / "topics" / "robust-style.trec", field="body")
    # a compression bomb is cut off at the limit, not decompressed whole
    import evalkit_retrieval.topics as topics_module

    monkeypatch.setattr(topics_module, "MAX_BYTES", 1000)
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b"<" + b" " * 100_000))
    with pytest.raises(TopicsError, match="decompresses to more than"):
        load_topics(bomb)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("topics")
    qrels = VASWANI / "qrels"
    runs = VASWANI / "runs" / "run.vaswani.bm25.txt"
    base = evalkit.evaluate_run(runs, qrels, ["ap"])
    base.name = "base"
    # a candidate that differs: every score of query 1's ranking reversed
    lines = runs.read_text().splitlines()
    flipped = [ln for ln in lines if ln.split()[0] != "1"]
    q1 = [ln.split() for ln in lines if ln.split()[0] == "1"]
    flipped += [" ".join([*p[:4], str(-float(p[4])), p[5]]) for p in q1]
    cand_run = out / "cand.txt"
    cand_run.write_text("\n".join(flipped) + "\n")
    cand = evalkit.evaluate_run(cand_run, qrels, ["ap"])
    cand.name = "cand"
    return base.save(out / "base.jsonl"), cand.save(out / "cand.jsonl")


def test_compare_reads_a_topics_path(artifacts: tuple[Path, Path]) -> None:
    base, cand = artifacts
    c = evalkit.compare(base, cand, metrics=["ap"], top=1, n_resamples=200,
                        topics=VASWANI / "query-text.trec")
    assert len(c.queries) == 93 and c.queries["1"].startswith("MEASUREMENT OF DIELECTRIC")
    (mover,) = c.get("ap").top_losses
    assert mover.id == "1" and mover.text == c.queries["1"]
    as_str = evalkit.compare(base, cand, metrics=["ap"], n_resamples=200,
                             topics=str(VASWANI / "query-text.trec"))
    assert as_str.queries == c.queries


def test_cli_topics_option(artifacts: tuple[Path, Path], tmp_path: Path) -> None:
    base, cand = artifacts
    res = runner.invoke(app, ["compare", str(base), str(cand), "-m", "ap", "-B", "200",
                              "--topics", str(VASWANI / "query-text.trec"), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["queries"]["2"].startswith("MATHEMATICAL ANALYSIS AND DESIGN")
    bad = tmp_path / "bad.trec"
    bad.write_text("<top><title>x</title></top>")
    res = runner.invoke(app, ["compare", str(base), str(cand), "-m", "ap", "--topics",
                              str(bad)])
    assert res.exit_code == 2
    assert f"{bad}:1: a topic without a <num>" in res.output


def test_a_tsv_of_more_than_two_columns_is_refused_never_merged(tmp_path: Path) -> None:
    with_header = tmp_path / "topics.tsv"
    with_header.write_text("qid\toriginal id\ttext\n1\t301\tforeign minorities\n")
    with pytest.raises(BeirError) as err:
        load_topics(with_header)
    assert str(err.value) == (
        f"{with_header}:1: the header names 3 tab-separated columns ('qid', 'original id', "
        "'text'); a queries TSV has two, '<query id><TAB><text>', and evalkit never joins "
        f"columns into a query's text. Write a file of the id and the text (cut -f1,3 "
        f"{with_header} > queries.tsv); a tab inside a query's text must be a space")
    # no header: the first line with a third column is named
    later = tmp_path / "later.tsv.gz"
    later.write_bytes(gzip.compress(b"1\tfirst query\n2\tsecond\tquery\n"))
    with pytest.raises(BeirError, match=rf"later.tsv.gz:2: the line has 3 tab-separated "
                       rf"columns; .* \(zcat {re.escape(str(later))} \| cut -f1,N > "
                       r"queries.tsv, N being the text's column\)"):
        load_topics(later)


def test_cli_refuses_a_three_column_topics_tsv(artifacts: tuple[Path, Path],
                                               tmp_path: Path) -> None:
    base, cand = artifacts
    tsv = tmp_path / "topics.tsv"
    tsv.write_text("qid\toriginal id\ttext\n1\t301\tMEASUREMENT\n")
    res = runner.invoke(app, ["compare", str(base), str(cand), "-m", "ap", "--topics",
                              str(tsv)])
    assert res.exit_code == 2
    assert res.output.startswith(f"error: {tsv}:1: the header names 3 tab-separated columns")
    assert "Traceback" not in res.output
