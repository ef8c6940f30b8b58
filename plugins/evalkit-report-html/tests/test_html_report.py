"""The ``html`` reporter without a browser: registration, the file's self-containment,
what each chart's specification and the hover's data hold, downsampling past the
threshold, the gate page, and the message when the plugin is missing.

Expected values are counted from the inputs written here (wins and losses by hand from
the per-query values), never read back from the reporter.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from evalkit_report_html import charts
from evalkit_report_html.compare_page import compare_context
from evalkit_report_html.render import render_html, script_json

import evalkit
from evalkit.core.registry import Registry, RegistryError
from evalkit.data.results import QueryResult, RunResult
from evalkit.data.rows import CaseResult
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec
from evalkit.plugins.default import use_registry
from evalkit.report.model import as_report
from evalkit.report.writing import get_reporter, write_reports


def _never(response: Any, case: Any) -> float:
    raise AssertionError("not called")


def runs(n: int, seed: int = 3) -> tuple[RunResult, RunResult]:
    """Two runs over ``n`` queries whose values are a fixed function of the id."""
    base, cand = [], []
    for i in range(n):
        b = ((i * 37 + seed) % 101) / 100
        c = b if i % 7 == 0 else min(1.0, max(0.0, b + (((i * 53) % 41) - 15) / 100))
        base.append(QueryResult(f"q{i:05d}", [], {"ap": b, "ndcg@10": b / 2}))
        cand.append(QueryResult(f"q{i:05d}", [], {"ap": c, "ndcg@10": c / 2 + 0.01}))
    return RunResult("base", base), RunResult("cand", cand)


class _Page(HTMLParser):
    """Collects the attributes that could fetch something (a link within the page, to
    ``#id``, fetches nothing), the JSON of the hover, the charts' figures and the SVG
    elements in each."""

    def __init__(self) -> None:
        super().__init__()
        self.fetching: list[tuple[str, str, str]] = []
        self.hover_json = ""
        self._in_hover = False
        self.figures: dict[str, dict[str, str | None]] = {}
        self.svgs: dict[str, int] = {}
        self._figure: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for name in ("src", "href", "xlink:href", "srcset", "data", "action"):
            value = found.get(name)
            if value and not (name in ("href", "xlink:href") and value.startswith("#")):
                self.fetching.append((tag, name, value))
        if tag == "link":
            self.fetching.append((tag, "link", str(found)))
        self._in_hover = tag == "script" and found.get("id") == "evalkit-hover"
        if tag == "figure" and found.get("id"):
            self._figure = str(found["id"])
            self.figures[self._figure] = found
        if tag == "svg" and self._figure is not None:
            self.svgs[self._figure] = self.svgs.get(self._figure, 0) + 1

    def handle_data(self, data: str) -> None:
        if self._in_hover:
            self.hover_json += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_hover = False
        if tag == "figure":
            self._figure = None


def parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def specs(obj: Any) -> list[dict[str, Any]]:
    """The page's charts before they are drawn: id, kind, Vega-Lite specification, marks."""
    return list(compare_context(as_report(obj))["charts"])


@pytest.fixture(scope="module")
def comparison() -> evalkit.Comparison:
    base, cand = runs(60)
    return evalkit.compare(base, cand, metrics=["ap", "ndcg@10"], n_resamples=500,
                           topics={"q00001": "first <b>query</b> & \"text\"</script>"})


def test_the_plugin_registers_the_html_reporter_through_its_entry_point() -> None:
    spec = get_reporter("html")
    assert spec.suffix == ".html" and spec.render.__module__ == "evalkit_report_html.plugin"
    from evalkit.plugins.discovery import discover

    assert any(p.name == "html" and p.distribution == "evalkit-report-html"
               for p in discover())


def test_one_self_contained_file_that_fetches_nothing(comparison: evalkit.Comparison,
                                                      tmp_path: Path) -> None:
    html = render_html(comparison)
    page = parse(html)
    assert page.fetching == []  # no src=, href=, <link>: nothing to fetch when opened
    # two scripts: the hover's data and the page's own; no plotting library
    assert html.count("<script") == 2 and "vegaEmbed" not in html
    assert "http" not in page.hover_json
    # text from the report is escaped in the HTML and cannot end a <script> early
    assert "first &lt;b&gt;query&lt;/b&gt; &amp; &#34;text&#34;&lt;/script&gt;" in html
    assert "</script>" not in page.hover_json
    assert 'first <b>query</b> & "text"</script>' in json.loads(page.hover_json)["texts"]
    # every chart is an SVG inside its figure, in the page as written
    kinds = [f["data-kind"] for f in page.figures.values()]
    assert kinds == ["forest", *["per-query", "scatter", "distribution"] * 2]
    assert page.svgs == {chart: 1 for chart in page.figures}
    # write_reports and to_html write the same page (with any registered secret masked,
    # as every report is: other tests of this process register some)
    from evalkit.io.redaction import mask

    out = comparison.to_html(tmp_path / "deep" / "c.html")
    assert out.read_text(encoding="utf-8") == mask(html)
    write_reports(comparison, [f"html:{tmp_path / 'w.html'}"])
    assert (tmp_path / "w.html").read_text(encoding="utf-8") == mask(html)
    assert script_json({"a": "</script><!--"}) == '{"a":"\\u003c/script\\u003e\\u003c!--"}'


def test_per_query_plot_one_bar_per_query_sorted_and_coloured_by_outcome(
        comparison: evalkit.Comparison) -> None:
    drawn = specs(comparison)
    base, cand = runs(60)
    b, c = base.scores("ap"), cand.scores("ap")
    per_query = drawn[1]
    values = per_query["spec"]["data"]["values"]
    assert per_query["marks"] == len(values) == 60
    diffs = [v["d"] for v in values]
    assert diffs == sorted(diffs)
    wins = sum(1 for q in b if c[q] - b[q] > 1e-12)
    losses = sum(1 for q in b if c[q] - b[q] < -1e-12)
    outcomes = [v["o"] for v in values]
    assert (outcomes.count(charts.WIN), outcomes.count(charts.TIE),
            outcomes.count(charts.LOSS)) == (wins, 60 - wins - losses, losses)
    row = comparison.get("ap")
    assert (wins, losses) == (row.wins, row.losses)
    # the hover over bar k: its query's id, text, both scores and difference
    hover = json.loads(parse(render_html(comparison)).hover_json)
    at, order = hover["charts"][per_query["id"]]
    metric, base_name, cand_name, bi, ci, di, where = hover["rows"][str(at)]
    assert (metric, base_name, cand_name, where) == ("ap", "base", "cand", None)
    for k, v in enumerate(values):
        q = hover["ids"][order[k]]
        assert v["d"] == pytest.approx(c[q] - b[q], abs=1e-6)
        assert hover["series"][bi][order[k]] == f"{b[q]:.4f}"
        assert hover["series"][ci][order[k]] == f"{c[q]:.4f}"
        assert hover["series"][di][order[k]] == f"{c[q] - b[q]:+.4f}"
    assert hover["texts"][hover["ids"].index("q00001")].startswith("first <b>query</b>")
    scatter = drawn[2]["spec"]
    diagonal, points = scatter["layer"]
    assert points["mark"]["type"] == "circle" and len(points["data"]["values"]) == 60
    assert hover["charts"][drawn[2]["id"]] == [at, None]  # the points in the row's order
    assert [x for p in points["data"]["values"] for x in (p["b"], p["c"])] == pytest.approx(
        [x for q in hover["ids"] for x in (b[q], c[q])], abs=1e-6)
    (line,) = diagonal["data"]["values"]
    assert line["x"] == line["y"] and line["x2"] == line["y2"]
    dist = drawn[3]["spec"]["layer"]
    counts = row.distribution.counts  # type: ignore[union-attr]
    # 200 bins merged 4 by 4 into 50; empty ones draw nothing; no resample is lost
    assert len(counts) == 200
    bars = dist[0]["data"]["values"]
    assert [v["n"] for v in bars] == [n for n in (sum(counts[i:i + 4])
                                                  for i in range(0, 200, 4)) if n]
    assert sum(v["n"] for v in bars) == sum(counts) == 500
    assert dist[1]["data"]["values"][0]["x"] == pytest.approx(row.diff, abs=1e-6)


def test_merged_bins_keep_every_count_and_the_outer_edges() -> None:
    edges = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    assert charts.merge_bins(edges, [1, 2, 3, 4, 5, 6, 7], most=3) == (
        [0.0, 0.3, 0.6, 0.7], [6, 15, 7])
    assert charts.merge_bins(edges[:3], [4, 5], most=50) == ([0.0, 0.1, 0.2], [4, 5])


def test_forest_plot_every_difference_and_interval(comparison: evalkit.Comparison) -> None:
    (forest, *_) = specs(comparison)
    values = forest["spec"]["data"]["values"]
    assert [v["g"] for v in values] == ["ap", "ndcg@10"]
    for v, r in zip(values, comparison, strict=True):
        assert (v["d"], v["lo"], v["hi"]) == pytest.approx((r.diff, r.ci_low, r.ci_high),
                                                           abs=1e-6)
        assert v["s"] == ("significant" if r.significant else "not significant")
        # what a hover over its mark says (the mark's aria-label)
        # above the floor of 500 resamples (1 / 501), so written with 4 decimals
        assert r.p_adjusted is not None and r.p_adjusted > 1 / 501
        assert v["tip"] == (f"{r.metric}: {r.diff:+.4f} [{r.ci_low:+.4f}, {r.ci_high:+.4f}],"
                            f" p {r.p_adjusted:.4f}")
    assert f'aria-label="{values[0]["tip"]}"' in render_html(comparison)


def test_past_the_threshold_plots_are_downsampled_and_the_page_says_so() -> None:
    base, cand = runs(3001)
    c = evalkit.compare(base, cand, metrics=["ap"], n_resamples=200)
    html = render_html(c)
    drawn = {s["id"]: s for s in specs(c)}
    kinds = [s["kind"] for s in drawn.values()]
    assert kinds == ["forest", "per-query", "density", "distribution"]
    assert [f["data-kind"] for f in parse(html).figures.values()] == kinds
    per_query = next(s for s in drawn.values() if s["kind"] == "per-query")
    values = per_query["spec"]["data"]["values"]
    assert len(values) == per_query["marks"] == charts.MAX_MARKS
    diffs = c.get("ap").differences
    assert values[0]["d"] == pytest.approx(min(diffs), abs=1e-6)
    assert values[-1]["d"] == pytest.approx(max(diffs), abs=1e-6)
    density = next(s for s in drawn.values() if s["kind"] == "density")
    assert sum(cell["n"] for cell in density["spec"]["layer"][0]["data"]["values"]) == 3001
    assert "More than 2,000 queries" in html and "2,000 of 3,001 queries shown" in html
    # the table of every query stays complete
    table = html[html.index('id="query-table"'):]
    assert len(re.findall(r'<tr><td class="id">q\d{5}</td>', table)) == 3001


def test_downsampling_positions() -> None:
    assert charts.sorted_positions(5, 10) == [0, 1, 2, 3, 4]
    assert charts.sorted_positions(10, 4) == [0, 3, 6, 9]
    picked = charts.sorted_positions(10_000, 2000)
    assert len(set(picked)) == 2000 and picked[0] == 0 and picked[-1] == 9999


@pytest.fixture
def reg() -> Iterator[Registry]:
    with use_registry(plugins=False) as r:
        r.register_metric("helpfulness", higher_is_better=True)(_never)
        yield r


def test_gate_page_checks_coverage_errored_cases_and_judge_reasons(reg: Registry) -> None:
    def case(i: int, score: float | None, error: str | None = None) -> CaseResult:
        details = {} if score is None else {"helpfulness": {
            "score": int(score * 4), "reason": f"reason <{i}>", "model": "claude-x"}}
        return CaseResult(f"c{i}", None, {} if score is None else {"helpfulness": score},
                          error=error, details=details)

    run = RunResult("cand", [case(1, 0.75), case(2, 1.0), case(3, None, "HTTP 500 from x"),
                             case(4, 0.5)])
    base = RunResult("base", [case(1, 0.5), case(2, 0.75), case(3, 0.25), case(4, 0.5)])
    checks = [CheckSpec("helpful", "helpfulness", op=">=", threshold=0.5),
              CheckSpec("no_regression", "helpfulness",
                        vs_baseline="no_significant_regression",
                        alpha=0.05, level="warn")]
    gate = evaluate_gate(checks, run, base, n_resamples=200)
    assert gate.run is run
    html = render_html(gate)
    assert parse(html).fetching == []
    assert f"gate {gate.status}" in html and f"(exit {gate.exit_code})" in html
    for r in gate.results:
        assert f'data-check="{r.check.id}"' in html and r.coverage in html
    assert "HTTP 500 from x" in html and "reason &lt;1&gt;" in html
    assert html.count("claude-x") == 3  # the three graded cases
    assert "&gt;= 0.5" in html  # the threshold rule, escaped


def test_gate_page_tolerates_fields_a_gate_may_gain(reg: Registry) -> None:
    run = RunResult("cand", [QueryResult("a", [], {"helpfulness": 0.4})])
    report = evaluate_gate([CheckSpec("t", "helpfulness", op=">=", threshold=0.5)],
                           run).to_report()
    from dataclasses import replace

    grown = replace(report, data={**report.data, "incomplete": ["2 cases have no row"],
                                  "missing": ["case b"]})
    html = render_html(grown)
    assert "Incomplete evidence" in html and "2 cases have no row" in html


def test_a_missing_plugin_names_the_distribution(tmp_path: Path) -> None:
    base, cand = runs(20)
    c = evalkit.compare(base, cand, metrics=["ap"], n_resamples=200)
    with use_registry(plugins=False), pytest.raises(RegistryError) as err:
        c.to_html(tmp_path / "x.html")
    message = str(err.value)
    assert "unknown reporter 'html'" in message and "evalkit-report-html" in message
    assert "pip install -e plugins/evalkit-report-html" in message
    assert not (tmp_path / "x.html").exists()


def test_nan_free_json_for_reports_without_per_query_values() -> None:
    from evalkit.report.comparison_rows import report_from_comparison

    report = report_from_comparison([{"metric": "ap", "candidate": "a", "baseline": "b",
                                      "diff": 0.1, "ci_low": 0.0, "ci_high": 0.2,
                                      "p_value": 0.04, "significant": True,
                                      "higher_is_better": True}])
    html = render_html(report)
    (forest,) = specs(report)
    assert forest["kind"] == "forest"
    assert "carries no per-query values" in html
    assert not math.isnan(forest["spec"]["data"]["values"][0]["d"])


# ---------------------------------------------------------------- the command line
REPO = Path(__file__).resolve().parents[3]


def test_cli_compare_and_gate_write_html_reports(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evalkit.cli.app import app

    vaswani = REPO / "examples" / "vaswani"
    run = evalkit.evaluate_run(vaswani / "data" / "runs" / "run.vaswani.bm25.txt",
                               vaswani / "data" / "qrels",
                               ["ap", "ndcg@10", "rr", "recall@100", "precision@10"])
    run.name = "bm25"
    artifact = run.save(tmp_path / "bm25.jsonl")
    cli = CliRunner()
    gate_html = tmp_path / "reports" / "gate.html"
    res = cli.invoke(app, ["gate", "--checks", str(REPO / "examples" / "gate" / "checks.yaml"),
                           "--run", str(artifact), "--baseline",
                           str(REPO / "examples" / "gate" / "baseline.jsonl"),
                           "--report", f"html:{gate_html}", "-B", "200"])
    assert res.exit_code in (0, 1), res.output
    html = gate_html.read_text(encoding="utf-8")
    for check in ("controls_hold", "no_ndcg_regression", "no_ap_regression", "recall_floor"):
        assert f'data-check="{check}"' in html
    assert "5/5 cases" in html and "93/93 cases" in html
    compare_html = tmp_path / "compare.html"
    res = cli.invoke(app, ["compare", str(REPO / "examples" / "gate" / "baseline.jsonl"),
                           str(artifact), "-m", "ap", "-B", "200", "--topics",
                           str(vaswani / "data" / "query-text.trec"), "--report",
                           f"html:{compare_html}"])
    assert res.exit_code == 0, res.output
    html = compare_html.read_text(encoding="utf-8")
    assert 'id="summary-table"' in html and "DIELECTRIC CONSTANT" in html
    # a missing reporter is refused before any work, naming the distribution
    with use_registry(plugins=False):
        res = cli.invoke(app, ["compare", str(artifact), str(artifact), "--report",
                               f"html:{tmp_path / 'x.html'}"])
    assert res.exit_code == 2 and "evalkit-report-html" in res.output


def test_each_warning_once_with_the_rows_it_concerns() -> None:
    from dataclasses import replace

    from evalkit.report.comparison_rows import report_from_comparison

    rows = [{"metric": m, "candidate": c, "baseline": "b", "diff": 0.1, "ci_low": 0.0,
             "ci_high": 0.2, "p_value": 0.04, "significant": True, "higher_is_better": True}
            for m in ("ap", "rr") for c in ("c1", "c2")]
    report = report_from_comparison(rows)
    everywhere, c2, skewed = ("run 'b' lacks 2 queries", "run 'c2' lacks 1 query",
                              "differences are skewed")
    said: dict[tuple[str, str | None], tuple[str, ...]] = {
        ("ap", "c1"): (everywhere,), ("ap", "c2"): (everywhere, c2, skewed),
        ("rr", "c1"): (everywhere, skewed), ("rr", "c2"): (everywhere, c2)}
    report = replace(report, rows=tuple(replace(r, warnings=said[r.metric, r.candidate])
                                        for r in report.rows),
                     notes=(everywhere, c2, f"ap (c2 vs b); rr (c1 vs b): {skewed}",
                            "a note of its own"))
    context = compare_context(report)
    assert context["warnings"] == [
        {"text": everywhere, "where": "every metric and candidate"},
        {"text": c2, "where": "c2: every metric"},
        {"text": skewed, "where": "c2: ap; c1: rr"}]
    # the notes that only repeat a warning are not said twice
    assert context["notes"] == ["a note of its own"]
    html = render_html(report)
    for text in (everywhere, c2, skewed):
        assert html.count(text.replace("'", "&#39;")) == 1
    # one pair: no need to say which rows
    single = replace(report_from_comparison(rows[:1]), notes=())
    single = replace(single, rows=(replace(single.rows[0], warnings=(skewed,)),))
    assert compare_context(single)["warnings"] == [{"text": skewed, "where": ""}]
