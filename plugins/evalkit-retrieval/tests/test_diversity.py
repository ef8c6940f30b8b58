"""alpha-nDCG@k and ERR-IA@k on subtopic qrels (evalkit_retrieval.diversity,
evalkit_retrieval.subtopics), against what ir_measures 0.4.3 computed through its
pyndeval provider (ndeval's C code) on the same qrels and runs, stored with the script
that made them (data/diversity/make_diversity_reference.py): the Vaswani qrels given
subtopics, three runs, and hand-made edge cases (tied scores, unjudged documents, a query
without relevant documents, a run shorter than the cut-off, ties in the ideal ranking, a
judged query the run lacks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evalkit_retrieval.diversity import alpha_ndcg, err_ia
from evalkit_retrieval.subtopics import SubtopicJudgments
from evalkit_retrieval.trec import TrecFormatError, load_qrels, parse_qrels
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.core.registry import RegistryError
from evalkit.execute.run_evaluator import evaluate_run
from evalkit.plugins.default import default_registry

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "diversity"
REPO = HERE.parents[2]
REFERENCE = json.loads((DATA / "ir_measures_diversity.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("run", sorted(REFERENCE["values"]))
def test_values_equal_ir_measures_pyndeval(run: str) -> None:
    """Every query ir_measures scored, every measure (ir_measures' spellings, read as
    evalkit names), to 1e-9; ir_measures chose pyndeval for each."""
    assert set(REFERENCE["providers"].values()) == {"pyndeval"}
    wanted = REFERENCE["values"][run]
    names = list(wanted)
    result = evaluate_run(REPO / REFERENCE["runs"][run], DATA / REFERENCE["qrels"][run],
                          names)
    rows = {row.query_id: row.metrics for row in result.per_query}
    canonical = list(result.per_query[0].metrics)
    assert len(canonical) == len(names)
    compared = 0
    for name, ours in zip(names, canonical, strict=True):
        for qid, value in wanted[name].items():
            assert rows[qid][ours] == pytest.approx(value, abs=1e-9), (run, name, qid)
            compared += 1
    assert compared >= len(names) * 6
    if run == "edge":
        assert "107" not in rows  # in the run, not judged: ignored as by ndeval
        assert rows["106"]["alpha_ndcg@20"] == 0.0  # judged, not in the run


def test_ir_measures_spellings_name_the_canonical_measures() -> None:
    reg = default_registry()
    assert reg.resolve("alpha_nDCG(alpha=0.5)@20").name == "alpha_ndcg@20"
    assert reg.resolve("alpha_nDCG(alpha=0.3)@10").name == "alpha_ndcg(alpha=0.3)@10"
    assert reg.resolve("ERR_IA@20").name == "err_ia@20"
    assert reg.resolve("ERR_IA(rel=2)@5").name == "err_ia(rel=2)@5"
    for bad in ("alpha_nDCG(alpha=2)@10", "ERR_IA(alpha=0.3)@10", "alpha_ndcg(rel=0)@5"):
        with pytest.raises((RegistryError, ValueError)):
            reg.resolve(bad)


def test_subtopic_qrels_are_read_with_their_subtopics() -> None:
    qrels = load_qrels(DATA / "edge.qrels", subtopics=True)
    judged = qrels["105"]
    assert isinstance(judged, SubtopicJudgments)
    assert judged.subtopics == {"1": {"m": 1, "n": 1, "q": 1}, "2": {"m": 1, "o": 1},
                                "3": {"m": 1, "p": 1}}
    assert dict(judged) == {"m": 1, "n": 1, "o": 1, "p": 1, "q": 1}
    assert dict(qrels["102"]) == {"e": 1, "f": 1, "g": 2}  # a document's largest label
    # plain qrels (one value in the second column, 0 or Q0) stay plain
    plain = parse_qrels(b"1 0 a 1\n1 Q0 b 0\n2 0 a 2\n", subtopics=True)
    assert plain == {"1": {"a": 1, "b": 0}, "2": {"a": 2}}
    assert not isinstance(plain["1"], SubtopicJudgments)
    # subtopics each judging different documents (no document twice) are still subtopics
    once = parse_qrels(b"1 1 a 1\n1 2 b 1\n", subtopics=True)
    assert once["1"].subtopics == {"1": {"a": 1}, "2": {"b": 1}}  # type: ignore[attr-defined]


def test_a_document_judged_twice_for_one_subtopic_is_refused() -> None:
    with pytest.raises(TrecFormatError, match=r"<q>:3: document 'a' is judged twice for "
                       r"query '1', subtopic '1' \(lines 1 and 3\)"):
        parse_qrels(b"1 1 a 1\n1 2 a 1\n1 1 a 0\n", source="<q>", subtopics=True)
    with pytest.raises(TrecFormatError, match=r"<q>:2: expected 4 fields"):
        parse_qrels(b"1 1 a 1\n1 2 a\n", source="<q>", subtopics=True)


def test_other_measures_see_a_documents_largest_label() -> None:
    """Beside a diversity measure (which makes the file subtopic qrels)."""
    result = evaluate_run(DATA / "edge.run", DATA / "edge.qrels",
                          ["num_rel", "P@5", "alpha_ndcg@5"])
    rows = {row.query_id: row for row in result.per_query}
    assert rows["105"].counts["num_rel"] == 5
    assert rows["101"].metrics["precision@5"] == pytest.approx(3 / 5)
    assert result.header["notes"]["subtopic_qrels"] is True


def test_subtopic_qrels_only_when_a_diversity_measure_asks() -> None:
    """Without a diversity measure the second column is ignored, as trec_eval ignores
    it: a document judged for two subtopics is a document judged twice for its query,
    refused as trec_eval refuses it ('duplicate docs'), the message pointing to the
    diversity measures; a second column that varies without a repeated document (run ids,
    rounds such as TREC-COVID's 0.5 1 1.5) is read as ordinary qrels."""
    with pytest.raises(TrecFormatError, match=r"edge.qrels:\d+: document 'm' is judged "
                       r"again .* for query '105'.*duplicate docs.*second column differs.*"
                       r"diversity measure"):
        evaluate_run(DATA / "edge.run", DATA / "edge.qrels", ["num_rel", "P@5"])
    with pytest.raises(TrecFormatError, match=r"<q>:2: document 'd1' is judged with another "
                       r"label \(1 on line 1, 2 here\) for query 'q1'"):
        parse_qrels(b"q1 0 d1 1\nq1 1 d1 2\nq1 1 d2 0\n", source="<q>")
    rounds = b"1 0.5 a 1\n1 1 b 2\n1 1.5 c 0\n2 1 a 1\n"
    plain = parse_qrels(rounds)
    assert plain == {"1": {"a": 1, "b": 2, "c": 0}, "2": {"a": 1}}
    assert not isinstance(plain["1"], SubtopicJudgments)
    assert not isinstance(parse_qrels(rounds, lazy=True)["1"], SubtopicJudgments)


def test_the_command_line_reads_qrels_as_trec_eval_does(tmp_path: Path) -> None:
    """trec_eval 10.0 exits 4 ('duplicate docs CR93E-10279') on its own test file
    qrels.123, whose second column varies: evalkit refuses it too, for every format; a
    diversity measure reads it as subtopic qrels, and a note says so."""
    qrels = tmp_path / "qrels.123"  # its lines 1 and 3682
    qrels.write_text("301 1 CR93E-10279 0\n301 2 CR93E-10279 1\n", encoding="utf-8")
    run = tmp_path / "results.test"
    run.write_text("301 Q0 CR93E-10279 1 1.0 r\n", encoding="utf-8")
    for fmt in ("trec", "table"):
        result = CliRunner().invoke(app, ["eval", str(run), "--qrels", str(qrels),
                                          "-m", "map,ndcg,num_rel", "-f", fmt])
        assert result.exit_code == 2, result.stdout
        assert "document 'CR93E-10279' is judged" in result.stderr
    asked = CliRunner().invoke(app, ["eval", str(run), "--qrels", str(qrels),
                                     "-m", "map,err_ia@20"])
    assert asked.exit_code == 0, asked.stderr
    assert "read as subtopic qrels" in asked.stderr


def test_where_evalkit_differs_from_ndeval() -> None:
    """ERR-IA@1 is normalised (ndeval's is not: one document covering three subtopics
    scores 3 there); cut-offs beyond ndeval's 20 are computed."""
    judged = SubtopicJudgments({"1": {"m": 1}, "2": {"m": 1}, "3": {"m": 1}})
    assert err_ia(["m"], judged, 1) == 1.0
    ids = [f"d{i}" for i in range(30)] + ["m"]
    assert alpha_ndcg(ids, judged, 20) == 0.0
    assert alpha_ndcg(ids, judged, 31) == pytest.approx(1 / (__import__("math").log2(32)))
    # ordinary qrels are one subtopic: alpha-nDCG is then nDCG with a redundancy discount
    assert alpha_ndcg(["a", "b"], {"a": 1, "b": 1}, 2) == 1.0
    with pytest.raises(ValueError, match="'a'"):
        alpha_ndcg(["a", "a"], judged, 5)


def test_the_command_line_takes_subtopic_qrels() -> None:
    result = CliRunner().invoke(app, [
        "eval", str(DATA / "edge.run"), "--qrels", str(DATA / "edge.qrels"),
        "-m", "alpha_nDCG@20,ERR_IA@20", "--per-query"])
    assert result.exit_code == 0, result.stderr
    line = next(ln for ln in result.stdout.splitlines() if ln.startswith("105 "))
    want = (REFERENCE["values"]["edge"]["alpha_nDCG@20"]["105"],
            REFERENCE["values"]["edge"]["ERR_IA@20"]["105"])
    assert line.split()[1:] == [f"{v:.4f}" for v in want]
