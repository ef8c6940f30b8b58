"""A run header records each per-case metric's ``value_type`` and ``bounds`` beside its
provider, version and polarity, and a comparison of stored runs chooses its default
test from the recorded value type: the same answer whether the plugin that declared it
is loaded or not. A definition registered now that declares another value type (or
other bounds) is refused, as an opposite polarity is; runs written before headers
recorded the field are compared with the registered one.

The paired t-test's p-value is scipy's ``ttest_rel`` of the same values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from scipy import stats

import evalkit
from evalkit.comparison import ComparisonError, compare
from evalkit.core.registry import Provider, Registry
from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget
from evalkit.plugins.default import use_registry
from evalkit.plugins.loading import load_builtins

PLUGIN = Provider(module="fresh_plugin.plugin", distribution="evalkit-fresh", version="0.1.0")
N = 30
# first_hit per case: the candidate hits cases 0-12 and 20-25, the baseline 0-19
CAND = [1.0 if i < 13 or 20 <= i < 26 else 0.0 for i in range(N)]
BASE = [1.0 if i < 20 else 0.0 for i in range(N)]


def _registry(value_type: Any = "binary", bounds: Any = None,
              declared: bool = True) -> Registry:
    reg = Registry()
    load_builtins(reg)
    if declared:
        def first_hit(response: Any, case: Any) -> float:
            return float(response.ranked_ids[0] == "hit")

        reg.add(MetricSpec("first_hit", first_hit, higher_is_better=True,
                           value_type=value_type, bounds=bounds), PLUGIN, from_plugin=True)
    return reg


def _stored(tmp_path: Path) -> tuple[Path, Path]:
    gset = GoldenSet(GoldenCase(f"c{i:02d}", "q") for i in range(N))
    paths = []
    with use_registry(_registry()):
        for name, values in (("base", BASE), ("cand", CAND)):
            def rank(case: GoldenCase, values: list[float] = values) -> list[str]:
                return ["hit" if values[int(case.id[1:])] else "miss"]

            run = evalkit.evaluate(CallableTarget(rank, name=name), gset, ["first_hit"],
                                   progress=False)
            paths.append(run.save(tmp_path / f"{name}.jsonl"))
    return paths[0], paths[1]


def _without_value_fields(*paths: Path) -> list[RunResult]:
    """The stored runs as written before headers recorded value type and bounds."""
    runs = [RunResult.load(p) for p in paths]
    for run in runs:
        for key in ("value_type", "bounds"):
            del run.header["metrics"]["first_hit"][key]
    return runs


def test_the_header_records_value_type_and_bounds(tmp_path: Path) -> None:
    base, _ = _stored(tmp_path)
    assert RunResult.load(base).header["metrics"]["first_hit"] == {
        "provider": "evalkit-fresh", "version": "1", "higher_is_better": True,
        "value_type": "binary", "bounds": None}


def test_the_recorded_value_type_chooses_the_test_with_or_without_the_plugin(
        tmp_path: Path) -> None:
    base, cand = _stored(tmp_path)
    expected = stats.ttest_rel(CAND, BASE).pvalue
    for reg in (_registry(), _registry(declared=False)):
        with use_registry(reg):
            [row] = compare(base, cand, metrics=["first_hit"]).results
        assert row.method == "t-test"
        assert row.p_value == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize(("value_type", "bounds", "now"), [
    ("continuous", None, "value type continuous, no bounds"),
    (None, None, "no value type, no bounds"),
    ("binary", (0.0, 1.0), "value type binary, bounds [0, 1]"),
])
def test_another_registered_value_type_is_refused(tmp_path: Path, value_type: str | None,
                                                  bounds: Any, now: str) -> None:
    base, cand = _stored(tmp_path)
    with use_registry(_registry(value_type, bounds)), \
            pytest.raises(ComparisonError) as caught:
        compare(base, cand, metrics=["first_hit"])
    message = str(caught.value)
    assert f"{base} was scored by evalkit-fresh" in message
    assert "(value type binary, no bounds)" in message and f"({now})" in message
    assert "evalkit-fresh" in message


def test_runs_without_the_field_use_the_registered_value_type(tmp_path: Path) -> None:
    runs = _without_value_fields(*_stored(tmp_path))
    with use_registry(_registry("continuous")):
        [row] = compare(runs[0], runs[1], metrics=["first_hit"]).results
    assert row.method != "t-test"
    with use_registry(_registry()):
        [row] = compare(runs[0], runs[1], metrics=["first_hit"]).results
    assert row.method == "t-test"


def test_the_gate_refuses_a_registered_value_type_other_than_the_recorded_one(
        tmp_path: Path) -> None:
    from evalkit.gate import evaluate_gate
    from evalkit.gate.checks import CheckSpec

    base, cand = _stored(tmp_path)
    checks = [CheckSpec("hits", "first_hit", vs_baseline="no_significant_regression")]
    runs = [RunResult.load(p) for p in (cand, base)]
    with use_registry(_registry()):
        [same] = evaluate_gate(checks, runs[0], runs[1]).results
    assert same.verdict != "error", same.message
    reg = _registry("continuous")
    [other] = evaluate_gate(checks, runs[0], runs[1], registry=reg).results
    assert other.verdict == "error"
    assert "(value type binary, no bounds)" in other.message
    assert "(value type continuous, no bounds)" in other.message


def test_old_runs_with_no_definition_registered_now_say_so(tmp_path: Path) -> None:
    runs = _without_value_fields(*_stored(tmp_path))
    with use_registry(_registry(declared=False)):
        result = compare(runs[0], runs[1], metrics=["first_hit"])
    [row] = result.results
    assert row.method != "t-test"
    assert any("the runs record no value type" in n and "evalkit-fresh scored them" in n
               for n in result.warnings), result.warnings
