"""Every command that takes ``--json`` prints one JSON document on standard output when it
fails (:func:`evalkit.cli.errors.json_document_on_exit`): ``{"status": "error",
"exit_code": 2, "messages": [...]}``, the exit code the process's and the messages the
``error:`` lines it printed on standard error, whether the error was found by the command
(a file that cannot be read), while finding the command (a ``pyproject.toml`` that is not
TOML) or while reading its options (an unknown option, a missing one).

The commands are listed from the application itself (every command and subcommand, the
plugins' included, with a ``--json`` option), so a new command cannot escape the test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
DATA = Path(__file__).resolve().parents[1] / "plugins" / "evalkit-retrieval" / "tests" / "data"


def _commands(command: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    if hasattr(command, "list_commands"):  # a group: its commands, loaded one by one
        for name in command.list_commands(None):
            sub = command.get_command(None, name)
            if sub is not None:
                yield from _commands(sub, [*path, name])
    else:
        yield path, command


def json_commands() -> list[tuple[str, list[str]]]:
    """``(name, arguments)`` for each command with ``--json``: its required arguments
    and options, each given a file that does not exist (``nosuch.jsonl``)."""
    import typer

    from evalkit.cli.app import app

    found = []
    for path, command in _commands(typer.main.get_command(app), []):
        if not any("--json" in getattr(p, "opts", ()) for p in command.params):
            continue
        args = list(path)
        for param in command.params:
            if param.required:
                args += [param.opts[0]] if param.param_type_name == "option" else []
                args.append("nosuch.jsonl")
        found.append((" ".join(path), args))
    return found


COMMANDS = json_commands()


def test_the_commands_with_json_are_found() -> None:
    names = {name for name, _ in COMMANDS}
    assert {"compare", "power", "run", "rescore", "gate", "baseline show", "eval", "fuse",
            "pairwise", "agreement", "plugins list", "history show"} <= names


@pytest.mark.parametrize("failure", ["broken pyproject.toml", "unknown option"])
@pytest.mark.parametrize("name,args", COMMANDS, ids=[name for name, _ in COMMANDS])
def test_every_json_command_prints_one_error_document(
        tmp_path: Path, name: str, args: list[str], failure: str) -> None:
    if failure == "unknown option":
        args = [*args, "--no-such-option"]
    else:
        (tmp_path / "pyproject.toml").write_text("[tool.evalkit]\nplugins = [\n")
    proc = subprocess.run([*EVALKIT, *args, "--json"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    document = json.loads(proc.stdout)  # one document, nothing else
    assert proc.returncode == 2, proc.stderr
    assert document["status"] == "error" and document["exit_code"] == proc.returncode
    assert document["messages"] and all(isinstance(m, str) for m in document["messages"])
    first_error = next(line for line in proc.stderr.splitlines() if line.startswith("error:"))
    assert first_error in document["messages"]
