"""evalkit.data.text_ids: ids given as Python values (mapping keys, DataFrame cells, list
items) are compared as text, so two values that become one id (``1`` and ``"1"``) are
refused, naming both, at every entry point: the qrels and run mappings of evaluate_run,
qrels and run DataFrames, GoldenCase.from_judgments and a golden record's ids. Expected
values are by hand: qrels {a: 1, b: 1} and the ranking a, b give RR = 1 and AP = 1."""

from __future__ import annotations

from typing import Any

import pytest

import evalkit
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenError, case_from_record
from evalkit.data.judgments import graded_judgments
from evalkit.data.text_ids import IdCollisionError, text_ids

RUN = {"1": {"a": 2.0, "b": 1.0}}


def test_text_ids_keeps_text_and_repeats_and_refuses_two_values_of_one_text() -> None:
    assert text_ids(["a", 1, 2, 2, "b"], "x") == ["a", "1", "2", "2", "b"]
    with pytest.raises(IdCollisionError) as err:
        text_ids(["q", 1, "1"], "qrels")
    assert (err.value.first, err.value.second, err.value.text) == (1, "1", "1")
    assert "qrels: 1 (int) and '1' (str) are both the id '1'" in str(err.value)
    assert "str(k)" in str(err.value)


@pytest.mark.parametrize("qrels", [
    {1: {"a": 1}, "1": {"b": 1}},
    {"1": {"b": 1}, 1: {"a": 1}},  # the other order: refused alike, not "last one wins"
    {1: ["a"], "1": ["b"]},
])
def test_colliding_query_ids_in_qrels_are_refused_whatever_their_order(qrels: Any) -> None:
    with pytest.raises(IdCollisionError, match=r"qrels \(query ids\): .*both the id '1'"):
        evalkit.evaluate_run(RUN, qrels, ["rr", "ap"])
    # merged by hand: both judgments kept, the ranking a, b: RR = 1, AP = (1/1 + 2/2)/2 = 1
    merged = evalkit.evaluate_run(RUN, {"1": {"a": 1, "b": 1}}, ["rr", "ap"]).means()
    assert merged == {"rr": 1.0, "ap": 1.0}


@pytest.mark.parametrize("judged", [{7: 1, "7": 0}, {"7": 0, 7: 1}, [7, "7"],
                                    {"s1": {7: 1, "7": 0}}])
def test_colliding_document_ids_in_qrels_are_refused(judged: Any) -> None:
    with pytest.raises(IdCollisionError, match=r"qrels of query 'q'.*both the id '7'"):
        evalkit.evaluate_run({"q": {"7": 2.0}}, {"q": judged}, ["rr"])


def test_colliding_ids_in_a_run_mapping_are_refused_not_merged() -> None:
    with pytest.raises(IdCollisionError, match=r"run \(query ids\): 1 \(int\) and '1'"):
        evalkit.evaluate_run({1: {"a": 2.0}, "1": {"b": 5.0}}, {"1": {"a": 1}}, ["rr"])  # type: ignore[dict-item]
    with pytest.raises(IdCollisionError, match=r"run query 'q': '7' \(str\) and 7 \(int\)"):
        evalkit.evaluate_run({"q": {"7": 2.0, 7: 1.0}}, {"q": {"7": 1}}, ["rr"])  # type: ignore[dict-item]
    # one type throughout is fine: int keys are their digits (b ranks above a: RR = 1/2)
    assert evalkit.evaluate_run({1: {"a": 2.0, "b": 5.0}}, {1: {"a": 1}},  # type: ignore[dict-item]
                                ["rr"]).means() == {"rr": 0.5}


def test_a_bool_score_is_refused_as_a_bool_label_is() -> None:
    with pytest.raises(ValueError, match=r"score True is a bool, not a number"):
        evalkit.evaluate_run({"q": {"a": 1, "b": True}}, {"q": {"b": 1}}, ["rr"])
    with pytest.raises(ValueError, match=r"labels are integers"):
        evalkit.evaluate_run({"q": {"a": 1.0}}, {"q": {"a": True}}, ["rr"])


def test_colliding_ids_in_dataframes_are_refused() -> None:
    pd = pytest.importorskip("pandas")
    run = pd.DataFrame({"qid": [1, "1"], "docno": ["a", "b"], "score": [1.0, 2.0]})
    with pytest.raises(IdCollisionError, match=r"the run DataFrame's 'qid' column: 1 "):
        evalkit.evaluate_run(run, {"1": {"a": 1}}, ["rr"])
    qrels = pd.DataFrame({"qid": ["1", "1"], "docno": [7, "7"], "label": [1, 0]})
    with pytest.raises(IdCollisionError, match=r"the qrels DataFrame's 'docno' column: 7 "):
        evalkit.evaluate_run(RUN, qrels, ["rr"])
    # a mixed column without a collision is read: ints as their digits
    mixed = pd.DataFrame({"qid": [1, "2"], "docno": ["a", "b"], "label": [1, 1]})
    assert evalkit.evaluate_run({"1": {"a": 1.0}, "2": {"b": 1.0}}, mixed,
                                ["rr"]).means() == {"rr": 1.0}


def test_graded_judgments_and_golden_cases_refuse_colliding_ids() -> None:
    with pytest.raises(IdCollisionError):
        graded_judgments({"q": {7: 1, "7": 0}})
    with pytest.raises(IdCollisionError, match=r"case 'c': judgments: 7 \(int\) and '7'"):
        GoldenCase.from_judgments("c", {7: 1, "7": 0})  # type: ignore[dict-item]
    with pytest.raises(IdCollisionError):
        GoldenCase.from_judgments("c", {7, "7"})  # type: ignore[arg-type]
    for field, value in (("relevance", {7: 1, "7": 0}), ("relevant", [7, "7"])):
        with pytest.raises(GoldenError, match=r"here: case 'q'.*7 and '7' are both the id"):
            case_from_record({"id": "q", "query": "x", field: value}, "here")
    assert GoldenCase.from_judgments("c", {7: 1, "8": 0}).relevance == {"7": 1, "8": 0}  # type: ignore[dict-item]


def test_a_ranked_run_built_in_python_has_text_ids() -> None:
    # int ids match the qrels' text ids (the ranking a, 7 with 7 relevant: RR = 1/2) ...
    run = evalkit.RankedRun(name="x", rankings={1: ["a", 7]})  # type: ignore[dict-item,list-item]
    assert evalkit.evaluate_run(run, {"1": {"7": 1}}, ["rr"]).means() == {"rr": 0.5}
    # ... and two keys of one id are refused, not scored apart
    both = evalkit.RankedRun(name="x", rankings={1: ["a"], "1": ["b"]})  # type: ignore[dict-item]
    with pytest.raises(IdCollisionError, match=r"run \(query ids\): 1 \(int\) and '1'"):
        evalkit.evaluate_run(both, {"1": {"a": 1}}, ["rr"])
