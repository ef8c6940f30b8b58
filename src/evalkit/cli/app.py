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
import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperGroup

from evalkit._version import __version__
from evalkit.cli.errors import USER_ERROR, handle_errors, plugin_warnings_as_lines, usage_message

#: click's exceptions, from wherever this typer takes click (its own copy, or click itself)
_click_errors: Any = importlib.import_module(typer.BadParameter.__module__)


class EvalkitGroup(TyperGroup):
    """The ``evalkit`` command group. A usage error (an unknown or missing option, a value
    an option does not accept, an unknown command) prints one ``error: ...`` line naming
    the option and what it accepts, and exits 2, like every other user error; help and
    ``--version`` print as typer prints them. A plugin that fails to load while a command
    runs is reported as one ``warning: ...`` line."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        with plugin_warnings_as_lines():
            if not standalone_mode:  # the caller handles click's exceptions
                return super().main(args, prog_name, complete_var, False, windows_expand_args,
                                    **extra)
            try:
                rv = super().main(args, prog_name, complete_var, False, windows_expand_args,
                                  **extra)
            except _click_errors.ClickException as exc:
                if type(exc).__name__ == "NoArgsIsHelpError":  # help, shown as typer does
                    self._show_as_typer(exc)
                    sys.exit(exc.exit_code)
                sys.stdout.flush()
                command = self._command_path(argv, prog_name or "evalkit")
                typer.echo(f"error: {usage_message(exc, argv, command)}", err=True)
                usage = isinstance(exc, _click_errors.UsageError)
                sys.exit(USER_ERROR if usage else exc.exit_code)
            except typer.Abort:
                typer.echo("Aborted!", err=True)
                sys.exit(1)
        # without standalone mode click returns the exit code of a typer.Exit
        sys.exit(rv if isinstance(rv, int) else 0)

    def _command_path(self, argv: Sequence[str], prog: str) -> str:
        """``evalkit baseline promote``: the (sub)command that ``argv`` runs."""
        parts, group = [prog], self.commands
        for token in argv:
            command = group.get(token)
            if command is None:
                break
            parts.append(token)
            group = getattr(command, "commands", {})
        return " ".join(parts)

    def _show_as_typer(self, exc: Any) -> None:
        from typer import core

        if getattr(core, "HAS_RICH", False) and self.rich_markup_mode is not None:
            from typer import rich_utils

            rich_utils.rich_format_error(exc)
        else:
            exc.show()

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
    cls=EvalkitGroup,
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
