"""A plugin's code that fails where evalkit calls it: a reporter's ``render`` that raises or
returns ``None``, a config section's ``apply`` that raises something other than a
``ValueError``. Each ends the command with one ``error:`` line naming the record, the
plugin and the exception, exit 2 (never 1, a "no" verdict), no traceback, and no report
file whose outcome the exit code would contradict; the conformance suite catches the
reporters first. An unexpected exception of any command exits 2 with its traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict
from typer.testing import CliRunner

from evalkit import hookimpl
from evalkit.cli.app import app
from evalkit.core.specs import ConfigSectionSpec, ReporterSpec
from evalkit.testing import check_conformance, registered_plugin

runner = CliRunner()
SCRIPT = Path(sys.executable).with_name("evalkit")
BUG = ("This is a bug of the plugin, not of your files or options: report it to the "
       "plugin's authors (EVALKIT_DEBUG=1 shows the traceback)")


def exploding(report: object) -> str:
    raise RuntimeError("reporter exploded")


def nothing(report: object) -> str:
    return None  # type: ignore[return-value]


def tsv(report: object) -> str:
    return "\n".join(f"{r.name}\t{r.status}" for r in report.rows) + "\n"  # type: ignore[attr-defined]


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")
    limit: int = 1


def exploding_apply(section: object, config: object) -> None:
    raise RuntimeError("apply exploded")


class BrokenPlugin:
    @hookimpl
    def evalkit_register_reporters(self) -> list[ReporterSpec]:
        return [ReporterSpec("boom", exploding), ReporterSpec("empty", nothing),
                ReporterSpec("tsv", tsv)]

    @hookimpl
    def evalkit_register_config_sections(self) -> list[ConfigSectionSpec]:
        return [ConfigSectionSpec("limits", Limits, apply=exploding_apply)]


def project(folder: Path, section: bool = False) -> None:
    (folder / "goldens.jsonl").write_text(
        '{"id": "q1", "query": "a", "expected": ["d1"]}\n'
        '{"id": "q2", "query": "b", "expected": ["d2"]}\n')
    (folder / "plug_target.py").write_text(
        "from evalkit.data.targets import CallableTarget\n"
        "def make():\n"
        "    return CallableTarget(lambda case: ['d1'], name='t')\n")
    (folder / "checks.yaml").write_text(
        "checks:\n  - {id: floor, metric: recall@1, op: '>=', threshold: 0.1}\n")
    (folder / "evalkit.yaml").write_text(
        "goldens: goldens.jsonl\ntarget: {factory: 'plug_target:make'}\n"
        "metrics: [recall@1]\noutput: out/run.jsonl\nchecks: checks.yaml\n"
        + ("limits: {limit: 2}\n" if section else ""))


@pytest.fixture
def broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    project(tmp_path)
    with registered_plugin(BrokenPlugin(), name="broken", distribution="evalkit-broken",
                           version="0.1", installed=True):
        res = runner.invoke(app, ["run", "--no-progress"])
        assert res.exit_code == 0, res.output
        yield tmp_path


@pytest.mark.parametrize(("fmt", "what"), [
    ("boom", "raised RuntimeError: reporter exploded"),
    ("empty", "returned None, not text (a str)"),
])
def test_a_failing_reporter_is_one_error_line_exit_2_and_no_report_written(
        broken: Path, fmt: str, what: str) -> None:
    res = runner.invoke(app, [
        "gate", "-c", "checks.yaml", "-r", "out/run.jsonl", "--report", "junit:rep/g.xml",
        "--report", "markdown:rep/g.md", "--report", f"{fmt}:rep/g.txt"])
    assert res.exit_code == 2, res.output
    assert res.stderr == (
        f"error: the reporter '{fmt}' of plugin evalkit-broken 0.1 ({__name__}): its "
        f"render(report) {what}. {BUG}\n")
    assert not (broken / "rep").exists()  # the gate passed: a report would say exit 0
    ok = runner.invoke(app, ["gate", "-c", "checks.yaml", "-r", "out/run.jsonl",
                             "--report", "junit:rep/g.xml", "--report", "tsv:rep/g.tsv"])
    assert ok.exit_code == 0, ok.output
    assert (broken / "rep" / "g.tsv").read_text() == "floor\tpass\n"


def test_a_failing_config_section_apply_is_an_error_of_the_section(broken: Path) -> None:
    project(broken, section=True)
    config = broken / "evalkit.yaml"
    expected = (f"error: {config.resolve()}:6: key 'limits': the config section 'limits' of "
                f"plugin evalkit-broken 0.1 ({__name__}): its apply(section, config) raised "
                f"RuntimeError: apply exploded. {BUG}\n")
    for args in (["gate", "--config", "evalkit.yaml"], ["run", "--no-progress"]):
        res = runner.invoke(app, args)
        assert (res.exit_code, res.stderr) == (2, expected), args
        assert "Traceback" not in res.output


def test_the_conformance_suite_renders_sample_reports() -> None:
    failures = check_conformance(BrokenPlugin())
    assert [f for f in failures if f.startswith("reporter:")] == [
        "reporter:boom:renders: reporter 'boom': render raised RuntimeError: reporter "
        "exploded on a sample gate report",
        "reporter:empty:renders: reporter 'empty': render returned None for a sample gate "
        "report; it must return text (a str)",
    ]


LOCAL_PLUGIN = '''
from evalkit import hookimpl
from evalkit.core.specs import CommandSpec, ConfigSectionSpec
from pydantic import BaseModel


class Limits(BaseModel):
    limit: int = 1


def apply(section, config):
    raise RuntimeError("apply exploded")


def crash():
    """Crash."""
    raise RuntimeError("command exploded")


@hookimpl
def evalkit_register_config_sections():
    return [ConfigSectionSpec("limits", Limits, apply=apply)]


@hookimpl
def evalkit_register_commands():
    return [CommandSpec("crash", "Crash.", load="local_broken:crash")]
'''


def test_plugins_list_warns_and_an_unexpected_error_exits_2(tmp_path: Path) -> None:
    project(tmp_path, section=True)
    (tmp_path / "local_broken.py").write_text(textwrap.dedent(LOCAL_PLUGIN))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.evalkit]\nplugins = ["evalkit-retrieval"]\nlocal_plugins = ["local_broken"]\n')
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    env.pop("EVALKIT_DEBUG", None)

    def evalkit(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(SCRIPT), *args], cwd=tmp_path, env={**env, **extra},
                              capture_output=True, text=True, timeout=120, check=False)

    listed = evalkit("plugins", "list", "--check")
    assert listed.returncode == 1, listed.stderr
    assert listed.stderr.startswith("warning: ") and "Traceback" not in listed.stderr
    assert ("the config section 'limits' of module local_broken: its apply(section, "
            "config) raised RuntimeError: apply exploded" in listed.stderr)
    gated = evalkit("gate")
    assert gated.returncode == 2 and gated.stderr.count("\n") == 1, gated.stderr
    assert "apply exploded" in gated.stderr and "Traceback" not in gated.stderr
    debug = evalkit("gate", EVALKIT_DEBUG="1")
    assert debug.returncode == 2 and "Traceback" in debug.stderr
    assert 'raise RuntimeError("apply exploded")' in debug.stderr  # the plugin's own frame
    crashed = evalkit("crash")
    assert crashed.returncode == 2, crashed.stderr
    assert "Traceback" in crashed.stderr and "RuntimeError: command exploded" in crashed.stderr


def test_every_installed_reporter_renders_the_sample_reports() -> None:
    from evalkit.plugins.default import default_registry
    from evalkit.testing.extension_checks import reporter_renders

    names = []
    for _, name, entry in default_registry().entries("reporter"):
        assert isinstance(entry.spec, ReporterSpec)
        reporter_renders(entry.spec)
        names.append(name)
    assert {"console", "json", "junit", "markdown", "html", "latex"} <= set(names)
