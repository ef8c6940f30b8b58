"""A plugin module that ends the process (``sys.exit()`` at its top level) or prints while
it is imported or its hooks run, seen through the real ``evalkit`` script in a subprocess:
the plugin is listed as failed, naming it, every other command still runs with the
plugin's exit code nowhere, and nothing the plugin prints reaches stdout (a ``--json``
object stays the only thing there).

Each plugin is a fake distribution (``<name>-<version>.dist-info`` beside its module) in a
temporary folder put on ``PYTHONPATH``; a project in another folder selects it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("evalkit")

PLUGIN = '''
import os
import sys

from evalkit import hookimpl
from evalkit.core.specs import AggregateSpec, MetricSpec

if os.environ.get("FAKE_FAULT") == "import_exit":
    sys.exit(int(os.environ.get("FAKE_EXIT_CODE", "3")))
if os.environ.get("FAKE_FAULT") == "import_print":
    print("fake-exits: loaded (banner)")


def words(response, case):
    return float(len((response.text or "").split()))


def answered(rows):
    return 1.0


@hookimpl
def evalkit_register_metrics():
    if os.environ.get("FAKE_FAULT") == "hook_print":
        print("registering metrics...")
        sys.stdout.write("more noise\\n")
    return [MetricSpec("fake_words", words, higher_is_better=False)]


@hookimpl
def evalkit_register_aggregates():
    return [AggregateSpec("fake_answered", answered, higher_is_better=True)]
'''

LOCAL = '''
import os
import sys

if os.environ.get("LOCAL_FAULT") == "import_exit":
    sys.exit(0)
if os.environ.get("LOCAL_FAULT") == "import_print":
    print("local banner")
'''


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("confinement")
    site = root / "site"
    info = site / "fake_exits-1.2.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-exits\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text("[evalkit.plugins]\nexits = fake_exits_plugin\n")
    (site / "fake_exits_plugin.py").write_text(PLUGIN)
    project = root / "project"
    project.mkdir()
    (project / "localplug.py").write_text(LOCAL)
    (project / "pyproject.toml").write_text(
        '[tool.evalkit]\nplugins = ["evalkit-retrieval", "fake-exits"]\n'
        'local_plugins = ["localplug"]\n')
    (project / "run.txt").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    (project / "qrels.txt").write_text("q1 0 d1 1\n")
    return site, project


def evalkit(folders: tuple[Path, Path], *args: str,
            **env: str) -> subprocess.CompletedProcess[str]:
    site, project = folders
    full = {**os.environ, "PYTHONPATH": str(site), "EVALKIT_CACHE_DIR": "", **env}
    for name in ("EVALKIT_DEBUG", "EVALKIT_PLUGINS"):
        full.pop(name, None)
    return subprocess.run([str(SCRIPT), *args], cwd=project, env=full, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize("code", ["0", "1", "3"])
def test_sys_exit_at_a_plugin_s_import_fails_that_plugin_only(
        folders: tuple[Path, Path], code: str) -> None:
    fault = {"FAKE_FAULT": "import_exit", "FAKE_EXIT_CODE": code}
    listing = evalkit(folders, "plugins", "list", "--json", **fault)
    assert listing.returncode == 0, listing.stderr
    plugins = {p["name"]: p for p in json.loads(listing.stdout)["plugins"]}
    assert plugins["exits"]["status"] == "failed"
    assert plugins["exits"]["error"] == f"SystemExit({int(code)}) (a sys.exit() call)"
    assert plugins["retrieval"]["status"] == "loaded"
    check = evalkit(folders, "plugins", "list", "--check", **fault)
    assert check.returncode == 1
    assert "fake-exits" in check.stdout + check.stderr
    helped = evalkit(folders, "--help", **fault)
    assert helped.returncode == 0 and "Usage" in helped.stdout and " eval " in helped.stdout
    scored = evalkit(folders, "eval", "run.txt", "--qrels", "qrels.txt", "-m", "AP", **fault)
    assert scored.returncode == 0, scored.stderr
    assert "1.0000" in scored.stdout
    assert "plugin 'exits' (fake-exits 1.2) failed to load" in scored.stderr


def test_sys_exit_at_a_local_plugin_s_import_fails_that_plugin_only(
        folders: tuple[Path, Path]) -> None:
    listing = evalkit(folders, "plugins", "list", "--json", LOCAL_FAULT="import_exit")
    assert listing.returncode == 0, listing.stderr
    plugins = {p["name"]: p for p in json.loads(listing.stdout)["plugins"]}
    assert plugins["localplug"]["status"] == "failed"
    assert "SystemExit(0)" in plugins["localplug"]["error"]
    scored = evalkit(folders, "eval", "run.txt", "--qrels", "qrels.txt", "-m", "AP",
                     LOCAL_FAULT="import_exit")
    assert scored.returncode == 0 and "1.0000" in scored.stdout
    assert "local plugin module 'localplug' failed to load: SystemExit(0)" in scored.stderr


@pytest.mark.parametrize("fault", [{"FAKE_FAULT": "import_print"},
                                   {"FAKE_FAULT": "hook_print"},
                                   {"LOCAL_FAULT": "import_print"}])
def test_what_a_plugin_prints_while_it_loads_goes_to_stderr(
        folders: tuple[Path, Path], fault: dict[str, str]) -> None:
    listing = evalkit(folders, "plugins", "list", "--json", **fault)
    assert listing.returncode == 0, listing.stderr
    assert json.loads(listing.stdout)["plugins"]  # stdout is the JSON object alone
    assert "banner" in listing.stderr or "registering metrics..." in listing.stderr
    scored = evalkit(folders, "eval", "run.txt", "--qrels", "qrels.txt", "-m", "AP",
                     "--json", **fault)
    assert scored.returncode == 0, scored.stderr
    json.loads(scored.stdout)


def test_a_sys_exit_in_a_plugin_import_leaves_the_python_api_running(
        folders: tuple[Path, Path]) -> None:
    site, project = folders
    code = ("import evalkit, warnings\n"
            "warnings.simplefilter('ignore')\n"
            "print(sorted(n for n in evalkit.registered() if n.startswith('fake')))\n"
            "print(evalkit.polarity('AP'))\n")
    env = {**os.environ, "PYTHONPATH": str(site), "EVALKIT_CACHE_DIR": "",
           "FAKE_FAULT": "import_exit"}
    env.pop("EVALKIT_PLUGINS", None)
    res = subprocess.run([sys.executable, "-c", code], cwd=project, env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == ["[]", "True"]
