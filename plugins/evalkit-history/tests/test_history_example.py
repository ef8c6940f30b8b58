"""The history in examples/gate: its CI workflow, and the example's gate recording its run;
and the trend charts' points, placed by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from evalkit_history.steps import MetricStep, Step
from evalkit_history.store import History, StoredRun
from evalkit_history.trend import NO_STEP, trend_points, trend_spec
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.results import RunResult

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "gate"


def test_the_workflow_records_every_merge_in_one_cached_file_and_publishes_the_trend() -> None:
    wf: dict[Any, Any] = yaml.safe_load((EXAMPLE / "history-workflow.yml").read_text())
    assert wf[True]["push"]["branches"] == ["main"]  # yaml reads the key `on` as True
    assert wf["concurrency"] == {"group": "eval-history", "cancel-in-progress": False}
    steps = wf["jobs"]["record"]["steps"]
    by_use = {str(s.get("uses", "")).split("@")[0]: s for s in steps if "uses" in s}
    restore, save = by_use["actions/cache/restore"], by_use["actions/cache/save"]
    assert restore["with"]["path"] == save["with"]["path"] == ".evalkit/history.sqlite"
    assert restore["with"]["key"] == save["with"]["key"]
    assert save["with"]["key"].startswith(restore["with"]["restore-keys"])
    commands = "\n".join(str(s.get("run", "")) for s in steps)
    assert "--report history:.evalkit/history.sqlite" in commands
    assert "evalkit history report --last 200 --report html:out/reports/trend.html" in commands
    assert by_use["actions/upload-artifact"]["with"]["path"] == "out/reports/trend.html"
    names = [s.get("name") for s in steps]  # restored before the gate, saved after it
    gate = next(i for i, s in enumerate(steps) if "evalkit gate" in str(s.get("run", "")))
    assert names.index("Restore the history") < gate < names.index("Save the history")
    for path in ("examples/gate/checks.yaml", "examples/gate/baseline.jsonl",
                 "examples/vaswani/main.py"):
        assert (ROOT / path).exists() and path in commands


def _mean_of_file(path: Path, metric: str) -> float:
    """The mean of ``metric`` read straight off an artifact's row lines."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    values = [obj["metrics"][metric] for obj in lines
              if obj.get("type") not in ("header", "trailer")]
    return float(sum(values)) / len(values)


def test_the_examples_gate_records_its_run_and_a_null_step(tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    runner = CliRunner()
    # a run with the stored baseline's values (another run: the gate refuses the
    # baseline itself) gated against it, twice
    run = RunResult.load(EXAMPLE / "baseline.jsonl")
    run.name = "again"
    again = run.save(tmp_path / "again.jsonl")
    for _ in range(2):
        out = runner.invoke(app, [
            "gate", "--checks", str(EXAMPLE / "checks.yaml"),
            "--run", str(again),
            "--baseline", str(EXAMPLE / "baseline.jsonl"), "--report", f"history:{db}"])
        assert out.exit_code == 0, out.output
    with History(db) as history:
        first, second = history.runs()
    assert first.n_cases == 93
    assert first.means["ndcg@10"] == pytest.approx(
        _mean_of_file(EXAMPLE / "baseline.jsonl", "ndcg@10"))
    assert second.step.comparable and {m.metric for m in second.step.metrics} == {
        "ap", "ndcg@10", "precision@10", "recall@100", "rr"}
    assert all(m.diff == 0 and not m.significant for m in second.step.metrics)


def _run(i: int, mean: float, step: Step) -> StoredRun:
    return StoredRun(id=i, name="s", label=None, commit=None, added="2026-12-01",
                     created=None, n_cases=10, means={"m": mean}, step=step)


def _step(previous: int, diff: float, lo: float, hi: float, significant: bool) -> Step:
    return Step(previous, True, (), (MetricStep("m", 10, diff, lo, hi, 0.01, 0.01,
                                                significant, "t-test", False),))


def test_the_trend_places_each_steps_interval_at_the_earlier_mean_and_cuts_at_breaks() -> None:
    runs = [
        _run(1, 0.50, Step(None, False, ("the first run of the history",))),
        _run(2, 0.60, _step(1, 0.10, 0.04, 0.16, True)),     # lower is better: worse
        _run(3, 0.58, _step(2, -0.02, -0.05, 0.01, False)),
        _run(4, 0.90, Step(3, False, ("the golden set's expected values changed",))),
        _run(5, 0.80, _step(4, -0.10, -0.15, -0.05, True)),  # better
    ]
    points = trend_points(runs, "m")
    assert [p["segment"] for p in points] == [0, 0, 0, 1, 1]
    assert [p["step"] for p in points] == [NO_STEP, "worse", NO_STEP, NO_STEP, "better"]
    assert [(p["lo"], p["hi"]) for p in points] == [
        (None, None), pytest.approx((0.54, 0.66)), pytest.approx((0.55, 0.61)),
        (None, None), pytest.approx((0.75, 0.85))]
    spec = trend_spec(runs, "m")
    breaks = spec["layer"][-1]["data"]["values"]
    assert breaks == [{"x": 3.5}]
    vl_convert = pytest.importorskip("vl_convert")
    svg = vl_convert.vegalite_to_svg(spec)
    assert svg.startswith("<svg") and "<script" not in svg
