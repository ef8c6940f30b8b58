"""What a command prints besides its result: a spinner and remarks on stderr, and the
console its tables go to."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Any

import typer


class TableOrJson(StrEnum):
    """``--format`` of the commands that print a table or JSON."""

    table = "table"
    json = "json"


def pick_format(as_json: bool, given: str | None) -> str:
    """The format ``--json`` and ``--format`` ask for (``--json`` is ``--format json``;
    default ``table``).

    Raises:
        CliError: ``--json`` with another ``--format`` (``--json --format table``).
    """
    if as_json and given not in (None, "json"):
        from evalkit.cli.errors import CliError

        raise CliError(f"--json is --format json; it contradicts --format {given}: pick one")
    return "json" if as_json else (given or "table")


@contextmanager
def progress(message: str) -> Iterator[None]:
    """A spinner on stderr while long work runs (only when stderr is a terminal)."""
    import sys

    if not sys.stderr.isatty():  # rich is not even imported
        yield
        return
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield
        return
    with console.status(message):
        yield


def note(message: str) -> None:
    """A remark for the reader on stderr (keeps stdout clean for machine formats)."""
    typer.echo(message, err=True)


def output_console(**kwargs: Any) -> Any:
    """A :class:`rich.console.Console` for a command's output that raises
    :class:`BrokenPipeError` when the reader goes away (rich's own answer is exit 1), so
    that :func:`handle_errors` answers it like every closed pipe (:data:`PIPE_CLOSED`)."""
    from rich.console import Console

    class _OutputConsole(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError("standard output was closed")

    return _OutputConsole(**kwargs)
