"""evalkit.execute.run_evaluator: the kernel scores ranked runs only through the run
evaluator a plugin registers (evalkit_register_run_evaluators), as a third-party plugin
could register one."""

from __future__ import annotations

from typing import Any

import pytest

import evalkit
from evalkit.core.hookspecs import hookimpl
from evalkit.core.registry import RegistryError
from evalkit.core.specs import RunEvaluatorSpec
from evalkit.data.judgments import LoadedQrels, graded_judgments
from evalkit.data.results import RunResult
from evalkit.execute.run_evaluator import load_qrels_input, run_evaluator
from evalkit.testing import registered_plugin

CALLS: list[tuple[Any, ...]] = []


def _evaluate(run: Any, qrels: Any, metrics: Any, relevance_level: int, missing: str, *,
              depth: int | None, name: str | None) -> RunResult:
    CALLS.append((run, qrels, list(metrics), relevance_level, missing, depth, name))
    return RunResult(name=name or "mine", per_query=[], header={"evaluator": "mine"})


def _load_qrels(qrels: Any) -> LoadedQrels:
    return LoadedQrels({"q1": {"d1": 1}}, str(qrels), "0" * 64)


class Mine:
    @hookimpl
    def evalkit_register_run_evaluators(self) -> list[RunEvaluatorSpec]:
        return [RunEvaluatorSpec("mine", _evaluate, _load_qrels, "a test's own")]


def test_evaluate_run_hands_its_arguments_to_the_registered_evaluator() -> None:
    CALLS.clear()
    with registered_plugin(Mine(), name="mine"):
        result = evalkit.evaluate_run("run.txt", {"q1": {"d1": 1}}, ["ap"], 2, "skip",
                                      depth=5, name="named")
        assert load_qrels_input("qrels.txt").path == "qrels.txt"
    assert result.header == {"evaluator": "mine"} and result.name == "named"
    assert CALLS == [("run.txt", {"q1": {"d1": 1}}, ["ap"], 2, "skip", 5, "named")]


def test_qrels_given_as_a_mapping_need_no_evaluator() -> None:
    with registered_plugin(object()):
        loaded = load_qrels_input({"q1": {"d1", "d2"}, 2: {"d3": "2"}})  # type: ignore[dict-item]
    assert loaded.judgments == graded_judgments({"q1": ["d1", "d2"], "2": {"d3": 2}}) == {
        "q1": {"d1": 1, "d2": 1}, "2": {"d3": 2}}
    assert loaded.path is None and len(loaded.sha256) == 64


def test_without_an_evaluator_the_refusal_names_the_plugin_that_provides_one() -> None:
    with registered_plugin(object()), pytest.raises(RegistryError) as caught:
        evalkit.evaluate_run({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}}, ["ap"])
    assert "evalkit-retrieval" in str(caught.value)
    with registered_plugin(object()), pytest.raises(RegistryError) as caught:
        load_qrels_input("qrels.txt")
    assert str(caught.value).startswith("qrels.txt: the TREC qrels loader that reads it")


def test_two_evaluators_are_refused_naming_both() -> None:
    with registered_plugin(Mine(), name="mine", installed=True), \
            pytest.raises(RegistryError) as caught:
        run_evaluator()
    assert "'mine'" in str(caught.value) and "'trec'" in str(caught.value)


def test_a_record_whose_functions_are_not_callable_is_refused() -> None:
    from evalkit.core.record_checks import record_problem

    bad = RunEvaluatorSpec("bad", "module:evaluate", _load_qrels)  # type: ignore[arg-type]
    problem = record_problem(bad)
    assert problem == "RunEvaluatorSpec 'bad': evaluate must be callable, got 'module:evaluate'"
