"""Pairwise results for readers: a console table, Markdown, JSON and an HTML page with the
win-rate matrix.

Every text that comes from the runs or the judge (system names, case ids, notes) goes
through the kernel's escaping for its reader (:mod:`evalkit.report.escaping`:
:func:`~evalkit.report.escaping.terminal_text` for a console,
:func:`~evalkit.report.escaping.markdown_text` for Markdown,
:func:`~evalkit.report.escaping.visible` then :func:`evalkit.tables.html.escape` for
HTML), so a name never acts as markup or a terminal command. Each renderer takes a
:class:`~evalkit_judge.pairwise_artifact.PairwiseResult` (computed, or loaded from an artifact).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from evalkit.report.escaping import markdown_text, terminal_text, visible

if TYPE_CHECKING:
    from evalkit_judge.pairwise_artifact import PairwiseResult

#: The formats of ``--report FORMAT:PATH``.
FORMATS: tuple[str, ...] = ("markdown", "html", "json", "table")


def _num(x: Any, digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _pct(x: Any) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _p(x: Any) -> str:
    if x is None:
        return "-"
    return "<0.0001" if x < 1e-4 else f"{x:.4f}"


def _title(result: PairwiseResult) -> str:
    header = result.header
    epochs = max((s.get("epochs") or 1) for s in header["systems"])
    samples = f" x {epochs} samples" if epochs > 1 else ""
    return (f"pairwise: {' vs '.join(result.systems)} (judge {header['judge']['model']}, "
            f"{header['goldens']['n_cases']} cases{samples}, both orders)")


def pair_table(result: PairwiseResult) -> tuple[list[str], list[list[str]]]:
    """The per-pair table: headers and rows of text (the console's and Markdown's)."""
    level = 1 - result.header["options"]["alpha"]
    headers = ["pair", "win rate", f"{level:.0%} CI", "W/T/L", "flips", "cases", "p",
               "p (Holm)", "significant"]
    rows = []
    for p in result.pairs:
        rows.append([f"{p['a']} vs {p['b']}", _num(p["win_rate"]),
                     f"[{_num(p['ci_low'])}, {_num(p['ci_high'])}]",
                     f"{p['wins']}/{p['ties']}/{p['losses']}", _pct(p["flip_rate"]),
                     str(p["n_cases"]), _p(p["p_value"]), _p(p["p_adjusted"]),
                     "yes" if p["significant"] else "no"])
    return headers, rows


def strength_table(result: PairwiseResult) -> tuple[list[str], list[list[str]]] | None:
    """The Bradley-Terry table, or None under three systems."""
    bt = result.header.get("bradley_terry")
    if not bt:
        return None
    level = 1 - result.header["options"]["alpha"]
    rows = [[s["name"], f"{s['strength']:+.4f}",
             f"[{s['ci_low']:+.4f}, {s['ci_high']:+.4f}]"]
            for s in sorted(bt["systems"], key=lambda s: -s["strength"])]
    return ["system", "strength", f"{level:.0%} CI"], rows


def _bt_caption(result: PairwiseResult) -> str:
    bt = result.header["bradley_terry"]
    return (f"Bradley-Terry strengths (natural-log odds, summing to 0; L2 penalty "
            f"{bt['penalty']:g}; percentile bootstrap over {bt['n_cases']} cases, "
            f"B = {bt['n_resamples']}, seed {bt['seed']})")


def _footer(result: PairwiseResult) -> list[str]:
    t = result.header["totals"]
    opts = result.header["options"]
    cost = f"${t['cost_usd']:.6g}" + (f" ({t['unpriced']} unpriced)" if t["unpriced"] else "")
    earlier = t.get("cached_cost_usd")
    before = (f"; the cached verdicts cost ${earlier:.6g} when first requested"
              if isinstance(earlier, int | float) and earlier else "")
    lines = [f"verdicts: {t['verdicts']} ({t['requested']} requested, {t['cached']} from the "
             f"cache, {t['errors']} errors); spent now {cost}{before}",
             f"a flipped verdict counts as: {opts['flips']}; a tie: {opts['ties']} "
             f"(win rate = mean over cases; test: paired {opts['method']} over cases, "
             "Holm across pairs)", _interval_line(result)]
    return lines + [f"note: {n}" for n in result.header.get("notes") or []]


def _interval_line(result: PairwiseResult) -> str:
    """What the interval column is, and whether it agrees with ``significant``."""
    pairs = result.pairs
    level = 1 - result.header["options"]["alpha"]
    kinds = sorted({str(p.get("ci_method")) for p in pairs if p.get("p_value") is not None})
    if any("ci_method" not in p for p in pairs):  # an artifact written before ci_method
        return ("interval: Wilson's score interval, a different method from the test: "
                "the two can disagree")
    if not kinds:
        return "interval: none (a pair's test and interval need two cases or more)"
    if "percentile" in kinds:
        return (f"interval: the percentile bootstrap's {level:.0%} interval, which is not "
                "its test's inversion: the two can disagree")
    agree = (f"interval: the {level:.0%} interval of the same test ({', '.join(kinds)}), "
             f"so it excludes 0.5 exactly when p < {1 - level:g}")
    if len(pairs) > 1:
        agree += ("; not adjusted for the other pairs: 'significant' reads the Holm-"
                  "adjusted p")
    return agree


def _aligned(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()
    return [line(headers), *(line(r) for r in rows)]


def render_table(result: PairwiseResult) -> str:
    """The console report (texts through :func:`terminal_text`)."""
    safe: Callable[[str], str] = terminal_text
    headers, rows = pair_table(result)
    out = [safe(_title(result)), *_aligned(headers, [[safe(c) for c in r] for r in rows])]
    strengths = strength_table(result)
    if strengths is not None:
        out += ["", safe(_bt_caption(result)),
                *_aligned(strengths[0], [[safe(c) for c in r] for r in strengths[1]])]
    out += ["", *(safe(line) for line in _footer(result))]
    return "\n".join(out) + "\n"


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(markdown_text(h) for h in headers) + " |",
           "|" + "|".join(["---"] + ["---:"] * (len(headers) - 1)) + "|"]
    out += ["| " + " | ".join(markdown_text(c) for c in r) + " |" for r in rows]
    return out


def render_markdown(result: PairwiseResult) -> str:
    """The Markdown report (texts through :func:`markdown_text`)."""
    out = [f"### {markdown_text(_title(result))}", "", *_md_table(*pair_table(result))]
    strengths = strength_table(result)
    if strengths is not None:
        out += ["", markdown_text(_bt_caption(result), line_start=True), "",
                *_md_table(*strengths)]
    out += ["", *(markdown_text(line, line_start=True) + "  " for line in _footer(result))]
    return "\n".join(out) + "\n"


def render_json(result: PairwiseResult) -> str:
    """The header's summary as JSON (status, systems, judge, options, pairs,
    Bradley-Terry, totals, no_evidence, notes); the verdicts are the artifact's rows.
    ``status`` is ``"incomplete"`` when a verdict could not be had or a pair has no
    evidence (every comparison dropped: ``no_evidence`` names it), and ``evalkit
    pairwise`` exits 4; else ``"complete"``."""
    keep = ("name", "kind", "status", "systems", "goldens", "judge", "options", "pairs",
            "bradley_terry", "totals", "no_evidence", "notes")
    return json.dumps({k: result.header.get(k) for k in keep}, indent=2) + "\n"


def win_matrix(result: PairwiseResult) -> list[list[float | None]]:
    """``[i][j]``: system i's win rate against system j (``None`` on the diagonal and
    for a pair without cases)."""
    names = result.systems
    return [[None if a == b else result.win_rate(a, b) for b in names] for a in names]


def _h(text: object) -> str:
    from evalkit.tables.html import escape

    return escape(visible(text))


def _html_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{_h(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_h(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell_colour(rate: float) -> str:
    # white at 0.5, green towards 1, red towards 0 (lightness 100% -> 60%)
    hue = 120 if rate >= 0.5 else 0
    light = 100 - 80 * abs(rate - 0.5)
    return f"hsl({hue}, 60%, {light:.0f}%)"


def render_html(result: PairwiseResult) -> str:
    """A self-contained HTML page: the win-rate matrix (row system against column
    system, shaded from red through white to green), the per-pair table, the
    Bradley-Terry strengths and the notes. No script; every text escaped."""
    names = result.systems
    matrix = win_matrix(result)
    cells = []
    for a, row in zip(names, matrix, strict=True):
        tds = []
        for rate in row:
            if rate is None:
                tds.append('<td class="diag">-</td>')
            else:
                tds.append(f'<td style="background:{_cell_colour(rate)}">{rate:.3f}</td>')
        cells.append(f"<tr><th>{_h(a)}</th>{''.join(tds)}</tr>")
    head = "".join(f"<th>{_h(n)}</th>" for n in names)
    matrix_html = (f"<table class=\"matrix\"><caption>win rate of the row's system against "
                   f"the column's</caption><thead><tr><th></th>{head}</tr></thead><tbody>"
                   f"{''.join(cells)}</tbody></table>")
    parts = [f"<h1>{_h(_title(result))}</h1>", matrix_html, "<h2>Pairs</h2>",
             _html_table(*pair_table(result))]
    strengths = strength_table(result)
    if strengths is not None:
        parts += ["<h2>Bradley-Terry strengths</h2>", f"<p>{_h(_bt_caption(result))}</p>",
                  _html_table(*strengths)]
    parts.append("<ul>" + "".join(f"<li>{_h(line)}</li>" for line in _footer(result))
                 + "</ul>")
    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;"
             "margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
             "th:first-child,td:first-child{text-align:left}td.diag{color:#999}"
             "caption{text-align:left;font-style:italic}")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_h(result.header['name'])}</title><style>{style}</style></head>"
            f"<body>{''.join(parts)}</body></html>\n")


RENDERERS: dict[str, Callable[[PairwiseResult], str]] = {
    "table": render_table, "markdown": render_markdown, "json": render_json,
    "html": render_html,
}
