"""What runs a command: a kernel command's module or a plugin's ``load`` string, imported and
made into the click command the ``evalkit`` group runs.

A plugin's command (:func:`plugin_command`) is found by discovering the plugins
(:func:`evalkit.plugins.default_registry`) and taking its record, so a disabled plugin's
command, or a name two providers claim, never runs; the list ``evalkit --help`` shows is
:mod:`evalkit.plugins.command_list`'s. The kernel's own commands are records of the
built-ins too (a plugin's command of the same name is a conflict naming both), but they
are listed and built from :data:`evalkit.cli.commands.COMMANDS`.

A target is a function whose parameters are typer options (one command), a
:class:`typer.Typer` (a group of subcommands), or a click command or group of any click
(run as its own program: it parses its arguments, prints its help and reports its
errors as click does). Functions and the commands of a typer group are wrapped with
:func:`evalkit.cli.errors.handle_errors`, so a user error prints one line and exits 2.
"""

from __future__ import annotations

from typing import Any

import typer

from evalkit.cli.errors import handle_errors


class TargetError(Exception):
    """A command's target cannot be imported or is not something a command runs."""


def import_target(load: str) -> Any:
    """What ``load`` names (:func:`evalkit.core.import_strings.command_target`).

    Raises:
        TargetError: the module or attribute cannot be imported (naming ``load`` and why).
    """
    from evalkit.core.import_strings import command_target

    try:
        return command_target(load)
    except (ImportError, AttributeError) as exc:
        raise TargetError(f"cannot import {load!r} ({exc})") from None


def _wrap_callbacks(group: typer.Typer, kernel: bool) -> None:
    """Wrap the callbacks of ``group``'s commands, and of its subgroups', once."""
    for info in group.registered_commands:
        if info.callback is not None and not getattr(info.callback, "_evalkit_wrapped", False):
            info.callback = handle_errors(info.callback, kernel=kernel)
            info.callback._evalkit_wrapped = True  # type: ignore[attr-defined]
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _wrap_callbacks(sub.typer_instance, kernel)


def _is_click_command(target: Any) -> bool:
    return callable(getattr(target, "main", None)) and hasattr(target, "params") and \
        callable(getattr(target, "make_context", None))


def click_command(target: Any, name: str, summary: str, markup: Any,
                  kernel: bool = False) -> Any:
    """The click command named ``name`` that runs ``target``, listed with ``summary``;
    ``markup`` is the help layout of the ``evalkit`` group (typer's ``rich_markup_mode``);
    ``kernel``: one of evalkit's own commands (:func:`handle_errors`).

    Raises:
        TargetError: ``target`` is none of a function, a typer group, a click command.
    """
    if isinstance(target, typer.Typer):
        _wrap_callbacks(target, kernel)
        target.rich_markup_mode = markup
        command: Any = typer.main.get_group(target)
    elif _is_click_command(target):
        command = _passthrough(target, name, markup)
    elif callable(target):
        single = typer.Typer(add_completion=False, rich_markup_mode=markup)
        single.command(name)(handle_errors(target, kernel=kernel))
        command = typer.main.get_command(single)
    else:
        raise TargetError(f"{target!r} is not a function, a typer.Typer or a click command")
    command.name = name
    command.short_help = summary
    return command


def _passthrough(target: Any, name: str, markup: Any) -> Any:
    """A command that hands its arguments, untouched, to the click command ``target``."""
    program = f"evalkit {name}"

    def run(ctx: typer.Context) -> None:
        target.main(args=list(ctx.args), prog_name=program, standalone_mode=True)

    single = typer.Typer(add_completion=False, rich_markup_mode=markup)
    single.command(name, add_help_option=False, context_settings={
        "ignore_unknown_options": True, "allow_extra_args": True,
        "allow_interspersed_args": False})(run)
    return typer.main.get_command(single)


def plugin_command(name: str, markup: Any, usage_error: type[Exception]) -> Any:
    """The click command of the plugin command ``name`` (its ``load`` imported now), or
    ``None`` when no loaded plugin provides it.

    Raises:
        usage_error: two providers claim the name (naming both), or its ``load`` cannot
            be imported or is not a command.
        evalkit.cli.errors.CliError: the plugins cannot be discovered (``[tool.evalkit]``
            lists a plugin that is not installed, or at a version it refuses).
    """
    from evalkit.cli.errors import CliError
    from evalkit.core.pyproject_config import ConfigError
    from evalkit.core.registry import RegistryError
    from evalkit.core.specs import CommandSpec
    from evalkit.plugins.default import default_registry
    from evalkit.plugins.loading import KERNEL_PLUGIN

    try:
        registry = default_registry()
    except (RegistryError, ConfigError) as exc:  # the plugin selection cannot be met
        raise CliError(str(exc)) from None
    blocked = next((c for c in registry.conflicts()
                    if c.namespace == "command" and c.name == name), None)
    if blocked is not None:
        raise usage_error(blocked.message())
    entry = next((e for _, key, e in registry.entries("command") if key == name), None)
    if entry is None:
        why = _why_not_loaded(registry, name)
        if why is not None:
            raise usage_error(why)
        return None
    if entry.provider.module == KERNEL_PLUGIN:
        return None
    spec = entry.spec
    assert isinstance(spec, CommandSpec)
    try:
        return click_command(import_target(spec.load), name, spec.help, markup)
    except TargetError as exc:
        raise usage_error(f"command {name!r} of {entry.provider}: {exc}") from None


def _why_not_loaded(registry: Any, name: str) -> str | None:
    """Why ``evalkit NAME`` does not run when an installed plugin the plugin selection
    disables provides it (its hook module imported now, on this error path only): the
    message of :func:`evalkit.plugins.loading.unavailable_plugin`; else ``None``."""
    import importlib

    from evalkit.plugins.loading import unavailable_plugin

    for info in registry.plugins:
        if info.status != "disabled" or info.distribution is None:
            continue
        try:
            hooks = importlib.import_module(info.module.partition(":")[0])
            hook = getattr(hooks, "evalkit_register_commands", None)
            records: list[Any] = list(hook() or ()) if callable(hook) else []
        except Exception:  # a plugin that cannot say is not named
            continue
        if any(getattr(r, "name", None) == name for r in records):
            return unavailable_plugin(registry, info.distribution, f"`evalkit {name}`")
    return None


__all__ = ["TargetError", "click_command", "import_target", "plugin_command"]
