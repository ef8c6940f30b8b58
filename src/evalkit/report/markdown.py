"""Markdown reporter: a heading, a table and the reasons, sized for a pull-request comment
or a CI step summary (``$GITHUB_STEP_SUMMARY``)."""

from __future__ import annotations

from typing import Any

from evalkit.report._table import columns, movers
from evalkit.report.escaping import markdown_code as code
from evalkit.report.escaping import markdown_text as text
from evalkit.report.model import Report, as_report

ICONS = {"pass": "✅", "fail": "❌", "warn": "⚠️", "error": "🛑"}
STATUS_ICONS = {"passed": "✅", "failed": "❌", "error": "🛑"}


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(text(c).strip() for c in cells) + " |"


def render_markdown(obj: Any) -> str:
    """The report as GitHub-flavoured Markdown. Every text from the report (run names,
    check ids, metric names, query ids and texts, details, notes) is escaped so that it
    renders as written (:func:`evalkit.report.escaping.markdown_text`, names in code
    spans :func:`~evalkit.report.escaping.markdown_code`): no HTML, link, emphasis or
    table cell comes from a name."""
    report = as_report(obj)
    headers, cells = columns(report)
    out: list[str] = []
    if report.kind == "gate":
        icon = STATUS_ICONS.get(report.status, "")
        out.append(f"### {icon} {text(report.title)}: {text(report.status)} "
                   f"(exit {report.exit_code})")
    else:
        out.append(f"### {text(report.title)}")
    what = code(report.subject)
    if report.reference:
        what += (" against baseline " if report.kind == "gate" else " vs ") + (
            code(report.reference))
    out += ["", what, ""]
    if report.description:  # how a comparison was tested
        out += [f"_{text(report.description)}_", ""]
    if report.pooled:  # several collections: the pooled metrics and their forest tables
        return "\n".join(out + _pooled(report) + ["", text(report.summary, line_start=True), ""])
    out.append(_row(headers))
    out.append("|" + "|".join("---" for _ in headers) + "|")
    for row, line in zip(report.rows, cells, strict=True):
        line = list(line)
        if report.kind == "gate":
            line[1] = f"{ICONS.get(row.status, '')} {row.status}".strip()
        out.append(_row(line))
    reasons = [r for r in report.rows if r.status not in ("pass", "no significant difference")]
    if reasons:
        out += ["", "**Details**", ""]
        out += [f"- {code(r.name)}: {text(r.detail)}" for r in reasons]
    for r in report.rows:
        heads, lines = movers(r)
        if not lines:
            continue
        out += ["", f"**Queries that moved most: {code(r.name)}**", ""]
        out.append(_row(heads))
        out.append("|" + "|".join("---" for _ in heads) + "|")
        out += [_row(line) for line in lines]
    if report.slices:  # compared slice by slice: the slice table
        from evalkit.report.slices import slice_cells

        out += ["", "**By tag** (the comparison on each tag's cases)", ""]
        out += _grid(*slice_cells(report.slices, report.correction))
    if report.notes:
        out.append("")
        out += [f"> {text(n, line_start=True)}" for n in report.notes]
    out += ["", text(report.summary, line_start=True), ""]
    return "\n".join(out)


def _grid(headers: list[str], cells: list[list[str]]) -> list[str]:
    out = [_row(headers), "|" + "|".join("---" for _ in headers) + "|"]
    return out + [_row(line) for line in cells]


def _pooled(report: Report) -> list[str]:
    """The lines of a report over several collections: the pooled metrics, then each
    metric's collections with its heterogeneity, then the notes."""
    from evalkit.report.pooled import collection_cells, heterogeneity, pooled_cells

    out = _grid(*pooled_cells(report.pooled, report.correction))
    for p in report.pooled:
        out += ["", f"**{code(p.metric)} by collection**", ""]
        out += _grid(*collection_cells(p))
        out += ["", f"_{text(heterogeneity(p))}_"]
    shown = {f"{p.metric}: {heterogeneity(p)}" for p in report.pooled}
    notes = [n for n in report.notes if n not in shown]
    if notes:
        out.append("")
        out += [f"> {text(n, line_start=True)}" for n in notes]
    return out
