"""The HTML report in a real browser: Debian's headless Chromium, driven by Playwright with
the system executable (no browser download).

The report is of the README's comparison (``evalkit compare tfidf.jsonl bm25.jsonl -m
ap,ndcg@10`` on the Vaswani runs of examples/vaswani/main.py). The test waits for every
chart's render-complete event and asserts: no console errors and no request beyond the
file; one mark per query in each per-query plot; the table shows the README's published
values (read from the README, not from evalkit); hovering the tallest bar shows that
query's id, text and both scores, and hovering a point of the forest plot its row's
difference. It saves a screenshot in its temporary folder.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from evalkit_report_html.browser import browser, unavailable

import evalkit

REPO = Path(__file__).resolve().parents[3]
VASWANI = REPO / "examples" / "vaswani"
README = REPO / "README.md"
#: The viewport of the README's screenshot: ``python -m evalkit_report_html.browser
#: examples/vaswani/out/report.html docs/images/report.png 1100 1250``.
SHOT = (1100, 1250)

pytestmark = pytest.mark.skipif(unavailable() is not None,
                                reason=f"browser test skipped: {unavailable()}")


def published() -> dict[str, list[str]]:
    """The cells of the README's ``evalkit compare ... -m ap,ndcg@10`` table, by metric."""
    text = README.read_text(encoding="utf-8")
    start = text.index("$ evalkit compare examples/vaswani/out/tfidf.jsonl "
                       "examples/vaswani/out/bm25.jsonl -m ap,ndcg@10")
    block = text[start:text.index("```", start)]
    out = {}
    for line in block.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells and cells[0] in ("ap", "ndcg@10"):
            out[cells[0]] = cells
    return out


def test_report_in_headless_chromium(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(VASWANI / "main.py"), "--out", str(tmp_path),
                           "--resamples", "200", "--no-report"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr
    c = evalkit.compare(tmp_path / "tfidf.jsonl", tmp_path / "bm25.jsonl",
                        metrics=["ap", "ndcg@10"], topics=VASWANI / "data" / "query-text.trec")
    report = c.to_html(tmp_path / "report.html")
    table = published()
    assert table["ap"][3:7] == ["+0.0590", "[+0.0434, +0.0774]", "0.0002", "0.0002"]
    top = max(range(93), key=lambda i: (c.get("ap").differences[i], c.query_ids[i]))
    top_id = c.query_ids[top]

    with browser() as b:
        result, page = b.open(report, keep=True)
        try:
            assert result.console_errors == []
            assert result.network == [] and result.requests  # the file, nothing else
            # every chart drew; each per-query plot one mark per query (93)
            assert set(result.kinds.values()) == {"forest", "per-query", "scatter",
                                                  "distribution"}
            per_query = [i for i, k in result.kinds.items() if k in ("per-query", "scatter")]
            assert len(per_query) == 4
            for chart in per_query:
                assert result.marks[chart] == result.expected[chart] == 93, chart
            assert page.locator("figure.chart[data-rendered=true]").count() == len(
                result.kinds)
            # the summary table shows the README's values
            for metric, cells in table.items():
                row = page.locator(f'#summary-table tr[data-metric="{metric}"]')
                shown = [row.locator(f"td.{cls}").inner_text().strip() for cls in (
                    "baseline-mean", "candidate-mean", "diff", "ci", "p", "p-adjusted",
                    "wtl")]
                assert shown == [*cells[1:7], cells[8]], metric
            head = page.locator("#summary-table thead").inner_text()
            assert "p (Holm)" in head
            # K = 1 in both runs: no repeated-samples column
            assert page.locator("#summary-table .samples-k").count() == 0
            assert "within-case share" not in head
            # hovering the tallest AP bar shows that query
            figure = page.locator("figure.chart[data-kind=per-query]").first
            bars = figure.locator("g.mark-rect.role-mark > path")
            assert bars.count() == 93
            bars.nth(92).hover()  # scrolled into view, the mouse on its middle
            tip = page.locator("#evalkit-tooltip")
            tip.wait_for(state="visible", timeout=5000)
            text = tip.inner_text()
            ap = c.get("ap")
            assert top_id in text and c.queries[top_id] in text
            assert f"{ap.baseline_values[top]:.4f}" in text
            assert f"{ap.candidate_values[top]:.4f}" in text
            assert f"{ap.differences[top]:+.4f}" in text
            # the forest plot's point of ndcg@10 says its difference and interval
            page.locator("figure.chart[data-kind=forest] g.mark-symbol.role-mark > path"
                         ).nth(1).hover()
            tip.wait_for(state="visible", timeout=5000)
            ndcg = table["ndcg@10"]
            assert tip.inner_text().strip() == f"ndcg@10: {ndcg[3]} {ndcg[4]}, p {ndcg[6]}"
        finally:
            page.close()
        # the code that made the README's screenshot (docs/images/report.png)
        b.screenshot(report, tmp_path / "report.png", width=SHOT[0], height=SHOT[1])
    assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "report.png").stat().st_size > 10_000
