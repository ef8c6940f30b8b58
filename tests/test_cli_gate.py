"""`evalkit gate` and `evalkit baseline`: exit codes, printed lines, reports."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.core.registry import Provider, Registry
from evalkit.data.results import QueryResult, RunResult
from evalkit.plugins.default import use_registry
from evalkit.report.builtin import builtin_reporters

runner = CliRunner()


def _never(response: Any, case: Any) -> float:
    raise AssertionError("not called")


@pytest.fixture
def reg() -> Iterator[Registry]:
    with use_registry(plugins=False) as r:
        for spec in builtin_reporters():
            r.add(spec, Provider("evalkit.report", "paired-evalkit-core", "test"), from_plugin=True)
        for name in ("ndcg@10", "recall@100", "ndcg@3"):
            r.register_metric(name, higher_is_better=True)(_never)
        yield r


def invoke(*args: str) -> Any:
    from evalkit.cli.app import app

    return runner.invoke(app, list(args))


C30_YAML = """\
checks:
  - id: ndcg_floor
    metric: ndcg@10
    op: ">="
    threshold: 0.50
  - id: recall_floor
    metric: recall@100
    op: ">="
    threshold: 0.80
"""


def save_run(path: Path, rows: dict[str, dict[str, float]], name: str = "run") -> Path:
    return RunResult(name, [QueryResult(q, [], m) for q, m in rows.items()]).save(path)


@pytest.mark.parametrize(
    ("values", "code"),
    [
        ({"ndcg@10": 0.55, "recall@100": 0.85}, 0),
        ({"ndcg@10": 0.45, "recall@100": 0.85}, 1),
        ({"ndcg@10": float("nan"), "recall@100": 0.85}, 2),
        ({"recall@100": 0.85}, 2),
        ({"ndcg@10": 0.5, "recall@100": 0.8}, 0),
    ],
    ids=["pass", "fail", "nan", "missing_metric", "boundary"],
)
def test_c30_exit_codes(reg: Registry, tmp_path: Path, values: dict[str, float],
                        code: int) -> None:
    checks = tmp_path / "gates.yaml"
    checks.write_text(C30_YAML)
    run = save_run(tmp_path / "run.jsonl", {"q1": values})
    result = invoke("gate", "--checks", str(checks), "--run", str(run))
    assert result.exit_code == code, result.output
    lines = result.output.splitlines()
    verdict = {0: "pass", 1: "fail", 2: "error"}[code]
    usable = 0 if code == 2 else 1  # a NaN or missing value is not a usable one
    assert f"ndcg_floor: {verdict} ({usable}/1 cases)" in lines
    assert "recall_floor: pass (1/1 cases)" in lines


def test_bad_input_exits_2(reg: Registry, tmp_path: Path) -> None:
    checks = tmp_path / "c.yaml"
    checks.write_text(C30_YAML.replace("threshold: 0.50", "treshold: 0.50"))
    run = save_run(tmp_path / "run.jsonl", {"q1": {"ndcg@10": 1.0, "recall@100": 1.0}})
    result = invoke("gate", "--checks", str(checks), "--run", str(run))
    assert result.exit_code == 2 and "'treshold'" in result.output
    good = tmp_path / "good.yaml"
    good.write_text(C30_YAML)
    trec = tmp_path / "run.txt"
    trec.write_text("q1 Q0 d1 1 1.0 tag\n")
    result = invoke("gate", "--checks", str(good), "--run", str(trec))
    assert result.exit_code == 2 and "evalkit eval" in result.output
    result = invoke("gate", "--checks", str(good), "--run", str(run), "--report", "xml:out.xml")
    assert result.exit_code == 2 and "unknown reporter 'xml'" in result.output
    result = invoke("gate", "--checks", str(good), "--run", str(run), "--report", "junit")
    assert result.exit_code == 2 and "FORMAT:PATH" in result.output
    result = invoke("gate", "--run", str(run))
    assert result.exit_code == 2  # a missing required option is a usage error


def test_scope_typo_is_a_load_error(reg: Registry, tmp_path: Path) -> None:
    checks = tmp_path / "c.yaml"
    checks.write_text("""\
checks:
  - id: controls_hold
    metric: ndcg@3
    scope: [a, bb]
    op: ">="
    threshold: 1.0
""")
    run = save_run(tmp_path / "run.jsonl", {"a": {"ndcg@3": 1.0}, "b": {"ndcg@3": 1.0}})
    result = invoke("gate", "--checks", str(checks), "--run", str(run))
    assert result.exit_code == 2
    assert "'controls_hold'" in result.output and "bb" in result.output


def test_warn_checks_print_but_never_change_the_exit_code(reg: Registry,
                                                          tmp_path: Path) -> None:
    checks = tmp_path / "c.yaml"
    checks.write_text("""\
checks:
  - id: floor
    metric: ndcg@10
    op: ">="
    threshold: 0.5
  - id: soft
    metric: ndcg@10
    op: ">="
    threshold: 0.9
    level: warn
  - id: soft_error
    metric: recall@100
    op: ">="
    threshold: 0.9
    level: warn
""")
    run = save_run(tmp_path / "run.jsonl", {"q1": {"ndcg@10": 0.6}})
    result = invoke("gate", "--checks", str(checks), "--run", str(run))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "floor: pass (1/1 cases)" in lines
    assert "soft: warn (1/1 cases)" in lines
    assert "soft_error: error (0/1 cases)" in lines  # no row has recall@100


def test_promote_then_gate_with_several_reports(reg: Registry, tmp_path: Path) -> None:
    ids = [f"q{i}" for i in range(10)]
    base_rows = {q: {"ndcg@10": 0.5 + 0.04 * i, "ndcg@3": 1.0 if i < 3 else 0.0}
                 for i, q in enumerate(ids)}
    cand_rows = {q: {"ndcg@10": v["ndcg@10"] - 0.1, "ndcg@3": v["ndcg@3"]}
                 for q, v in base_rows.items()}
    base = save_run(tmp_path / "base.jsonl", base_rows, "base")
    cand = save_run(tmp_path / "cand.jsonl", cand_rows, "cand")
    stored = tmp_path / "store" / "baseline.jsonl"
    result = invoke("baseline", "promote", str(base), "--to", str(stored))
    assert result.exit_code == 0, result.output
    assert stored.exists() and "cases: 10" in result.output
    result = invoke("baseline", "show", str(stored))
    assert result.exit_code == 0 and "run 'base', promoted" in result.output
    shown = invoke("baseline", "show", str(stored), "--json")
    doc = json.loads(shown.stdout)  # the JSON document alone on stdout
    assert shown.exit_code == 0 and doc["run"] == "base" and doc["promoted"] is True
    assert doc["path"] == str(stored) and doc["promoted_at"]
    assert doc["fingerprint"]["cases"]["count"] == 10
    again = invoke("baseline", "promote", str(base), "--to", str(stored), "--force",
                   "--json")
    assert again.exit_code == 0, again.output
    promoted = json.loads(again.stdout)
    assert promoted["source"] == str(base)
    assert promoted["fingerprint"] == doc["fingerprint"]
    checks = tmp_path / "c.yaml"
    checks.write_text("""\
checks:
  - id: controls_hold
    metric: ndcg@3
    scope: [q0, q1, q2]
    op: ">="
    threshold: 1.0
  - id: no_regression
    metric: ndcg@10
    vs_baseline: no_significant_regression
""")
    junit, md, js = tmp_path / "r" / "gate.xml", tmp_path / "summary.md", tmp_path / "g.json"
    result = invoke("gate", "--checks", str(checks), "--run", str(cand), "--baseline",
                    str(stored), "--report", f"junit:{junit}", "--report", f"markdown:{md}",
                    "--report", f"json:{js}", "-B", "999")
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert "controls_hold: pass (3/3 cases)" in lines
    assert "no_regression: fail (10/10 cases)" in lines
    suite = ET.parse(junit).getroot()
    assert suite.tag == "testsuites" and suite.get("tests") == "2"
    assert suite.get("failures") == "1" and suite.get("errors") == "0"
    cases = suite.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["controls_hold", "no_regression"]
    assert cases[0].find("failure") is None and cases[1].find("failure") is not None
    text = md.read_text()
    assert "| controls_hold | ✅ pass |" in text and "| no_regression | ❌ fail |" in text
    data = json.loads(js.read_text())
    assert data["exit_code"] == 1 and [r["status"] for r in data["rows"]] == ["pass", "fail"]
    assert data["rows"][1]["difference"] == pytest.approx(-0.1)


def test_gate_prints_baseline_fingerprint_errors(reg: Registry, tmp_path: Path) -> None:
    rows = {"a": {"ndcg@10": 0.5}, "b": {"ndcg@10": 0.6}}
    base = RunResult("base", [QueryResult(q, [], m) for q, m in rows.items()],
                     header={"metrics": {"ndcg@10": {"provider": "p", "version": "1"}}})
    cand = RunResult("cand", base.per_query,
                     header={"metrics": {"ndcg@10": {"provider": "p", "version": "2"}}})
    from evalkit.gate.baseline import promote

    stored = promote(base, tmp_path / "b.jsonl")
    cand_path = cand.save(tmp_path / "cand.jsonl")
    checks = tmp_path / "c.yaml"
    checks.write_text("checks:\n  - id: nr\n    metric: ndcg@10\n    vs_baseline: "
                      "no_significant_regression\n")
    result = invoke("gate", "--checks", str(checks), "--run", str(cand_path), "--baseline",
                    str(stored))
    assert result.exit_code == 2
    assert "nr: error (2/2 cases)" in result.output
    assert "p definition v1 in the baseline, p definition v2 in the run" in result.output
