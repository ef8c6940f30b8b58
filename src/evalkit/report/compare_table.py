"""The table ``evalkit compare`` prints: a comparison's report as a reader scans it.

:func:`print_compare_table` writes a :class:`~evalkit.report.Report` of kind
``compare`` (from :meth:`evalkit.comparison.Comparison.to_report`) to a rich console: the
runs, how the queries were paired and how they were tested, one line per (metric,
candidate) with both means, the difference, its interval, p and adjusted p, the verdict
and wins/ties/losses, what "significant" means, the statistics' notes, and with
``top`` the queries that moved most each way. Everything it prints is a field of the
report, so it shows the same facts as the console, JSON, Markdown and JUnit reporters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.report.comparison_rows import row_label, row_unit, unit_count
from evalkit.report.formatting import decimal, interval, signed
from evalkit.report.model import Report, ReportRow


def _mean(x: float | None) -> str:
    return "" if x is None else decimal(x)


def significance_rule(settings: Mapping[str, Any], adjusted: bool,
                      unit: str = "queries") -> str:
    """The sentence under the table: what ``significant`` means and what W/T/L counts
    (``unit``: ``"queries"``, or a target run's ``"cases"``)."""
    alpha = float(settings.get("alpha", 0.05))
    if settings.get("method") == "bootstrap" and not adjusted:
        return (f"significant: the CI excludes 0 (paired bootstrap). W/T/L: {unit} where "
                "the candidate is better / equal / worse.")
    rule = "adjusted p" if adjusted else "p"
    return (f"significant: {rule} < {alpha:g}. W/T/L: {unit} where the candidate is "
            "better / equal / worse.")


def _row_cells(r: ReportRow, several: bool, adjusted: bool) -> list[str]:
    cells = [row_label(r.metric, r.metric)]  # gm_map: "gm_map [diff: mean ln]"
    if several:
        cells += [r.candidate or "", r.baseline or "", _mean(r.reference_value),
                  _mean(r.value)]
    else:
        cells += [_mean(r.reference_value), _mean(r.value)]
    diff = "" if r.difference is None else signed(r.difference)
    cells += [diff, interval(r.ci_low, r.ci_high), r.p_display()]
    if adjusted:
        cells.append(r.p_display(adjusted=True))
    cells += ["yes" if r.significant else "no", r.wins_ties_losses]
    return cells


def print_compare_table(report: Report, console: Any) -> None:
    """Print ``report`` (kind ``compare``) on ``console`` (a :class:`rich.console.Console`;
    a console that is not a terminal is widened to 160 columns so that rows never wrap).
    Significant rows are bold. Names and texts are printed as written
    (:mod:`evalkit.report.escaping`: no markup, terminal escape or bidi override)."""
    from evalkit.report.escaping import rich_markup as escape
    from evalkit.report.escaping import terminal_text
    from evalkit.report.rich_tables import new_table as Table

    if not console.is_terminal:
        console.width = max(console.width, 160)
    settings = report.settings
    adjusted = (settings.get("correction", "none") != "none" if settings
                else report.correction is not None)
    several = len(report.runs) > 2
    for run in report.runs:
        where = f" ({escape(run.source)})" if run.source else ""
        console.print(f"{run.role} [bold]{escape(run.name)}[/bold]{where}", soft_wrap=True)
    n = (report.rows[0].n_queries if report.rows else 0) or 0
    unit = row_unit((report.provenance or {}).get("runs") or {})
    console.print(f"{unit_count(n, unit)} paired by id; diff = candidate - baseline",
                  soft_wrap=True)
    if report.description:
        console.print(terminal_text(report.description), soft_wrap=True, markup=False)
    alpha = float(settings.get("alpha", 0.05))
    if several:
        headers = ["metric", "candidate", "baseline", "baseline mean", "candidate mean"]
        left = {"metric", "candidate", "baseline", "significant"}
    else:
        headers = ["metric", "baseline", "candidate"]
        left = {"metric", "significant"}
    headers += ["diff", f"{100 * (1 - alpha):g}% CI", "p"]
    if adjusted:
        headers.append(f"p ({report.correction})")
    headers += ["significant", "W/T/L"]
    table = Table(*headers)
    for col, header in zip(table.columns, headers, strict=True):
        col.justify = "left" if header in left else "right"
    for r in report.rows:
        table.add_row(*_row_cells(r, several, adjusted),
                      style="bold" if r.significant else None)
    console.print(table)
    console.print(significance_rule(settings, adjusted, unit), soft_wrap=True)
    if report.slices:
        print_slice_table(report, console)
    for note in report.notes:
        if note not in report.warnings:  # the inputs' warnings go to stderr, once
            console.print(terminal_text(f"note: {note}"), soft_wrap=True, markup=False)
    if int(settings.get("top", 0) or 0) > 0:
        for r in report.rows:
            _print_movers(console, r, several)


def print_slice_table(report: Report, console: Any) -> None:
    """The slice table of ``report`` (``Report.slices``): a line per slice, metric and
    candidate (:func:`evalkit.report.slices.slice_cells`), significant lines bold, and
    what the family adjusted over."""
    from evalkit.report.escaping import terminal_text
    from evalkit.report.rich_tables import new_table as Table
    from evalkit.report.slices import slice_cells, slice_family_size

    headers, cells = slice_cells(report.slices, report.correction)
    size = (report.settings or {}).get("slice_family_size",
                                       slice_family_size(report.slices))
    untested = " (a slice of one case has no test and is not counted)" if any(
        x.n_queries < 2 for x in report.slices) else ""
    how = (f"adjusted ({report.correction}) over {size} slice x metric x candidate "
           f"tests{untested}" if any(x.p_adjusted is not None for x in report.slices)
           else "not adjusted")
    console.print(terminal_text(f"by tag: the comparison on each tag's cases, p {how}"),
                  soft_wrap=True, markup=False)
    table = Table(*headers)
    for col, header in zip(table.columns, headers, strict=True):
        col.justify = "left" if header in ("slice", "metric", "candidate", "verdict", "test") \
            else "right"
    for x, line in zip(report.slices, cells, strict=True):
        table.add_row(*(terminal_text(c) for c in line),
                      style="bold" if x.significant else None)
    console.print(table)


def _print_movers(console: Any, r: ReportRow, several: bool) -> None:
    from evalkit.report.escaping import terminal_text
    from evalkit.report.rich_tables import new_table as Table

    title = r.metric + (f", {r.candidate} vs {r.baseline}" if several else "")
    # the title is a line of its own: as a table title it would wrap at the table's
    # (narrow) width
    console.print(terminal_text(f"queries that moved most ({title})"), soft_wrap=True,
                  markup=False)
    texts = any(m.text for m in (*r.top_gains, *r.top_losses))
    t = Table("", "query", "baseline", "candidate", "diff", *(["text"] if texts else []),
              box=None, pad_edge=False)
    for col in t.columns[2:5]:
        col.justify = "right"
    for label, items in (("up", r.top_gains), ("down", r.top_losses)):
        for m in items:
            cells = [label, m.id, _mean(m.baseline), _mean(m.candidate), signed(m.diff)]
            if texts:
                cells.append(m.text or "")
            t.add_row(*cells)
    if not r.top_gains and not r.top_losses:
        t.add_row("", "(no query moved)", "", "", "", *([""] if texts else []))
    console.print(t)


__all__ = ["print_compare_table", "print_slice_table", "significance_rule"]
