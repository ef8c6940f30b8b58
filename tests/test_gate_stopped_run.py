"""`evalkit gate`, `baseline promote` and `compare` on a run a sequential rule stopped
early (`evalkit run --until-decided`): its rows are the cases the rule drew to decide one
comparison, so no check but that comparison is judged on it (every report says exit 2),
coverage counts the golden set its header records (`20/400`, never `20/20`), and it is
refused as a baseline; and the gate's rule behind it: a run whose header records more
cases than it has rows never gives an unscoped check a verdict.

The candidate answers right only on the first cases of the rule's seeded order and wrong
everywhere else: on the stopped prefix every floor looks met, on the golden set it fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

import evalkit
from evalkit.data.cases import GoldenCase
from evalkit.data.coverage import Coverage, coverage_of
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget
from evalkit.execute.sequential_run import UntilDecided
from evalkit.gate import evaluate_gate
from evalkit.gate.check_verdicts import CheckResult
from evalkit.gate.checks import CheckSpec, load_checks
from evalkit.stats.sequential import random_order

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
N, GOOD, SEED = 400, 40, 0
ORDER = [f"c{i:03d}" for i in random_order(N, SEED)]

FLOORS = """\
checks:
  - id: floor
    metric: ndcg@10
    op: ">="
    threshold: 0.8
  - id: rfloor
    metric: recall@1
    op: ">="
    threshold: 0.8
  - id: soft
    metric: recall@1
    op: ">="
    threshold: 0.5
    level: warn
  - id: picked
    metric: recall@1
    op: ">="
    threshold: 0.5
    scope: [{first}]
"""

DECIDED = """\
checks:
  - id: noreg
    metric: recall@1
    vs_baseline: no_significant_regression
"""


def _goldens() -> GoldenSet:
    return GoldenSet(GoldenCase(f"c{i:03d}", "q", relevant=frozenset({"d1"}))
                     for i in range(N))


def _ranker(good: set[str], name: str) -> CallableTarget:
    return CallableTarget(lambda case: ["d1"] if case.id in good else ["zz"], name=name)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """base.jsonl (wrong everywhere), cand.jsonl (stopped early: right on the prefix the
    rule draws, wrong elsewhere) and full.jsonl (the same candidate on every case)."""
    folder = tmp_path_factory.mktemp("stopped")
    metrics = ["recall@1", "ndcg@10"]
    base = evalkit.evaluate(_ranker(set(), "base"), _goldens(), metrics,
                            progress=False).save(folder / "base.jsonl")
    good = set(ORDER[:GOOD])
    evalkit.evaluate(_ranker(good, "cand"), _goldens(), metrics, max_concurrency=2,
                     progress=False, artifact=folder / "cand.jsonl",
                     until_decided=UntilDecided(base, "recall@1", seed=SEED))
    evalkit.evaluate(_ranker(good, "cand"), _goldens(), metrics, progress=False,
                     artifact=folder / "full.jsonl")
    held = RunResult.load(folder / "cand.jsonl")
    assert held.header["sequential"]["stopped_early"] is True
    assert len(held.per_query) < GOOD  # every case it holds is one it answers right
    (folder / "floors.yaml").write_text(FLOORS.format(first=ORDER[0]))
    (folder / "decided.yaml").write_text(DECIDED)
    return folder


def _gate(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, "gate", *args], cwd=folder, capture_output=True,
                          text=True, timeout=300, check=False)


def test_coverage_counts_the_golden_set_and_says_the_run_is_partial(runs: Path) -> None:
    cov = coverage_of(RunResult.load(runs / "cand.jsonl"))
    assert cov.complete  # complete for what it evaluated: compare still pairs it
    assert cov.expected == N and cov.rows < GOOD
    assert cov.partial is not None and "without --until-decided" in cov.partial
    assert coverage_of(RunResult.load(runs / "full.jsonl")).partial is None


def test_threshold_checks_are_errors_and_every_report_says_exit_2(runs: Path) -> None:
    rows = len(RunResult.load(runs / "cand.jsonl").per_query)
    proc = _gate(runs, "-c", "floors.yaml", "-r", "cand.jsonl",
                 "--report", "junit:g.xml", "--report", "markdown:g.md",
                 "--report", "json:g.json", "--report", "html:g.html")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    for check in ("floor", "rfloor", "soft"):  # the warn-level one too: exit 2 whatever
        assert f"{check}: error ({rows}/{N} cases)" in out
    assert "picked: error (1/1 cases)" in out  # a scope of cases it holds: not judged either
    assert "stopped early by a sequential rule" in out
    assert "gate error: 0 passed, 0 failed, 0 warned" in out
    data = json.loads((runs / "g.json").read_text())["data"]
    assert data["exit_code"] == 2 and data["status"] == "error"
    assert [c["verdict"] for c in data["checks"]] == ["error"] * 4
    assert data["checks"][0]["coverage"]["covered"] == N
    suite = ET.parse(runs / "g.xml").getroot()
    suite = suite if suite.tag == "testsuite" else suite[0]
    assert int(suite.get("errors", "0")) + int(suite.get("failures", "0")) >= 3
    assert 'value="2"' in (runs / "g.xml").read_text()
    assert "exit 2" in (runs / "g.md").read_text()
    assert "exit 2" in (runs / "g.html").read_text()
    # the same candidate over the whole golden set fails the floors it seemed to meet
    full = _gate(runs, "-c", "floors.yaml", "-r", "full.jsonl")
    assert full.returncode == 1, full.stdout + full.stderr
    assert f"floor: fail ({N}/{N} cases)" in full.stdout + full.stderr


def test_the_rules_own_comparison_is_still_decided(runs: Path) -> None:
    rows = len(RunResult.load(runs / "cand.jsonl").per_query)
    proc = _gate(runs, "-c", "decided.yaml", "-r", "cand.jsonl", "-b", "base.jsonl")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"noreg: pass ({rows}/{N} cases)" in proc.stdout + proc.stderr
    both = runs / "both.yaml"
    both.write_text(DECIDED + "  - id: floor\n    metric: ndcg@10\n    op: \">=\"\n"
                    "    threshold: 0.1\n")
    report = evaluate_gate(load_checks(both), RunResult.load(runs / "cand.jsonl"),
                           RunResult.load(runs / "base.jsonl"))
    assert [r.verdict for r in report.results] == ["pass", "error"]
    assert report.results[1].not_judged and report.exit_code == 2
    # each check counted once: the error not judged is one of the errors
    assert report.summary() == ("gate error: 1 passed, 0 failed, 0 warned, 1 error "
                                "(not judged) (exit 2)")


@pytest.mark.parametrize("alpha", ["0.001", "0.2"])
def test_a_check_whose_alpha_is_not_the_rules_is_not_judged(runs: Path, alpha: str) -> None:
    recorded = RunResult.load(runs / "cand.jsonl").header["sequential"]["alpha"]
    assert recorded == 0.05  # the rule's default level
    (runs / f"alpha{alpha}.yaml").write_text(DECIDED + f"    alpha: {alpha}\n")
    proc = _gate(runs, "-c", f"alpha{alpha}.yaml", "-r", "cand.jsonl", "-b", "base.jsonl")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out  # neither stricter nor looser is judged at 0.05
    assert "noreg: error" in out
    assert f"at alpha 0.05, whose anytime-valid interval answers at that level only, and " \
        f"this check asks for alpha {alpha}; set the check's alpha to 0.05" in out
    # the rule's own level, written out, is judged as the default is
    (runs / "alpha05.yaml").write_text(DECIDED + "    alpha: 0.05\n")
    same = _gate(runs, "-c", "alpha05.yaml", "-r", "cand.jsonl", "-b", "base.jsonl")
    assert same.returncode == 0, same.stdout + same.stderr


def test_a_stopped_run_as_the_baseline_makes_the_gate_incomplete(runs: Path) -> None:
    proc = _gate(runs, "-c", "decided.yaml", "-r", "full.jsonl", "-b", "cand.jsonl")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "incomplete: baseline 'cand'" in proc.stdout + proc.stderr
    assert "stopped early by a sequential rule" in proc.stdout + proc.stderr


def test_promote_refuses_it_in_one_line_naming_the_file_and_the_fix(runs: Path) -> None:
    proc = subprocess.run([*EVALKIT, "baseline", "promote", "cand.jsonl", "--to",
                           "promoted.jsonl"], cwd=runs, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: run 'cand' (cand.jsonl)")
    assert "without --until-decided" in lines[0] and "Traceback" not in proc.stderr
    assert not (runs / "promoted.jsonl").exists()


def test_an_unscoped_check_never_passes_on_fewer_rows_than_the_header_records() -> None:
    # the rule itself, whatever made the run short: a verdict over 3 rows of 5 cases
    from evalkit.gate.evaluate import held_to_header

    run = RunResult("r", [evalkit.QueryResult(q, [], {"m": 1.0}) for q in "abc"])
    passed = CheckResult(CheckSpec("m", "m", ">=", 0.5), "pass", 1.0, 3, 5, "", "metric")
    held = held_to_header(passed, run, Coverage("r", True, 5, 3))
    assert held.verdict == "error" and held.not_judged and held.observed is None
    assert "holds rows for 3 of the 5 cases its header records" in held.message
    whole = replace(passed, covered=3)
    assert held_to_header(whole, run, Coverage("r", True, 3, 3)) == whole
    scoped = replace(passed, check=CheckSpec("m", "m", ">=", 0.5, scope=("a",)), covered=1)
    assert held_to_header(scoped, run, Coverage("r", True, 5, 3)) == scoped


def _perfect(runs: Path) -> Path:
    path = runs / "perfect.jsonl"
    if not path.exists():
        evalkit.evaluate(_ranker({f"c{i:03d}" for i in range(N)}, "perfect"), _goldens(),
                         ["recall@1", "ndcg@10"], progress=False).save(path)
    return path


def test_another_baseline_than_the_rules_is_not_judged(runs: Path) -> None:
    # the candidate ties or loses against a perfect baseline on every case; the rule's
    # interval (against base.jsonl, wrong everywhere) read "improved" and passed, and
    # JSON said value = 1.0 + 1.0 (the difference added to the other baseline's mean)
    _perfect(runs)
    proc = _gate(runs, "-c", "decided.yaml", "-r", "cand.jsonl", "-b", "perfect.jsonl",
                 "--report", "json:other.json")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert "noreg: error" in out and "not the baseline given, 'perfect'" in out
    assert "-b " + str(runs / "base.jsonl") in out  # the baseline the rule decided against
    assert "improved" not in out
    data = json.loads((runs / "other.json").read_text())["data"]
    assert data["exit_code"] == 2 and data["checks"][0]["verdict"] == "error"


def test_the_rules_baseline_is_known_by_its_values_not_its_path(runs: Path) -> None:
    copy = runs / "copy"
    copy.mkdir(exist_ok=True)
    (copy / "base.jsonl").write_bytes((runs / "base.jsonl").read_bytes())
    proc = _gate(runs, "-c", "decided.yaml", "-r", "cand.jsonl", "-b", "copy/base.jsonl",
                 "--report", "json:same.json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    row = json.loads((runs / "same.json").read_text())["rows"][0]
    # the run's own mean over the cases it holds (right on each), not base + difference
    assert row["value"] == 1.0 and row["reference_value"] == 0.0


def test_a_record_without_a_digest_is_held_to_its_baseline_path(runs: Path) -> None:
    run = RunResult.load(runs / "cand.jsonl")
    record = dict(run.header["sequential"])
    del record["baseline_sha256"]
    run.header["sequential"] = record
    perfect = RunResult.load(_perfect(runs))
    checks = load_checks(runs / "decided.yaml")
    from evalkit.gate.baseline import Baseline, load_baseline

    other = evaluate_gate(checks, run, Baseline.from_run(perfect))
    assert other.exit_code == 2 and "records no digest" in other.results[0].message
    own = evaluate_gate(checks, run, load_baseline(runs / "base.jsonl"))
    assert own.results[0].verdict == "pass", own.results[0].message
