"""The ``evalkit`` typer application: the group of :data:`~evalkit.cli.commands.COMMANDS`,
``--version`` and ``-h``.

Help uses click's plain layout (``rich_markup_mode=None``): typer's rich layout imports
markdown-it and pygments, which would triple the start-up time (docs/performance.md).
"""

from __future__ import annotations

import typer

from evalkit._version import __version__
from evalkit.cli.commands import COMMANDS as COMMANDS
from evalkit.cli.group import EvalkitGroup

app = typer.Typer(
    cls=EvalkitGroup,
    name="evalkit",
    help=(
        "Evaluate retrieval, RAG and LLM systems per query, and test whether the "
        "difference between two systems is real (paired tests on the same queries)."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        from evalkit.plugins.info import KERNEL_DISTRIBUTION

        typer.echo(f"evalkit {__version__} ({KERNEL_DISTRIBUTION})")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", help="Print the version and exit.",
        callback=_print_version, is_eager=True,
    ),
) -> None:
    """Evaluate systems per query and compare them with paired significance tests."""
