"""``evalkit plugins list``: audit the installed plugins and every registered name.

Distribution metadata is read first and plugins are imported after, each on its own, so a
plugin that fails to import is listed as failed and the command still works
(:func:`evalkit.plugins.plugin_report`); the listing is
:func:`evalkit.reporters.plugin_listing.render_plugin_listing`. Only typer is imported at
module level.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
            "--check", help="Exit 1 when a plugin failed or a name or entry point conflicts."
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
) -> None:
    """List each plugin (distribution, version, origin, location, status, hooks) and each
    registered name (kind, polarity, provider, definition version), with conflicts."""
    from evalkit.plugins import plugin_report
    from evalkit.reporters.plugin_listing import render_plugin_listing

    report = plugin_report(config)
    if as_json:
        import json

        typer.echo(json.dumps(report.as_dict(), indent=2))
    else:
        typer.echo(render_plugin_listing(report))
    if check and not report.ok:
        raise typer.Exit(1)

