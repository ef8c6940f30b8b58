"""The summary table of the HTML comparison page with repeated samples: K (baseline /
candidate) and the within-case spread as columns when a run has K > 1, absent when
every run has K = 1.

The data are constructed so that the spread has a known answer (as in
tests/test_samples_comparison.py): the baseline's two samples of a case agree, the
candidate's are ``c_i + 0.1`` and ``c_i - 0.1`` (sample variance 0.02, so its mean of 2
carries 0.01), and the per-case differences (0.3, 0.1, -0.1, -0.3) have variance 0.2 / 3.
Share 0.01 / (0.2 / 3) = 15.0%; SE now sqrt((0.2 / 3) / 4) = 0.1291; SE limit
sqrt((0.2 / 3 - 0.01) / 4) = 0.1190.
"""

from __future__ import annotations

import math
from html.parser import HTMLParser
from pathlib import Path

import pytest
from evalkit_report_html.browser import browser, unavailable

from evalkit.comparison import compare
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.samples import reduce_samples
from evalkit.data.targets import TargetResponse

BASE = {"a": [0.5, 0.5], "b": [0.4, 0.4], "c": [0.6, 0.6], "d": [0.7, 0.7]}
DIFFS = {"a": 0.3, "b": 0.1, "c": -0.1, "d": -0.3}
CAND = {q: [BASE[q][0] + DIFFS[q] + 0.1, BASE[q][0] + DIFFS[q] - 0.1] for q in BASE}
HEADS = ["K (baseline / candidate)", "within-case share", "SE now", "SE limit"]


def run_of(name: str, values: dict[str, list[float]]) -> RunResult:
    """A run whose case ``q`` has one sample row per value (no samples for one value)."""
    if all(len(v) == 1 for v in values.values()):
        return RunResult(name, [CaseResult(q, TargetResponse([]), {"m": v[0]})
                                for q, v in values.items()], {"kind": "target"})
    samples = [CaseResult(q, TargetResponse([]), {"m": x}, sample=i)
               for q, v in values.items() for i, x in enumerate(v)]
    header = {"kind": "target", "samples": {"epochs": max(map(len, values.values())),
                                            "reduce": "mean"}}
    return RunResult(name, reduce_samples(samples), header, samples=samples)


class SummaryTable(HTMLParser):
    """The header texts and the rows' cell texts of ``#summary-table``."""

    def __init__(self) -> None:
        super().__init__()
        self.heads: list[str] = []
        self.rows: list[list[str]] = []
        self._in = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._in = dict(attrs).get("id") == "summary-table"
        elif self._in and tag == "tr":
            self.rows.append([])
        elif self._in and tag in ("th", "td"):
            self._cell = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in = False
        elif self._in and tag in ("th", "td") and self._cell is not None:
            text = "".join(self._cell).strip()
            (self.heads if tag == "th" else self.rows[-1]).append(text)
            self._cell = None


def table(path: Path) -> tuple[list[str], list[list[str]]]:
    parser = SummaryTable()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.heads, [r for r in parser.rows if r]


def test_k_and_the_spread_are_columns_of_the_summary_table(tmp_path: Path) -> None:
    assert f"{math.sqrt(0.2 / 3 / 4):.4f}" == "0.1291"
    assert f"{math.sqrt((0.2 / 3 - 0.01) / 4):.4f}" == "0.1190"
    c = compare(run_of("base", BASE), run_of("cand", CAND), metrics=["m"])
    heads, rows = table(c.to_html(tmp_path / "k2.html"))
    assert heads[-4:] == HEADS
    assert rows[0][-4:] == ["2 / 2", "15.0%", "0.1291", "0.1190"]
    assert len(rows[0]) == len(heads)


def test_k_1_against_k_3_shows_k_without_a_spread_and_k_1_shows_no_column(
        tmp_path: Path) -> None:
    base = run_of("base", {q: [v[0]] for q, v in BASE.items()})
    cand = run_of("cand", {q: [*v, BASE[q][0] + DIFFS[q]] for q, v in CAND.items()})
    heads, rows = table(compare(base, cand, metrics=["m"]).to_html(tmp_path / "k13.html"))
    assert heads[-4:] == HEADS and rows[0][-4:] == ["1 / 3", "", "", ""]
    plain = run_of("cand", {q: [BASE[q][0] + DIFFS[q]] for q in BASE})
    path = compare(base, plain, metrics=["m"]).to_html(tmp_path / "k1.html")
    heads, rows = table(path)
    assert not set(HEADS) & set(heads) and len(rows[0]) == len(heads)
    assert "within-case share" not in path.read_text(encoding="utf-8")


@pytest.mark.skipif(unavailable() is not None, reason=f"browser test skipped: {unavailable()}")
def test_the_columns_in_headless_chromium(tmp_path: Path) -> None:
    c = compare(run_of("base", BASE), run_of("cand", CAND), metrics=["m"])
    with browser() as b:
        result, page = b.open(c.to_html(tmp_path / "samples.html"), keep=True)
        try:
            assert result.console_errors == [] and result.network == []
            row = page.locator('#summary-table tr[data-metric="m"]')
            assert [row.locator(f"td.{cls}").inner_text().strip() for cls in (
                "samples-k", "within-share", "se-now", "se-limit")] == [
                "2 / 2", "15.0%", "0.1291", "0.1190"]
            heads = page.locator("#summary-table thead th").all_inner_texts()
            assert [h.strip() for h in heads[-4:]] == HEADS
        finally:
            page.close()
