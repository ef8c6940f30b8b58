"""Degenerate comparisons in the reports: where every per-query difference is equal and
the degenerate-input rule (docs/statistics.md) finds no significance, no report prints a
p-value that reads as significant beside "not significant"; the p cells say why.

Expected values by hand: the paired bootstrap (``method="bootstrap"``) gives
``p = 1/(B+1)`` to constant non-zero differences; the sign-flip test's smallest p on
``n`` equal differences is ``2**(1-n)`` two-sided and ``2**-n`` one-sided, so at alpha
0.05 it can be significant from n = 6 (two-sided: 2**-5 = 0.03125) or n = 5 (one-sided:
2**-5), never below.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit import RunResult, compare
from evalkit.cli.app import app
from evalkit.data.rows import QueryResult
from evalkit.report.comparison_rows import report_from_comparison
from evalkit.report.writing import render_report
from evalkit.stats import paired_bootstrap, paired_test

B = 10_000
FLOOR = 1 / (B + 1)


def runs(n: int, step: float = -0.5) -> tuple[RunResult, RunResult]:
    ids = [f"q{i}" for i in range(n)]
    base = RunResult("base", [QueryResult(q, [], {"ap": 1.0}) for q in ids])
    cand = RunResult("cand", [QueryResult(q, [], {"ap": 1.0 + step}) for q in ids])
    return base, cand


@pytest.mark.parametrize("n", [1, 2, 5])
def test_too_few_equal_differences_show_why_instead_of_a_p(n: int) -> None:
    c = compare(*runs(n), metrics=["ap"], method="bootstrap", n_resamples=B)
    (r,) = c.results
    assert r.p_value == pytest.approx(FLOOR) and r.p_adjusted == pytest.approx(FLOOR)
    assert not r.significant
    assert r.p_note == "n too small"
    assert "cannot reach p < 0.05" in r.warnings[-1]
    assert c.to_json()["comparisons"][0]["p_note"] == "n too small"
    report = c.to_report()
    (row,) = report.rows
    assert row.p_display() == row.p_display(adjusted=True) == "n too small"
    assert "p not shown: n too small" in row.detail and "0.0001" not in row.detail
    for fmt in ("console", "markdown", "junit", "json", "html"):
        text = render_report(c, fmt)
        assert "0.0001" not in text.replace("9.999000099990002e-05", ""), fmt
        assert "n too small" in text, fmt
    data = json.loads(render_report(c, "json"))
    assert data["rows"][0]["p_note"] == "n too small"
    assert data["rows"][0]["p_value"] == pytest.approx(FLOOR)  # the number stays in JSON
    system_out = ET.fromstring(render_report(c, "junit")).find(".//testcase/system-out")
    assert system_out is not None and "p not shown: n too small" in (system_out.text or "")


def test_six_equal_differences_are_significant_and_show_their_p() -> None:
    c = compare(*runs(6), metrics=["ap"], method="bootstrap", n_resamples=B)
    (r,) = c.results
    assert r.significant and r.p_note is None  # 2**-5 = 0.03125 < 0.05
    (row,) = c.to_report().rows
    assert row.p_display() == "< 0.0001"


def test_a_randomization_test_on_one_query_says_n_too_small() -> None:
    c = compare(*runs(1), metrics=["ap"], n_resamples=B)
    (r,) = c.results
    assert r.p_value == 1.0 and r.p_note == "n too small"  # no paired test with one pair
    assert c.to_report().rows[0].p_display() == "n too small"


@pytest.mark.parametrize(("alternative", "n", "significant"), [
    ("less", 1, False), ("less", 4, False), ("less", 5, True),
    ("greater", 5, False),  # against the alternative: p = 1
])
def test_one_sided_bootstrap_on_equal_differences_follows_the_sign_flip_rule(
        alternative: str, n: int, significant: bool) -> None:
    base, cand = runs(n)  # candidate - baseline = -0.5 on every query
    r = paired_test(cand, base, "ap", method="bootstrap", alternative=alternative,
                    n_resamples=B)
    assert r.p_value == pytest.approx(FLOOR if alternative == "less" else 1.0)
    assert r.significant is significant
    c = compare(base, cand, metrics=["ap"], method="bootstrap", alternative=alternative,
                n_resamples=B)
    assert c.results[0].significant is significant


def test_report_from_bare_results_shows_why() -> None:
    base, cand = runs(1)
    r = paired_bootstrap(cand, base, "ap", n_resamples=B)
    assert r.p_value == pytest.approx(FLOOR) and not r.significant
    (row,) = report_from_comparison([r]).rows
    assert row.p_display() == "n too small"


def test_evalkit_compare_prints_why(tmp_path: Path) -> None:
    base, cand = runs(1)
    paths = [base.save(tmp_path / "base.jsonl"), cand.save(tmp_path / "cand.jsonl")]
    result = CliRunner().invoke(app, ["compare", *map(str, paths), "-m", "ap", "--test",
                                      "bootstrap", "--report", f"markdown:{tmp_path / 'r.md'}"])
    assert result.exit_code == 0, result.output
    assert "1 query paired by id" in result.output
    line = next(x for x in result.output.splitlines() if x.startswith("ap "))
    assert line.count("n too small") == 2 and line.split()[-2:] == ["no", "0/0/1"]
    assert "< 0.0001" not in result.output
    markdown = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "| n too small | n too small | no significant difference | 1 query |" in markdown


def test_evalkit_compare_bootstrap_on_three_unequal_differences_says_n_too_small(
        tmp_path: Path) -> None:
    # differences 0.1, 0.2, 0.1: not all equal, but the exact sign-flip p is 0.25 at best
    base = RunResult("base", [QueryResult(f"q{i}", [], {"ap": 0.5}) for i in range(3)])
    cand = RunResult("cand", [QueryResult(f"q{i}", [], {"ap": 0.5 + x})
                              for i, x in enumerate((0.125, 0.25, 0.125))])
    paths = [base.save(tmp_path / "base.jsonl"), cand.save(tmp_path / "cand.jsonl")]
    result = CliRunner().invoke(app, ["compare", *map(str, paths), "-m", "ap", "--test",
                                      "bootstrap", "--correction", "none"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("ap "))
    # was: [+0.1250, +0.2500]  < 0.0001  yes  3/0/0
    assert "[+0.1250, +0.2500]" in line and "n too small" in line
    assert line.split()[-2:] == ["no", "3/0/0"] and "< 0.0001" not in result.output
    assert "with 3 queries no exact paired test can reach p < 0.05" in result.output
    c = compare(base, cand, metrics=["ap"], method="bootstrap", n_resamples=B)
    (r,) = c.results
    assert r.p_note == "n too small" and not r.significant
    (row,) = c.to_report().rows
    assert "p not shown: n too small (too few queries" in row.detail
