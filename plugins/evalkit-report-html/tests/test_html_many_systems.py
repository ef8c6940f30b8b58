"""The HTML report of many systems, read as a reader would: 7 TREC runs x 5 metrics x 225
queries (a synthetic collection from one seed, :mod:`evalkit_report_html.testing`)
compared with ``evalkit compare ... --report html:PATH``, opened in headless Chromium at a
1,400 px wide window, once with JavaScript and once without.

It asserts: the file is under 2.5 MB; every column of the summary table lies inside its
box (or the box scrolls with the metric and candidate columns fixed); each warning the
command printed is on the page once, with the rows it concerns; every link of the
contents leads to an element of the page; the filter hides the rows, sections and
columns of other metrics and candidates; without JavaScript every chart is an SVG with a
size, and the filter (which needs the script) is not shown. Screenshots are saved in the
temporary folder.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from evalkit_report_html.browser import browser, unavailable
from evalkit_report_html.testing import write_collection

from evalkit.testing.child_runs import EVALKIT_COMMAND

METRICS = ["ap", "ndcg@10", "precision@10", "recall@100", "rr"]
CANDIDATES = ["sys2", "sys3", "sys4", "sys5", "sys6", "sys7"]
WIDTH = 1400
#: The size the report of this comparison stays under.
MOST_BYTES = 2_500_000

#: (one of the suite's longest modules: handed to a worker first, tests/conftest.py)
pytestmark = [pytest.mark.skipif(unavailable() is not None,
                                 reason=f"browser test skipped: {unavailable()}"),
              pytest.mark.schedule_first]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The report's path and the warnings ``evalkit compare`` printed."""
    folder = tmp_path_factory.mktemp("many-systems")
    c = write_collection(folder / "collection")
    path = folder / "report.html"
    proc = subprocess.run([*EVALKIT_COMMAND, "compare", *map(str, c.runs), "--qrels",
                           str(c.qrels), "--topics", str(c.topics), "--report",
                           f"html:{path}"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    warnings = [line.removeprefix("warning: ") for line in proc.stderr.splitlines()
                if line.startswith("warning: ")]
    return path, warnings


def test_the_report_of_seven_runs_in_headless_chromium(
        report: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, printed = report
    assert path.stat().st_size < MOST_BYTES
    # the collection's runs lack judged queries: the baseline two, sys7 three
    assert len(printed) == 2
    assert "run 'sys1' lacks 2 of the 225 judged queries (1, 2)" in printed[0]
    assert "run 'sys7' lacks 3 of the 225 judged queries (223, 224, 225)" in printed[1]
    with browser() as b:
        result, page = b.open(path, keep=True, width=WIDTH, height=1000)
        try:
            assert result.console_errors == [] and result.network == []
            page.screenshot(path=str(tmp_path / "top.png"))
            summary_fits(page, tmp_path / "summary.png")
            # in a narrower window the box scrolls and the two columns stay
            page.set_viewport_size({"width": 900, "height": 1000})
            assert summary_fits(page, tmp_path / "summary-900.png") != []
            page.set_viewport_size({"width": WIDTH, "height": 1000})
            warnings_once(page, printed)
            contents_lead_somewhere(page)
            filter_hides_the_others(page, tmp_path)
        finally:
            page.close()
        result, page = b.open(path, keep=True, width=WIDTH, height=1000, javascript=False)
        try:
            charts_without_javascript(page, result.kinds, tmp_path)
        finally:
            page.close()


def summary_fits(page: Any, shot: Path) -> list[str]:
    """Every heading of the summary table lies inside its box's visible part, or the box
    scrolls and the metric and candidate columns stay at its left edge; the headings
    that were not in view."""
    box = page.locator("#summary .wide-table")
    outer = box.bounding_box()
    heads = page.locator("#summary-table thead th")
    assert [h.strip() for h in heads.all_inner_texts()][:2] == ["metric", "candidate"]
    assert page.locator("#summary-table tbody tr").count() == len(METRICS) * len(CANDIDATES)
    cut = []
    for i in range(heads.count()):
        cell = heads.nth(i).bounding_box()
        if cell["x"] < outer["x"] - 0.5 or cell["x"] + cell["width"] > outer["x"] + \
                outer["width"] + 0.5:
            cut.append(heads.nth(i).inner_text())
    box.screenshot(path=str(shot))
    if not cut:
        return cut
    # the box scrolls; scrolled to its end the fixed columns are still at its left
    assert box.evaluate("el => el.scrollWidth > el.clientWidth"), cut
    box.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    for i in (0, 1):
        cell = page.locator("#summary-table tbody tr").first.locator("td").nth(i)
        assert cell.evaluate("el => getComputedStyle(el).position") == "sticky"
        x = cell.bounding_box()["x"]
        assert outer["x"] - 0.5 <= x < outer["x"] + outer["width"] / 3
    last = heads.nth(heads.count() - 1).bounding_box()
    assert last["x"] + last["width"] <= outer["x"] + outer["width"] + 0.5
    box.screenshot(path=str(shot.with_name(shot.stem + "-scrolled.png")))
    box.evaluate("el => { el.scrollLeft = 0; }")
    return cut


def warnings_once(page: Any, printed: list[str]) -> None:
    """Each printed warning is in the page's text once, with the rows it concerns."""
    text = page.locator("body").inner_text()
    for warning in printed:
        assert text.count(warning) == 1, warning
    items = page.locator("#warnings li").all_inner_texts()
    assert len(items) == len(set(items)) == 3
    # the baseline's warning concerns every row; sys7's the five rows of sys7
    assert items[0] == f"{printed[0]} (every metric and candidate)"
    assert items[1] == f"{printed[1]} (sys7: every metric)"
    # the skew guard's note is one item whatever each pair's skewness, with its pairs
    assert items[2].startswith("method 'auto': the non-zero differences are skewed")
    assert items[2].endswith("(" + "; ".join(f"{c}: recall@100" for c in CANDIDATES[:5])
                             + ")")


def contents_lead_somewhere(page: Any) -> None:
    """Every link of the contents names an element of the page; one per row."""
    targets = page.locator("#contents a").evaluate_all(
        "links => links.map(a => a.getAttribute('href'))")
    assert all(t.startswith("#") for t in targets)
    missing = page.evaluate("ids => ids.filter(id => !document.getElementById(id))",
                            [t[1:] for t in targets])
    assert missing == []
    rows = page.locator("#contents a[data-metric]")
    assert rows.count() == len(METRICS) * len(CANDIDATES)
    # the link of ndcg@10 against sys3 leads to that row's section
    link = page.locator('#contents a[data-metric="ndcg@10"][data-candidate="sys3"]')
    section = page.locator(str(link.get_attribute("href")))
    assert section.locator("h2").inner_text() == "ndcg@10 (sys3)"


def visible_summary(page: Any) -> list[tuple[str, str]]:
    rows = page.locator("#summary-table tbody tr:visible")
    return [(rows.nth(i).locator("td").nth(0).inner_text(),
             rows.nth(i).locator("td").nth(1).inner_text()) for i in range(rows.count())]


def filter_hides_the_others(page: Any, shots: Path) -> None:
    """Choosing a metric, then a candidate, leaves only their rows, sections and
    columns."""
    from playwright.sync_api import expect

    assert page.locator("#filter").is_visible()
    page.select_option("#filter-metric", "ndcg@10")
    assert visible_summary(page) == [("ndcg@10", c) for c in CANDIDATES]
    sections = page.locator("section.row:visible h2").all_inner_texts()
    assert sections == [f"ndcg@10 ({c})" for c in CANDIDATES]
    # the table of every query is laid out when scrolled to (content-visibility: auto)
    page.locator("#queries").scroll_into_view_if_needed()
    heads = page.locator("#query-table thead tr:nth-child(2) th:visible")
    assert set(heads.evaluate_all("hs => hs.map(h => h.dataset.metric)")) == {"ndcg@10"}
    # laid out when the browser gets to it: waited for (up to 30 s), not read at once
    expect(heads).to_have_text(["sys1", *(f"Δ {c}" for c in CANDIDATES)],
                               use_inner_text=True, timeout=30_000)
    first = page.locator("#query-table tbody tr").first.locator("td:visible")
    assert first.count() == 2 + 1 + len(CANDIDATES)  # query, text, baseline, Δ each
    page.select_option("#filter-candidate", "sys3")
    assert visible_summary(page) == [("ndcg@10", "sys3")]
    assert page.locator("section.row:visible").count() == 1
    assert page.locator("#filter-count").inner_text() == "1 of 30 comparisons shown"
    expect(heads).to_have_text(["sys1", "Δ sys3"], use_inner_text=True, timeout=30_000)
    page.screenshot(path=str(shots / "filtered.png"))
    page.select_option("#filter-metric", "")
    assert visible_summary(page) == [(m, "sys3") for m in METRICS]
    page.select_option("#filter-candidate", "")
    assert len(visible_summary(page)) == len(METRICS) * len(CANDIDATES)
    assert page.locator("section.row:visible").count() == len(METRICS) * len(CANDIDATES)


def charts_without_javascript(page: Any, kinds: dict[str, str], shots: Path) -> None:
    """Every chart is an SVG element with a size; the filter is not offered."""
    assert page.evaluate("() => window.evalkitRendered === undefined")  # no script ran
    per_row = {"per-query": 30, "scatter": 30, "distribution": 30, "forest": 1}
    assert sorted(kinds.values()) == sorted(k for k, n in per_row.items() for _ in range(n))
    sizes = page.locator("figure.chart").evaluate_all(
        "figs => figs.map(f => { const s = f.querySelector(':scope > svg');"
        " if (!s) return [f.id, 0, 0]; const r = s.getBoundingClientRect();"
        " return [f.id, r.width, r.height]; })")
    assert len(sizes) == len(kinds)
    empty = [s for s in sizes if not (s[1] > 100 and s[2] > 100)]
    assert empty == []
    # one bar and one point per query in each row's charts (sys7 has them all: 225)
    bars = page.locator("#row-30 figure[data-kind=per-query] g.mark-rect.role-mark > path")
    points = page.locator("#row-30 figure[data-kind=scatter] g.mark-symbol.role-mark > path")
    assert bars.count() == points.count() == 225
    assert not page.locator("#filter").is_visible()
    page.locator("#row-1").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "no-javascript.png"))
    assert page.locator("#row-30 h2").inner_text() == "rr (sys7)"
