"""Every option's ``--help`` describes what the option takes: each choice its metavar
offers (``<zero|skip|refuse>``) is named in its description, or the description defers to
an option of another command whose description names them ("As for compare"); and the
resampling options name the tests they resample."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer

from evalkit.cli.app import app


def _options() -> Iterator[tuple[str, Any]]:
    root = typer.main.get_command(app)
    ctx = typer.Context(root)

    def walk(cmd: Any, path: str) -> Iterator[tuple[str, Any]]:
        if hasattr(cmd, "list_commands"):
            for name in cmd.list_commands(ctx):
                yield from walk(cmd.get_command(ctx, name), f"{path} {name}".strip())
        else:
            for p in cmd.params:
                if p.param_type_name == "option" and p.name != "help":
                    yield f"{path} {p.opts[0]}", p

    yield from walk(root, "")


OPTIONS = dict(_options())


def _help(key: str) -> str:
    return " ".join((OPTIONS[key].help or "").split())


def _choices(p: Any) -> list[str]:
    return [str(getattr(c, "value", c)) for c in getattr(p.type, "choices", None) or ()]


@pytest.mark.parametrize("key", sorted(k for k, p in OPTIONS.items() if _choices(p)))
def test_an_option_with_choices_names_each_of_them(key: str) -> None:
    text = _help(key)
    deferred = re.fullmatch(r"As for (\w+)\.", text)
    if deferred:  # the other command's same option says it
        text = _help(f"{deferred.group(1)} {key.split()[-1]}")
    missing = [c for c in _choices(OPTIONS[key]) if not re.search(
        rf"(?<![\w+-]){re.escape(c)}(?![\w+-])", text)]
    assert not missing, f"{key}: the help does not name {missing}: {text}"


def test_the_resampling_options_name_the_tests_they_resample() -> None:
    for key in ("gate --resamples", "compare --resamples"):
        assert "randomization" in _help(key), key
