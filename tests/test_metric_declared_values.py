"""A metric's declared ``bounds`` and ``value_type="binary"`` are enforced when it is
scored: a value outside the bounds, or neither 0 nor 1 from a binary metric, is that
case's metric error (the row records it, the others keep their values), naming the
metric, its provider and the case; the conformance suite checks the same rule
(``metric:<name>:declared-values``). Messages print numbers as Python numbers, never a
numpy repr."""

from __future__ import annotations

import types
from typing import Any

import numpy as np
import pytest

import evalkit
from evalkit import hookimpl
from evalkit.core.registry import Provider, Registry
from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import CallableTarget
from evalkit.plugins.default import use_registry
from evalkit.plugins.loading import load_builtins
from evalkit.stats.declared_values import declared_range, value_problem
from evalkit.stats.numeric import value_text
from evalkit.stats.sequential import paired_confidence_sequence
from evalkit.testing import check_conformance

PROVIDER = Provider(module="fresh_plugin.plugin", distribution="evalkit-fresh", version="0.1.0")


def _by_case(values: dict[str, float]) -> Any:
    def fn(response: Any, case: Any) -> float:
        return values[case.id]

    return fn


def _run(spec: MetricSpec) -> Any:
    reg = Registry()
    load_builtins(reg)
    reg.add(spec, PROVIDER, from_plugin=True)
    gset = GoldenSet(GoldenCase(f"q{i}", "q") for i in range(1, 4))
    with use_registry(reg):
        return evalkit.evaluate(CallableTarget(lambda case: [case.id], name="t"), gset,
                                [spec.name], progress=False)


def test_a_value_outside_the_declared_bounds_is_that_cases_metric_error() -> None:
    spec = MetricSpec("penalty", _by_case({"q1": 0.0, "q2": 5.0, "q3": 1.0}),
                      higher_is_better=False, bounds=(0.0, 1.0))
    run = _run(spec)
    rows = {r.query_id: r for r in run.per_query}
    assert rows["q1"].metrics == {"penalty": 0.0} and rows["q3"].metrics == {"penalty": 1.0}
    assert "penalty" not in rows["q2"].metrics
    assert rows["q2"].metric_errors["penalty"] == (
        "metric 'penalty' (provided by evalkit-fresh 0.1.0 (fresh_plugin.plugin)) returned "
        "5.0 for case 'q2': outside [0, 1], the range its declared bounds allows; fix the "
        "metric, or its declaration")


def test_a_binary_metric_returning_a_half_is_that_cases_metric_error() -> None:
    spec = MetricSpec("first_hit", _by_case({"q1": 1.0, "q2": 0.5, "q3": 0.0}),
                      higher_is_better=True, value_type="binary")
    rows = {r.query_id: r for r in _run(spec).per_query}
    assert rows["q1"].metrics == {"first_hit": 1.0} and rows["q3"].metrics == {"first_hit": 0.0}
    assert rows["q2"].metric_errors["first_hit"].endswith(
        "returned 0.5 for case 'q2': neither 0 nor 1, though it declares value_type "
        "'binary'; fix the metric, or its declaration")


def test_the_rule_itself() -> None:
    bounded = MetricSpec("m", _by_case({}), higher_is_better=True, bounds=(-1.0, 2.0))
    binary = MetricSpec("b", _by_case({}), higher_is_better=True, value_type="binary")
    free = MetricSpec("f", _by_case({}), higher_is_better=True, value_type="continuous")
    assert declared_range(bounded) == (-1.0, 2.0) and declared_range(binary) == (0.0, 1.0)
    assert declared_range(free) is None
    assert [value_problem(bounded, v) for v in (-1.0, 2.0, 0.3)] == [None, None, None]
    assert value_problem(bounded, 2.5) == (
        "outside [-1, 2], the range its declared bounds allows")
    assert value_problem(binary, 1.0) is None and value_problem(binary, 0.0) is None
    assert value_problem(binary, -1.0) == (
        "outside [0, 1], the range its declared value_type 'binary' (0 or 1) allows")
    assert value_problem(free, 1e9) is None


def _plugin(spec: MetricSpec) -> types.ModuleType:
    module = types.ModuleType("declared_values_plugin")

    @hookimpl
    def evalkit_register_metrics() -> list[MetricSpec]:
        return [spec]

    module.evalkit_register_metrics = evalkit_register_metrics  # type: ignore[attr-defined]
    return module


@pytest.mark.parametrize(("value", "kwargs", "why"), [
    (5.0, {"bounds": (0.0, 1.0)}, "outside [0, 1]"),
    (0.5, {"value_type": "binary"}, "neither 0 nor 1"),
])
def test_conformance_checks_the_declared_values(value: float, kwargs: dict[str, Any],
                                                why: str) -> None:
    def fn(response: Any, case: Any) -> Any:
        return np.float64(value)

    failures = check_conformance(_plugin(MetricSpec("odd", fn, higher_is_better=True,
                                                    **kwargs)))
    assert [f.partition(": ")[0] for f in failures] == ["metric:odd:declared-values"]
    assert f"metric 'odd' returned {value!r} on case" in failures[0] and why in failures[0]
    assert "np.float64" not in failures[0]
    fine = MetricSpec("odd", lambda r, c: 1.0, higher_is_better=True, **kwargs)
    assert check_conformance(_plugin(fine)) == []


def test_numbers_in_messages_are_never_numpy_reprs() -> None:
    assert value_text(np.float64(5.0)) == "5.0" and value_text(np.int64(3)) == "3"
    with pytest.raises(ValueError) as caught:
        paired_confidence_sequence(np.array([np.float64(5.0)]), 1.0)
    assert str(caught.value).startswith("paired difference 5.0 (unit 1) lies outside [-1, 1]")


def test_until_decided_names_the_metric_the_case_and_the_run() -> None:
    from evalkit.data.rows import CaseResult
    from evalkit.data.targets import TargetResponse
    from evalkit.execute.sequential_run import (
        SequentialError,
        SequentialMonitor,
        UntilDecided,
        _Unit,
    )

    monitor = SequentialMonitor(
        UntilDecided(baseline="base.jsonl", metric="penalty", seed=1), "penalty",
        (0.0, 1.0), {"q1": np.float64(5.0)}, "base", [_Unit(("q1",))], 1, 1, "mean")
    row = CaseResult("q1", TargetResponse(ranked_ids=("q1",)), {"penalty": 0.5}, None, 1.0)
    with pytest.raises(SequentialError) as caught:
        monitor.update({("q1", None): row})
    assert str(caught.value).startswith(
        "metric penalty: the baseline 'base' has 5.0 for case 'q1', outside [0, 1], the "
        "range the metric declares")


def test_rounding_a_hair_past_a_bound_is_no_error() -> None:
    """An nDCG of 1.0000000000000002 is rounding, not a broken metric."""
    spec = MetricSpec("m", _by_case({}), higher_is_better=True, bounds=(0.0, 1.0))
    assert value_problem(spec, 1.0000000000000002) is None
    assert value_problem(spec, -1e-12) is None
    assert value_problem(spec, 1.000001) is not None
