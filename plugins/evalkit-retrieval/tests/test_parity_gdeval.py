"""ERR@k and nDCG(dcg=exp-log2)@k equal gdeval.pl's values (the TREC Web track's script,
version 1.2a as shipped in ir_measures; the expected files in ``data/gdeval/`` are its
output, ``perl gdeval.pl QRELS RUN K``, made once; the tests never run perl). gdeval prints
five decimals and scores only topics with a positive judgment."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from evalkit import evaluate_run

DATA = Path(__file__).parent / "data"
VASWANI = Path(__file__).resolve().parents[3] / "examples" / "vaswani" / "data"
CASES = {
    "vaswani.bm25.at10.csv": (VASWANI / "runs" / "run.vaswani.bm25.txt", VASWANI / "qrels", 10),
    "vaswani.bm25.at20.csv": (VASWANI / "runs" / "run.vaswani.bm25.txt", VASWANI / "qrels", 20),
    "rel_level.results.at20.csv": (DATA / "results.test", DATA / "qrels.rel_level", 20),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_err_and_exp_ndcg_equal_gdeval(name: str) -> None:
    run, qrels, k = CASES[name]
    with (DATA / "gdeval" / name).open() as fh:
        expected = list(csv.DictReader(fh))
    assert expected
    result = evaluate_run(run, qrels, [f"ERR@{k}", f"nDCG(dcg=exp-log2)@{k}"],
                          missing="skip")
    rows = {r.query_id: r for r in result.per_query}
    for line in expected:
        row = rows[line["topic"]]
        assert f"{row.metrics[f'err@{k}']:.5f}" == line[f"err@{k}"], line["topic"]
        assert f"{row.metrics[f'ndcg(dcg=exp-log2)@{k}']:.5f}" == line[f"ndcg@{k}"]


@pytest.mark.parametrize("grade", [1, 4, 60, 1023, 1024, 5000])
def test_err_with_any_highest_grade_is_the_exact_value(grade: int) -> None:
    """ERR(max=M) is Chapelle et al.'s sum with R = (2**label - 1) / 2**M, computed in
    exact fractions here; gdeval's Perl would give NaN (inf / inf) from M = 1024 on, and
    a grade that large once raised OverflowError. Labels 1 and M at ranks 1 and 2."""
    from fractions import Fraction

    def stop(label: int) -> Fraction:
        return Fraction(2**label - 1, 2**grade)

    first, second = stop(1), stop(grade)
    exact = first + (1 - first) * second / 2
    run = {"q": {"a": 2.0, "b": 1.0, "c": 0.5}}
    qrels = {"q": {"a": 1, "b": grade, "c": 0}}
    result = evaluate_run(run, qrels, [f"ERR(max={grade})@3"])
    (value,) = result.per_query[0].metrics.values()  # err@3 for the default grade 4
    assert value == pytest.approx(float(exact), rel=1e-12, abs=0.0)
