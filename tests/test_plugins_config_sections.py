"""Plugins' config sections seen from the command line: a ``[tool.evalkit.<section>]``
table whose plugin is not loaded (disabled, failed, not installed), a section whose model
cannot be imported, and the names a section's ``apply`` registers, each through the real
``evalkit`` script in a subprocess.

The plugin is a fake distribution (``fake-sections``: a ``<name>-<version>.dist-info``
folder beside its module) in a temporary folder put on ``PYTHONPATH``."""

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

from pydantic import BaseModel

import evalkit
from evalkit import hookimpl
from evalkit.core.specs import ConfigSectionSpec

if os.environ.get("FAKE_FAULT") == "import_raise":
    raise RuntimeError("boom at import")


class Limits(BaseModel):
    max_words: int = 1
    metric_name: str = "too_long"


def apply(section, config):
    if os.environ.get("FAKE_FAULT") == "apply_raises":
        raise RuntimeError("apply exploded")

    def too_long(response, case):
        return float(len((response.text or "").split()) > section.max_words)

    evalkit.register_metric(section.metric_name, higher_is_better=False)(too_long)


@hookimpl
def evalkit_register_config_sections():
    model = "fake_sections_plugin:Nope" if os.environ.get("FAKE_FAULT") == "badmodel" \\
        else "fake_sections_plugin:Limits"
    return [ConfigSectionSpec("fake_limits", model, apply=apply)]
'''

CONFIG = """\
goldens: goldens.jsonl
target: {factory: "target:make"}
metrics: [AP]
output: runs/run.jsonl
"""

PYPROJECT = '''[project]
name = "p"

[tool.evalkit]
plugins = {plugins}

[tool.evalkit.fake_limits]
max_words = 3
'''


PYPROJECT_RUN = '''[project]
name = "p"

[tool.evalkit]
plugins = {plugins}
goldens = "goldens.jsonl"
target = {{factory = "target:make"}}
metrics = ["AP"]
output = "runs/run.jsonl"

[tool.evalkit.fake_limits]
max_words = 3
'''


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sections")
    info = root / "fake_sections-0.7.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-sections\nVersion: 0.7\n")
    (info / "entry_points.txt").write_text("[evalkit.plugins]\nsections = fake_sections_plugin\n")
    (root / "fake_sections_plugin.py").write_text(PLUGIN)
    return root


def project(folder: Path, plugins: str, yaml: str | None = None) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "pyproject.toml").write_text(PYPROJECT.format(plugins=plugins))
    (folder / "run.txt").write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n")
    (folder / "qrels.txt").write_text("q1 0 d1 1\n")
    if yaml is not None:
        (folder / "evalkit.yaml").write_text(yaml)
    return folder


def evalkit(site: Path, folder: Path, *args: str,
            **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(site), "EVALKIT_CACHE_DIR": "", **env}
    for name in ("EVALKIT_DEBUG", "EVALKIT_PLUGINS"):
        full.pop(name, None)
    return subprocess.run([str(SCRIPT), *args], cwd=folder, env=full, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize(("plugins", "env", "status"), [
    ('["evalkit-retrieval"]', {}, "disabled"),
    ('["evalkit-retrieval", "fake-sections"]', {"FAKE_FAULT": "import_raise"}, "failed"),
])
def test_a_section_table_whose_plugin_is_not_loaded_leaves_the_listing_working(
        site: Path, tmp_path: Path, plugins: str, env: dict[str, str], status: str) -> None:
    folder = project(tmp_path / "p", plugins)
    listing = evalkit(site, folder, "plugins", "list", "--json", **env)
    assert listing.returncode == 0, listing.stderr
    report = json.loads(listing.stdout)
    assert report["ok"] is False
    [problem] = report["config_errors"]
    assert f"warning: {problem}" in listing.stderr
    plugins_listed = {p["name"]: p["status"] for p in report["plugins"]}
    assert plugins_listed["sections"] == status  # the listing shows why
    assert evalkit(site, folder, "plugins", "list", "--check", **env).returncode == 1
    # scoring a run file reads no eval config: the table is a warning there
    scored = evalkit(site, folder, "eval", "run.txt", "--qrels", "qrels.txt", "-m", "AP", **env)
    assert scored.returncode == 0, scored.stderr
    [warning] = [line for line in scored.stderr.splitlines() if "fake_limits" in line]
    assert warning.startswith(f"warning: {folder / 'pyproject.toml'}:7: [tool.evalkit]: "
                              "unknown key 'fake_limits' (the keys are aggregates, ")
    assert "no loaded plugin declares 'fake_limits'" in warning
    assert f"fake-sections ({status})" in warning.partition("Not loaded: ")[2]
    assert "see `evalkit plugins list`" in warning
    # a command that reads the eval config refuses it, naming the section
    (folder / "pyproject.toml").write_text(PYPROJECT_RUN.format(plugins=plugins))
    run = evalkit(site, folder, "run", "--no-progress", **env)
    assert run.returncode == 2
    error = run.stderr.splitlines()[-1]
    assert error.startswith(f"error: {folder / 'pyproject.toml'} [tool.evalkit]: key "
                            "'fake_limits': unknown key; the keys are "), error
    assert "no loaded plugin declares 'fake_limits'" in error
    assert f"fake-sections ({status})" in error.partition("Not loaded: ")[2]


def test_a_section_whose_plugin_is_not_installed_names_the_file_and_line(
        site: Path, tmp_path: Path) -> None:
    folder = project(tmp_path / "p", '["evalkit-retrieval"]')
    res = subprocess.run([str(SCRIPT), "plugins", "list", "--check"], cwd=folder,
                         env={**os.environ, "EVALKIT_CACHE_DIR": ""}, capture_output=True,
                         text=True, timeout=120, check=False)
    assert res.returncode == 1, res.stderr
    assert f"{folder / 'pyproject.toml'}:7: [tool.evalkit]: unknown key 'fake_limits'" in \
        res.stderr


def test_a_section_model_that_cannot_be_imported_is_the_plugin_s_fault(
        site: Path, tmp_path: Path) -> None:
    folder = project(tmp_path / "p", '["evalkit-retrieval", "fake-sections"]')
    fault = {"FAKE_FAULT": "badmodel"}
    assert evalkit(site, folder, "plugins", "list", **fault).returncode == 0
    check = evalkit(site, folder, "plugins", "list", "--check", "--json", **fault)
    assert check.returncode == 1, check.stderr
    [error] = json.loads(check.stdout)["section_errors"]
    assert error == (
        "config section 'fake_limits': the section's model 'fake_sections_plugin:Nope' "
        "cannot be imported (module 'fake_sections_plugin' has no attribute 'Nope'). This "
        "is a bug of plugin fake-sections 0.7 (fake_sections_plugin), which declares the "
        "section, not of your files or options: report it to the plugin's authors")
    schema = evalkit(site, folder, "schema", "config", **fault)
    assert schema.returncode == 0, schema.stderr
    assert "fake_limits" not in json.loads(schema.stdout)["properties"]
    assert ("warning: config section 'fake_limits' left out of the schema: the section's "
            "model 'fake_sections_plugin:Nope' cannot be imported") in schema.stderr
    assert "plugin fake-sections 0.7" in schema.stderr
    whole = evalkit(site, folder, "schema", "config")
    assert "fake_limits" in json.loads(whole.stdout)["properties"]
    (folder / "evalkit.yaml").write_text(CONFIG + "fake_limits:\n  max_words: 2\n")
    read = evalkit(site, folder, "plugins", "list", **fault)  # reads the eval config
    assert (f"warning: {folder / 'evalkit.yaml'}:5: key 'fake_limits': the section's model "
            "'fake_sections_plugin:Nope' cannot be imported") in read.stderr
    assert "This is a bug of plugin fake-sections 0.7" in read.stderr


def test_names_a_section_registers_are_listed_with_its_plugin(
        site: Path, tmp_path: Path) -> None:
    folder = project(tmp_path / "p", '["evalkit-retrieval", "fake-sections"]',
                     yaml=CONFIG + "fake_limits:\n  max_words: 2\n")
    listing = evalkit(site, folder, "plugins", "list", "--json")
    assert listing.returncode == 0, listing.stderr
    names = {n["name"]: n for n in json.loads(listing.stdout)["names"]}
    assert names["too_long"]["distribution"] == "fake-sections"
    assert names["too_long"]["version"] == "0.7"
    assert names["too_long"]["provider"] == "fake-sections 0.7 (fake_sections_plugin)"
    text = evalkit(site, folder, "plugins", "list").stdout
    [row] = [line for line in text.splitlines() if line.strip().startswith("too_long")]
    assert row.split()[-3:] == ["fake-sections", "0.7", "(fake_sections_plugin)"]


def test_an_eval_config_section_whose_plugin_is_disabled_names_the_plugins_not_loaded(
        site: Path, tmp_path: Path) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "pyproject.toml").write_text('[tool.evalkit]\nplugins = ["evalkit-retrieval"]\n')
    (folder / "evalkit.yaml").write_text(CONFIG + "fake_limits:\n  max_words: 2\n")
    listing = evalkit(site, folder, "plugins", "list")
    assert listing.returncode == 0, listing.stderr
    [warning] = [line for line in listing.stderr.splitlines() if line.startswith("warning:")]
    assert warning.startswith(f"warning: {folder / 'evalkit.yaml'}:5: key 'fake_limits': "
                              "unknown key; the keys are ")
    assert ("a plugin's section is a key only while the plugin is loaded, and no loaded "
            "plugin declares 'fake_limits': install the plugin that declares it") in warning
    assert "Not loaded: " in warning
    assert "fake-sections (disabled)" in warning.partition("Not loaded: ")[2]


def test_plugins_list_reads_the_eval_config_evalkit_run_reads_from_pyproject(
        site: Path, tmp_path: Path) -> None:
    """No evalkit.yaml: the run settings and the section in [tool.evalkit] are the eval
    config of both `evalkit run` and `evalkit plugins list`; a section whose apply raises
    fails both, at the section's line."""
    folder = project(tmp_path / "p", "[]")
    (folder / "pyproject.toml").write_text(PYPROJECT_RUN.format(
        plugins='["evalkit-retrieval", "fake-sections"]'))
    listing = evalkit(site, folder, "plugins", "list", "--json")
    assert listing.returncode == 0, listing.stderr
    report = json.loads(listing.stdout)
    assert report["eval_config"] == str((folder / "pyproject.toml").resolve())
    assert "too_long" in {n["name"] for n in report["names"]}
    fault = {"FAKE_FAULT": "apply_raises"}
    check = evalkit(site, folder, "plugins", "list", "--check", **fault)
    assert check.returncode == 1, check.stderr
    where = f"{(folder / 'pyproject.toml').resolve()}:11: [tool.evalkit]: key 'fake_limits': "
    assert f"warning: {where}" in check.stderr
    assert "apply exploded" in check.stderr
    run = evalkit(site, folder, "run", "--no-progress", **fault)
    assert run.returncode == 2
    assert run.stderr.splitlines()[-1].startswith(f"error: {where}"), run.stderr
