"""The ``evalkit`` typer application: one line per command.

Each command lives in its own module under :mod:`evalkit.cli` and exposes either

* ``command``: a function whose parameters are typer options (a plain command), or
* ``app``: a :class:`typer.Typer` (a command group such as ``evalkit plugins list``).

To add a command, write the module and add one line to :data:`COMMANDS`. A command's module
is imported only when that command runs (click's lazily loaded subcommands), and command
modules import only typer at module level and the library inside the function body, so
``evalkit --help`` loads no command module, no numpy and no plugin. Every command is
wrapped with :func:`evalkit.cli.errors.handle_errors`, so user errors print one line and
exit 2. Help uses click's plain layout (``rich_markup_mode=None``): typer's rich layout
imports markdown-it and pygments, which would triple the start-up time (docs/performance.md).
"""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

import typer
from typer.core import TyperGroup

from evalkit._version import __version__
from evalkit.cli.errors import (
    PIPE_CLOSED,
    USER_ERROR,
    handle_errors,
    plugin_warnings_as_lines,
    quiet_closed_stdout,
    usage_message,
)

#: click's exceptions, from wherever this typer takes click (its own copy, or click itself)
_click_errors: Any = importlib.import_module(typer.BadParameter.__module__)


class LazyCommand(NamedTuple):
    """One ``evalkit`` command: its name, the module defining it, and the one-line summary
    that ``evalkit --help`` lists without importing the module (also the command's
    ``short_help``, so the two cannot differ)."""

    name: str
    module: str
    summary: str


#: The commands, in the order ``evalkit --help`` lists them.
COMMANDS: list[LazyCommand] = [
    LazyCommand("eval", "evalkit.cli.eval_cmd",
                "Score TREC runs or run artifacts against qrels."),
    LazyCommand("compare", "evalkit.cli.compare_cmd",
                "Compare runs with a baseline on the same queries (paired tests)."),
    LazyCommand("power", "evalkit.cli.power_cmd",
                "Plan a comparison: minimum detectable effect or queries needed."),
    LazyCommand("run", "evalkit.cli.run_cmd",
                "Run the eval config's target on every golden case (resumable)."),
    LazyCommand("rescore", "evalkit.cli.rescore_cmd",
                "Recompute the metrics and aggregates of a saved run."),
    LazyCommand("gate", "evalkit.cli.gate_cmd",
                "Check a run against YAML checks: exit 0 pass, 1 fail, 2 error."),
    LazyCommand("baseline", "evalkit.cli.baseline_cmd",
                "Store and inspect the baselines that gates compare against."),
    LazyCommand("plugins", "evalkit.cli.plugins_cmd",
                "Audit the installed plugins and the names they register."),
    LazyCommand("schema", "evalkit.cli.schema_cmd",
                "Print the JSON Schema of checks, evalkit.yaml or goldens files."),
]


class EvalkitGroup(TyperGroup):
    """The ``evalkit`` command group. A usage error (an unknown or missing option, a value
    an option does not accept, an unknown command) prints one ``error: ...`` line naming
    the option and what it accepts, and exits 2, like every other user error; help and
    ``--version`` print as typer prints them. A plugin that fails to load while a command
    runs is reported as one ``warning: ...`` line. Commands of :data:`COMMANDS` are
    imported and built on first use."""

    lazy: ClassVar[dict[str, LazyCommand]] = {entry.name: entry for entry in COMMANDS}

    def list_commands(self, ctx: Any) -> list[str]:
        return [*self.lazy, *(name for name in self.commands if name not in self.lazy)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.commands[cmd_name] = self._build(self.lazy[cmd_name])
        return self.commands.get(cmd_name)

    def _build(self, entry: LazyCommand) -> Any:
        """The click command (or group) that ``entry.module`` defines, its callbacks
        wrapped with :func:`handle_errors`, with this group's help layout."""
        module = importlib.import_module(entry.module)
        group = getattr(module, "app", None)
        if isinstance(group, typer.Typer):
            for info in group.registered_commands:
                if info.callback is not None and not getattr(info.callback, "_evalkit_wrapped",
                                                             False):
                    info.callback = handle_errors(info.callback)
                    info.callback._evalkit_wrapped = True  # type: ignore[attr-defined]
            group.rich_markup_mode = self.rich_markup_mode
            command: Any = typer.main.get_group(group)
        else:
            single = typer.Typer(add_completion=False, rich_markup_mode=self.rich_markup_mode)
            single.command(entry.name)(handle_errors(module.command))
            command = typer.main.get_command(single)
        command.name = entry.name
        command.short_help = entry.summary
        return command

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command list of ``evalkit --help``, from :data:`COMMANDS` without importing
        the commands' modules."""
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy and name not in self.commands:
                rows.append((name, self.lazy[name].summary))
                continue
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(formatter.width)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """As typer resolves it, with the did-you-mean over every command, loaded or not."""
        try:
            return super().resolve_command(ctx, args)
        except _click_errors.UsageError as exc:
            if args and "Did you mean" not in exc.message:
                matches = difflib.get_close_matches(args[0], self.list_commands(ctx))
                if matches:
                    listed = ", ".join(repr(m) for m in matches)
                    exc.message = f"{exc.message.rstrip('.')}. Did you mean {listed}?"
            raise

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
            except SystemExit:
                # typer's own answer to a closed pipe (while printing help): exit 1 after
                # wrapping the streams; the command line answers every closed pipe alike
                if type(sys.stdout).__name__ == "PacifyFlushWrapper":
                    quiet_closed_stdout()
                    sys.exit(PIPE_CLOSED)
                raise
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
            command = self.get_command(None, token) if group is self.commands else group.get(
                token)
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
