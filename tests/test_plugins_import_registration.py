"""A project plugin that registers through ``evalkit.register_metric`` when it is imported
(the first example of docs/judge.md) works in every command and from Python.

Each test runs evalkit in a real child process under a timeout: discovery that waited for
itself would hang, and the timeout turns that into a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evalkit.testing.child_runs import EVALKIT_COMMAND, written_rows

TIMEOUT = 120  # seconds; a child that has not finished by then is waiting for itself

# The metric counts the ids a response ranked, so every value is known by hand: the
# target ranks i + 1 ids for case ci, and the TREC run below ranks 3 ids for q1, 1 for q2.
PLUGIN = '''
import evalkit
from evalkit.data.targets import CallableTarget


@evalkit.register_metric("retrieved_count", higher_is_better=True)
def retrieved_count(response, case):
    """How many ids the response ranked."""
    return float(len(response.ranked_ids))


def make_target():
    return CallableTarget(lambda case: [f"d{j}" for j in range(int(case.id[1:]) + 1)],
                          name="ids")
'''

PYPROJECT = '''
[tool.evalkit]
local_plugins = [{plugins}]
goldens = "goldens.jsonl"
target = {{factory = "import_time_plugin:make_target"}}
metrics = ["retrieved_count"]
output = "runs/run.jsonl"
'''


def project(folder: Path, **extra_plugins: str) -> Path:
    """A project whose local plugin ``import_time_plugin`` registers at import time."""
    modules = {"import_time_plugin": PLUGIN, **extra_plugins}
    for name, source in modules.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    listed = ", ".join(f'"{name}"' for name in modules)
    (folder / "pyproject.toml").write_text(PYPROJECT.format(plugins=listed), encoding="utf-8")
    (folder / "goldens.jsonl").write_text("".join(
        json.dumps({"id": f"c{i}", "query": "q"}) + "\n" for i in range(3)), encoding="utf-8")
    (folder / "run.txt").write_text(
        "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d3 3 1.0 t\nq2 Q0 d1 1 1.0 t\n",
        encoding="utf-8")
    (folder / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d9 1\n", encoding="utf-8")
    return folder


def child(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_PLUGINS"}
    return subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)


def evalkit(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return child(folder, *EVALKIT_COMMAND, *args)


def test_run_scores_with_a_metric_registered_at_import(tmp_path: Path) -> None:
    folder = project(tmp_path)
    done = evalkit(folder, "run")
    assert done.returncode == 0, done.stderr
    rows = written_rows(folder / "runs" / "run.jsonl")
    assert {r["id"]: r["metrics"]["retrieved_count"] for r in rows} == {
        "c0": 1.0, "c1": 2.0, "c2": 3.0}


def test_eval_scores_a_trec_run_with_a_metric_registered_at_import(tmp_path: Path) -> None:
    done = evalkit(project(tmp_path), "eval", "run.txt", "--qrels", "qrels.txt",
                   "-m", "retrieved_count", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["means"] == {"retrieved_count": (3 + 1) / 2}


def test_gate_judges_a_metric_registered_at_import(tmp_path: Path) -> None:
    folder = project(tmp_path)
    (folder / "checks.yaml").write_text(
        "checks:\n  - id: enough\n    metric: retrieved_count\n    op: '>='\n"
        "    threshold: 2.0\n", encoding="utf-8")
    assert evalkit(folder, "run").returncode == 0
    done = evalkit(folder, "gate", "-c", "checks.yaml", "-r", "runs/run.jsonl", "--json")
    assert done.returncode == 0, done.stderr
    (check,) = json.loads(done.stdout)["rows"]
    assert (check["name"], check["status"], check["value"]) == ("enough", "pass", (1 + 2 + 3) / 3)


FAILS_AFTER_REGISTERING = '''
import evalkit


@evalkit.register_metric("half_done", higher_is_better=True)
def half_done(response, case):
    return 0.0


raise RuntimeError("the plugin's own import error")
'''

CLAIMS_A_BUILTIN = '''
import evalkit


@evalkit.register_aggregate("entropy", higher_is_better=True)
def entropy(rows):
    return 0.0
'''


def test_the_listing_shows_import_time_names_and_failures(tmp_path: Path) -> None:
    folder = project(tmp_path, fails_after_registering=FAILS_AFTER_REGISTERING,
                     claims_a_builtin=CLAIMS_A_BUILTIN)
    done = evalkit(folder, "plugins", "list", "--json")
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    plugins = {p["name"]: p for p in listing["plugins"]}
    loaded = plugins["import_time_plugin"]
    assert (loaded["status"], loaded["names"]) == ("loaded", ["retrieved_count"])
    failed = plugins["fails_after_registering"]
    assert (failed["status"], failed["error"]) == (
        "failed", "RuntimeError: the plugin's own import error")
    refused = plugins["claims_a_builtin"]
    assert refused["status"] == "failed"
    assert "name 'entropy' is already provided by paired-evalkit" in refused["error"]
    assert "module claims_a_builtin was refused" in refused["error"]
    names = {n["name"]: n for n in listing["names"]}
    assert names["retrieved_count"]["provider"] == "module import_time_plugin"
    assert "half_done" not in names  # a failed import leaves none of its records

    checked = evalkit(folder, "plugins", "list", "--check")
    assert checked.returncode == 1
    assert "2 failed" in checked.stdout


PYTHON_USE = '''
import evalkit
from evalkit.plugins import use_registry

print(evalkit.polarity("retrieved_count"), "retrieved_count" in evalkit.registered())
with use_registry() as fresh:  # a second discovery in this process: the module is imported
    (info,) = [p for p in fresh.plugins if p.name == "import_time_plugin"]
    print(info.names, evalkit.resolve("retrieved_count").name)
'''


def test_python_sees_import_time_names_in_every_discovered_registry(tmp_path: Path) -> None:
    done = child(project(tmp_path), sys.executable, "-c", PYTHON_USE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True True", "['retrieved_count'] retrieved_count"]


HOOK_USES_THE_DEFAULT_REGISTRY = '''
import evalkit
from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import MetricSpec


@hookimpl
def evalkit_register_metrics():
    counted = evalkit.resolve("retrieved_count")  # registered by the plugin listed first
    return [MetricSpec("twice_retrieved", lambda r, c: 2 * counted.fn(r, c),
                       higher_is_better=True)]
'''


@pytest.mark.parametrize("command", [("plugins", "list", "--json"), ("run",)])
def test_a_hook_may_read_the_registry_being_discovered(tmp_path: Path,
                                                       command: tuple[str, ...]) -> None:
    folder = project(tmp_path, hook_plugin=HOOK_USES_THE_DEFAULT_REGISTRY)
    pyproject = folder / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(
        'metrics = ["retrieved_count"]', 'metrics = ["twice_retrieved"]'))
    done = evalkit(folder, *command)
    assert done.returncode == 0, done.stderr
    if command == ("run",):
        rows = written_rows(folder / "runs" / "run.jsonl")
        assert sorted(r["metrics"]["twice_retrieved"] for r in rows) == [2.0, 4.0, 6.0]
    else:
        plugins = {p["name"]: p for p in json.loads(done.stdout)["plugins"]}
        assert plugins["hook_plugin"]["names"] == ["twice_retrieved"]
