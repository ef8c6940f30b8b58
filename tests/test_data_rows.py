"""Kernel rows, artifacts and run(): values checked by hand."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest

from evalkit.core.registry import RegistryError
from evalkit.data.results import ArtifactError, QueryResult, RunResult, is_artifact
from evalkit.plugins.default import use_registry


@dataclass
class Q:
    id: str


def hits_at_k(retrieved: list[str], relevant: set[str], k: int) -> float:
    return float(sum(1 for d in retrieved[:k] if d in relevant))


def test_mean_is_derived_from_rows() -> None:
    run = RunResult("r", [QueryResult("a", [], {"m": 1.0}), QueryResult("b", [], {"m": 0.0}),
                          QueryResult("c", [], {"m": 0.5})])
    assert run.mean("m") == pytest.approx(0.5)
    assert run.scores("m") == {"a": 1.0, "b": 0.0, "c": 0.5}


def test_mean_of_missing_metric_names_the_run_and_row() -> None:
    run = RunResult("sysA", [QueryResult("q1", [], {"m": 1.0})])
    with pytest.raises(KeyError, match=r"sysA.*'x'.*q1"):
        run.mean("x")


def test_mean_of_empty_run_raises() -> None:
    with pytest.raises(ValueError, match="no rows"):
        RunResult("e", []).mean("m")


def test_artifact_round_trip(tmp_path: Path) -> None:
    run = RunResult("sys", [QueryResult("010", ["d1", "d2"], {"m": 0.25}, {"num_rel": 2}),
                            QueryResult("10", [], {"m": 1.0})], header={"relevance_level": 2})
    path = run.save(tmp_path / "run.jsonl")
    assert is_artifact(path)
    first = json.loads(path.read_text().splitlines()[0])
    assert first["type"] == "header" and first["schema_version"] == 2
    back = RunResult.load(path)
    assert back.name == "sys"
    assert back.ids() == ["010", "10"]
    assert back.scores("m") == {"010": 0.25, "10": 1.0}
    assert back.per_query[0].counts == {"num_rel": 2}
    assert back.header["relevance_level"] == 2


def test_artifact_errors_name_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text('{"type": "header", "schema_version": 1}\n{"type": "row", "id": "a"}\nnot json\n')
    with pytest.raises(ArtifactError, match=r"bad.jsonl:3"):
        RunResult.load(p)
    p.write_text("q1 Q0 d1 1 1.0 tag\n")
    assert not is_artifact(p)
    with pytest.raises(ArtifactError, match=r"bad.jsonl:1"):
        RunResult.load(p)
    p.write_text('{"type": "header", "schema_version": 1}\n{"type": "row", "id": "a"}\n'
                 '{"type": "row", "id": "a"}\n')
    with pytest.raises(ArtifactError, match="'a' has a second row"):
        RunResult.load(p)


def test_run_keeps_rows_and_refuses_unjudged_queries() -> None:
    from evalkit.execute.run_retriever import METRICS, run

    with use_registry(plugins=False):
        METRICS["hits"] = hits_at_k
        qrels = {"1": {"a", "b"}, "2": {"c"}}
        result = run("sys", lambda q: ["a", "x", "b"], [Q("1"), Q("2")], qrels, ["hits@2"])
        assert [r.metrics["hits@2"] for r in result.per_query] == [1.0, 0.0]
        assert result.per_query[0].retrieved == ["a", "x", "b"]
        with pytest.raises(KeyError, match=r"'3'.*no entry in qrels"):
            run("sys", lambda q: [], [Q("3")], qrels, ["hits@2"])
        with pytest.raises(ValueError, match="doc 'a' twice for query '1'"):
            run("sys", lambda q: ["a", "a"], [Q("1")], qrels, ["hits@2"])


def test_run_accepts_graded_qrels_with_relevance_level() -> None:
    from evalkit.execute.run_retriever import METRICS, run

    with use_registry(plugins=False):
        METRICS["hits"] = hits_at_k
        graded = {"1": {"a": 1, "b": 2, "c": 0, "d": -1}}
        r1 = run("s", lambda q: ["a", "b", "c", "d"], [Q("1")], graded, ["hits@4"])
        r2 = run("s", lambda q: ["a", "b", "c", "d"], [Q("1")], graded, ["hits@4"],
                 relevance_level=2)
        assert r1.per_query[0].metrics["hits@4"] == 2.0
        assert r2.per_query[0].metrics["hits@4"] == 1.0


def test_legacy_metric_has_no_polarity_but_runs() -> None:
    from evalkit.execute.run_retriever import METRICS

    with use_registry(plugins=False) as reg:
        METRICS["hits"] = hits_at_k
        METRICS["hits"] = hits_at_k  # same function again: a no-op
        assert reg.resolve("hits@3").higher_is_better is None
        with pytest.raises(RegistryError, match=r"no declared polarity.*higher_is_better"):
            reg.polarity("hits@3")
        assert METRICS["hits"] is hits_at_k
        del METRICS["hits"]
        with pytest.raises(RegistryError, match="unknown metric"):
            reg.resolve("hits@3")


def test_golden_case_expected_ids_become_relevant() -> None:
    from evalkit.data.cases import GoldenCase

    case = GoldenCase(id="a", query="x", expected=["d1", "d2"])
    assert case.relevant == frozenset({"d1", "d2"})
    assert dict(case.relevance) == {"d1": 1, "d2": 1}
    graded = GoldenCase(id="b", relevance={"d1": 2, "d2": 0, "d3": -1})
    assert graded.relevant == frozenset({"d1"})
    text = GoldenCase(id="c", expected="an answer")
    assert text.relevant == frozenset()


@pytest.mark.parametrize("bad", ["d1", [("d", 1.0)], None, [None], 5])
def test_run_refuses_a_retriever_that_does_not_return_ids(bad: object) -> None:
    from evalkit.execute.run_retriever import METRICS, run

    with use_registry(plugins=False):
        METRICS["hits"] = hits_at_k
        with pytest.raises(TypeError, match="query '1'"):
            # deliberately breaks run()'s contract: the retriever returns no list of ids
            retriever = cast("Callable[[Any], Sequence[str]]", lambda q: bad)
            run("sys", retriever, [Q("1")], {"1": {"d"}}, ["hits@2"])


def test_unknown_metric_suggests_a_close_name() -> None:
    from evalkit.execute.run_retriever import METRICS

    with use_registry(plugins=False) as reg:
        METRICS["hits"] = hits_at_k
        with pytest.raises(RegistryError, match=r"did you mean 'hits@10'"):
            reg.resolve("hitz@10")


def test_mean_accepts_an_alias_of_the_stored_name() -> None:
    with use_registry(plugins=False) as reg:
        reg.register_metric("hits", higher_is_better=True, aliases=("HITS", "h"))(
            lambda response, case: 1.0
        )
        run = RunResult("r", [QueryResult("a", [], {"hits": 1.0}),
                              QueryResult("b", [], {"hits": 0.0})])
        assert run.mean("h") == 0.5
        assert run.scores("HITS") == {"a": 1.0, "b": 0.0}


def test_a_bad_value_in_an_artifact_row_names_the_file_line_row_and_metric(
    tmp_path: Path,
) -> None:
    from evalkit.data.results import ArtifactError, RunResult

    art = tmp_path / "run.jsonl"
    art.write_text('{"type": "header", "schema_version": 1, "name": "x", "kind": "run"}\n'
                   '{"type": "row", "id": "q1", "metrics": {"ap": 0.5}}\n'
                   '{"type": "row", "id": "q2", "metrics": {"ap": "high"}}\n')
    with pytest.raises(ArtifactError) as err:
        RunResult.load(art)
    assert str(err.value) == f"{art}:3: row 'q2': metric 'ap' is 'high', not a number"
    art.write_text('{"type": "header", "schema_version": 1, "name": "x", "kind": "run"}\n'
                   '{"type": "row", "id": "q1", "metrics": {"ap": 0.5}, "counts": '
                   '{"num_rel": 2.5}}\n')
    with pytest.raises(ArtifactError, match=r":2: row 'q1': count 'num_rel' is 2.5, not an "
                       "integer"):
        RunResult.load(art)


def test_a_single_metric_name_is_one_metric_and_an_empty_list_is_refused() -> None:
    """``"ap"`` means ``["ap"]`` (it once resolved as the metrics 'a' and 'p'); an empty
    list would score nothing and is refused."""
    from evalkit.execute.run_evaluator import evaluate_run

    run = {"q1": {"d1": 2.0, "d2": 1.0}}
    qrels = {"q1": {"d2": 1}}
    one = evaluate_run(run, qrels, "ap")
    assert [m for m in one.per_query[0].metrics] == ["ap"]
    assert one.mean("ap") == pytest.approx(0.5)  # the relevant document at rank 2
    with pytest.raises(ValueError, match="no metric given"):
        evaluate_run(run, qrels, [])


_PLAIN = {"type": "row", "id": "q1", "metrics": {"ap": 0.5, "rr": 1.0}, "retrieved": []}


@pytest.mark.parametrize("objs", [
    [_PLAIN, {**_PLAIN, "id": "q2", "retrieved": ["d1", "d2"]}],
    [{**_PLAIN, "counts": {"num_ret": 3}}, {**_PLAIN, "id": "q2", "counts": {}}],
    [{"type": "row", "id": "q1", "metrics": {}, "retrieved": []}],
    [],
])
def test_plain_rows_are_read_at_once_as_row_by_row(objs: list[dict[str, Any]]) -> None:
    from evalkit.data.rows import plain_rows_from_json, row_from_json

    rows = plain_rows_from_json(json.loads(json.dumps(objs)))
    assert rows is not None and rows == [row_from_json(o) for o in objs]
    assert all(type(r) is QueryResult for r in rows)


@pytest.mark.parametrize("other", [
    {"metrics": {"ap": 1}},  # an integer value: converted row by row
    {"metrics": {"ap": True}},
    {"metrics": {"ap": "0.5"}},
    {"metrics": None},
    {"id": 7},
    {"retrieved": ["d1", 2]},
    {"retrieved": None},
    {"counts": {"num_ret": 3.0}},
    {"counts": {"rbp_resid": 0.25}},
    {"counts": None},
    {"sample": 0},
    {"metric_errors": {"ap": "failed"}},
    {"response": None, "error": "boom"},
    {"extra": 1},
])
def test_a_row_that_is_not_plain_is_left_to_the_row_reader(other: dict[str, Any]) -> None:
    from evalkit.data.rows import plain_rows_from_json

    assert plain_rows_from_json([_PLAIN, {**_PLAIN, "id": "q2", **other}]) is None
    missing = {k: v for k, v in _PLAIN.items() if k != "retrieved"}
    assert plain_rows_from_json([_PLAIN, missing]) is None


@pytest.mark.parametrize("held", [
    [{"a": 1.0, "b": 2.0}, {"b": 0.0, "a": 1.0}],
    [{"a": 1.0, "b": 2.0}, {"a": 1.0, "c": 2.0}],
    [{"a": 1.0, "b": 2.0}, {"a": 1.0}],
    [{"a": 1.0}, {"a": 1.0, "b": 2.0}],
    [{"b": 1.0, "a": 2.0}, {"a": 1.0, "b": 0.5, "c": 2.0}, {"a": 0.0, "b": 0.0}],
    [{}, {"a": 1.0}],
])
def test_metric_names_are_those_every_row_holds_in_first_row_order(
        held: list[dict[str, float]]) -> None:
    run = RunResult("r", [QueryResult(f"q{i}", [], m) for i, m in enumerate(held)])
    assert run.metric_names() == [m for m in held[0] if all(m in h for h in held)]
