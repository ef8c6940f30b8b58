"""trec_eval's geometric means (gm_map, gm_bpref): per-query rows hold ln(max(AP, 1e-5))
(m_gm_map.c), and every mean shown or gated is exp of their mean, trec_eval's value.

Expected values: trec_eval 10.0's own output for the bundled Vaswani BM25 run
(examples/vaswani/data/expected), and a three-query fixture whose APs are worked out by
hand below; the paired difference is the difference of mean logs, exp of which is the
ratio of the geometric means.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit import compare, evaluate_run
from evalkit.cli.app import app
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec

REPO = Path(__file__).resolve().parents[1]
VASWANI = REPO / "examples" / "vaswani" / "data"
EXPECTED = VASWANI / "expected" / "trec_eval-10.0.all_trec.q.bm25.txt"

# q1: relevant d1, d2; q2: d3; q3: d4
QRELS = "q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\nq3 0 d4 1\n"
# A: q1 d1 dx d2 -> AP (1/1 + 2/3) / 2 = 5/6; q2 dy d3 -> 1/2; q3 dz -> 0 (ln 1e-5)
RUN_A = ("q1 Q0 d1 1 3 A\nq1 Q0 dx 2 2 A\nq1 Q0 d2 3 1 A\n"
         "q2 Q0 dy 1 2 A\nq2 Q0 d3 2 1 A\nq3 Q0 dz 1 1 A\n")
# B: q1 d1 d2 -> 1; q2 d3 -> 1; q3 dz d4 -> 1/2
RUN_B = ("q1 Q0 d1 1 2 B\nq1 Q0 d2 2 1 B\nq2 Q0 d3 1 1 B\n"
         "q3 Q0 dz 1 2 B\nq3 Q0 d4 2 1 B\n")
LOG_A = [math.log(5 / 6), math.log(0.5), math.log(1e-5)]
LOG_B = [0.0, 0.0, math.log(0.5)]
GM_A = math.exp(sum(LOG_A) / 3)
GM_B = math.exp(sum(LOG_B) / 3)  # 0.5 ** (1/3)
MEAN_LOG_DIFF = (sum(LOG_B) - sum(LOG_A)) / 3


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    q, a, b = tmp_path / "qrels", tmp_path / "run.A", tmp_path / "run.B"
    q.write_text(QRELS)
    a.write_text(RUN_A)
    b.write_text(RUN_B)
    return q, a, b


def _trec_eval_all(name: str) -> float:
    for line in EXPECTED.read_text().splitlines():
        parts = line.split()
        if parts[:2] == [name, "all"]:
            return float(parts[2])
    raise AssertionError(name)


def test_run_mean_is_trec_evals_geometric_mean_on_vaswani() -> None:
    run = evaluate_run(VASWANI / "runs" / "run.vaswani.bm25.txt", VASWANI / "qrels",
                       ["gm_map", "gm_bpref", "map"])
    assert round(run.mean("gm_map"), 4) == _trec_eval_all("gm_map")  # 0.1307
    assert round(run.mean("gm_bpref"), 4) == _trec_eval_all("gm_bpref")  # 0.8107
    assert round(run.means()["gm_map"], 4) == _trec_eval_all("gm_map")
    assert round(run.mean("map"), 4) == _trec_eval_all("map")  # an arithmetic mean still


def test_hand_computed_geometric_means_and_per_query_logs(files: tuple[Path, Path, Path]
                                                          ) -> None:
    q, a, _ = files
    run = evaluate_run(a, q, ["gm_map"])
    assert [r.metrics["gm_map"] for r in run.per_query] == pytest.approx(LOG_A)
    assert run.mean("gm_map") == pytest.approx(GM_A)


def test_comparison_means_are_geometric_and_diff_is_of_mean_logs(
        files: tuple[Path, Path, Path]) -> None:
    q, a, b = files
    c = compare(a, b, qrels=q, metrics=["gm_map"], n_resamples=200)
    (r,) = c.results
    assert r.baseline_mean == pytest.approx(GM_A)
    assert r.candidate_mean == pytest.approx(GM_B)
    assert r.diff == pytest.approx(MEAN_LOG_DIFF)
    report = c.to_report()
    (row,) = report.rows
    assert row.name == "gm_map [diff: mean ln]"
    assert row.value == pytest.approx(GM_B)
    assert row.reference_value == pytest.approx(GM_A)
    ratio = f"{GM_B / GM_A:.4g}"
    assert any(f"ratio of geometric means is exp(diff) = {ratio}" in n for n in report.notes)
    assert f"ratio of geometric means B/A = {ratio}" in row.detail


@pytest.mark.parametrize("fmt", ["json", "markdown", "latex", "html"])
def test_cli_reporters_show_geometric_means(files: tuple[Path, Path, Path], fmt: str,
                                            tmp_path: Path) -> None:
    q, a, b = files
    out = tmp_path / f"report.{fmt}"
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "--qrels", str(q), "-m",
                                   "gm_map", "--resamples", "200", "--report",
                                   f"{fmt}:{out}"])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    if fmt == "json":
        (row,) = json.loads(text)["rows"]
        assert row["value"] == pytest.approx(GM_B)
        assert row["reference_value"] == pytest.approx(GM_A)
        assert row["difference"] == pytest.approx(MEAN_LOG_DIFF)
    else:
        assert f"{GM_A:.4f}" in text and f"{GM_B:.4f}" in text
        assert f"{sum(LOG_A) / 3:.4f}" not in text  # the raw mean of logs is never shown
    # the console table
    assert f"{GM_A:.4f}" in res.output and "gm_map [diff: mean ln]" in res.output


def test_gate_threshold_and_baseline_value_are_geometric_means(
        files: tuple[Path, Path, Path]) -> None:
    q, a, b = files
    run_a, run_b = evaluate_run(a, q, ["gm_map"]), evaluate_run(b, q, ["gm_map"])
    floor = CheckSpec("gm_floor", "gm_map", op=">=", threshold=0.02)
    (res,) = evaluate_gate([floor], run_a).results
    assert res.observed == pytest.approx(GM_A)  # 0.0188 < 0.02 (mean of logs: -4.27)
    assert res.verdict == "fail"
    noreg = CheckSpec("gm_noreg", "gm_map", vs_baseline="no_significant_regression")
    (res,) = evaluate_gate([noreg], run_b, run_a, n_resamples=200).results
    assert res.observed == pytest.approx(GM_B)
    assert res.comparison is not None
    assert res.comparison.baseline_value == pytest.approx(GM_A)
    assert res.comparison.difference == pytest.approx(MEAN_LOG_DIFF)


def test_gate_report_says_the_difference_is_of_mean_logs(
        files: tuple[Path, Path, Path]) -> None:
    from evalkit.report.model import report_from_gate

    q, a, b = files
    run_a, run_b = evaluate_run(a, q, ["gm_map"]), evaluate_run(b, q, ["gm_map"])
    noreg = CheckSpec("gm_noreg", "gm_map", vs_baseline="no_significant_regression")
    report = report_from_gate(evaluate_gate([noreg], run_b, run_a, n_resamples=200))
    (row,) = report.rows
    assert row.value == pytest.approx(GM_B) and row.reference_value == pytest.approx(GM_A)
    assert row.difference == pytest.approx(MEAN_LOG_DIFF)
    ratio = f"{GM_B / GM_A:.4g}"
    assert any(n.startswith("gm_noreg: the means are geometric means")
               and f"exp(diff) = {ratio}" in n for n in report.notes)
