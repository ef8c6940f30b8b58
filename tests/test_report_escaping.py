"""Every reporter, and the CSV table, given hostile names: each output is escaped for the
program that reads it.

Run names, query ids, a metric name (a registered test metric), check ids and query texts
carry HTML and JavaScript, Markdown that breaks out of a code span or a table cell, LaTeX
control sequences, spreadsheet formulas, rich markup, terminal escapes and bidirectional
overrides. Every reporter found in the registry renders a comparison and a gate of them,
and each output is read by its reader, not by evalkit:

* Markdown: rendered to HTML by markdown-it-py (CommonMark with GFM tables and
  strikethrough, raw HTML allowed, as GitHub passes it), then parsed by the standard
  library's HTML parser: only the elements the reporter writes, every table row as wide
  as its header, and the names shown as written;
* HTML: loaded in headless Chromium (Playwright): no injected element exists and no
  injected script ran, and the names are the page's text;
* JUnit: parsed as XML; JSON: parsed, every string read back exactly;
* LaTeX: every control sequence is one the table writes, braces balance, and no ``%``
  comments out the rest of a line;
* console: no escape character and no bidirectional control reach the terminal, rich
  markup is printed as written;
* CSV: read by :mod:`csv`: a text cell that a spreadsheet would run as a formula starts
  with ``'``, numbers (negative ones too) are plain numbers.

Control characters cannot be part of a run name, an id or a check id (they are refused
where those are read: the last tests); they are tested in query texts, which may hold
them.
"""

from __future__ import annotations

import csv
import html.parser
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evalkit import RunResult, compare
from evalkit.core.hookspecs import hookimpl
from evalkit.core.registry import Registry
from evalkit.core.specs import MetricSpec
from evalkit.data.rows import QueryResult
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec
from evalkit.report.writing import render_report
from evalkit.testing import registered_plugin

BIDI = "\u202e"  # RIGHT-TO-LEFT OVERRIDE
ESC = "\x1b"

#: Each marker names an element an injection would create, or a value its script would set.
BASELINE = ('base <img id="pwned-base" src=x onerror="window.pwned=1"> '
            "[bold]loud[/bold] |cell| 1. ~~s~~ *em*")
CANDIDATE = ('cand`<img id="pwned-tick" src=x onerror="window.pwned=2">`' + BIDI
             + r" \input{/etc/passwd} 100% $x$ #1 _u_")
#: (one word, as a registered name must be: HTML reads the ``/`` as a space)
METRIC = ('=SUM(1)+<script/id="pwned-metric">window.pwned=3</script>'
          r"`[link=http://e]m[/link]`|\def\x{}")
QUERY_IDS = (
    "=HYPERLINK(\"http://evil\",\"x\")", "+1+2", "-3+cmd", "@SUM(A1)",
    '<svg id="pwned-query" onload="window.pwned=4"></svg>', "`a`|b",
    "[link](javascript:window.pwned=5)", r"\write18{rm -rf}", "q" + BIDI + "9",
    "</script><script>window.pwned=6</script>",
)
TEXT = (ESC + "[31mred" + ESC + "]0;title\x07 " + BIDI + "rtl <b id=\"pwned-text\">t</b> "
        "[bold]t[/bold] | `x` \\end{table} =1+1")
CHECK_IDS = (
    '<script id="pwned-check">window.pwned=7</script>',
    '`<img id="pwned-check-tick" src=x onerror="window.pwned=8">`',
    '=HYPERLINK("http://evil","x")',
    r"\input{/etc/passwd}",
    "[bold]loud[/bold]" + BIDI,
)


class HostilePlugin:
    @staticmethod
    @hookimpl
    def evalkit_register_metrics() -> list[MetricSpec]:
        return [MetricSpec(METRIC, _never, higher_is_better=True)]


def _never(response: Any, case: Any) -> float:
    raise AssertionError("the test gives the values")


def _runs() -> tuple[RunResult, RunResult]:
    base = RunResult(BASELINE, [QueryResult(q, [], {METRIC: 0.1 * i})
                                for i, q in enumerate(QUERY_IDS)])
    cand = RunResult(CANDIDATE, [QueryResult(q, [], {METRIC: 0.1 * i + (0.3 if i % 2 else -0.1)})
                                 for i, q in enumerate(QUERY_IDS)])
    return base, cand


@pytest.fixture(scope="module")
def registry() -> Iterator[Registry]:
    with registered_plugin(HostilePlugin(), installed=True) as reg:
        yield reg


@pytest.fixture(scope="module")
def reports(registry: Registry) -> dict[str, Any]:
    base, cand = _runs()
    comparison = compare(base, cand, metrics=[METRIC], top=3, n_resamples=200,
                         topics={q: TEXT for q in QUERY_IDS})
    checks = [CheckSpec(CHECK_IDS[0], METRIC, op=">=", threshold=0.1),
              CheckSpec(CHECK_IDS[1], METRIC, op=">=", threshold=5.0),
              CheckSpec(CHECK_IDS[2], "not-a-metric", op=">=", threshold=0.1),
              CheckSpec(CHECK_IDS[3], METRIC, vs_baseline="no_significant_regression"),
              CheckSpec(CHECK_IDS[4], METRIC, op="<=", threshold=0.0, level="warn")]
    gate = evaluate_gate(checks, cand, base, n_resamples=200)
    return {"compare": comparison, "gate": gate}


def reporter_names(registry: Registry) -> list[str]:
    """The reporters that render text; those that record the object elsewhere (a run
    history, a tracking server: ``ReporterSpec.record``) write nothing a reader sees."""
    return sorted(key for _, key, entry in registry.entries("reporter")
                  if getattr(entry.spec, "record", None) is None)


# ------------------------------------------------------------------ readers
class _Elements(html.parser.HTMLParser):
    """The elements and the text of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.rows: list[int] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "tr":
            self.rows.append(0)
        elif tag in ("td", "th"):
            self.rows[-1] += 1

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def markdown_as_html(text: str) -> _Elements:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    parsed = _Elements()
    parsed.feed(md.render(text))
    return parsed


def visible(s: str) -> str:
    """What a reader is shown for ``s``: control and bidi characters as their escapes."""
    return re.sub("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]",
                  lambda m: m[0].encode("unicode_escape").decode("ascii"), s)


#: Every element the Markdown reporter writes.
MARKDOWN_TAGS = {"h3", "p", "code", "em", "strong", "table", "thead", "tbody", "tr", "th",
                 "td", "ul", "li", "blockquote"}


def check_markdown(text: str, names: list[str]) -> None:
    parsed = markdown_as_html(text)
    assert {tag for tag, _ in parsed.tags} <= MARKDOWN_TAGS, parsed.tags
    assert not [a for _, attrs in parsed.tags for a in attrs if a != "style"]
    tables = text.count("|---")
    assert tables >= 1
    # every row of a table has the header's number of cells: no | broke out of a cell
    widths = {n for n in parsed.rows}
    assert len(widths) <= tables, parsed.rows
    # a zero-width space after an @ that would mention someone is not seen
    shown = " ".join("".join(parsed.text).replace("\u200b", "").split())
    for name in names:
        assert " ".join(visible(name).replace("\t", " ").split()) in shown, name


def check_console(text: str, names: list[str]) -> None:
    """No control character but line feeds and no bidi control; every name whole on one
    line (a table wide enough not to fold it), [bold] printed rather than applied."""
    assert ESC not in text and BIDI not in text and "\x07" not in text
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", text)
    assert "[bold]loud[/bold]" in text
    for name in names:
        assert any(" ".join(visible(name).split()) in " ".join(line.split())
                   for line in text.splitlines()), name


def check_junit(text: str, names: list[str]) -> None:
    root = ET.fromstring(text)  # well-formed XML 1.0
    values = [v for el in root.iter() for v in el.attrib.values()]
    values += [el.text or "" for el in root.iter()]
    assert not any(re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\u202e]", v) for v in values)
    flat = " ".join(" ".join(values).split())
    for name in names:
        assert " ".join(visible(name).split()) in flat, name


#: The control sequences the LaTeX table writes (in the table, its caption and the marks).
LATEX_COMMANDS = {"textbackslash", "textless", "textgreater", "textbar", "textasciicircum",
                  "textasciitilde", "textbf", "caption", "label", "begin", "end", "centering",
                  "toprule", "midrule", "bottomrule", "dagger", "nabla", "alpha", "infty",
                  "usepackage"}


def check_latex(text: str, names: list[str]) -> None:
    body = [line for line in text.splitlines() if not line.startswith("%")]
    for line in body:
        # a % not written \% would comment out the rest of the line
        assert not re.search(r"(?<!\\)%", line.replace(r"\\", "")), line
    joined = "\n".join(body).replace(r"\\", "")
    commands = set(re.findall(r"\\([A-Za-z]+)", joined))
    assert commands <= LATEX_COMMANDS, commands - LATEX_COMMANDS
    unescaped = re.sub(r"\\[{}$&#%_]", "", joined)
    assert unescaped.count("{") == unescaped.count("}")
    assert unescaped.count("$") % 2 == 0
    for comment in (line for line in text.splitlines() if line.startswith("%")):
        assert "\n" not in comment
    assert "input{" not in re.sub(r"\\textbackslash\{\}input\\\{", "", joined)


def check_json(text: str, strings: list[str]) -> None:
    data = json.loads(text)
    found: set[str] = set()

    def walk(x: Any) -> None:
        if isinstance(x, str):
            found.add(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                found.add(str(k))
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(data)
    for s in strings:
        assert s in found, s  # read back exactly, escape and bidi characters included


def open_html(text: str, tmp_path: Path) -> tuple[Any, bool, bool, int, str]:
    """``(page result, no window.pwned, no pwned element, elements with onerror/onload,
    the page's text)`` of the page ``text`` in headless Chromium."""
    from evalkit_report_html.browser import browser, unavailable

    why = unavailable()
    if why is not None:
        pytest.skip(f"the HTML report is not opened: {why}")
    page_file = tmp_path / "report.html"
    page_file.write_text(text, encoding="utf-8")
    with browser() as b:
        result, page = b.open(page_file, keep=True)
        try:
            return (result, page.evaluate("window.pwned === undefined"),
                    page.evaluate('document.querySelector("[id^=pwned]") === null'),
                    page.evaluate('document.querySelectorAll("[onerror],[onload]").length'),
                    " ".join(page.evaluate("document.body.textContent").split()))
        finally:
            page.close()


def check_html(text: str, names: list[str], tmp_path: Path) -> None:
    _, no_script_ran, no_element, handlers, shown = open_html(text, tmp_path)
    assert no_script_ran and no_element and handlers == 0
    from evalkit.report.escaping import BIDI_CONTROLS, xml_text

    for name in names:  # controls and bidi overrides shown as escapes, as elsewhere
        assert " ".join(xml_text(name, breaks=None).split()) in shown, name
    assert not BIDI_CONTROLS.intersection(text) and "\x1b" not in text


# ------------------------------------------------------------------ the tests
def test_every_registered_reporter_is_checked_here(registry: Registry) -> None:
    assert set(reporter_names(registry)) <= {"console", "json", "markdown", "junit", "latex",
                                             "html"}, "a new reporter: add its reader above"
    assert {"console", "json", "markdown", "junit", "latex"} <= set(reporter_names(registry))


@pytest.mark.parametrize("kind", ["compare", "gate"])
def test_each_reporter_escapes_for_its_reader(registry: Registry, reports: dict[str, Any],
                                              kind: str, tmp_path: Path) -> None:
    obj = reports[kind]
    names = [BASELINE, CANDIDATE, METRIC]
    if kind == "gate":
        names = [CANDIDATE, *CHECK_IDS]
    strings = names + ([*QUERY_IDS, TEXT] if kind == "compare" else [])
    for fmt in reporter_names(registry):
        text = render_report(obj, fmt)
        if fmt == "markdown":
            check_markdown(text, names)
        elif fmt == "console":
            from evalkit.report.console import render_console

            check_console(text, [])
            check_console(render_console(obj, width=2000), names)
        elif fmt == "junit":
            check_junit(text, names)
        elif fmt == "latex":
            check_latex(text, [n for n in names if n != METRIC] if kind == "gate" else names)
        elif fmt == "json":
            check_json(text, strings)
        elif fmt == "html":
            check_html(text, names, tmp_path)


def test_markdown_shows_query_ids_and_texts_as_written(reports: dict[str, Any]) -> None:
    text = render_report(reports["compare"], "markdown")
    parsed = markdown_as_html(text)
    shown = " ".join("".join(parsed.text).replace("\u200b", "").split())
    moved = [q for q in QUERY_IDS if q in {m.id for r in reports["compare"].results
                                            for m in (*r.top_gains, *r.top_losses)}]
    assert len(moved) == 6
    for q in moved:
        assert visible(q) in shown, q
    assert " ".join(visible(TEXT).split()) in shown


def test_console_compare_table_and_eval_table_print_names_as_written(
        reports: dict[str, Any]) -> None:
    from evalkit_retrieval.run_scores import print_table
    from rich.console import Console

    from evalkit.report.compare_table import print_compare_table

    buf = io.StringIO()
    console = Console(file=buf, width=400, color_system=None, highlight=False)
    comparison = reports["compare"]
    print_compare_table(comparison.to_report(), console)
    _, cand = _runs()
    print_table(console, cand, [METRIC], True, Path("runs/<x>[bold].jsonl"))
    text = buf.getvalue()
    moved = [m.id for r in comparison.results for m in (*r.top_gains, *r.top_losses)]
    check_console(text, [BASELINE, CANDIDATE, METRIC, *QUERY_IDS, *moved,
                         "runs/<x>[bold].jsonl"])
    assert visible(TEXT).split()[0] in text  # the escape written as \x1b


def test_csv_cells_a_spreadsheet_would_run_are_text(registry: Registry,
                                                    reports: dict[str, Any]) -> None:
    from evalkit.comparison.tables import comparison_columns
    from evalkit.data.run_views import run_columns
    from evalkit.gate.verdicts import gate_columns
    from evalkit.report.tables import csv_text

    _, cand = _runs()
    for columns in (run_columns(cand), comparison_columns(reports["compare"]),
                    gate_columns(reports["gate"])):
        rows = list(csv.reader(io.StringIO(csv_text(columns))))
        header, body = rows[0], rows[1:]
        for cell in (c for row in rows for c in row):
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                # only a number may start so: the spreadsheet reads it as that number
                assert re.fullmatch(r"[+-]?\d+(\.\d*)?([eE][+-]?\d+)?|-inf", cell), cell
        assert [v for k, v in zip(header, body[0], strict=True)]
    rows = list(csv.reader(io.StringIO(csv_text(run_columns(cand)))))
    header = rows[0]
    assert header[:2] == ["qid", "'" + METRIC]
    assert [r[0] for r in rows[1:]] == ["'" + q if q[0] in "=+-@" else q for q in QUERY_IDS]
    # numbers stay numbers: the candidate's first value is -0.1, written as a number
    values = {r[0]: r[1] for r in rows[1:]}
    assert float(values["'" + QUERY_IDS[0]]) == pytest.approx(-0.1)
    assert values["'" + QUERY_IDS[0]] == repr(0.1 * 0 - 0.1)


def test_names_and_ids_with_control_characters_are_refused(tmp_path: Path) -> None:
    from evalkit.gate.checks import CheckError, load_checks
    from evalkit.io.limits import LimitError, check_id, check_name

    for bad in (ESC + "[2J", "a\x07b", "a\nb", "a\u2028b"):
        with pytest.raises(ValueError, match="control character"):
            check_name("run " + bad)
        with pytest.raises(LimitError, match="control character"):
            check_id("q" + bad)
    checks = tmp_path / "checks.yaml"
    checks.write_text('checks:\n  - id: "x\\e[2Jy"\n    metric: ap\n    op: ">="\n'
                      "    threshold: 0.1\n", encoding="utf-8")
    with pytest.raises(CheckError, match="control character"):
        load_checks(checks)
    # bidirectional overrides are not control characters: they are accepted, and every
    # reporter above writes them visibly (or, in JSON, exactly)
    assert check_name("run" + BIDI) == "run" + BIDI


@pytest.mark.parametrize("kind", ["compare", "gate"])
def test_the_html_charts_draw_whatever_the_names(registry: Registry, reports: dict[str, Any],
                                                 kind: str, tmp_path: Path) -> None:
    if "html" not in reporter_names(registry):
        pytest.skip("the evalkit-report-html plugin is not installed")
    result = open_html(render_report(reports[kind], "html"), tmp_path)[0]
    assert result.console_errors == []


@pytest.mark.parametrize("kind", ["compare", "gate"])
def test_the_notebook_tables_escape_every_name(reports: dict[str, Any], kind: str) -> None:
    parsed = _Elements()
    parsed.feed(reports[kind]._repr_html_())
    assert {tag for tag, _ in parsed.tags} <= {"div", "table", "caption", "b", "br", "i",
                                               "thead", "tbody", "tr", "th", "td", "ul",
                                               "li", "p"}
    assert not [a for _, attrs in parsed.tags for a in attrs if a not in ("style", "class")]
    shown = "".join(parsed.text)
    for name in ([BASELINE, CANDIDATE, METRIC] if kind == "compare" else CHECK_IDS):
        assert name in shown, name


def test_invisible_characters_are_written_as_escapes() -> None:
    from evalkit.report.escaping import INVISIBLE, visible

    assert visible("\ufeff3") == "\\ufeff3"
    assert visible("a\u200bb\u00ad") == "a\\u200bb\\xad"
    assert all(visible(c).startswith("\\") for c in INVISIBLE)
    assert visible("caf\u00e9 \u4e2d") == "caf\u00e9 \u4e2d"  # visible text unchanged


def test_for_stream_escapes_for_a_terminal_only_and_keeps_the_layout() -> None:
    import io

    from evalkit.report.escaping import for_stream, terminal_lines

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    text = "runid\tall\t\x1b]0;t\x07\nmap\tq\r1\t0.5\u202e\n"
    assert terminal_lines(text) == "runid\tall\t\\x1b]0;t\\x07\nmap\tq 1\t0.5\\u202e\n"
    assert for_stream(text, Terminal()) == terminal_lines(text)
    assert for_stream(text, io.StringIO()) == text  # a file or a pipe: unchanged
    assert for_stream(text, None) == text
