"""What a metric may return: a run and the conformance suite apply one rule
(evalkit.stats.numeric.real_number, then finite), so a value the suite refuses (a str
such as "0.5", a bool, None) is that case's metric error at run time, never stored as a
number."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from evalkit.core.hookspecs import hookimpl
from evalkit.core.registry import Provider
from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry
from evalkit.plugins.loading import register_plugin_object
from evalkit.testing import conformance_checks

RETURNS: dict[str, Any] = {
    "m_str": "0.5", "m_bool": True, "m_npbool": np.bool_(True), "m_none": None,
    "m_nan": float("nan"), "m_int": 1, "m_np": np.float32(0.25), "m_frac": Fraction(1, 4),
}
REFUSED = {"m_str": "'0.5' (a str)", "m_bool": "True (a bool)",
           "m_npbool": "(a bool", "m_none": "None (a NoneType)", "m_nan": "returned nan"}
SCORES = {"m_int": 1.0, "m_np": 0.25, "m_frac": 0.25}


def _returning(value: Any) -> Any:
    def fn(response: TargetResponse, case: GoldenCase) -> Any:
        return value

    return fn


class Plugin:
    @hookimpl
    def evalkit_register_metrics(self) -> list[MetricSpec]:
        return [MetricSpec(name, _returning(v), True) for name, v in RETURNS.items()]


def test_a_run_refuses_per_case_what_the_conformance_suite_refuses() -> None:
    cases = [GoldenCase("q1", "a"), GoldenCase("q2", "b")]
    with use_registry() as registry:
        register_plugin_object(registry, Plugin(), Provider("returns", "returns", "1"))
        run = evaluate(CallableTarget(lambda case: ["d1"], name="t"), cases, list(RETURNS),
                       aggregates=[], progress=False)
    for row in run.per_query:
        assert row.metrics == SCORES
        assert set(row.metric_errors) == set(REFUSED)
        for name, said in REFUSED.items():
            message = row.metric_errors[name]
            assert message.startswith(f"metric {name!r} ")
            assert f"case {row.query_id!r}" in message
            assert said in message
    assert run.per_query[0].metric_errors["m_str"] == (
        "metric 'm_str' on case 'q1': its value must be a number (int or float), got '0.5' "
        "(a str); parse strings first, give booleans as 0/1")

    # the conformance suite fails exactly the metrics the run refused
    failed = set()
    for check in conformance_checks(Plugin()):
        if check.id.endswith(":finite"):
            try:
                check()
            except AssertionError:
                failed.add(check.id.split(":")[1])
    assert failed == set(REFUSED)


@pytest.mark.parametrize("value", ["0.5", True, None])
def test_rescoring_a_batch_refuses_the_same_values(value: Any) -> None:
    from evalkit.execute.scoring import MetricError, score_columns

    spec = MetricSpec("m", _returning(value), True)
    with pytest.raises(MetricError, match="metric 'm' on case 'q1': its value must be a "
                                          "number"):
        score_columns([TargetResponse(ranked_ids=["d1"])], [GoldenCase("q1", "a")], [spec])
