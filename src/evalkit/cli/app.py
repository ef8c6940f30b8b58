"""The ``evalkit`` typer application: one line per command.

Each command lives in its own module under :mod:`evalkit.cli` and exposes either

* ``command``: a function whose parameters are typer options (a plain command), or
* ``app``: a :class:`typer.Typer` (a command group such as ``evalkit plugins list``).

To add a command, write the module and add one line to :data:`COMMANDS`. Command modules
import only typer at module level and import the library inside the function body, so
``evalkit --help`` loads neither numpy nor any plugin. Every command is wrapped with
:func:`evalkit.cli.errors.handle_errors`, so user errors print one line and exit 2.
"""

from __future__ import annotations

import importlib

import typer

from evalkit._version import __version__
from evalkit.cli.errors import handle_errors

#: ``(command name, module)``, in the order ``evalkit --help`` lists them.
COMMANDS: list[tuple[str, str]] = [
    ("eval", "evalkit.cli.eval_cmd"),
    ("compare", "evalkit.cli.compare_cmd"),
    ("power", "evalkit.cli.power_cmd"),
    ("run", "evalkit.cli.run_cmd"),
    ("rescore", "evalkit.cli.rescore_cmd"),
    ("gate", "evalkit.cli.gate_cmd"),
    ("baseline", "evalkit.cli.baseline_cmd"),
    ("plugins", "evalkit.cli.plugins_cmd"),
]

app = typer.Typer(
    name="evalkit",
    help=(
        "Evaluate retrieval, RAG and LLM systems per query, and test whether the "
        "difference between two systems is real (paired tests on the same queries)."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"evalkit {__version__} (paired-evalkit)")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", help="Print the version and exit.",
        callback=_print_version, is_eager=True,
    ),
) -> None:
    """Evaluate systems per query and compare them with paired significance tests."""


def add_command(name: str, module_name: str) -> None:
    """Register the command or group that ``module_name`` defines under ``name``."""
    module = importlib.import_module(module_name)
    group = getattr(module, "app", None)
    if isinstance(group, typer.Typer):
        for info in group.registered_commands:
            if info.callback is not None and not getattr(info.callback, "_evalkit_wrapped", False):
                info.callback = handle_errors(info.callback)
                info.callback._evalkit_wrapped = True  # type: ignore[attr-defined]
        app.add_typer(group, name=name)
        return
    command = module.command
    app.command(name)(handle_errors(command))


for _name, _module in COMMANDS:
    add_command(_name, _module)
