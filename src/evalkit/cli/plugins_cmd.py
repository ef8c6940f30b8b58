"""``evalkit plugins list``: audit the installed plugins and every registered name.

Distribution metadata is read first and plugins are imported after, each on its own, so a
plugin that fails to import is listed as failed and the command still works. Only typer
is imported at module level.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from evalkit.plugins import PluginReport

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

    report = plugin_report(config)
    if as_json:
        import json

        typer.echo(json.dumps(report.as_dict(), indent=2))
    else:
        typer.echo(render_text(report))
    if check and not report.ok:
        raise typer.Exit(1)


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return lines


def _hook_short(hook: str) -> str:
    return hook.removeprefix("evalkit_register_")


def render_text(report: PluginReport) -> str:
    """The human-readable listing: config, plugins, names, then problems."""
    out = [f"config: {report.config.describe()}", f"selection: {report.selection}", ""]
    out.append("plugins:")
    rows = []
    for p in report.plugins:
        where = p.location or "-"
        if p.editable:
            where = f"{where} (editable)"
        rows.append([
            p.name, p.distribution or "-", p.version or "-", p.origin,
            "enabled" if p.enabled else "disabled", p.status,
            ",".join(_hook_short(h) for h in p.hooks) or "-", where,
        ])
    out += ["  " + line for line in _table(
        ["name", "distribution", "version", "origin", "enabled", "status", "hooks", "location"],
        rows,
    )]
    for p in report.plugins:
        if p.error:
            out.append(f"  ! {p.name} ({p.distribution or p.module}): {p.error}")
    out += ["", "names:"]
    name_rows = [
        [n.name, n.kind if n.loader_kind is None else f"loader:{n.loader_kind}",
         n.polarity or "-", n.definition_version or "-", n.provider]
        for n in report.names
    ]
    if name_rows:
        out += ["  " + line for line in _table(
            ["name", "kind", "polarity", "def.version", "provider"], name_rows
        )]
    else:
        out.append("  (none registered)")
    problems = [c.message() for c in report.conflicts] + report.entry_point_conflicts
    if problems:
        out += ["", "conflicts:"] + [f"  ! {m}" for m in problems]
    failed = len(report.failed)
    out += ["", f"{len(report.plugins)} plugin(s), {failed} failed, "
            f"{len(report.names)} name(s), {len(problems)} conflict(s)"]
    return "\n".join(out)
