"""Commands a plugin adds (``evalkit_register_commands``): listed by `evalkit --help` without
importing what runs them, run with their arguments, refused when their name is taken.

Every test runs `evalkit` as a real child process (the console script, as users run it)
in a project whose pyproject.toml lists local plugins, with the kept list of plugin
commands in a folder of the test's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evalkit.core.specs import CommandSpec
from evalkit.plugins.hooks import PluginError, collect_records
from evalkit.testing.child_runs import EVALKIT_COMMAND

REPO = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("evalkit")
COMMAND = (str(SCRIPT),) if SCRIPT.exists() else EVALKIT_COMMAND
EXAMPLE_SRC = REPO / "examples" / "evalkit-example-plugin" / "src"

# The plugin module and the module of its commands each append their name to imports.log
# when imported, so a test sees which of them a command imported.
PLUGIN = '''
import pathlib

from evalkit import hookimpl
from evalkit.core.specs import CommandSpec

with pathlib.Path("imports.log").open("a") as log:
    log.write("{name}\\n")


@hookimpl
def evalkit_register_commands():
    return [{records}]
'''

GREET_RECORDS = ('CommandSpec("greet", "Greet someone by name.", "greet_cli:greet"), '
                 'CommandSpec("tools", "Shout or whisper a word.", "greet_cli:tools"), '
                 'CommandSpec("clicky", "A command written with click.", "greet_cli:clicky")')

GREET_CLI = '''
import pathlib

with pathlib.Path("imports.log").open("a") as log:
    log.write("greet_cli\\n")

import click
import typer


def greet(name: str, times: int = typer.Option(1, "--times", min=1)) -> None:
    """Greet NAME, TIMES times."""
    if name == "nobody":
        raise ValueError("there is nobody to greet; name someone")
    for _ in range(times):
        typer.echo(f"hello {name}")


tools = typer.Typer(help="Shout or whisper.")


@tools.command("shout")
def shout(word: str) -> None:
    typer.echo(word.upper())


@tools.command("whisper")
def whisper(word: str) -> None:
    typer.echo(word.lower())


@click.command()
@click.option("--name", required=True)
def clicky(name):
    click.echo(f"click says {name}")
'''


def project(tmp_path: Path, plugins: dict[str, str], **modules: str) -> Path:
    """A project (``tmp_path/project``) whose pyproject.toml lists ``plugins`` ({module:
    its records}) as local plugins, with further ``modules`` ({name: source}) beside
    them."""
    folder = tmp_path / "project"
    folder.mkdir()
    for name, records in plugins.items():
        (folder / f"{name}.py").write_text(PLUGIN.format(name=name, records=records),
                                           encoding="utf-8")
    for name, source in modules.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    listed = ", ".join(f'"{name}"' for name in plugins)
    (folder / "pyproject.toml").write_text(f"[tool.evalkit]\nlocal_plugins = [{listed}]\n",
                                           encoding="utf-8")
    return folder


def evalkit(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "EVALKIT_PLUGINS"}
    environ.update({"EVALKIT_CACHE_DIR": str(folder.parent / "cache"), **env})
    return subprocess.run([*COMMAND, *args], cwd=folder, env=environ,
                          capture_output=True, text=True, timeout=120)


def imported(folder: Path) -> list[str]:
    log = folder / "imports.log"
    return log.read_text(encoding="utf-8").split() if log.exists() else []


#: The commands of the in-repo plugins, listed in every project: left out of
#: :func:`plugin_section`, which reads the commands of the tests' own plugins.
IN_REPO_COMMANDS = ("pairwise", "agreement", "history", "eval", "fuse")


def plugin_section(help_text: str) -> list[str]:
    """The lines of the "Commands from plugins" section of `evalkit --help`, but those of
    :data:`IN_REPO_COMMANDS`."""
    lines = help_text.splitlines()
    if "Commands from plugins:" not in lines:
        return []
    section = lines[lines.index("Commands from plugins:") + 1:]
    return [" ".join(line.split()) for line in section
            if line.strip() and line.split()[0] not in IN_REPO_COMMANDS]


def test_help_lists_a_plugins_commands_without_importing_them(tmp_path: Path) -> None:
    folder = project(tmp_path, {"greet_plugin": GREET_RECORDS}, greet_cli=GREET_CLI)
    first = evalkit(folder, "--help")
    assert first.returncode == 0, first.stderr
    assert all(f"{name} " in " ".join(first.stdout.split()) for name in IN_REPO_COMMANDS)
    expected = ["clicky A command written with click.", "greet Greet someone by name.",
                "tools Shout or whisper a word."]
    assert plugin_section(first.stdout) == expected
    # the kernel's commands are listed as before, under their own heading
    assert "Commands:" in first.stdout and "  compare " in first.stdout
    # the first listing imported the plugin (to call its hook), not its commands' module
    assert imported(folder) == ["greet_plugin"]
    second = evalkit(folder, "--help")
    assert plugin_section(second.stdout) == expected
    # the next one read the list the first kept: nothing of the plugin is imported
    assert imported(folder) == ["greet_plugin"]


def test_a_plugins_command_runs_with_its_arguments(tmp_path: Path) -> None:
    folder = project(tmp_path, {"greet_plugin": GREET_RECORDS}, greet_cli=GREET_CLI)
    done = evalkit(folder, "greet", "Ada", "--times", "2")
    assert (done.returncode, done.stdout, done.stderr) == (0, "hello Ada\nhello Ada\n", "")
    assert imported(folder) == ["greet_plugin", "greet_cli"]
    # a user error of the command is one line, exit 2, as for the kernel's commands
    refused = evalkit(folder, "greet", "nobody")
    assert (refused.returncode, refused.stderr) == (
        2, "error: there is nobody to greet; name someone\n")
    bad = evalkit(folder, "greet", "Ada", "--times", "0")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --times 0: expected")
    # a typer group is a group of subcommands
    assert evalkit(folder, "tools", "shout", "hi").stdout == "HI\n"
    assert evalkit(folder, "tools", "whisper", "HI").stdout == "hi\n"
    # a click command runs as click runs it: its options, its help, its errors
    assert evalkit(folder, "clicky", "--name", "x").stdout == "click says x\n"
    helped = evalkit(folder, "clicky", "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("Usage: evalkit clicky")
    missing = evalkit(folder, "clicky")
    assert missing.returncode == 2 and "Missing option '--name'" in missing.stderr
    usage = evalkit(folder, "greet", "--help")
    assert usage.returncode == 0 and usage.stdout.startswith("Usage: evalkit greet")
    assert "Greet NAME, TIMES times." in usage.stdout


def test_a_misspelt_plugin_command_is_answered_with_its_name(tmp_path: Path) -> None:
    folder = project(tmp_path, {"greet_plugin": GREET_RECORDS}, greet_cli=GREET_CLI)
    done = evalkit(folder, "gret", "Ada")
    assert done.returncode == 2
    assert done.stderr == ("error: no such command 'gret'; did you mean 'greet'? "
                           "(see `evalkit --help`)\n")


def test_a_command_whose_load_cannot_run_says_why(tmp_path: Path) -> None:
    folder = project(tmp_path, {"broken_plugin": (
        'CommandSpec("broken", "Imports nothing.", "no_such_module_here:run"), '
        'CommandSpec("number", "Not a command.", "broken_plugin:VALUE")')})
    (folder / "broken_plugin.py").write_text(
        (folder / "broken_plugin.py").read_text(encoding="utf-8") + "\nVALUE = 3\n",
        encoding="utf-8")
    done = evalkit(folder, "broken")
    assert (done.returncode, done.stderr) == (
        2, "error: command 'broken' of module broken_plugin: cannot import "
        "'no_such_module_here:run' (No module named 'no_such_module_here') "
        "(see `evalkit --help`)\n")
    done = evalkit(folder, "number")
    assert (done.returncode, done.stderr) == (
        2, "error: command 'number' of module broken_plugin: 3 is not a function, a "
        "typer.Typer or a click command (see `evalkit --help`)\n")


def test_plugins_list_shows_a_plugins_commands(tmp_path: Path) -> None:
    folder = project(tmp_path, {"greet_plugin": GREET_RECORDS}, greet_cli=GREET_CLI)
    done = evalkit(folder, "plugins", "list", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    listing = json.loads(done.stdout)
    assert listing["ok"] is True and listing["command_errors"] == []
    commands = {n["name"]: (n["description"], n["provider"]) for n in listing["names"]
                if n["kind"] == "command" and n["distribution"] is None}
    assert commands == {
        "clicky": ("A command written with click.", "module greet_plugin"),
        "greet": ("Greet someone by name.", "module greet_plugin"),
        "tools": ("Shout or whisper a word.", "module greet_plugin")}
    [plugin] = [p for p in listing["plugins"] if p["name"] == "greet_plugin"]
    assert plugin["hooks"] == ["evalkit_register_commands"]
    assert plugin["names"] == ["greet", "tools", "clicky"]
    # the listing imported the plugin, not its commands; --check imports them too
    assert imported(folder) == ["greet_plugin"]
    checked = evalkit(folder, "plugins", "list", "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert imported(folder) == ["greet_plugin", "greet_plugin", "greet_cli"]


def test_plugins_list_check_imports_every_command(tmp_path: Path) -> None:
    """A command whose ``load`` names a missing attribute, a missing module, or no
    command: the plain listing passes (it imports no command), ``--check`` names each
    with its plugin and import string and exits 1."""
    records = ('CommandSpec("gone", "Gone.", "greet_cli:missing"), '
               'CommandSpec("nomod", "No module.", "no_such_module_here:run"), '
               'CommandSpec("greet", "Greet someone by name.", "greet_cli:greet")')
    folder = project(tmp_path, {"half_plugin": records}, greet_cli=GREET_CLI)
    assert evalkit(folder, "plugins", "list").returncode == 0
    checked = evalkit(folder, "plugins", "list", "--check")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert ("commands that cannot run:\n"
            "  ! command 'gone' of module half_plugin: cannot import 'greet_cli:missing' "
            "(module 'greet_cli' has no attribute 'missing')\n"
            "  ! command 'nomod' of module half_plugin: cannot import "
            "'no_such_module_here:run' (No module named 'no_such_module_here')\n"
            ) in checked.stdout
    assert ", 0 conflict(s), 2 command(s) that cannot run" in checked.stdout
    as_json = json.loads(evalkit(folder, "plugins", "list", "--check", "--json").stdout)
    assert as_json["ok"] is False and len(as_json["command_errors"]) == 2


def test_a_command_named_like_the_kernels_is_a_conflict_naming_both(tmp_path: Path) -> None:
    folder = project(tmp_path, {"compare_plugin": 'CommandSpec("compare", "Mine.", "x:y")'})
    listing = evalkit(folder, "plugins", "list", "--check")
    assert listing.returncode == 1
    assert ("command name 'compare' is provided by paired-evalkit-core" in listing.stdout
            and "and module compare_plugin; the kernel's built-in keeps the name, and the "
            "command of module compare_plugin is not used until its plugin renames it"
            in listing.stdout)
    # the kernel's command keeps running; the plugin's is listed nowhere
    kernel = evalkit(folder, "compare", "--help")
    assert kernel.returncode == 0 and "Compare candidates with a baseline" in kernel.stdout
    assert plugin_section(evalkit(folder, "--help").stdout) == []


def test_one_command_name_from_two_plugins_is_blocked(tmp_path: Path) -> None:
    folder = project(tmp_path, {
        "greet_a": 'CommandSpec("greet", "Greet, the first.", "greet_cli:greet")',
        "greet_b": 'CommandSpec("greet", "Greet, the second.", "greet_cli:greet")',
    }, greet_cli=GREET_CLI)
    done = evalkit(folder, "greet", "Ada")
    assert done.returncode == 2
    assert done.stderr == (
        "error: command name 'greet' is provided by module greet_a and module greet_b; it "
        "is blocked until one of them renames its command, or is disabled or uninstalled "
        "(see `evalkit plugins list`)\n")  # one hint, not two
    assert "greet_cli" not in imported(folder)
    assert plugin_section(evalkit(folder, "--help").stdout) == []


def test_a_disabled_plugins_commands_are_neither_listed_nor_run(tmp_path: Path) -> None:
    folder = project(tmp_path, {"greet_plugin": GREET_RECORDS}, greet_cli=GREET_CLI)
    assert plugin_section(evalkit(folder, "--help").stdout) != []  # listed, and kept
    listed = evalkit(folder, "--help", EVALKIT_PLUGINS="")
    assert listed.returncode == 0 and plugin_section(listed.stdout) == []
    done = evalkit(folder, "greet", "Ada", EVALKIT_PLUGINS="")
    assert done.returncode == 2 and done.stderr.startswith("error: no such command 'greet'")
    # enabled again, from the list kept before
    assert plugin_section(evalkit(folder, "--help").stdout)[1] == "greet Greet someone by name."


def test_the_kept_list_follows_the_plugins_source(tmp_path: Path) -> None:
    folder = project(tmp_path, {"greet_plugin": GREET_RECORDS}, greet_cli=GREET_CLI)
    assert plugin_section(evalkit(folder, "--help").stdout)[1] == "greet Greet someone by name."
    source = folder / "greet_plugin.py"
    source.write_text(source.read_text(encoding="utf-8").replace(
        "Greet someone by name.", "Say hello."), encoding="utf-8")
    assert plugin_section(evalkit(folder, "--help").stdout)[1] == "greet Say hello."
    assert imported(folder) == ["greet_plugin", "greet_plugin"]


def test_the_kept_list_follows_an_install(tmp_path: Path) -> None:
    """Installing a distribution changes a folder of sys.path: the next listing discovers."""
    folder = project(tmp_path, {"greet_plugin": GREET_RECORDS}, greet_cli=GREET_CLI)
    site = tmp_path / "site"
    site.mkdir()
    env = {"PYTHONPATH": str(site)}
    evalkit(folder, "--help", **env)
    evalkit(folder, "--help", **env)
    assert imported(folder) == ["greet_plugin"]
    (site / "other_plugin-1.0.dist-info").mkdir()
    evalkit(folder, "--help", **env)
    assert imported(folder) == ["greet_plugin", "greet_plugin"]


def test_a_malformed_selection_still_prints_help(tmp_path: Path) -> None:
    folder = project(tmp_path, {})
    (folder / "pyproject.toml").write_text('[tool.evalkit]\nplugins = "x"\n', encoding="utf-8")
    done = evalkit(folder, "--help")
    assert done.returncode == 0 and "Commands:" in done.stdout
    assert done.stderr == (
        f"warning: plugin commands are not listed: {folder / 'pyproject.toml'} "
        "[tool.evalkit]: plugins must be a list of strings, got 'x'\n")


def test_the_example_plugins_command(tmp_path: Path) -> None:
    """The example plugin, as its users get it: on the path, selected in pyproject.toml."""
    folder = project(tmp_path, {})
    (folder / "pyproject.toml").write_text(
        '[tool.evalkit]\nlocal_plugins = ["evalkit_example_plugin.plugin"]\n', encoding="utf-8")
    (folder / "goldens.jsonl").write_text(
        '{"id": "q1", "query": "capital?", "expected": "Paris is the capital"}\n'
        '{"id": "q2", "query": "what?"}\n'
        '{"id": "q3", "query": "which?", "keywords": ["Rome", "Milan"]}\n', encoding="utf-8")
    env = {"PYTHONPATH": str(EXAMPLE_SRC)}
    listed = evalkit(folder, "--help", **env)
    assert plugin_section(listed.stdout) == [
        "keywords Print the keywords keyword_recall looks for in each case."]
    done = evalkit(folder, "keywords", "goldens.jsonl", **env)
    assert (done.returncode, done.stdout) == (
        0, "q1\tparis is the capital\nq2\t\nq3\trome milan\n")
    missing = evalkit(folder, "keywords", "goldens.jsonl", "--missing-only", **env)
    assert missing.stdout == "q2\t\n"


# --------------------------------------------------------------------- the record
@pytest.mark.parametrize(("record", "problem"), [
    (CommandSpec("Greet", "Greet.", "m:f"),
     "a command's name is lower-case letters, digits and hyphens, starting with a letter"),
    (CommandSpec("greet", "", "m:f"), "help must be one line of text, got ''"),
    (CommandSpec("greet", "Greet.\nSecond line.", "m:f"), "help must be one line of text"),
    (CommandSpec("greet", "Greet.", "m:f:g"),
     "load must be 'package.module:attr' or 'package.module', got 'm:f:g'"),
])
def test_a_malformed_command_record_fails_its_plugin(record: CommandSpec, problem: str) -> None:
    from evalkit import hookimpl

    class Plugin:
        @hookimpl
        def evalkit_register_commands(self) -> list[CommandSpec]:
            return [record]

    with pytest.raises(PluginError, match="evalkit_register_commands: CommandSpec") as caught:
        collect_records(Plugin())
    assert problem in str(caught.value)
