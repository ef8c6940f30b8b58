"""Reporters: console, JSON, Markdown, JUnit XML on gate reports and comparisons."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from evalkit.core.registry import Registry
from evalkit.data.results import QueryResult, RunResult
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec
from evalkit.plugins.default import use_registry
from evalkit.report.builtin import builtin_reporters
from evalkit.report.comparison_rows import report_from_comparison
from evalkit.report.console import render_console
from evalkit.report.json_report import render_json
from evalkit.report.junit import render_junit
from evalkit.report.markdown import render_markdown
from evalkit.report.writing import ReportTargetError, parse_report_target


def _never(response: Any, case: Any) -> float:
    raise AssertionError("not called")


@pytest.fixture
def reg() -> Iterator[Registry]:
    with use_registry(plugins=False) as r:
        r.register_metric("ndcg@10", higher_is_better=True)(_never)
        r.register_metric("recall@10", higher_is_better=True)(_never)
        yield r


def mixed_report() -> Any:
    run = RunResult("cand <&> \"x\"", [
        QueryResult("a", [], {"ndcg@10": 0.2, "recall@10": float("nan")}),
        QueryResult("b", [], {"ndcg@10": 0.4, "recall@10": 0.5}),
    ])
    checks = [
        CheckSpec("pass|pipe", "ndcg@10", op=">=", threshold=0.3),
        CheckSpec("fails", "ndcg@10", op=">=", threshold=0.5),
        CheckSpec("errs", "recall@10", op=">=", threshold=0.1),
        CheckSpec("soft", "ndcg@10", op=">=", threshold=0.9, level="warn"),
    ]
    return evaluate_gate(checks, run)


def test_builtin_reporters_are_registered_through_the_hook() -> None:
    with use_registry(plugins=True) as r:
        names = {key for _, key, _ in r.entries("reporter")}
    assert {"console", "json", "markdown", "junit", "latex"} <= names
    assert [s.suffix for s in builtin_reporters()] == [".txt", ".json", ".md", ".xml"]


def test_junit_one_testcase_per_check(reg: Registry) -> None:
    xml = render_junit(mixed_report())
    root = ET.fromstring(xml)  # well-formed despite <, &, quotes in names
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "1")
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["pass|pipe", "fails", "errs", "soft"]
    assert cases[0].find("failure") is None and cases[0].find("error") is None
    failure = cases[1].find("failure")
    assert failure is not None and "mean ndcg@10 0.3000 < 0.5" in (failure.get("message") or "")
    assert cases[2].find("error") is not None
    # a warn-level check never fails the suite; its verdict goes to system-out
    assert cases[3].find("failure") is None and cases[3].find("error") is None
    out = cases[3].find("system-out")
    assert out is not None and (out.text or "").startswith("warning: soft: warn")


def test_junit_writes_characters_xml_cannot_hold_as_escapes(reg: Registry) -> None:
    run = RunResult("r", [QueryResult("a", [], {"ndcg@10": 0.1})])
    spec = CheckSpec("badname", "ndcg@10", op=">=", threshold=1.0)
    # a check id holding a control character is refused when a check is made (see
    # test_id_text); the JUnit writer still writes what XML cannot hold, in any text, as
    # the escape Python prints for it
    object.__setattr__(spec, "id", "bad\x01name")
    report = evaluate_gate([spec], run)
    root = ET.fromstring(render_junit(report))
    name = root.find("./testsuite/testcase").get("name")  # type: ignore[union-attr]
    assert name == "bad\\x01name"


def test_json_is_strict_and_complete(reg: Registry) -> None:
    text = render_json(mixed_report())
    data = json.loads(text)  # no bare NaN
    assert "NaN" not in text
    assert data["kind"] == "gate" and data["exit_code"] == 2
    assert [r["status"] for r in data["rows"]] == ["pass", "fail", "error", "warn"]
    assert data["rows"][0]["value"] == pytest.approx(0.3)
    assert data["rows"][2]["value"] is None
    assert data["data"]["checks"][1]["threshold"] == 0.5


def test_markdown_table_escapes_pipes(reg: Registry) -> None:
    md = render_markdown(mixed_report())
    assert md.startswith("### 🛑 evalkit gate: error (exit 2)")
    assert "| pass\\|pipe | ✅ pass | block | ndcg@10 | 0.3000 | >= 0.3 | 2/2 cases |" in md
    assert "| fails | ❌ fail |" in md and "| soft | ⚠️ warn | warn |" in md
    assert "- `errs`:" in md and "not a finite number" in md


def test_console_table(reg: Registry) -> None:
    text = render_console(mixed_report())
    assert "pass|pipe" in text and "fails" in text
    assert "\x1b[" not in text  # no colour codes in files
    assert text.rstrip().endswith("(exit 2)")


@dataclass
class CompareRow:  # the shape of `evalkit compare`'s rows
    metric: str
    baseline: str
    candidate: str
    n_queries: int
    baseline_mean: float
    candidate_mean: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    significant: bool
    higher_is_better: bool
    p_adjusted: float | None = None


def test_the_same_reporters_render_a_comparison() -> None:
    rows = [
        CompareRow("ndcg@10", "tfidf", "bm25", 93, 0.40, 0.45, 0.05, 0.02, 0.08, 0.001, True,
                   True),
        CompareRow("latency_mean", "tfidf", "bm25", 93, 10.0, 12.0, 2.0, 1.0, 3.0, 0.002, True,
                   False),
        CompareRow("recall@100", "tfidf", "bm25", 93, 0.70, 0.71, 0.01, -0.01, 0.03, 0.3, False,
                   True),
    ]
    report = report_from_comparison(rows)
    assert report.kind == "compare" and report.subject == "bm25" and report.reference == "tfidf"
    assert [r.status for r in report.rows] == ["bm25 better", "tfidf better",
                                               "no significant difference"]
    md = render_markdown(report)
    assert "| metric | bm25 | tfidf | difference | CI | p | result | n |" in md
    assert "| ndcg@10 | 0.4500 | 0.4000 | +0.0500 | [+0.0200, +0.0800] | 0.0010 | bm25 better |" \
        in md
    root = ET.fromstring(render_junit(report))
    assert root.get("tests") == "3" and root.get("failures") == "0"
    data = json.loads(render_json(report))
    assert data["exit_code"] is None and data["rows"][1]["difference"] == 2.0
    assert "bm25 better" in render_console(report)


def test_comparison_from_the_statistics_result() -> None:
    from evalkit.stats import paired_bootstrap

    a = {"q1": 0.5, "q2": 0.7, "q3": 0.9}
    b = {"q1": 0.5, "q2": 0.7, "q3": 0.9}
    res = paired_bootstrap(a, b, "m", n_resamples=99, seed=1)
    report = report_from_comparison([res], name_a="new", name_b="old")
    row = report.rows[0]
    assert (row.difference, row.p_value, row.status) == (0.0, 1.0, "no significant difference")


def test_parse_report_target() -> None:
    assert parse_report_target("junit:gate.xml") == ("junit", "gate.xml")
    assert parse_report_target("markdown:C:/out/s.md") == ("markdown", "C:/out/s.md")
    assert parse_report_target("json:-") == ("json", "-")
    for bad in ("junit", ":x.xml", "junit:"):
        with pytest.raises(ReportTargetError):
            parse_report_target(bad)



def test_comparison_rows_without_an_interval() -> None:
    row = {"metric": "ap", "candidate": "new", "baseline": "old", "diff": -0.02,
           "candidate_mean": 0.18, "baseline_mean": 0.20, "ci_low": None, "ci_high": None,
           "p_value": 0.01, "p_adjusted": 0.03, "significant": True,
           "higher_is_better": True, "n_queries": 50}
    report = report_from_comparison([row])
    r = report.rows[0]
    assert (r.status, r.ci_low, r.p_adjusted) == ("old better", None, 0.03)
    md = render_markdown(report)
    assert "| ap | 0.1800 | 0.2000 | -0.0200 |  | 0.0100 | 0.0300 | old better | 50 queries |" \
        in md
    assert ET.fromstring(render_junit(report)).get("tests") == "1"
