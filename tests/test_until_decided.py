"""Runs that stop when their comparison with a baseline is decided (``evaluate(...,
until_decided=...)``, ``evalkit run --until-decided``): a much worse candidate stops after
far fewer cases than the golden set holds, an equal one stops inside the margin, the
artifact and the gate say so, and a run stopped by Ctrl-C resumes in the same order."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit
from evalkit import load_checks
from evalkit.cli.app import app
from evalkit.data.cases import GoldenCase
from evalkit.data.coverage import coverage_of
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget
from evalkit.execute.sequential_run import SequentialError, UntilDecided
from evalkit.gate import evaluate_gate
from evalkit.plugins.default import use_registry
from evalkit.stats.sequential import paired_confidence_sequence, random_order

N = 1000


def goldens(n: int = N) -> GoldenSet:
    return GoldenSet(GoldenCase(f"c{i:04d}", "q", relevant=frozenset({f"c{i:04d}"}))
                     for i in range(n))


def hits(every: int) -> Callable[[GoldenCase], list[str]]:
    """A ranker that finds the relevant id on case i when i % every == 0."""

    def rank(case: GoldenCase) -> list[str]:
        return [case.id] if int(case.id[1:]) % every == 0 else ["nothing"]

    return rank


def baseline_run(tmp_path: Path) -> Path:
    """A baseline that finds every relevant id: recall@1 = ndcg@10 = 1 on every case."""
    run = evalkit.evaluate(CallableTarget(hits(1), name="base"), goldens(),
                           ["recall@1", "ndcg@10"], progress=False)
    return run.save(tmp_path / "base.jsonl")


def slow(rank: Callable[[GoldenCase], list[str]]) -> Callable[[GoldenCase], list[str]]:
    def call(case: GoldenCase) -> list[str]:
        time.sleep(0.002)  # calls finish a few at a time, as real ones do
        return rank(case)

    return call


def test_a_much_worse_candidate_stops_early_and_the_gate_fails_it(tmp_path: Path) -> None:
    base = baseline_run(tmp_path)
    out = tmp_path / "cand.jsonl"
    run = evalkit.evaluate(CallableTarget(slow(hits(10)), name="cand"), goldens(),
                           ["recall@1", "ndcg@10"], max_concurrency=2, progress=False,
                           artifact=out, until_decided=UntilDecided(base, "recall@1", seed=7))
    record = run.header["sequential"]
    assert record["stopped_early"] is True and record["reason"] == "differs"
    assert record["seed"] == 7 and record["metric"] == "recall@1"
    assert record["cases_used"] < N // 5  # far fewer than the golden set holds
    low, high = record["interval"]
    assert low < high < 0  # worse, and the interval excludes 0
    # the prefix the decision rests on is the first cases of the seeded order, all answered
    order = [f"c{i:04d}" for i in random_order(N, 7)]
    prefix = order[:record["cases_used"]]
    assert set(prefix) <= set(run.ids())
    expected = sum((1.0 if int(c[1:]) % 10 == 0 else 0.0) - 1.0 for c in prefix) / len(prefix)
    assert record["mean_difference"] == pytest.approx(expected)
    # the file is complete for what it evaluated, and says where it stopped
    saved = RunResult.load(out)
    cov = coverage_of(saved)
    assert cov.complete, cov.problems
    assert any("stopped by a sequential rule" in note for note in cov.notes)
    checks = tmp_path / "checks.yaml"
    checks.write_text("checks:\n  - id: recall\n    metric: recall@1\n    vs_baseline: "
                      "no_significant_regression\n")
    report = evaluate_gate(load_checks(checks), saved, RunResult.load(base))
    assert report.exit_code == 1
    (result,) = report.results
    assert result.verdict == "fail" and "sequential rule" in result.message
    assert result.comparison is not None and result.comparison.ci_high == high
    # another metric's comparison rests on a prefix chosen for recall@1: not judged
    checks.write_text(checks.read_text() + "  - id: ndcg\n    metric: ndcg@10\n    "
                      "vs_baseline: no_significant_regression\n")
    report = evaluate_gate(load_checks(checks), saved, RunResult.load(base))
    assert report.exit_code == 2
    assert [r.verdict for r in report.results] == ["fail", "error"]
    assert "incomplete evidence for metric ndcg@10" in report.results[1].message
    # compare pairs it with the baseline on the cases it holds, and names the valid interval
    comparison = evalkit.compare(base, out, metrics=["recall@1"])
    (row,) = comparison.results
    assert row.n_queries == len(saved.per_query)
    assert any("stopped by a sequential rule" in w for w in comparison.warnings)


def test_an_equal_candidate_stops_inside_the_margin(tmp_path: Path) -> None:
    base = baseline_run(tmp_path)
    run = evalkit.evaluate(CallableTarget(slow(hits(1)), name="same"), goldens(),
                           ["recall@1"], max_concurrency=2, progress=False,
                           until_decided=UntilDecided(base, margin=0.1, seed=1))
    record = run.header["sequential"]
    assert record["stopped_early"] is True and record["reason"] == "equivalent"
    low, high = record["interval"]
    assert -0.1 <= low <= 0 <= high <= 0.1
    assert record["cases_used"] < N // 2


def test_refusals_name_the_problem(tmp_path: Path) -> None:
    base = baseline_run(tmp_path)
    target = CallableTarget(hits(1), name="t")
    with pytest.raises(SequentialError, match="--metric"):
        evalkit.evaluate(target, goldens(), ["recall@1", "ndcg@10"], progress=False,
                         until_decided=UntilDecided(base))
    with pytest.raises(SequentialError, match="names no checks file"):
        evalkit.evaluate(target, goldens(), ["recall@1", "ndcg@10"], progress=False,
                         until_decided=UntilDecided(base))
    with pytest.raises(SequentialError, match=r"c\.yaml has vs_baseline checks on 2 metrics "
                       r"\(recall@1, ndcg@10\)"):
        evalkit.evaluate(target, goldens(), ["recall@1", "ndcg@10"], progress=False,
                         until_decided=UntilDecided(base, gate_source="c.yaml",
                                                    gate_metrics=("recall@1", "ndcg@10")))
    with pytest.raises(SequentialError, match=r"c\.yaml has no vs_baseline check"):
        evalkit.evaluate(target, goldens(), ["recall@1", "ndcg@10"], progress=False,
                         until_decided=UntilDecided(base, gate_source="c.yaml",
                                                    gate_metrics=()))
    with pytest.raises(SequentialError, match="compares mrr@10, which is not a metric"):
        evalkit.evaluate(target, goldens(), ["recall@1", "ndcg@10"], progress=False,
                         until_decided=UntilDecided(base, gate_metrics=("mrr@10",)))
    with pytest.raises(SequentialError, match="no value of recall@1 in the baseline"):
        evalkit.evaluate(target, goldens(N + 3), ["recall@1"], progress=False,
                         until_decided=UntilDecided(base))

    with use_registry() as reg:
        reg.register_metric("unbounded", higher_is_better=True)(lambda r, c: 1.0)
        with pytest.raises(SequentialError, match="declares no range"):
            evalkit.evaluate(target, goldens(), ["unbounded"], progress=False,
                             until_decided=UntilDecided(base))


CONFIG = """
goldens: goldens.jsonl
target: {factory: "ranker:make"}
metrics: [recall@1]
output: cand.jsonl
max_concurrency: 2
"""

RANKER = '''
import time
from evalkit.data.targets import CallableTarget

def make():
    def rank(case):
        time.sleep(0.002)
        return [case.id] if int(case.id[1:]) % 10 == 0 else ["nothing"]
    return CallableTarget(rank, name="worse")
'''


def project(tmp_path: Path, config: str, cluster: Callable[[int], str] | None = None
            ) -> Path:
    """A project folder (goldens.jsonl, each case i in ``cluster(i)`` when given;
    evalkit.yaml; the worse ranker); returns the baseline artifact."""
    (tmp_path / "goldens.jsonl").write_text("".join(
        json.dumps({"id": f"c{i:04d}", "query": "q", "expected": [f"c{i:04d}"]}
                   | ({} if cluster is None else {"cluster": cluster(i)})) + "\n"
        for i in range(N)))
    (tmp_path / "evalkit.yaml").write_text(config)
    (tmp_path / "ranker.py").write_text(RANKER)
    return baseline_run(tmp_path)


def test_cli_until_decided_exits_0_and_says_so(tmp_path: Path) -> None:
    base = project(tmp_path, CONFIG)
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(tmp_path / "evalkit.yaml"), "--until-decided",
                                 "--baseline", str(base), "--seed", "3"])
    assert result.exit_code == 0, result.output
    assert "stopped early by the sequential rule: the difference is decided" in result.output
    header = json.loads((tmp_path / "cand.jsonl").read_text().splitlines()[0])
    assert header["sequential"]["seed"] == 3
    assert header["config"]["until_decided"]["seed"] == 3
    result = runner.invoke(app, ["run", str(tmp_path / "evalkit.yaml"), "--until-decided",
                                 "-o", str(tmp_path / "other.jsonl")])
    assert result.exit_code == 2 and "--until-decided needs --baseline" in result.output


def test_cli_json_says_the_run_stopped_early_and_of_how_many_cases(tmp_path: Path) -> None:
    base = project(tmp_path, CONFIG)
    result = CliRunner().invoke(app, ["run", str(tmp_path / "evalkit.yaml"),
                                      "--until-decided", "--baseline", str(base),
                                      "--seed", "3", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    rows = (tmp_path / "cand.jsonl").read_text().splitlines()
    header = json.loads(rows[0])
    assert summary["stopped_early"] is True and summary["stop_reason"] == "differs"
    assert summary["cases_planned"] == N and summary["cases"] < N
    assert summary["cases"] == header["sequential"]["cases_called"]
    assert summary["sequential"] == header["sequential"]
    assert summary["exit_code"] == 0 == summary["exit_status"]
    # the console's line, on standard error beside the document
    assert "stopped early by the sequential rule: the difference is decided" in \
        result.stderr


GATED = """
checks:
  - id: floor
    metric: ndcg@10
    op: ">="
    threshold: 0.1
  - id: no_regression
    metric: recall@1
    vs_baseline: no_significant_regression
"""


def test_cli_compares_the_metric_of_the_gates_vs_baseline_check(tmp_path: Path) -> None:
    # ndcg@10 first: the default is the gate's, not the first metric
    base = project(tmp_path, CONFIG.replace("[recall@1]", "[ndcg@10, recall@1]")
                   + "checks: checks.yaml\n")
    (tmp_path / "checks.yaml").write_text(GATED)
    config = tmp_path / "evalkit.yaml"
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(config), "--until-decided", "--baseline",
                                 str(base)])
    assert result.exit_code == 0, result.output
    header = json.loads((tmp_path / "cand.jsonl").read_text().splitlines()[0])
    assert header["sequential"]["metric"] == "recall@1"
    assert header["sequential"]["reason"] == "differs"
    # a second vs_baseline check on another metric: no default, and the message says why
    (tmp_path / "checks.yaml").write_text(GATED + "  - id: ndcg\n    metric: ndcg@10\n    "
                                          "vs_baseline: no_significant_regression\n")
    result = runner.invoke(app, ["run", str(config), "--until-decided", "--baseline",
                                 str(base), "-o", str(tmp_path / "two.jsonl")])
    assert result.exit_code == 2
    assert "vs_baseline checks on 2 metrics (recall@1, ndcg@10)" in result.output
    assert "--metric NAME" in result.output
    # no checks file named: the refusal says that too
    config.write_text(CONFIG.replace("[recall@1]", "[ndcg@10, recall@1]"))
    result = runner.invoke(app, ["run", str(config), "--until-decided", "--baseline",
                                 str(base), "-o", str(tmp_path / "three.jsonl")])
    assert result.exit_code == 2 and "names no checks file" in result.output


def test_cli_with_clusters_the_unit_is_the_cluster(tmp_path: Path) -> None:
    """100 clusters of 10 cases (case i in cluster i % 100): the sequence runs over
    whole clusters in the seeded order, one value per cluster, its mean difference."""
    base = project(tmp_path, CONFIG, cluster=lambda i: f"k{i % 100:02d}")
    result = CliRunner().invoke(app, ["run", str(tmp_path / "evalkit.yaml"),
                                      "--until-decided", "--cluster", "--baseline",
                                      str(base), "--seed", "5"])
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "cand.jsonl").read_text().splitlines()[0])["sequential"]
    assert record["unit"] == "cluster" and record["units"] == 100
    used = record["used"]  # the sequence's n counts clusters, each of 10 cases
    assert record["reason"] == "differs" and 2 <= used < 100
    assert record["cases_used"] == 10 * used
    assert f"after {used} of 100 clusters ({10 * used} cases)" in result.output
    # the worse ranker finds case i when i % 10 == 0, the baseline every case: the mean
    # difference of cluster k is 0 when k % 10 == 0, else -1
    clusters = [f"k{k:02d}" for k in range(100)]  # in the order the golden set names them
    means = []
    for g in [clusters[j] for j in random_order(100, 5)][:used]:
        members = [i for i in range(N) if f"k{i % 100:02d}" == g]
        means.append(sum((1.0 if i % 10 == 0 else 0.0) - 1.0 for i in members)
                     / len(members))
    # the differences lie in [-1, 1]; a cluster's mean too (G max(n_g) / N = 1)
    cs = paired_confidence_sequence(means, 1.0, alpha=0.05, population=100)
    assert record["radius"] == pytest.approx(1.0)
    assert record["interval"] == pytest.approx(list(cs.last), abs=1e-12)
    assert record["mean_difference"] == pytest.approx(sum(means) / used)
    # every case of the clusters the sequence used was called
    called = {r.query_id for r in RunResult.load(tmp_path / "cand.jsonl").per_query}
    used_clusters = {clusters[j] for j in random_order(100, 5)[:used]}
    assert {f"c{i:04d}" for i in range(N) if f"k{i % 100:02d}" in used_clusters} <= called


SCRIPT = '''
import sys, time
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.targets import CallableTarget
from evalkit.execute.sequential_run import UntilDecided
from evalkit.execute.target_runner import evaluate

log_path, artifact, base, delay = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])

def rank(case):
    with open(log_path, "a") as fh:
        fh.write(case.id + "\\n")
    time.sleep(delay)
    return [case.id] if int(case.id[1:]) % 10 == 0 else ["nothing"]

cases = GoldenSet(GoldenCase(f"c{i:04d}", "q", relevant=frozenset({f"c{i:04d}"}))
                  for i in range(1000))
run = evaluate(CallableTarget(rank, name="worse"), cases, ["recall@1"], max_concurrency=2,
               artifact=artifact, resume=True, progress=False,
               until_decided=UntilDecided(base, seed=11))
print(run.header["sequential"]["reason"], run.header["sequential"]["cases_used"])
'''


def test_resume_after_ctrl_c_continues_the_same_order(tmp_path: Path) -> None:
    base = baseline_run(tmp_path)
    script = tmp_path / "run_seq.py"
    script.write_text(SCRIPT)
    artifact = tmp_path / "run.jsonl"

    def start(log: Path, delay: float) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, str(script), str(log), str(artifact),
                                 str(base), str(delay)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    proc = start(tmp_path / "calls1.log", 0.05)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait for a few rows, then Ctrl-C
        if artifact.exists() and len(artifact.read_text().splitlines()) >= 6:
            break
        if proc.poll() is not None:
            pytest.fail(f"the run ended early: {proc.communicate()}")
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "RunInterrupted" in err
    first = (tmp_path / "calls1.log").read_text().split()
    proc = start(tmp_path / "calls2.log", 0.0)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    reason, used = out.split()
    assert reason == "differs"
    second = (tmp_path / "calls2.log").read_text().split()
    assert not set(first) & set(second)  # no answered case called again
    called = first + second
    order = [f"c{i:04d}" for i in random_order(1000, 11)]
    # calls start in the seeded order, before and after the resume: a prefix of it
    assert set(called) == set(order[:len(called)])
    assert int(used) <= len(called) < 1000
    run = RunResult.load(artifact)
    assert coverage_of(run).complete and run.header["resumed"] == 1
