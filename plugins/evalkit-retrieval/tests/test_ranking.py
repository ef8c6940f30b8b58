"""evalkit_retrieval.ranking (trec_eval's order) and evalkit.evaluate_run (queries, -c, -M, -l)."""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evalkit_retrieval.ranking import DuplicateDocumentError, rank_arrays, rank_mapping, rank_run

from evalkit import RankedRun, evaluate_run

DATA = Path(__file__).parent / "data"


def naive_order(entries: list[tuple[str, float]]) -> list[str]:
    """trec_eval's comparator written out: score descending, then doc id descending."""
    return [d for d, _ in sorted(entries, key=lambda e: (-e[1], _desc(e[0])))]


def _desc(doc: str) -> tuple[int, ...]:
    return (*(-b for b in doc.encode("utf-8")), 1)


@pytest.mark.parametrize("seed", range(4))
def test_rank_arrays_matches_the_comparator(seed: int) -> None:
    rng = random.Random(seed)
    lines: list[tuple[str, str, float]] = []
    for qn in range(30):
        docs = rng.sample([f"d{j}" for j in range(300)] + ["d", "D", "dé", "d1é"], 60)
        lines += [(f"q{qn}", d, float(rng.choice([0.5, 1.0, 1.5, rng.random()]))) for d in docs]
    rng.shuffle(lines)  # queries interleaved, scores in no order
    expected: dict[str, list[str]] = {}
    for qid in dict.fromkeys(x[0] for x in lines):
        expected[qid] = naive_order([(d, s) for qq, d, s in lines if qq == qid])
    qids, docids, scores = zip(*lines, strict=True)
    assert rank_arrays(list(qids), list(docids), list(scores)) == expected
    as_bytes = rank_arrays(np.array([q.encode() for q in qids], dtype="S"),
                           np.array([d.encode() for d in docids], dtype="S"),
                           np.array(scores))
    assert as_bytes == expected
    mapping: dict[str, dict[str, float]] = {}
    for qid, d, s in lines:
        mapping.setdefault(qid, {})[d] = s
    assert rank_run(mapping).rankings == expected


def test_rank_arrays_many_small_queries_path() -> None:
    qids = [f"q{i // 2}" for i in range(400)]
    docids = ["a", "b"] * 200
    scores = [1.0] * 400
    assert rank_arrays(qids, docids, scores) == {f"q{i}": ["b", "a"] for i in range(200)}


def test_rank_arrays_refusals() -> None:
    with pytest.raises(DuplicateDocumentError, match=r"'q1'.*'a'.*duplicate docs"):
        rank_arrays(["q1", "q1"], ["a", "a"], [1.0, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        rank_arrays(["q1"], ["a"], [float("nan")])
    with pytest.raises(ValueError, match="differ in length"):
        rank_arrays(["q1"], ["a", "b"], [1.0])
    with pytest.raises(ValueError, match="not a number"):
        rank_mapping({"a": "high"})  # type: ignore[dict-item]
    assert rank_arrays([], [], []) == {}
    assert rank_mapping({}) == []


def test_a_nan_score_is_refused() -> None:
    expected = ("query 'q1', document 'c': the score NaN is not a number; give the document "
                "a number that puts it where it belongs")
    with pytest.raises(ValueError, match=re.escape(expected)):
        rank_run({"q1": {"a": 1.0, "c": float("nan")}})
    with pytest.raises(ValueError, match=re.escape(expected)):
        evaluate_run({"q1": {"a": 1.0, "c": float("nan")}}, {"q1": {"a": 1}}, ["ndcg"])
    with pytest.raises(ValueError, match=re.escape(expected)):
        rank_arrays(["q1", "q1"], ["a", "c"], [1.0, float("nan")])


@pytest.mark.parametrize(("value", "first"), [
    (float("inf"), True), ("1e999", True), (10**400, True),
    (float("-inf"), False), (-(10**400), False),
])
def test_infinite_scores_rank_as_trec_eval_ranks_them(value: Any, first: bool) -> None:
    # trec_eval reads scores with atof: inf (and beyond a double's range) above every
    # finite score, -inf below
    assert list(rank_run({"q1": {"a": 1.0, "c": value}}).rankings["q1"]) == (
        ["c", "a"] if first else ["a", "c"])


def test_equal_infinite_scores_tie_by_document_id_descending() -> None:
    # trec_eval 10.0 on qrels q: a 1, b 0, c 1, d 0, e 1 (e written 1.0) and the run
    # a -inf, b inf, c 1e400, d 0.5, e -1e400 prints map 0.7000, recip_rank 1.0000:
    # the ranking c, b, d, e, a; AP = (1/1 + 2/4 + 3/5) / 3 = 0.7
    run = {"q": {"a": float("-inf"), "b": float("inf"), "c": 10**400, "d": 0.5,
                 "e": -(10**400)}}
    assert list(rank_run(run).rankings["q"]) == ["c", "b", "d", "e", "a"]
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": 0, "e": 1.0}}
    assert evaluate_run(run, qrels, ["ap", "rr"]).means() == pytest.approx(
        {"ap": 0.7, "rr": 1.0}, abs=1e-12)


# --------------------------------------------------------------------------- evaluate
QRELS: dict[str, dict[str, int]] = {"q1": {"a": 1, "b": 2, "c": 0}, "q2": {"x": 1}}


def test_depth_cuts_after_ranking_like_trec_eval_M(tmp_path: Path) -> None:
    # the file lists a (low score) first; -M1 keeps the best-scored document, b
    run_file = tmp_path / "run"
    run_file.write_text("q1 Q0 a 1 0.1 t\nq1 Q0 b 2 0.9 t\nq2 Q0 x 1 1 t\n")
    result = evaluate_run(run_file, QRELS, ["P@2", "ap", "ndcg"], depth=1)
    row = result.per_query[0]
    assert row.retrieved == ["b"]
    assert row.counts == {"num_ret": 1, "num_rel": 2, "num_rel_ret": 1}
    assert row.metrics["precision@2"] == 0.5
    assert row.metrics["ap"] == 0.5
    assert result.header["depth"] == 1


def test_relevance_level_applies_to_binary_measures_only() -> None:
    result = evaluate_run({"q1": {"a": 2.0, "b": 1.0}}, QRELS, ["P@1", "ndcg", "num_rel"],
                          relevance_level=2, missing="skip")
    row = result.per_query[0]
    assert row.metrics["precision@1"] == 0.0  # a has label 1 < 2
    assert row.counts["num_rel"] == 1
    full = evaluate_run({"q1": {"a": 2.0, "b": 1.0}}, QRELS, ["ndcg"], missing="skip")
    assert row.metrics["ndcg"] == full.per_query[0].metrics["ndcg"]
    assert result.header["relevance_level"] == 2


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"missing": "drop"}, "missing must be"),
    ({"depth": 0}, "depth must be a positive integer"),
    ({"depth": 2.5}, "depth must be a positive integer"),
    ({"relevance_level": 0}, "relevance_level must be an integer >= 1"),
])
def test_bad_settings(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate_run({"q1": {"a": 1.0}}, QRELS, ["ap"], **kwargs)  # type: ignore[arg-type]


def test_rows_header_and_counts() -> None:
    result = evaluate_run(DATA / "results.test", DATA / "qrels.test", ["map", "P@10"])
    assert result.ids() == ["301", "302", "303"]
    assert result.name == "STANDARD"
    h = result.header
    assert h["run"]["sha256"] == hashlib.sha256((DATA / "results.test").read_bytes()).hexdigest()
    assert h["qrels"]["sha256"] == hashlib.sha256((DATA / "qrels.test").read_bytes()).hexdigest()
    assert h["metrics"]["ap"]["provider"] == "evalkit-retrieval"
    assert h["metrics"]["precision@10"]["version"] == "1"
    assert h["missing"] == "zero" and h["relevance_level"] == 1 and h["depth"] is None
    for row in result.per_query:
        assert set(row.metrics) == {"ap", "precision@10"}
        assert set(row.counts) == {"num_ret", "num_rel", "num_rel_ret"}


def test_mapping_inputs() -> None:
    ranked = RankedRun(name="sys", rankings={"q1": ["b", "a"]})
    result = evaluate_run(ranked, {"q1": {"a", "b"}, "q2": ["x"]}, ["ap"], name="named")
    assert result.name == "named"
    assert result.scores("ap") == {"q1": 1.0, "q2": 0.0}
    with pytest.raises(ValueError, match="no judged query"):
        evaluate_run(ranked, {}, ["ap"])
    with pytest.raises(ValueError, match="labels are integers"):
        evaluate_run(ranked, {"q1": {"a": 1.5}}, ["ap"])
    with pytest.raises(TypeError, match="expected"):
        evaluate_run(ranked, {"q1": 3}, ["ap"])  # type: ignore[dict-item]
    labels = {"q1": {"a": np.int64(2), "b": 1.0, "c": "0"}}
    graded = evaluate_run(ranked, labels, ["num_rel"])
    assert graded.per_query[0].counts["num_rel"] == 2
