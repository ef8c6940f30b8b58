"""The default metric list of ``compare``, ``meta_compare`` and ``plan_power``: every
metric the runs hold that is not compared is named, with the reason, in the warnings
(and on standard error); when none can be compared, the refusal says why per metric."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.comparison import ComparisonError, compare, meta_compare
from evalkit.comparison.planning import plan_power
from evalkit.data.results import QueryResult, RunResult
from evalkit.data.rows import CaseResult

IDS = [f"q{i}" for i in range(8)]


def _run(name: str, metrics: dict[str, list[float]]) -> RunResult:
    """A run whose case ``IDS[i]`` holds ``metrics[m][i]`` (a NaN is saved as the
    metric's failure on that case)."""
    return RunResult(name=name, per_query=[
        QueryResult(query_id=q, retrieved=["d1"],
                    metrics={m: v[i] for m, v in metrics.items()})
        for i, q in enumerate(IDS)])


BASE_NDCG = [0.5 + 0.001 * i for i in range(8)]
CAND_NDCG = [math.nan] + [0.4 + 0.01 * i for i in range(1, 8)]
FLAT = [0.8] * 8


@pytest.fixture()
def partial(tmp_path: Path) -> tuple[Path, Path]:
    """The baseline, and a candidate whose ndcg@10 failed on q0 of its 8 cases."""
    base, cand = tmp_path / "base.jsonl", tmp_path / "cand.jsonl"
    _run("base", {"ndcg@10": BASE_NDCG, "recall@100": FLAT}).save(base)
    _run("cand", {"ndcg@10": CAND_NDCG, "recall@100": FLAT}).save(cand)
    return base, cand


def test_a_metric_that_failed_on_some_cases_is_named_not_dropped(
        partial: tuple[Path, Path]) -> None:
    base, cand = partial
    c = compare(base, cand, n_resamples=200)
    assert c.metrics == ("recall@100",)
    (left_out,) = [w for w in c.warnings if w.startswith("ndcg@10 is not compared")]
    assert f"errored on 1 of 8 cases in {cand}: run 'cand' (first 'q0'" in left_out
    assert "--allow-incomplete" in left_out
    assert left_out in c.to_json()["warnings"]
    res = CliRunner().invoke(app, ["compare", str(base), str(cand), "-B", "200"])
    assert res.exit_code == 0, res.output
    assert f"warning: {left_out}" in res.stderr.splitlines()
    res = CliRunner().invoke(app, ["compare", str(base), str(cand), "-B", "200", "--json"])
    assert left_out in json.loads(res.stdout)["warnings"]


def test_allow_incomplete_compares_it_on_the_cases_every_run_has(
        partial: tuple[Path, Path]) -> None:
    base, cand = partial
    c = compare(base, cand, n_resamples=200, allow_incomplete=True)
    assert c.metrics == ("ndcg@10", "recall@100")
    assert not any("is not compared" in w for w in c.warnings)
    diff = math.fsum(CAND_NDCG[i] - BASE_NDCG[i] for i in range(1, 8)) / 7
    r = c.get("ndcg@10")
    assert r.n_queries == 7 and r.diff == pytest.approx(diff, abs=1e-12)


def test_a_metric_absent_from_a_run_or_failed_everywhere_is_named() -> None:
    base = _run("base", {"ap": BASE_NDCG, "rr": FLAT, "ndcg@10": BASE_NDCG})
    cand = _run("cand", {"ap": [*CAND_NDCG[1:], 0.3], "ndcg@10": [math.nan] * 8})
    for row in cand.per_query:  # as a saved file holds a NaN: the metric's failure
        del row.metrics["ndcg@10"]
        row.metric_errors["ndcg@10"] = "the judge timed out"
    c = compare(base, cand, n_resamples=200)
    assert c.metrics == ("ap",)
    assert "rr is not compared: absent from run 'cand'" in c.warnings
    assert "ndcg@10 is not compared: failed on every case (8 of 8) in run 'cand'" \
        in c.warnings


def test_a_case_whose_call_failed_does_not_hide_the_metrics_of_the_others() -> None:
    base = _run("base", {"ap": BASE_NDCG})
    cand = RunResult(name="cand", per_query=[
        CaseResult(q, None, {"ap": 0.1 * i} if i else {},
                   error="target call failed: timeout" if i == 0 else None)
        for i, q in enumerate(IDS)])
    c = compare(base, cand, n_resamples=200, allow_incomplete=True)
    assert c.metrics == ("ap",)
    assert c.get("ap").n_queries == 7


def test_when_no_metric_can_be_compared_the_refusal_says_why_for_each(tmp_path: Path
                                                                     ) -> None:
    base, cand = tmp_path / "base.jsonl", tmp_path / "cand.jsonl"
    _run("base", {"ndcg@10": BASE_NDCG, "mrr": FLAT}).save(base)
    _run("cand", {"ndcg@10": CAND_NDCG, "recall@100": FLAT}).save(cand)
    with pytest.raises(ComparisonError) as caught:
        compare(base, cand, n_resamples=200)
    message = str(caught.value)
    for part in (f"ndcg@10: errored on 1 of 8 cases in {cand}: run 'cand' (first 'q0'",
                 f"mrr: absent from {cand}: run 'cand'",
                 f"recall@100: absent from {base}: run 'base'", "--allow-incomplete"):
        assert part in message, message
    res = CliRunner().invoke(app, ["compare", str(base), str(cand)])
    assert res.exit_code == 2 and f"error: {message}" in res.stderr


def test_the_collections_name_a_metric_one_of_them_lacks() -> None:
    def pair(metrics: list[str], last: float = 0.9) -> tuple[RunResult, RunResult]:
        return (_run("a", dict.fromkeys(metrics, BASE_NDCG)),
                _run("b", {key: [*CAND_NDCG[1:], last] for key in metrics}))

    m = meta_compare({"x": pair(["ap", "rr"]), "y": pair(["ap"], 0.8)})
    assert m.metrics == ("ap",)
    assert "rr is not pooled: collection(s) 'y' do not compare it" in m.warnings
    with pytest.raises(ComparisonError) as caught:
        meta_compare({"x": pair(["ap"]), "y": pair(["rr"])})
    assert "'x' compares ap; 'y' compares rr" in str(caught.value)


def test_a_power_pilot_names_the_metric_it_leaves_out(tmp_path: Path) -> None:
    base, cand = tmp_path / "base.jsonl", tmp_path / "cand.jsonl"
    _run("base", {"ndcg@10": BASE_NDCG, "recall@100": BASE_NDCG}).save(base)
    _run("cand", {"ndcg@10": CAND_NDCG, "recall@100": FLAT}).save(cand)
    plan = plan_power(base, cand, n=[8], effects=[0.05], simulate=False)
    assert [p.metric for p in plan.plans] == ["recall@100"]
    assert any(w.startswith("ndcg@10 is not compared: errored on 1 of 8") for w in
               plan.warnings)
