"""The HTML report's slice table and forest plots, in headless Chromium.

A comparison by tag (``evalkit compare --by tag --tags FILE`` on the synthetic TREC
collection of :mod:`evalkit_report_html.testing`, the tags written here) shows a slice
table whose cells are the comparison's own slice rows, and a forest plot with a point
per slice and metric; a comparison over several collections shows a forest plot with a
point per collection and the pooled estimate. Both are SVG in the file: they are there
with JavaScript off. The pooled-effect round trip (``MetaComparison.from_json``) and its
DataFrame are checked here too, on the same numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from evalkit_report_html.browser import browser, unavailable
from evalkit_report_html.testing import write_collection
from typer.testing import CliRunner

import evalkit
from evalkit.cli.app import app
from evalkit.comparison.meta_model import MetaComparison
from evalkit.data.results import QueryResult, RunResult

browser_test = pytest.mark.skipif(unavailable() is not None,
                                  reason=f"browser test skipped: {unavailable()}")


def by_tag_report(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    col = write_collection(tmp_path / "c", systems=2, queries=60, lacking={})
    tags = tmp_path / "tags.tsv"
    tags.write_text("".join(f"{q}\t{'short' if int(q) <= 20 else 'long'}\n"
                            + (f"{q}\tfirst\n" if int(q) <= 5 else "")
                            for q in col.query_ids))
    html, js = tmp_path / "report.html", tmp_path / "report.json"
    res = CliRunner().invoke(app, [
        "compare", *map(str, col.runs), "--qrels", str(col.qrels), "-m", "ap,ndcg@10",
        "--by", "tag", "--tags", str(tags), "--resamples", "500",
        "--report", f"html:{html}", "--report", f"json:{js}"])
    assert res.exit_code == 0, res.output
    return html, json.loads(js.read_text())


@browser_test
def test_slice_table_and_forest_plot(tmp_path: Path) -> None:
    html, doc = by_tag_report(tmp_path)
    slices = doc["slices"]
    assert [(s["slice"], s["n_queries"]) for s in slices[::2]] == [
        ("short", 20), ("first", 5), ("long", 40)]
    with browser() as b:
        for javascript in (True, False):
            result, page = b.open(html, keep=True, javascript=javascript)
            try:
                assert result.console_errors == []
                rows = page.locator("#slice-table tbody tr")
                assert rows.count() == len(slices) == 6
                for i, s in enumerate(slices):
                    cells = rows.nth(i).locator("td").all_inner_texts()
                    assert cells[:3] == [s["slice"], s["metric"], str(s["n_queries"])]
                    assert cells[5] == f"{s['diff']:+.4f}"
                    assert cells[-1] == s["method"]  # the test that ran on this slice
                headers = page.locator("#slice-table thead th").all_inner_texts()
                assert headers[-1] == "test"
                figure = page.locator("#by-tag figure.chart[data-kind=forest]")
                assert figure.is_visible()
                svg = figure.locator("svg")
                assert svg.count() == 1
                # a point per slice and metric, drawn before any script runs
                points = figure.locator("g.mark-symbol.role-mark > path")
                assert points.count() == 6
                labels = figure.locator("svg").inner_html()
                for name in ("first", "short", "long"):
                    assert name in labels
            finally:
                page.close()


def _run(name: str, ids: list[str], vals: np.ndarray) -> RunResult:
    return RunResult(name=name, per_query=[
        QueryResult(query_id=q, retrieved=[], metrics={"ap": float(v)})
        for q, v in zip(ids, vals, strict=True)])


def meta() -> MetaComparison:
    rng = np.random.default_rng(3)
    cols = {}
    for k, shift in enumerate([0.02, 0.06, -0.01]):
        ids = [f"c{k}q{i}" for i in range(30)]
        a = rng.uniform(0, 1, 30)
        cols[f"col{k}"] = (_run("base", ids, a),
                           _run("cand", ids, np.clip(a + rng.normal(shift, 0.1, 30), 0, 1)))
    return evalkit.meta_compare(cols, metrics=["ap"])


def test_meta_comparison_round_trips_and_tabulates() -> None:
    m = meta()
    doc = m.to_json()
    back = MetaComparison.from_json(json.dumps(doc))
    assert back.to_json() == doc and back.results == m.results
    with pytest.raises(ValueError, match="not an evalkit meta_comparison"):
        MetaComparison.from_json({"type": "comparison"})
    df = m.to_pandas()
    assert list(df["row"]) == ["collection"] * 3 + ["pooled"]
    p = m.results[0]
    assert list(df["effect"]) == [*(c.effect for c in p.collections), p.estimate]
    assert df["weight"].iloc[:3].sum() == pytest.approx(1.0)
    assert df["tau2"].iloc[3] == p.tau2 and df["p_value"].iloc[3] == p.p_value


@browser_test
def test_collections_forest_plot(tmp_path: Path) -> None:
    m = meta()
    html = tmp_path / "meta.html"
    from evalkit.report.writing import write_report

    write_report(m, "html", html)
    with browser() as b:
        _, page = b.open(html, keep=True, javascript=False)
        try:
            figure = page.locator("#collections figure.chart[data-kind=forest]")
            assert figure.is_visible()
            # three collections and the pooled estimate
            points = figure.locator("g.mark-symbol.role-mark > path")
            assert points.count() == 4
            text = figure.inner_html()
            assert "pooled (random effects)" in text and "col1" in text
        finally:
            page.close()
