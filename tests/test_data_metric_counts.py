"""A run that did not measure never reads as green: how many cases each metric scored
(``RunResult.metric_counts()``), the summary of ``evalkit run`` and ``evalkit rescore``,
and their exit status 4 when a metric failed on some case (``--allow-metric-errors``
accepts a metric that scored some cases, never one that scored none)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from evalkit.data.cases import GoldenCase
from evalkit.data.metric_counts import MessageGroup, MetricCounts, message_groups, unmeasured
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget
from evalkit.execute.target_runner import evaluate
from evalkit.plugins.default import use_registry
from evalkit.testing.child_runs import EVALKIT_COMMAND

PLUGIN = '''
import os
from pathlib import Path
import evalkit
from evalkit.core.specs import MetricSpec
from evalkit.data.targets import CallableTarget

HERE = Path(__file__).parent


def graded(response, case):
    """A scripted judge: refuses the cases listed in refuse.txt ('*': every case)."""
    refused = (HERE / "refuse.txt").read_text().split()
    if "*" in refused or case.id in refused:
        raise RuntimeError("the judge refused to grade this answer")
    return 3.0


@evalkit.hookimpl
def evalkit_register_metrics():
    return [MetricSpec("graded", graded, True)]


def make():
    return CallableTarget(lambda case: "answer to " + case.id, name="echo")
'''


def project(root: Path, refuse: str) -> None:
    (root / "scripted_judge.py").write_text(PLUGIN)
    (root / "refuse.txt").write_text(refuse)
    (root / "pyproject.toml").write_text(
        '[tool.evalkit]\nlocal_plugins = ["scripted_judge"]\n')
    (root / "goldens.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "query": "q", "answers": [f"answer to c{i}"]}) + "\n"
        for i in range(5)))
    (root / "evalkit.yaml").write_text(
        "goldens: goldens.jsonl\ntarget: {factory: 'scripted_judge:make'}\n"
        "metrics: [graded, exact_match]\noutput: run.jsonl\nmax_concurrency: 1\n")


def evalkit(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([*EVALKIT_COMMAND, *args], cwd=root, capture_output=True,
                          text=True, timeout=120, env=env)


SOME_FAIL = [
    "metric" + " " * 11 + "mean",
    "graded" + " " * 12 + "n/a  (scored on 3 of 5 cases; 2 errors)",
    "exact_match    1.0000",
    "complete: 5 cases; metric failures (the other metrics keep their values): graded on "
    "2 case(s)",
    "graded: scored on 3 of 5 cases; 2 errors:",
    "  2 cases ('c1', 'c3'): metric 'graded' failed on case 'c1': the judge refused to "
    "grade this answer",
]


def test_a_metric_that_failed_on_some_cases_exits_4(tmp_path: Path) -> None:
    project(tmp_path, "c1 c3")
    done = evalkit(tmp_path, "run", "--no-progress")
    assert done.returncode == 4, done.stderr
    assert done.stdout.splitlines() == [*SOME_FAIL, f"artifact: {tmp_path / 'run.jsonl'}"]
    assert done.stderr == (
        "error: metric graded failed on 2 of 5 cases, so the run did not measure every "
        "case (exit 4); `evalkit run --resume` scores them again from the stored "
        "responses, and --allow-metric-errors accepts a metric that scored some cases\n")
    # the run is kept, complete: it is the exit status that says what is missing
    assert RunResult.load(tmp_path / "run.jsonl").header["status"] == "complete"
    allowed = evalkit(tmp_path, "run", "--no-progress", "--overwrite",
                      "--allow-metric-errors")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.splitlines()[:-1] == SOME_FAIL and allowed.stderr == ""
    # rescore the same way: 4, or 0 when allowed; and 0 once the judge grades every case
    assert evalkit(tmp_path, "rescore", "run.jsonl", "-m", "graded").returncode == 4
    assert evalkit(tmp_path, "rescore", "run.jsonl", "-m", "graded",
                   "--allow-metric-errors").returncode == 0
    (tmp_path / "refuse.txt").write_text("")
    fixed = evalkit(tmp_path, "rescore", "run.jsonl", "-m", "graded")
    assert fixed.returncode == 0, fixed.stderr
    assert ["graded", "3.0000"] in [line.split() for line in fixed.stdout.splitlines()]
    # the metric not named keeps its values
    assert ["exact_match", "1.0000"] in [line.split() for line in fixed.stdout.splitlines()]


def test_a_metric_that_scored_no_case_exits_4_even_when_errors_are_allowed(
        tmp_path: Path) -> None:
    project(tmp_path, "*")
    done = evalkit(tmp_path, "run", "--no-progress", "--allow-metric-errors", "--json")
    assert done.returncode == 4
    assert done.stderr == (
        "error: metric graded scored no case: it failed on all 5 it was given; a metric "
        "that measured nothing exits 4 even with --allow-metric-errors\n")
    summary = json.loads(done.stdout)
    assert summary["metric_counts"] == {
        "graded": {"cases": 5, "scored": 0, "errored": 5, "no_response": 0, "errors": [
            {"message": "metric 'graded' failed on case 'c0': the judge refused to grade "
                        "this answer", "cases": 5, "ids": ["c0", "c1", "c2", "c3", "c4"]}]},
        "exact_match": {"cases": 5, "scored": 5, "errored": 0, "no_response": 0,
                        "errors": []},
    }
    text = evalkit(tmp_path, "rescore", "run.jsonl", "-m", "graded,exact_match",
                   "--allow-metric-errors")
    assert text.returncode == 4
    assert "graded" + " " * 12 + "n/a  (scored on 0 of 5 cases; 5 errors)" in text.stdout
    assert "  5 cases ('c0', 'c1', 'c2', ...): metric 'graded' failed on case 'c0': the " \
           "judge refused to grade this answer" in text.stdout


def test_an_incomplete_run_exits_1_whatever_its_metrics(tmp_path: Path) -> None:
    project(tmp_path, "*")
    (tmp_path / "scripted_judge.py").write_text(PLUGIN.replace(
        'return CallableTarget(lambda case: "answer to " + case.id, name="echo")',
        "def answer(case):\n"
        "        if case.id == 'c2':\n"
        "            raise RuntimeError('the service is down')\n"
        "        return 'answer to ' + case.id\n"
        "    return CallableTarget(answer, name='echo')"))
    done = evalkit(tmp_path, "run", "--no-progress")
    assert done.returncode == 1, done.stderr
    assert done.stderr == ""  # the summary says why; 1 takes precedence over 4
    assert "graded: scored on 0 of 5 cases; 4 errors; 1 without a response:" in \
        done.stdout.splitlines()


def test_run_result_counts_every_metric_it_asked_for() -> None:
    def flaky(response: object, case: GoldenCase) -> float:
        if case.id in ("b", "d"):
            raise ValueError("no grade")
        return 1.0

    cases = [GoldenCase(i, "q") for i in "abcde"]
    with use_registry() as reg:
        reg.register_metric("flaky", higher_is_better=True)(flaky)
        reg.register_metric("steady", higher_is_better=True)(lambda r, c: 0.5)
        run = evaluate(CallableTarget(lambda c: "x"), cases, ["flaky", "steady"],
                       progress=False)
    counts = run.metric_counts()
    assert list(counts) == ["flaky", "steady"]
    assert counts["flaky"] == MetricCounts(
        "flaky", cases=5, scored=3, errored=2, no_response=0,
        errors=(MessageGroup("metric 'flaky' failed on case 'b': no grade", 2,
                             ("b", "d")),))
    assert not counts["flaky"].measured_all and counts["steady"].measured_all
    assert counts["steady"] == MetricCounts("steady", 5, 5, 0, 0, ())
    assert unmeasured(counts.values()) == [counts["flaky"]]
    assert unmeasured(counts.values(), allow_errors=True) == []


def test_messages_are_grouped_by_kind_most_frequent_first() -> None:
    groups = message_groups([("1", "timeout on case '1'"), ("2", "refused"),
                             ("3", "timeout on case '3'"), ("4", 'timeout on case "4"')])
    assert groups == [MessageGroup("timeout on case '1'", 3, ("1", "3", "4")),
                      MessageGroup("refused", 1, ("2",))]
    many = message_groups((str(i), "same") for i in range(25))
    assert many == [MessageGroup("same", 25, tuple(str(i) for i in range(20)))]


@pytest.mark.parametrize("samples", [1, 3])
def test_a_failure_on_one_sample_is_a_failure_of_the_case(samples: int) -> None:
    from evalkit.execute.samples import current_sample

    def late(response: object, case: GoldenCase) -> float:
        if case.id == "a" and current_sample() in (None, samples - 1):
            raise ValueError("late sample")
        return 1.0

    with use_registry() as reg:
        reg.register_metric("late", higher_is_better=True)(late)
        run = evaluate(CallableTarget(lambda c: "x"), [GoldenCase("a"), GoldenCase("b")],
                       ["late"], progress=False, epochs=samples)
    got = run.metric_counts()["late"]
    assert (got.cases, got.scored, got.errored) == (2, 1, 1)
