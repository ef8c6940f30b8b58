"""``evalkit plugins list``: audit the installed plugins and every registered name.

Distribution metadata is read first and plugins are imported after, each on its own, so a
plugin that fails to import is listed as failed and the command still works
(:func:`evalkit.plugins.plugin_report`); the listing is
:func:`evalkit.report.plugin_listing.render_plugin_listing`. The eval config's plugin
sections are then applied to the listing's registry (:func:`eval_config_sections`), so
the judges declared in ``judges:`` are listed like any metric. Only typer is imported at
module level.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from evalkit.plugins.listing import Configure

app = typer.Typer(
    name="plugins",
    help="Audit plugins: what is installed, enabled, loaded, and which names each provides.",
    no_args_is_help=True,
)


@app.command("list", short_help="List plugins, their status and the names they register.")
def list_plugins(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the listing as one JSON object.")
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Exit 1 when a plugin failed, a name or entry point conflicts, "
            "a [tool.evalkit] table is no loaded plugin's section, or a command's or config "
            "section's import string cannot be imported (--check imports them)."
        ),
    ] = False,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="The pyproject.toml whose [tool.evalkit] table selects plugins "
            "(default: the nearest one at or above the working directory).",
        ),
    ] = None,
    eval_config: Annotated[
        Path | None,
        typer.Option(
            "--eval-config",
            help="The eval config whose plugin sections (judges:...) register names to "
            "list (default: the one `evalkit run` reads, evalkit.yaml or [tool.evalkit] of "
            "pyproject.toml, when there is one).",
        ),
    ] = None,
) -> None:
    """List each plugin (distribution, version, origin, location, status, hooks) and each
    registered name (kind, polarity, provider, definition version), with conflicts."""
    from evalkit.cli.errors import CliError
    from evalkit.core.pyproject_config import YAML_NAMES
    from evalkit.plugins.listing import plugin_report
    from evalkit.report.escaping import for_stream
    from evalkit.report.plugin_listing import render_plugin_listing

    if config is not None or eval_config is not None:
        from evalkit.io.input_files import refuse_directory

        refuse_directory(config, "pyproject.toml", label="--config",
                         inside=("pyproject.toml",), error=CliError)
        refuse_directory(eval_config, "eval config", label="--eval-config",
                         inside=YAML_NAMES, error=CliError)
    if eval_config is not None and not eval_config.is_file():
        from evalkit.io.symlink_loops import refuse_symlink_loop

        refuse_symlink_loop(eval_config, "eval config", label="--eval-config",
                            error=CliError)
        raise CliError(f"--eval-config {eval_config}: no such file; pass the eval config "
                       "(evalkit.yaml), or leave the option out")
    report = plugin_report(config, configure=eval_config_sections(eval_config),
                           import_commands=check)
    for problem in report.config_errors:
        typer.echo(f"warning: {problem}", err=True)
    if report.eval_config_error:
        typer.echo(f"warning: {report.eval_config_error}; the names its plugin sections "
                   "declare are not listed", err=True)
    if as_json:
        import json

        from evalkit.cli.output import stdout_document

        stdout_document(json.dumps(report.as_dict(), indent=2))
    else:
        typer.echo(for_stream(render_plugin_listing(report), sys.stdout))
    if check and not report.ok:
        raise typer.Exit(1)



def eval_config_sections(path: Path | None) -> Configure | None:
    """What :func:`~evalkit.plugins.plugin_report` calls with its registry: read the eval
    config ``path`` (default: the one ``evalkit run`` reads,
    :func:`evalkit.execute.config_location.find_config`: ``evalkit.yaml`` or the
    ``[tool.evalkit]`` of ``pyproject.toml``, found from the working directory; ``None``
    when there is none) and apply its plugin sections there
    (:func:`evalkit.execute.run_checks.apply_config_sections`). The callback raises
    ``ConfigError`` (a ``ValueError``: file, line and key named) when the config cannot
    be read, validated or applied."""
    if path is None:
        from evalkit.execute.config_location import ConfigError, find_config

        try:
            path = find_config()[0]
        except ConfigError:  # no eval config here: nothing to apply
            return None
    found = path

    def configure(_registry: object) -> str:
        from evalkit.execute.evalconfig import load_eval_config
        from evalkit.execute.run_checks import apply_config_sections

        cfg = load_eval_config(found)
        apply_config_sections(cfg)
        return str(cfg.path)

    return configure
