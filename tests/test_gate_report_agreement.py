"""Every gate report agrees with the gate's exit code, in every outcome: pass, fail, a
warn-level check failing alone, a blocking error, incomplete evidence (rows lost, or
judged queries skipped) with blocking or only warn-level checks.

JUnit consumers count ``failures`` and ``errors``: an exit code of 2 must show as an
``<error>`` testcase (a testcase named ``gate`` when no check carries it), 1 as a
``<failure>``, 0 as neither. The other reporters state the exit code and the verdicts,
and a warn-level check's detail never says the exit code is unaffected when the gate
exits 2 because its evidence is incomplete.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any, Literal

import pytest

from evalkit.core.registry import Registry
from evalkit.data.results import QueryResult, RunResult
from evalkit.gate import GateReport, evaluate_gate
from evalkit.gate.checks import CheckSpec
from evalkit.plugins.default import use_registry
from evalkit.report.console import render_console
from evalkit.report.json_report import render_json
from evalkit.report.junit import render_junit
from evalkit.report.markdown import render_markdown


def _never(response: Any, case: Any) -> float:
    raise AssertionError("gates read stored values")


@pytest.fixture
def reg() -> Iterator[Registry]:
    with use_registry(plugins=False) as r:
        r.register_metric("ndcg@10", higher_is_better=True)(_never)
        yield r


def run(values: dict[str, float], **header: Any) -> RunResult:
    return RunResult("r", [QueryResult(q, [], {"ndcg@10": v}) for q, v in values.items()],
                     header=dict(header))


FULL = {"a": 0.6, "b": 0.4}  # mean 0.5
LOST = {"notes": {"num_queries": 3}}  # the header records 3 queries; the run holds 2
SKIPPED = {"missing": "skip", "notes": {"missing_skipped": 1, "missing_ids": ["c"]}}


def floor(threshold: float, level: Literal["block", "warn"] = "block",
          metric: str = "ndcg@10") -> CheckSpec:
    return CheckSpec(f"{metric}_{level}", metric, op=">=", threshold=threshold, level=level)


OUTCOMES: dict[str, tuple[list[CheckSpec], dict[str, Any], int]] = {
    # outcome: (checks, run header, exit code)
    "pass": ([floor(0.4)], {}, 0),
    "fail": ([floor(0.6)], {}, 1),
    "warn-only fail": ([floor(0.4), floor(0.6, "warn")], {}, 0),
    "warn-only error": ([floor(0.4), floor(0.4, "warn", "recall@5")], {}, 0),
    "blocking error": ([floor(0.4, metric="recall@5"), floor(0.6, "warn")], {}, 2),
    "incomplete, warn-level only": ([floor(0.1, "warn")], LOST, 2),
    "incomplete, blocking": ([floor(0.1), floor(0.1, "warn")], LOST, 2),
    "skipped judged, warn-level only": ([floor(0.1, "warn")], SKIPPED, 2),
}


def gate(outcome: str) -> GateReport:
    checks, header, code = OUTCOMES[outcome]
    g = evaluate_gate(checks, run(FULL, **header))
    assert g.exit_code == code
    return g


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_junit_counts_agree_with_the_exit_code(reg: Registry, outcome: str) -> None:
    g = gate(outcome)
    suite = ET.fromstring(render_junit(g)).find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    errors = [c for c in cases if c.find("error") is not None]
    failures = [c for c in cases if c.find("failure") is not None]
    assert int(suite.get("errors") or -1) == len(errors)
    assert int(suite.get("failures") or -1) == len(failures)
    assert int(suite.get("tests") or -1) == len(cases)
    assert (len(errors) > 0) == (g.exit_code == 2)
    assert (len(failures) > 0) == (g.exit_code == 1)
    # a gate-level testcase only when no check carries the exit code
    names = [c.get("name") for c in cases]
    blocking_errors = any(r.blocking and r.verdict == "error" for r in g.results)
    assert ("gate" in names) == (g.exit_code == 2 and not blocking_errors)
    if "gate" in names:
        el = cases[names.index("gate")].find("error")
        assert el is not None and "incomplete" in (el.text or "")


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_every_reporter_states_the_exit_code(reg: Registry, outcome: str) -> None:
    g = gate(outcome)
    code = g.exit_code
    data = json.loads(render_json(g))
    assert data["exit_code"] == code and data["data"]["exit_code"] == code
    assert f"(exit {code})" in render_markdown(g)
    assert f"(exit {code})" in render_console(g)
    assert g.lines()[-1].endswith(f"(exit {code})")
    for text in (render_markdown(g), render_console(g), "\n".join(g.lines()),
                 render_junit(g), json.dumps(data)):
        if code == 2 and g.incomplete:
            assert "does not affect the exit code" not in text
            assert "does not change the exit code" not in text


def test_a_warn_level_check_not_judged_says_the_gate_exits_2(reg: Registry) -> None:
    g = gate("incomplete, warn-level only")
    detail = g.results[0].detail()
    assert detail.startswith("not judged: the run is incomplete")
    assert "incomplete evidence makes the gate exit 2" in detail
    assert g.results[0].not_judged


def test_a_warn_level_check_says_its_verdict_alone_does_not_count(reg: Registry) -> None:
    g = gate("blocking error")
    warn = g.results[1]
    assert warn.verdict == "warn" and not warn.not_judged
    assert warn.detail().endswith("warn level: this check's verdict does not change the "
                                  "exit code")


def test_html_report_agrees_with_the_exit_code(reg: Registry) -> None:
    pytest.importorskip("evalkit_report_html")
    from evalkit_report_html.render import render_html

    for outcome in ("incomplete, warn-level only", "warn-only fail", "fail"):
        g = gate(outcome)
        page = render_html(g)
        assert f"(exit {g.exit_code})" in page
        assert "does not affect the exit code" not in page
