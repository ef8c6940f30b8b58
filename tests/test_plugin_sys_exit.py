"""``sys.exit()`` in code evalkit calls (a reporter's ``render``, a config section's
``apply``, a target, a metric, an aggregate) is that code's failure like any other
exception: it never chooses the command's exit status. A reporter or a section: one
``error:`` line naming it, exit 2, no report; a target: that case's error row (the run is
incomplete, exit 1); a metric: that case's metric error (exit 4). Each is run through the
real ``evalkit`` script in a subprocess, where a ``SystemExit`` would end the process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evalkit import hookimpl
from evalkit.core.specs import MetricSpec, ReporterSpec
from evalkit.testing import check_conformance

SCRIPT = Path(sys.executable).with_name("evalkit")

LOCAL_PLUGIN = '''
import os
import sys

from pydantic import BaseModel

from evalkit import hookimpl
from evalkit.core.specs import AggregateSpec, ConfigSectionSpec, MetricSpec, ReporterSpec


class Limits(BaseModel):
    limit: int = 1


def apply(section, config):
    if os.environ.get("EXIT_IN_APPLY"):
        sys.exit(0)


def render(report):
    raise SystemExit(0)


def exiting_metric(response, case):
    if case.id == "q2":
        sys.exit(0)
    return 1.0


def exiting_aggregate(rows):
    sys.exit(0)


@hookimpl
def evalkit_register_reporters():
    return [ReporterSpec("exits", render)]


@hookimpl
def evalkit_register_config_sections():
    return [ConfigSectionSpec("limits", Limits, apply=apply)]


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("exiting", exiting_metric, higher_is_better=True)]


@hookimpl
def evalkit_register_aggregates():
    return [AggregateSpec("exiting_total", exiting_aggregate, higher_is_better=True)]
'''

TARGETS = '''
import sys

from evalkit.data.targets import CallableTarget


def plain():
    return CallableTarget(lambda case: ["d1"], name="t")


def exiting():
    def fn(case):
        if case.id == "q2":
            sys.exit(0)
        return ["d1"]
    return CallableTarget(fn, name="t")


def factory_exits():
    sys.exit(0)


def exiting_async():
    async def fn(case):
        if case.id == "q2":
            sys.exit(0)
        return ["d1"]
    return CallableTarget(fn, name="t")
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sysexit")
    (folder / "goldens.jsonl").write_text(
        '{"id": "q1", "query": "a", "expected": ["d1"]}\n'
        '{"id": "q2", "query": "b", "expected": ["d2"]}\n'
        '{"id": "q3", "query": "c", "expected": ["d3"]}\n')
    (folder / "local_exit.py").write_text(textwrap.dedent(LOCAL_PLUGIN))
    (folder / "exit_targets.py").write_text(textwrap.dedent(TARGETS))
    (folder / "pyproject.toml").write_text(
        '[tool.evalkit]\nplugins = ["evalkit-retrieval"]\nlocal_plugins = ["local_exit"]\n')
    # recall@1 is 1/3 on every run: the gate fails (exit 1)
    (folder / "checks.yaml").write_text(
        "checks:\n  - {id: floor, metric: recall@1, op: '>=', threshold: 0.9}\n")
    for name, factory, extra in [
            ("plain", "plain", ""), ("section", "plain", "limits: {limit: 2}\n"),
            ("target", "exiting", ""), ("atarget", "exiting_async", ""),
            ("metric", "plain", ""), ("aggregate", "plain", ""),
            ("factory", "factory_exits", "")]:
        metrics = "[recall@1, exiting]" if name == "metric" else "[recall@1]"
        aggregates = "aggregates: [exiting_total]\n" if name == "aggregate" else ""
        (folder / f"{name}.yaml").write_text(
            f"goldens: goldens.jsonl\ntarget: {{factory: 'exit_targets:{factory}'}}\n"
            f"metrics: {metrics}\n{aggregates}output: out/{name}.jsonl\n"
            f"checks: checks.yaml\n{extra}")
    assert evalkit(folder, "run", "plain.yaml", "--no-progress").returncode == 0
    return folder


def evalkit(folder: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(folder)}
    env.pop("EVALKIT_DEBUG", None)
    env.update(extra)
    return subprocess.run([str(SCRIPT), *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def one_error_line(res: subprocess.CompletedProcess[str]) -> str:
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    errors = [line for line in res.stderr.splitlines() if not line.startswith("warning: ")]
    assert len(errors) == 1 and errors[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.stderr
    return errors[0]


def test_a_reporter_calling_sys_exit_is_an_error_of_the_reporter(project: Path) -> None:
    failing = evalkit(project, "gate", "-c", "checks.yaml", "-r", "out/plain.jsonl")
    assert failing.returncode == 1, failing.stderr
    gated = evalkit(project, "gate", "-c", "checks.yaml", "-r", "out/plain.jsonl",
                    "--report", "junit:rep/g.xml", "--report", "exits:rep/g.txt",
                    "--report", "json:rep/g.json")
    line = one_error_line(gated)
    assert ("the reporter 'exits' of module local_exit: its render(report) raised "
            "SystemExit(0) (a sys.exit() call)") in line
    assert not (project / "rep").exists()
    compared = evalkit(project, "compare", "out/plain.jsonl", "out/plain.jsonl",
                       "--report", "exits:rep/c.txt")
    assert "the reporter 'exits'" in one_error_line(compared)
    assert not (project / "rep").exists()


def test_a_config_section_apply_calling_sys_exit_is_an_error_of_the_section(
        project: Path) -> None:
    assert evalkit(project, "gate", "--config", "section.yaml",
                   "-r", "out/plain.jsonl").returncode == 1
    for args in (["gate", "--config", "section.yaml", "-r", "out/plain.jsonl"],
                 ["run", "section.yaml", "--no-progress", "-o", "out/never.jsonl"]):
        res = evalkit(project, *args, EXIT_IN_APPLY="1")
        assert ("key 'limits': the config section 'limits' of module local_exit: its "
                "apply(section, config) raised SystemExit(0)") in one_error_line(res), args
    assert not (project / "out" / "never.jsonl").exists()


@pytest.mark.parametrize("config", ["target", "atarget"])
def test_a_target_calling_sys_exit_fails_that_case(project: Path, config: str) -> None:
    res = evalkit(project, "run", f"{config}.yaml", "--no-progress")
    assert res.returncode == 1, (res.stdout, res.stderr)  # incomplete (docs/runner.md)
    lines = (project / "out" / f"{config}.jsonl").read_text().splitlines()
    header, trailer = json.loads(lines[0]), json.loads(lines[-1])
    rows = {r["id"]: r for r in map(json.loads, lines[1:-1])}
    assert header["status"] == "incomplete" and "rows" in trailer
    assert sorted(rows) == ["q1", "q2", "q3"]
    assert rows["q1"]["error"] is None and rows["q3"]["error"] is None
    assert "SystemExit(0)" in rows["q2"]["error"] and "'q2'" in rows["q2"]["error"]


def test_a_metric_calling_sys_exit_is_that_case_s_metric_error(project: Path) -> None:
    res = evalkit(project, "run", "metric.yaml", "--no-progress")
    assert res.returncode == 4, (res.stdout, res.stderr)  # a metric failed on a case
    lines = (project / "out" / "metric.jsonl").read_text().splitlines()
    rows = {r["id"]: r for r in map(json.loads, lines[1:-1])}
    assert rows["q1"]["metrics"]["exiting"] == 1.0
    assert "SystemExit(0)" in rows["q2"]["metric_errors"]["exiting"]
    assert rows["q2"]["metrics"]["recall@1"] == 0.0


def test_an_aggregate_calling_sys_exit_is_not_computed(project: Path) -> None:
    res = evalkit(project, "run", "aggregate.yaml", "--no-progress")
    assert res.returncode == 4, (res.stdout, res.stderr)  # an aggregate not computed
    header = json.loads((project / "out" / "aggregate.jsonl").read_text().splitlines()[0])
    assert "SystemExit" in header["aggregate_errors"]["exiting_total"]


def test_any_other_sys_exit_in_a_kernel_command_exits_2(project: Path) -> None:
    res = evalkit(project, "run", "factory.yaml", "--no-progress")
    assert "raised SystemExit(0) (a sys.exit() call) while the command ran" in \
        one_error_line(res)
    assert not (project / "out" / "factory.jsonl").exists()
    debug = evalkit(project, "run", "factory.yaml", "--no-progress", EVALKIT_DEBUG="1")
    assert debug.returncode == 2 and "Traceback" in debug.stderr


class ExitingPlugin:
    @hookimpl
    def evalkit_register_reporters(self) -> list[ReporterSpec]:
        return [ReporterSpec("exits", exiting_render)]

    @hookimpl
    def evalkit_register_metrics(self) -> list[MetricSpec]:
        return [MetricSpec("exiting", exiting_metric, higher_is_better=True)]


def exiting_render(report: object) -> str:
    raise SystemExit(0)


def exiting_metric(response: object, case: object) -> float:
    raise SystemExit(0)


def test_the_conformance_suite_reports_sys_exit_as_a_failed_check() -> None:
    failures = check_conformance(ExitingPlugin())  # returns: the process goes on
    assert any(f.startswith("reporter:exits:renders:") and "SystemExit" in f
               for f in failures), failures
    assert any(f.startswith("metric:exiting") and "SystemExit" in f for f in failures), \
        failures
