"""The ``evalkit`` command group: commands built on first use, usage errors as one line.

A command's module is imported only when that command runs (click's lazily loaded
subcommands), and command modules import only typer at module level and the library inside
the function body, so ``evalkit --help`` loads no command module and no numpy; the
plugins' commands it lists come from the list the last discovery kept
(:mod:`evalkit.plugins.command_list`), so it imports no plugin either while that is
current.
Every command is wrapped with :func:`evalkit.cli.errors.handle_errors`, so user errors
print one line and exit 2; with ``--json`` every exit prints a JSON document
(:func:`evalkit.cli.errors.json_document_on_exit`).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import typer
from typer.core import TyperGroup

from evalkit.cli.commands import COMMANDS, LazyCommand
from evalkit.cli.errors import (
    PIPE_CLOSED,
    USER_ERROR,
    CliError,
    json_document_on_exit,
    plugin_warnings_as_lines,
    quiet_closed_stdout,
    report,
)
from evalkit.cli.usage import usage_message
from evalkit.io.error_messages import close_matches

if TYPE_CHECKING:
    from evalkit.plugins.command_list import ListedCommand

#: click's exceptions, from wherever this typer takes click (its own copy, or click itself)
_click_errors: Any = importlib.import_module(typer.BadParameter.__module__)


class EvalkitGroup(TyperGroup):
    """The ``evalkit`` command group. A usage error (an unknown or missing option, a value
    an option does not accept, an unknown command) prints one ``error: ...`` line naming
    the option and what it accepts, and exits 2, like every other user error; help and
    ``--version`` print as typer prints them. A plugin that fails to load while a command
    runs is reported as one ``warning: ...`` line. Commands of :data:`COMMANDS`, and the
    commands plugins add (:func:`evalkit.cli.command_targets.plugin_command`), are
    imported and built on first use."""

    lazy: ClassVar[dict[str, LazyCommand]] = {entry.name: entry for entry in COMMANDS}
    _listed: list[ListedCommand] | None = None

    def _plugin_commands(self) -> list[ListedCommand]:
        """The plugins' commands as ``--help`` lists them (read once per process); when
        they cannot be listed, one ``warning:`` line says why."""
        if self._listed is None:
            from evalkit.plugins.command_list import listed_commands

            listed, problem = listed_commands()
            if problem is not None:
                typer.echo(f"warning: plugin commands are not listed: {problem}", err=True)
            self._listed = [c for c in listed if c.name not in self.lazy]
        return self._listed

    def list_commands(self, ctx: Any) -> list[str]:
        names = [*self.lazy, *(c.name for c in self._plugin_commands())]
        return [*names, *(name for name in self.commands if name not in names)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.commands[cmd_name] = self._build(self.lazy[cmd_name])
        elif cmd_name not in self.commands:  # a plugin's, found and imported only now
            from evalkit.cli.command_targets import plugin_command

            command = plugin_command(cmd_name, self.rich_markup_mode, _click_errors.UsageError)
            if command is not None:
                self.commands[cmd_name] = command
        return self.commands.get(cmd_name)

    def _build(self, entry: LazyCommand) -> Any:
        """The click command (or group) that ``entry.module`` defines, its callbacks
        wrapped with :func:`handle_errors`, with this group's help layout."""
        from evalkit.cli.command_targets import click_command, import_target

        return click_command(import_target(entry.module), entry.name, entry.summary,
                             self.rich_markup_mode, kernel=True)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The command lists of ``evalkit --help``: the kernel's from :data:`COMMANDS`,
        then the plugins' from their records, neither importing a command's module."""
        listed = {c.name: c.help for c in self._plugin_commands()}
        rows: list[tuple[str, str]] = []
        plugin_rows: list[tuple[str, str]] = []
        for name in self.list_commands(ctx):
            if name in self.commands:
                command = self.commands[name]
                if not command.hidden:
                    (plugin_rows if name in listed else rows).append(
                        (name, command.get_short_help_str(formatter.width)))
            elif name in self.lazy:
                rows.append((name, self.lazy[name].summary))
            else:
                plugin_rows.append((name, listed[name]))
        for title, section in (("Commands", rows), ("Commands from plugins", plugin_rows)):
            if section:
                with formatter.section(title):
                    formatter.write_dl(section)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """As typer resolves it, with the did-you-mean over every command, loaded or not."""
        try:
            return super().resolve_command(ctx, args)
        except _click_errors.UsageError as exc:
            # only for a name that is no command: a command that cannot run says why itself
            if args and "Did you mean" not in exc.message and \
                    exc.message.startswith("No such command"):
                matches = close_matches(args[0], self.list_commands(ctx), n=3, cutoff=0.7)
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
        if not standalone_mode:  # the caller handles click's exceptions
            with plugin_warnings_as_lines():
                return super().main(args, prog_name, complete_var, False, windows_expand_args,
                                    **extra)
        with json_document_on_exit(argv), plugin_warnings_as_lines():
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
            except CliError as exc:  # raised while finding a command (plugin discovery)
                sys.stdout.flush()
                report(exc)
                sys.exit(exc.exit_code)
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
            try:
                command = self.get_command(None, token) if group is self.commands else \
                    group.get(token)
            except (_click_errors.UsageError, CliError):  # a plugin's command that cannot run
                command = None
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
