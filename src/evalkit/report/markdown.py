"""Markdown reporter: a heading, a table and the reasons, sized for a pull-request comment
or a CI step summary (``$GITHUB_STEP_SUMMARY``)."""

from __future__ import annotations

from typing import Any

from evalkit.report._table import columns, movers
from evalkit.report.model import Report, as_report

ICONS = {"pass": "✅", "fail": "❌", "warn": "⚠️", "error": "🛑"}
STATUS_ICONS = {"passed": "✅", "failed": "❌", "error": "🛑"}


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def render_markdown(obj: Any) -> str:
    """The report as GitHub-flavoured Markdown."""
    report = as_report(obj)
    headers, cells = columns(report)
    out: list[str] = []
    if report.kind == "gate":
        icon = STATUS_ICONS.get(report.status, "")
        out.append(f"### {icon} {report.title}: {report.status} (exit {report.exit_code})")
    else:
        out.append(f"### {report.title}")
    what = f"`{_cell(report.subject)}`"
    if report.reference:
        what += (" against baseline " if report.kind == "gate" else " vs ") + (
            f"`{_cell(report.reference)}`")
    out += ["", what, ""]
    if report.description:  # how a comparison was tested
        out += [f"_{_cell(report.description)}_", ""]
    if report.pooled:  # several collections: the pooled metrics and their forest tables
        return "\n".join(out + _pooled(report) + ["", _cell(report.summary), ""])
    out.append("| " + " | ".join(_cell(h) for h in headers) + " |")
    out.append("|" + "|".join("---" for _ in headers) + "|")
    for row, line in zip(report.rows, cells, strict=True):
        line = list(line)
        if report.kind == "gate":
            line[1] = f"{ICONS.get(row.status, '')} {row.status}".strip()
        out.append("| " + " | ".join(_cell(c) for c in line) + " |")
    reasons = [r for r in report.rows if r.status not in ("pass", "no significant difference")]
    if reasons:
        out += ["", "**Details**", ""]
        out += [f"- `{_cell(r.name)}`: {_cell(r.detail)}" for r in reasons]
    for r in report.rows:
        heads, lines = movers(r)
        if not lines:
            continue
        out += ["", f"**Queries that moved most: `{_cell(r.name)}`**", ""]
        out.append("| " + " | ".join(_cell(h) for h in heads) + " |")
        out.append("|" + "|".join("---" for _ in heads) + "|")
        out += ["| " + " | ".join(_cell(c) for c in line) + " |" for line in lines]
    if report.notes:
        out.append("")
        out += [f"> {_cell(n)}" for n in report.notes]
    out += ["", _cell(report.summary), ""]
    return "\n".join(out)


def _grid(headers: list[str], cells: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(_cell(h) for h in headers) + " |",
           "|" + "|".join("---" for _ in headers) + "|"]
    return out + ["| " + " | ".join(_cell(c) for c in line) + " |" for line in cells]


def _pooled(report: Report) -> list[str]:
    """The lines of a report over several collections: the pooled metrics, then each
    metric's collections with its heterogeneity, then the notes."""
    from evalkit.report.pooled import collection_cells, heterogeneity, pooled_cells

    out = _grid(*pooled_cells(report.pooled, report.correction))
    for p in report.pooled:
        out += ["", f"**`{_cell(p.metric)}` by collection**", ""]
        out += _grid(*collection_cells(p))
        out += ["", f"_{_cell(heterogeneity(p))}_"]
    shown = {f"{p.metric}: {heterogeneity(p)}" for p in report.pooled}
    notes = [n for n in report.notes if n not in shown]
    if notes:
        out.append("")
        out += [f"> {_cell(n)}" for n in notes]
    return out
