"""The text ``evalkit plugins list`` prints: the config, each plugin, each registered
name, and the problems (failed imports, conflicts), as aligned columns."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalkit.plugins.listing import PluginReport


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return lines


def _hook_short(hook: str) -> str:
    return hook.removeprefix("evalkit_register_")


def render_plugin_listing(report: PluginReport) -> str:
    """The human-readable listing: config, plugins, names, then problems."""
    out = [f"config: {report.config.describe()}", f"selection: {report.selection}"]
    if report.eval_config is not None:
        out.append(f"eval config: {report.eval_config}")
    elif report.eval_config_error is not None:
        out.append(f"eval config: not read ({report.eval_config_error})")
    out.append("")
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
    if report.command_errors:
        out += ["", "commands that cannot run:"] + [f"  ! {m}" for m in report.command_errors]
    if report.section_errors:
        out += ["", "config sections that cannot be read:"] + [
            f"  ! {m}" for m in report.section_errors]
    if report.config_errors:
        out += ["", "config keys no loaded plugin declares:"] + [
            f"  ! {m}" for m in report.config_errors]
    failed = len(report.failed)
    broken = (f", {len(report.command_errors)} command(s) that cannot run"
              if report.command_errors else "")
    out += ["", f"{len(report.plugins)} plugin(s), {failed} failed, "
            f"{len(report.names)} name(s), {len(problems)} conflict(s){broken}"]
    return "\n".join(out)


__all__ = ["render_plugin_listing"]
