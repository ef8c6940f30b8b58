"""examples/gate: the stored baseline, both candidates' verdicts, the CI workflow."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "gate"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gate_example", EXAMPLE / "gate_example.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example() -> ModuleType:
    return load_example()


def test_stored_baseline_matches_the_reference_run(example: ModuleType, tmp_path: Path) -> None:
    from evalkit.gate.baseline import load_baseline

    stored = load_baseline(EXAMPLE / "baseline.jsonl")
    fresh = load_baseline(example.promote_baseline(tmp_path / "fresh.jsonl"))
    assert stored.promoted and stored.fingerprint == fresh.fingerprint
    assert stored.fingerprint.n_cases == 93
    assert stored.run.mean("ndcg@10") == pytest.approx(fresh.run.mean("ndcg@10"))
    # metrics only: the stored rows carry no rankings
    assert all(r.retrieved == [] for r in stored.run.per_query)


def test_bm25_passes_and_tfidf_fails(example: ModuleType, tmp_path: Path) -> None:
    import xml.etree.ElementTree as ET

    runs = example.build_candidates(tmp_path / "runs")
    bm25 = example.gate(runs["bm25"], reports=tmp_path / "reports")
    assert [r.line() for r in bm25.results] == [
        "controls_hold: pass (5/5 cases)",
        "no_ndcg_regression: pass (93/93 cases)",
        "no_ap_regression: pass (93/93 cases)",
        "recall_floor: pass (93/93 cases)",
        "precision_target: warn (93/93 cases)",
    ]
    assert bm25.exit_code == 0
    tfidf = example.gate(runs["tfidf"], reports=tmp_path / "reports")
    assert [r.verdict for r in tfidf.results] == ["fail", "fail", "fail", "fail", "warn"]
    assert tfidf.exit_code == 1
    # controls_hold on TF-IDF is the mean rr of the five scoped queries, from the rows
    from evalkit.data.results import RunResult

    rr = RunResult.load(runs["tfidf"]).scores("rr")
    scoped = ["2", "4", "9", "12", "13"]
    assert tfidf.results[0].observed == pytest.approx(sum(rr[q] for q in scoped) / 5)
    suite = ET.parse(tmp_path / "reports" / "tfidf.xml").getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("5", "4")
    assert (tmp_path / "reports" / "bm25.md").read_text().startswith(
        "### ✅ evalkit gate: passed")


def test_workflow_runs_eval_and_gate_and_publishes_reports() -> None:
    wf = yaml.safe_load((EXAMPLE / "github-workflow.yml").read_text())
    steps = wf["jobs"]["gate"]["steps"]
    commands = "\n".join(str(s.get("run", "")) for s in steps)
    assert "examples/vaswani/main.py" in commands
    assert "evalkit gate" in commands
    assert "--report junit:out/reports/gate.xml" in commands
    assert "--report markdown:out/reports/gate.md" in commands
    assert "GITHUB_STEP_SUMMARY" in commands
    uses = [str(s.get("uses", "")) for s in steps]
    junit = [s for s in steps if "junit" in str(s.get("uses", ""))]
    assert junit and junit[0]["with"]["report_paths"] == "out/reports/gate.xml"
    assert any(u.startswith("actions/upload-artifact") for u in uses)
    for path in ("examples/gate/checks.yaml", "examples/gate/baseline.jsonl",
                 "examples/vaswani/main.py"):
        assert (ROOT / path).exists() and path in commands
