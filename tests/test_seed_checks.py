"""The checks examples of the seed README load and gate as it describes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit.core.registry import Provider, Registry
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse
from evalkit.plugins.default import use_registry

B = 999

SEED_CHECKS = """\
checks:
  - id: recall_floor
    metric: recall@10
    op: ">="
    threshold: 0.60

  - id: p95_ceiling
    metric: latency_p95
    op: "<="
    threshold: 800
    level: warn

  - id: no_ndcg_regression
    metric: ndcg@10
    vs_baseline: no_significant_regression
    alpha: 0.05
"""

SEED_SCOPED = """\
checks:
  - id: controls_hold
    metric: ndcg@3
    scope: [cp-surry-any, cp-newtown-pub, cp-bondi-any]
    op: ">="
    threshold: 1.0

  - id: no_regression
    metric: ndcg@3
    vs_baseline: no_significant_regression
"""

SEED_ZERO = """\
checks:
  - id: no_unsupported_claims
    metric: unsupported_claims
    op: "<="
    threshold: 0
"""


def _never(response: Any, case: Any) -> float:
    raise AssertionError("not called")


@pytest.fixture
def reg() -> Iterator[Registry]:
    import evalkit.builtins
    from evalkit.plugins.loading import register_plugin_object

    with use_registry(plugins=False) as r:
        # the kernel's own aggregates (latency_p95 ...) and reporters
        register_plugin_object(r, evalkit.builtins, Provider("evalkit.builtins",
                                                             "paired-evalkit-core", "test"))
        for name in ("recall@10", "ndcg@10", "ndcg@3"):
            r.register_metric(name, higher_is_better=True)(_never)
        r.register_metric("unsupported_claims", higher_is_better=False)(_never)
        yield r


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "checks.yaml"
    p.write_text(text)
    return p


def case_run(name: str, values: dict[str, dict[str, float]],
             latency: dict[str, float] | None = None) -> RunResult:
    rows = []
    for cid, metrics in values.items():
        ms = (latency or {}).get(cid, 100.0)
        rows.append(CaseResult(cid, TargetResponse(latency_ms=ms), dict(metrics), latency_ms=ms))
    return RunResult(name, rows)


IDS = [f"c{i:02d}" for i in range(20)]


def test_first_checks_example(reg: Registry, tmp_path: Path) -> None:
    specs = evalkit.load_checks(write(tmp_path, SEED_CHECKS))
    assert [(s.id, s.kind, s.level) for s in specs] == [
        ("recall_floor", "threshold", "block"), ("p95_ceiling", "threshold", "warn"),
        ("no_ndcg_regression", "baseline", "block")]
    # recall@10: 13 of 20 cases at 1.0, the rest 0 -> mean 0.65
    base_vals = {c: {"recall@10": 1.0 if i < 13 else 0.0, "ndcg@10": 0.3 + 0.03 * i}
                 for i, c in enumerate(IDS)}
    # latencies 100, 150, ..., 1050 ms; nearest-rank p95 of 20 values is the 19th: 1000
    latency = {c: 100.0 + 50 * i for i, c in enumerate(IDS)}
    base = case_run("base", base_vals, latency)
    cand = case_run("cand", base_vals, latency)
    report = evalkit.evaluate_gate(specs, cand, base, n_resamples=B)
    assert report.lines()[0] == "recall_floor: pass (20/20 cases)"
    r_floor, r_p95, r_reg = report.results
    assert r_floor.observed == pytest.approx(0.65)
    assert (r_p95.observed, r_p95.verdict) == (1000.0, "warn")
    assert r_reg.verdict == "pass"
    assert report.exit_code == 0  # the p95 warning does not block
    worse = case_run("worse", {c: {**v, "ndcg@10": v["ndcg@10"] - 0.05}
                               for c, v in base_vals.items()}, latency)
    report = evalkit.evaluate_gate(specs, worse, base, n_resamples=B)
    assert report.results[2].verdict == "fail" and report.exit_code == 1


CONTROLS = ["cp-surry-any", "cp-newtown-pub", "cp-bondi-any"]
BROKEN = ["br-1", "br-2", "br-3", "br-4"]


def test_scoped_floor_with_a_no_regression_check(reg: Registry, tmp_path: Path) -> None:
    specs = evalkit.load_checks(write(tmp_path, SEED_SCOPED),
                                known_case_ids=CONTROLS + BROKEN)
    # controls work (1.0); known-broken cases are baselined at zero
    baseline_vals = {c: {"ndcg@3": 1.0} for c in CONTROLS} | {c: {"ndcg@3": 0.0}
                                                              for c in BROKEN}
    base = case_run("base", baseline_vals)
    # green on day one: an absolute floor over everything would fail, the scoped one holds
    report = evalkit.evaluate_gate(specs, case_run("same", baseline_vals), base, n_resamples=B)
    assert report.lines()[0] == "controls_hold: pass (3/3 cases)"
    assert report.results[1].verdict == "pass" and report.exit_code == 0
    # fixing one broken case is not a regression
    fixed = case_run("fixed", baseline_vals | {"br-1": {"ndcg@3": 1.0}})
    assert evalkit.evaluate_gate(specs, fixed, base, n_resamples=B).exit_code == 0
    # a control dropping below its floor fails, whatever the statistics say
    dropped = case_run("dropped", baseline_vals | {"cp-bondi-any": {"ndcg@3": 0.5}})
    report = evalkit.evaluate_gate(specs, dropped, base, n_resamples=B)
    assert report.results[0].verdict == "fail"
    assert report.results[0].observed == pytest.approx((1.0 + 1.0 + 0.5) / 3)
    assert report.exit_code == 1


def test_scope_typo_is_refused_at_load(reg: Registry, tmp_path: Path) -> None:
    text = SEED_SCOPED.replace("cp-newtown-pub", "cp-newton-pub")
    with pytest.raises(evalkit.CheckError) as info:
        evalkit.load_checks(write(tmp_path, text), known_case_ids=CONTROLS + BROKEN)
    assert "1 case id(s)" in str(info.value) and "cp-newton-pub" in str(info.value)


def test_select_refuses_a_scoped_case_that_produced_no_row(reg: Registry,
                                                           tmp_path: Path) -> None:
    spec = evalkit.load_checks(write(tmp_path, SEED_SCOPED))[0]
    result = case_run("r", {c: {"ndcg@3": 1.0} for c in CONTROLS[:2] + BROKEN})
    with pytest.raises(evalkit.CheckError) as info:
        spec.select(result.per_query)
    msg = str(info.value)
    assert "'controls_hold'" in msg and "3 case(s)" in msg and "cp-bondi-any" in msg
    assert spec.coverage(result.per_query) == "2/3 cases"


def test_zero_tolerance_count(reg: Registry, tmp_path: Path) -> None:
    specs = evalkit.load_checks(write(tmp_path, SEED_ZERO))
    clean = case_run("clean", {c: {"unsupported_claims": 0.0} for c in IDS[:5]})
    dirty = case_run("dirty", {c: {"unsupported_claims": float(c == "c03")} for c in IDS[:5]})
    assert evalkit.evaluate_gate(specs, clean).exit_code == 0
    report = evalkit.evaluate_gate(specs, dirty)
    assert report.exit_code == 1 and report.results[0].observed == pytest.approx(0.2)


def test_public_names() -> None:
    from evalkit import CheckError, CheckSpec, GateReport, evaluate_gate, load_checks

    assert load_checks.__module__ == "evalkit.gate.checks"
    assert evaluate_gate.__module__ == "evalkit.gate.evaluate"
    assert {CheckError.__name__, CheckSpec.__name__, GateReport.__name__} == {
        "CheckError", "CheckSpec", "GateReport"}
