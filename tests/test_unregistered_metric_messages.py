"""A metric on a stored run's rows that is not registered now: the gate and ``rescore``
name who scored it (provider and release, from the run's header) and what is wrong with
that plugin now: not installed (the ``pip install``), installed but disabled, or blocked
by a conflict (naming both plugins)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit.core.registry import Provider, Registry, RegistryError
from evalkit.core.specs import MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget
from evalkit.execute.rescore import rescore
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec
from evalkit.plugins.default import use_registry
from evalkit.plugins.info import PluginInfo
from evalkit.plugins.loading import load_builtins

FRESH = Provider(module="fresh_plugin.plugin", distribution="evalkit-fresh", version="0.1.0")
OTHER = Provider(module="other_plugin.plugin", distribution="evalkit-other", version="2.0")


def _first_hit(response: Any, case: Any) -> float:
    return float(response.ranked_ids[0] == case.id)


def _registry(status: str | None = "loaded", rival: bool = False) -> Registry:
    """The kernel, and evalkit-fresh with ``status`` (None: not installed); its metric
    registered when loaded, and blocked when ``rival`` provides it too."""
    reg = Registry()
    load_builtins(reg)
    if status is not None:
        reg.plugins.append(PluginInfo("fresh", "evalkit-fresh", "0.1.0",
                                      "fresh_plugin.plugin", status=status))
    if status == "loaded":
        reg.add(MetricSpec("first_hit", _first_hit, higher_is_better=True), FRESH,
                from_plugin=True)
        if rival:
            reg.add(MetricSpec("first_hit", lambda r, c: 0.0, higher_is_better=True), OTHER,
                    from_plugin=True)
    if status == "disabled":
        reg.selection_source = "pyproject.toml [tool.evalkit] plugins"
    return reg


def _ranker(k: int) -> Any:
    """Ranks each case's own id first on the cases before ``c{k}``."""
    def rank(case: GoldenCase) -> list[str]:
        return [case.id if int(case.id[1:]) < k else "x"]

    return rank


def _stored(tmp_path: Path) -> tuple[RunResult, RunResult]:
    gset = GoldenSet(GoldenCase(f"c{i}", "q") for i in range(6))
    with use_registry(_registry()):
        runs = [evalkit.evaluate(CallableTarget(_ranker(k), name=f"r{k}"), gset,
                                 ["first_hit"], progress=False) for k in (4, 3)]
    for run in runs:
        run.save(tmp_path / f"{run.name}.jsonl")
    return RunResult.load(tmp_path / "r4.jsonl"), RunResult.load(tmp_path / "r3.jsonl")


SCORED = "metric 'first_hit' was scored by evalkit-fresh 0.1.0 (the run's header records it)"


@pytest.mark.parametrize(("status", "rival", "then"), [
    (None, False, ", which is not installed now: install it with `pip install evalkit-fresh`"),
    ("disabled", False, ", which is installed but not enabled now (left out by "
                        "pyproject.toml [tool.evalkit] plugins): enable it"),
    ("loaded", True, ", and is blocked now: metric name 'first_hit' is provided by "
                     "evalkit-fresh 0.1.0 (fresh_plugin.plugin) and evalkit-other 2.0"),
])
def test_the_gate_and_rescore_name_who_scored_the_metric(
        tmp_path: Path, status: str | None, rival: bool, then: str) -> None:
    base, cand = _stored(tmp_path)
    check = CheckSpec("hits", "first_hit", vs_baseline="no_significant_regression")
    reg = _registry(status, rival)
    [result] = evaluate_gate([check], cand, base, registry=reg).results
    assert result.verdict == "error"
    assert result.message.startswith(SCORED + then), result.message
    assert "config section" not in result.message
    with use_registry(reg), pytest.raises(RegistryError) as caught:
        rescore(tmp_path / "r3.jsonl", ["first_hit"], goldens=GoldenSet(
            GoldenCase(f"c{i}", "q") for i in range(6)), write=False)
    assert str(caught.value).startswith(SCORED + then), str(caught.value)
