"""The public result objects print readably: ``repr`` of a ``RunResult``, a
``Comparison``, a ``MetricComparison`` and a ``GateReport`` is one line that names what it
holds (not thousands of ranked ids), and ``to_html()`` without a path returns the report's
text, the same text ``to_html(path)`` writes."""

from __future__ import annotations

from pathlib import Path

import pytest

import evalkit
from evalkit import RunResult, evaluate_gate
from evalkit.gate.checks import load_checks

DATA = Path(__file__).resolve().parents[1] / "plugins" / "evalkit-retrieval" / "tests" / "data"


@pytest.fixture(scope="module")
def runs() -> tuple[RunResult, RunResult]:
    qrels = DATA / "qrels.test"
    a = evalkit.evaluate_run(DATA / "results.test", qrels, ["ap", "P@5"], name="full")
    b = evalkit.evaluate_run(DATA / "results.trunc", qrels, ["ap", "P@5"], name="trunc")
    return a, b


def test_run_result_repr_names_its_rows_not_its_rankings(runs: tuple[RunResult, ...]) -> None:
    a, _ = runs
    assert sum(len(r.retrieved) for r in a.per_query) == 1500  # 3 queries x 500 documents
    assert repr(a) == "RunResult(name='full', 3 rows, metrics=['ap', 'precision@5'])"


def test_comparison_repr_is_one_short_line(runs: tuple[RunResult, ...]) -> None:
    c = evalkit.compare(*runs, n_resamples=1000)
    text = repr(c)
    assert "\n" not in text and len(text) < 700
    assert text.startswith("Comparison(baseline='full', candidates=['trunc'], metrics=['ap', "
                           "'precision@5'], 3 queries, method='auto', correction='holm'")
    ap = c.get("ap")
    # trec_eval's means: map 0.1785 (out.test) and, trunc scored with -c, 0.1016
    # (out.test.aqc): the difference is -0.0769 up to their rounding to 4 places
    assert abs(ap.diff - (0.1016 - 0.1785)) <= 1e-4
    assert repr(ap).startswith(f"MetricComparison('ap': 'trunc' - 'full' = {ap.diff:+.4f}")
    assert f"W/T/L={ap.wins}/{ap.ties}/{ap.losses}, n=3" in repr(ap)


def test_gate_report_repr_lists_the_verdicts(tmp_path: Path,
                                             runs: tuple[RunResult, ...]) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n  - id: ap-floor\n    metric: ap\n    op: '>='\n"
                      "    threshold: 0.5\n")
    gate = evaluate_gate(load_checks(checks), runs[0])
    # mean AP 0.1785 (out.test: map) is below 0.5: the check fails
    assert repr(gate) == "GateReport(run='full', exit_code=1, checks=[ap-floor: fail (3/3)])"


def test_to_html_without_a_path_returns_the_text(tmp_path: Path,
                                                 runs: tuple[RunResult, ...]) -> None:
    c = evalkit.compare(*runs, n_resamples=1000)
    text = c.to_html()
    assert isinstance(text, str) and text.lstrip().startswith("<!DOCTYPE html>")
    written = c.to_html(tmp_path / "r.html")
    assert written == tmp_path / "r.html" and written.read_text() == text
