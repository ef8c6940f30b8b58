"""The README's command-line synopsis lists every option of every command, as ``--help``
shows them: each line's flags are read from the README and compared with the options
click builds for that command (its own ``params``), both ways."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from evalkit.cli.app import app

README = Path(__file__).resolve().parents[1] / "README.md"


def _commands() -> Iterator[tuple[str, Any]]:
    root = typer.main.get_command(app)
    ctx = typer.Context(root)

    def walk(cmd: Any, path: str) -> Iterator[tuple[str, Any]]:
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                yield from walk(cmd.get_command(ctx, name), f"{path} {name}")
        else:
            yield path, cmd

    yield from walk(root, "evalkit")


def _synopsis() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    block = text.split("## Command line", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    out: dict[str, str] = {}
    for line in block.splitlines():
        words = line.split()
        # the command is the leading lower-case words: "evalkit baseline promote"
        n = next((i for i, w in enumerate(words) if not re.fullmatch(r"[a-z]+", w)),
                 len(words))
        out[" ".join(words[:n])] = " ".join(words[n:])
    return out


COMMANDS = dict(_commands())
SYNOPSIS = _synopsis()


def test_every_command_has_a_synopsis_line() -> None:
    # "schema checks|config|goldens": its argument's choices follow the name
    lines = {k.removesuffix(" checks|config|goldens") for k in SYNOPSIS}
    assert {k if k != "evalkit schema checks" else "evalkit schema" for k in lines} \
        == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_synopsis_flags_match_help(name: str) -> None:
    line = next(v for k, v in SYNOPSIS.items() if k.startswith(name) and (
        k == name or name == "evalkit schema"))
    shown = set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", line))
    options = [p for p in COMMANDS[name].params
               if p.param_type_name == "option" and p.name != "help"]
    known = {o for p in options for o in (*p.opts, *p.secondary_opts)}
    missing = [p.opts[0] for p in options if not set(p.opts) & shown]
    assert not missing, f"README's {name} line lacks {missing}"
    assert shown <= known, f"README's {name} line has {sorted(shown - known)}, not in --help"
