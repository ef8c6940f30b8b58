"""What a plugin's metric or aggregate, or a target, returns must be a finite number a
float holds: anything else (an ``int`` beyond the float range such as ``10**400``, NaN,
an infinity, a ``str``, a ``bool``, ``None``) is that code's failure, recorded where the
run records failures, with the conformance suite's message, and never a traceback or a
non-standard JSON token in the artifact. A metric: that case's metric error (exit 4); an
aggregate: not computed (exit 4, docs/runner.md); a target: that case's error (exit 1).
Each run goes through the real ``evalkit`` script in a subprocess."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evalkit import hookimpl
from evalkit.core.specs import AggregateSpec, MetricSpec
from evalkit.testing import check_conformance

SCRIPT = Path(sys.executable).with_name("evalkit")

LOCAL_PLUGIN = '''
import os

from evalkit import hookimpl
from evalkit.core.specs import AggregateSpec, MetricSpec


def odd_metric(response, case):
    if case.id == "q2":
        return eval(os.environ.get("METRIC_VALUE", "1.0"))
    return 1.0


def odd_aggregate(rows):
    return eval(os.environ.get("AGG_VALUE", "0.5"))


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("odd", odd_metric, higher_is_better=True)]


@hookimpl
def evalkit_register_aggregates():
    return [AggregateSpec("odd_total", odd_aggregate, higher_is_better=True)]
'''

TARGETS = '''
import os

from evalkit.data.targets import CallableTarget, TargetResponse


def plain():
    return CallableTarget(lambda case: ["d1"], name="t")


def timed():
    def fn(case):
        if case.id == "q2":
            return TargetResponse(ranked_ids=["d1"], latency_ms=eval(os.environ["LATENCY"]))
        return TargetResponse(ranked_ids=["d1"], latency_ms=5.0)
    return CallableTarget(fn, name="t")
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("values")
    (folder / "goldens.jsonl").write_text(
        '{"id": "q1", "query": "a", "expected": ["d1"]}\n'
        '{"id": "q2", "query": "b", "expected": ["d2"]}\n'
        '{"id": "q3", "query": "c", "expected": ["d3"]}\n')
    (folder / "local_values.py").write_text(textwrap.dedent(LOCAL_PLUGIN))
    (folder / "value_targets.py").write_text(textwrap.dedent(TARGETS))
    (folder / "pyproject.toml").write_text(
        '[tool.evalkit]\nplugins = ["evalkit-retrieval"]\nlocal_plugins = ["local_values"]\n')
    for name, factory, metrics, aggregates in [
            ("metric", "plain", "[recall@1, odd]", "[]"),
            ("aggregate", "plain", "[recall@1]", "[odd_total]"),
            ("latency", "timed", "[recall@1]", "[]")]:
        (folder / f"{name}.yaml").write_text(
            f"goldens: goldens.jsonl\ntarget: {{factory: 'value_targets:{factory}'}}\n"
            f"metrics: {metrics}\naggregates: {aggregates}\noutput: out/{name}.jsonl\n")
    return folder


def evalkit(folder: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(folder)}
    env.pop("EVALKIT_DEBUG", None)
    env.update(extra)
    return subprocess.run([str(SCRIPT), *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def strict_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of an artifact, parsed as standard JSON (a NaN/Infinity token fails)."""
    def refuse(token: str) -> Any:
        raise AssertionError(f"{path}: non-standard JSON token {token}")

    return [json.loads(line, parse_constant=refuse)
            for line in path.read_text().splitlines()]


BEYOND = ("metric 'odd' on case 'q2': its value is beyond the float range (magnitude "
          "above about 1.8e308): got an integer of 401 digits")


def test_a_metric_beyond_the_float_range_is_that_case_s_metric_error(project: Path) -> None:
    res = evalkit(project, "run", "metric.yaml", "--no-progress", METRIC_VALUE="10**400")
    assert res.returncode == 4, (res.stdout, res.stderr)  # a metric failed on a case
    assert "Traceback" not in res.stderr and "OverflowError" not in res.stderr
    lines = strict_lines(project / "out" / "metric.jsonl")
    rows = {r["id"]: r for r in lines[1:-1]}
    assert rows["q2"]["metric_errors"] == {"odd": BEYOND}
    assert rows["q1"]["metrics"]["odd"] == 1.0 and "odd" not in rows["q2"]["metrics"]
    assert lines[0]["metric_errors"] == {"odd": 1}
    # rescoring the stored responses meets the same value and records the same error
    again = evalkit(project, "rescore", "out/metric.jsonl", "-m", "recall@1,odd",
                    "-o", "out/rescored.jsonl", METRIC_VALUE="-10**400")
    assert again.returncode == 4, (again.stdout, again.stderr)
    rows = {r["id"]: r for r in strict_lines(project / "out" / "rescored.jsonl")[1:-1]}
    assert rows["q2"]["metric_errors"]["odd"] == BEYOND


def test_the_conformance_suite_gives_the_run_s_message() -> None:
    class Plugin:
        @hookimpl
        def evalkit_register_metrics(self) -> list[MetricSpec]:
            return [MetricSpec("huge", lambda response, case: 10**400,
                               higher_is_better=True)]

        @hookimpl
        def evalkit_register_aggregates(self) -> list[AggregateSpec]:
            return [AggregateSpec("nan_total", lambda rows: math.nan if rows else
                                  1 / 0, higher_is_better=True)]

    failures = "\n".join(check_conformance(Plugin()))
    assert ("its value is beyond the float range (magnitude above about 1.8e308): got an "
            "integer of 401 digits") in failures
    assert "OverflowError" not in failures
    assert "aggregate 'nan_total' returned nan; expected a finite float" in failures


@pytest.mark.parametrize(("value", "message"), [
    ("float('nan')", "aggregate 'odd_total' returned nan; expected a finite float"),
    ("-float('inf')", "aggregate 'odd_total' returned -inf; expected a finite float"),
    ("'0.5'", "aggregate 'odd_total': its value must be a number (int or float), got "
              "'0.5' (a str); parse strings first, give booleans as 0/1"),
    ("True", "aggregate 'odd_total': its value must be a number (int or float), got "
             "True (a bool); parse strings first, give booleans as 0/1"),
    ("None", "aggregate 'odd_total': its value must be a number (int or float), got "
             "None (a NoneType); parse strings first, give booleans as 0/1"),
    ("10**400", "aggregate 'odd_total': its value is beyond the float range (magnitude "
                "above about 1.8e308): got an integer of 401 digits"),
])
def test_an_aggregate_that_returns_no_finite_number_is_not_computed(
        project: Path, value: str, message: str) -> None:
    res = evalkit(project, "run", "aggregate.yaml", "--no-progress", "--overwrite",
                  AGG_VALUE=value)
    assert res.returncode == 4, (res.stdout, res.stderr)  # an aggregate not computed
    header = strict_lines(project / "out" / "aggregate.jsonl")[0]
    assert header["aggregates"] == {}
    assert header["aggregate_errors"] == {"odd_total": message}
    assert f"odd_total: not computed ({message})" in res.stdout + res.stderr


def test_a_finite_aggregate_is_recorded(project: Path) -> None:
    res = evalkit(project, "run", "aggregate.yaml", "--no-progress", "--overwrite",
                  AGG_VALUE="3")  # an int is taken as its float
    assert res.returncode == 0, (res.stdout, res.stderr)
    header = strict_lines(project / "out" / "aggregate.jsonl")[0]
    assert header["aggregates"] == {"odd_total": 3.0} and header["aggregate_errors"] == {}


@pytest.mark.parametrize(("value", "shown"), [
    ("10**400", "an integer of 401 digits"), ("float('inf')", "inf"),
    ("float('nan')", "nan"), ("'fast'", "'fast'"), ("-1.0", "-1.0")])
def test_a_target_latency_that_is_no_finite_number_fails_that_case(
        project: Path, value: str, shown: str) -> None:
    res = evalkit(project, "run", "latency.yaml", "--no-progress", "--overwrite",
                  LATENCY=value)
    assert res.returncode == 1, (res.stdout, res.stderr)  # incomplete: a case failed
    assert "Traceback" not in res.stderr
    lines = strict_lines(project / "out" / "latency.jsonl")
    rows = {r["id"]: r for r in lines[1:-1]}
    assert rows["q2"]["error"] == (
        f"target 't' returned a latency_ms of {shown} for case 'q2'; it must be a finite "
        "number of milliseconds >= 0 (0: the runner measures the call)")
    assert rows["q1"]["latency_ms"] == 5.0 and rows["q1"]["error"] is None


def test_an_artifact_line_never_holds_a_non_standard_token(tmp_path: Path) -> None:
    from evalkit.data.artifact import artifact_line
    from evalkit.data.results import RunResult
    from evalkit.data.rows import CaseResult

    assert artifact_line({"a": 1.5}) == '{"a": 1.5}\n'
    for bad, where in ((math.nan, "aggregates.x"), (math.inf, "aggregates.x"),
                       ([1.0, -math.inf], "aggregates.x.1")):
        with pytest.raises(ValueError, match=rf"non-finite number at {where}:"):
            artifact_line({"type": "header", "aggregates": {"x": bad}})
    run = RunResult("r", [CaseResult("q1", None, {}, "failed", None)],
                    header={"aggregates": {"cost": math.nan}})
    with pytest.raises(ValueError, match=r"at aggregates\.cost"):
        run.save(tmp_path / "r.jsonl")
    assert not (tmp_path / "r.jsonl").exists()


def test_a_stored_number_beyond_the_float_range_is_refused_by_name(tmp_path: Path) -> None:
    from evalkit.data.rows import case_result_from_json

    with pytest.raises(ValueError, match=r"metric 'm' is an integer of 1329 bits, beyond "
                                         r"the float range"):
        case_result_from_json({"id": "q1", "metrics": {"m": 10**400}, "error": None})
    with pytest.raises(ValueError, match=r"'latency_ms' is inf, not a finite number"):
        case_result_from_json({"id": "q1", "latency_ms": 1e999, "error": None})
    row = case_result_from_json({"id": "q1", "metrics": {"m": 1e999}, "error": None})
    assert row.metrics == {} and "not a finite number" in row.metric_errors["m"]


def test_checks_and_config_numbers_beyond_the_float_range_are_refused(
        tmp_path: Path) -> None:
    from evalkit.execute.evalconfig import ConfigError, load_eval_config
    from evalkit.gate.checks import CheckError, load_checks

    big = "1" + "0" * 400
    checks = tmp_path / "checks.yaml"
    checks.write_text(f"checks:\n  - {{id: a, metric: recall@1, op: '>=', threshold: {big}}}\n")
    with pytest.raises(CheckError) as caught:
        load_checks(checks)
    assert str(caught.value) == (f"{checks}: check 'a': 'threshold' must be a number a "
                                 "float holds, got an integer of 401 digits (line 2)")
    (tmp_path / "g.jsonl").write_text('{"id": "q1", "query": "a", "expected": ["d1"]}\n')
    config = tmp_path / "e.yaml"
    config.write_text("goldens: g.jsonl\ntarget: {factory: 'x:y'}\nmetrics: [recall@1]\n"
                      f"output: o.jsonl\nrequests_per_minute: {big}\n")
    with pytest.raises(ConfigError, match=r"e\.yaml:5: key 'requests_per_minute': must be "
                                          r"a positive number"):
        load_eval_config(config)


def test_run_in_python_refuses_a_metric_beyond_the_float_range(tmp_path: Path) -> None:
    code = textwrap.dedent('''
        import evalkit
        from evalkit.data.cases import GoldenCase
        from evalkit.execute.scoring import MetricError

        evalkit.register_metric("big@3", higher_is_better=True)(lambda r, c: 10**400)
        case = GoldenCase("1", "q", relevant=frozenset({"d1"}))
        try:
            evalkit.run("x", lambda q: ["d1"], [case], {"1": {"d1": 1}}, ["big@3"])
        except MetricError as exc:
            print(exc)
        ''')
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, check=False)
    assert res.stdout.strip() == (
        "metric 'big@3' on case '1': its value is beyond the float range (magnitude above "
        "about 1.8e308): got an integer of 401 digits"), res.stderr
