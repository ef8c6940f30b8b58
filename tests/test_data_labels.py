"""A relevance label beyond a 64-bit integer (``10**30``) is refused with a one-line error
naming where it came from (file and line, query and document, case), by every way qrels
come in: TREC and BEIR files, mappings, golden sets and cases built in Python; the largest
64-bit label still scores. Exponential gains refuse labels whose 2**label overflows a
double instead of printing NaN behind numpy warnings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evalkit import CallableTarget, GoldenCase, evaluate, evaluate_run, load_goldens
from evalkit.plugins.default import use_registry

HUGE = 10**30
BIGGEST = 2**63 - 1  # trec_eval's long


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from evalkit.cli import main; main()", *args],
                          cwd=cwd,
                          capture_output=True, text=True, timeout=60)


def write_run(tmp_path: Path) -> Path:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.0 r\nq2 Q0 d2 1 2.0 r\n")
    return run


def test_a_trec_qrels_label_beyond_64_bits_names_the_line(tmp_path: Path) -> None:
    write_run(tmp_path)
    (tmp_path / "qrels").write_text(f"q2 0 d2 1\nq1 0 d1 {HUGE}\n")
    proc = cli("eval", "run.txt", "--qrels", "qrels", "-m", "ndcg@10", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"error: qrels:2: the relevance label '{HUGE}' is outside")
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_the_largest_64_bit_label_still_scores(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    qrels = tmp_path / "qrels"
    qrels.write_text(f"q1 0 d1 {BIGGEST}\nq2 0 d2 1\n")
    # each query ranks its one judged document first: nDCG@10 = 1 and AP = 1 (by hand)
    result = evaluate_run(run, qrels, ["ndcg@10", "ap"])
    assert [r.metrics for r in result.per_query] == [{"ndcg@10": 1.0, "ap": 1.0}] * 2


def test_a_mapping_label_beyond_64_bits_names_query_and_document() -> None:
    with pytest.raises(ValueError, match=r"query 'q1', document 'd1': the relevance label "
                                         r"1000000000000000000000000000000 is outside"):
        evaluate_run({"q1": {"d1": 1.0}}, {"q1": {"d1": HUGE}}, ["ap"])


def test_a_beir_label_beyond_64_bits_names_the_line(tmp_path: Path) -> None:
    from evalkit_retrieval.beir import BeirError, load_qrels

    tsv = tmp_path / "test.tsv"
    tsv.write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t{HUGE}\n")
    with pytest.raises(BeirError, match=r"test.tsv:3: the relevance label"):
        load_qrels(tsv)


def test_a_golden_label_beyond_64_bits_names_the_case(tmp_path: Path) -> None:
    from evalkit.data.goldens import GoldenError

    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "c1", "query": "q", "relevance": {"a": 1}}\n'
                    f'{{"id": "c2", "query": "q", "relevance": {{"a": {HUGE}}}}}\n')
    with pytest.raises(GoldenError, match=r"cases.jsonl:2: case 'c2': the relevance label"):
        load_goldens(path)


def test_a_case_built_in_python_is_that_cases_metric_error() -> None:
    cases = [GoldenCase(id="c1", query="q", relevance={"a": 1}),
             GoldenCase(id="c2", query="q", relevance={"a": HUGE})]
    target = CallableTarget(lambda q: ["a"], name="t")
    with use_registry() as reg:
        reg.register_metric("answered", higher_is_better=True)(
            lambda response, case: float(bool(response.ranked_ids)))
        result = evaluate(target, cases, metrics=["ndcg@10", "answered"])
    c1, c2 = result.per_query
    # c1 ranks its one relevant document first: nDCG@10 = 1 (by hand)
    assert c1.metrics == {"ndcg@10": 1.0, "answered": 1.0} and c1.metric_errors == {}
    assert c2.metrics == {"answered": 1.0}  # the other metric keeps its value
    assert c2.metric_errors["ndcg@10"].startswith(
        "case 'c2', document 'a': the relevance label 1000000000000000000000000000000 is "
        "outside the range of a 64-bit integer")


def test_exponential_gains_refuse_labels_that_overflow_a_double(tmp_path: Path) -> None:
    """On a file, one line and a non-zero exit; in a target run, the metric's error on
    that case only."""
    write_run(tmp_path)
    (tmp_path / "qrels").write_text("q1 0 d1 1024\nq2 0 d2 1\n")
    proc = cli("eval", "run.txt", "--qrels", "qrels", "-m", "nDCG(dcg=exp-log2)@10",
               cwd=tmp_path)
    assert proc.returncode != 0 and proc.stdout == ""
    assert "take labels up to 1023" in proc.stderr
    assert "RuntimeWarning" not in proc.stderr and "Traceback" not in proc.stderr
    cases = [GoldenCase(id="c1", query="q", relevance={"a": 1}),
             GoldenCase(id="c2", query="q", relevance={"a": 1024})]
    run = evaluate(CallableTarget(lambda q: ["a"], name="t"), cases,
                   metrics=["nDCG(dcg=exp-log2)@10", "recall@1"])
    assert run.per_query[1].metrics == {"recall@1": 1.0}
    assert "take labels up to 1023" in run.per_query[1].metric_errors[
        "ndcg(dcg=exp-log2)@10"]
    # 1023 is the largest: 2**1023 - 1 is a finite double, and one judged document
    # ranked first gives nDCG 1 (by hand)
    (tmp_path / "qrels").write_text("q1 0 d1 1023\nq2 0 d2 1\n")
    result = evaluate_run(tmp_path / "run.txt", tmp_path / "qrels",
                          ["nDCG(dcg=exp-log2)@10"])
    assert [r.metrics["ndcg(dcg=exp-log2)@10"] for r in result.per_query] == [1.0, 1.0]
