"""Text from runs, checks and queries written into other programs' languages, one function
per language, so that a run name, a query id, a metric name, a check id or a query's text
is shown as the characters it is and never acts as markup, a formula or a command.

Every function here starts from :func:`visible`: line breaks and tabs become one space, and
the characters a reader cannot see but a program obeys (control characters such as the
terminal escape ``ESC``, and the bidirectional formatting characters that reorder what
follows them, such as U+202E RIGHT-TO-LEFT OVERRIDE), and those that print nothing (such
as U+FEFF) are written as the escapes Python prints for them (``\\x1b``, ``\\u202e``,
``\\ufeff``). Then:

* :func:`terminal_text`: for a console (rich, plain ``print``), :func:`terminal_lines` for
  text of several lines (tabs and line feeds kept) and :func:`for_stream` for plain text a
  command writes to a stream, escaped only when that stream is a terminal (a file or a
  pipe gets the bytes the format says); :func:`rich_markup` is the
  same text with rich's markup (``[bold]``, ``[link=...]``) escaped, for a string that
  also carries our own markup, and :func:`rich_cell` a ``rich.text.Text`` that is never
  read as markup, for a table cell or header;
* :func:`markdown_text`: Markdown inline text as GitHub renders it (a pull-request
  comment, a CI step summary, a table cell): what would start an HTML tag or a character
  reference written as a reference (``&lt;``, ``&amp;``), the punctuation with a Markdown
  meaning (`` ` * _ ] | ~ $ \\``) escaped with a backslash where it has it, an ``@``
  that would mention a user broken by a zero-width space, and at the start
  of a line a first character that would start a heading, a quote or a list escaped
  too; :func:`markdown_code` a code span that no backtick can close;
* :func:`csv_cell`: a CSV cell that a spreadsheet shows as text, not as a formula (the
  OWASP rule for CSV injection: a text cell starting with ``=``, ``+``, ``-``, ``@``, a
  tab or a carriage return gets a leading ``'``); numbers stay numbers;
* :func:`latex_text`: LaTeX text (the ten special characters, ``< > |``);
* :func:`xml_text`: XML 1.0 character data (JUnit), and HTML text (the HTML report's
  templates and the text of its SVG charts): the characters XML 1.0 cannot hold even
  escaped are written visibly; the XML library (or jinja2's autoescaping) escapes ``<``,
  ``>``, ``&`` and quotes; :func:`xml_data` applies it to every string of nested data (a
  chart's specification, a page's JSON).

JSON needs none of this: :mod:`json` escapes whatever a string holds and reads it back
exactly. HTML is the ``evalkit-report-html`` plugin's (:func:`xml_text` on every value a
template writes, then jinja2's autoescaping) and :mod:`evalkit.report.html_table`'s
(:func:`html.escape`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

#: The bidirectional formatting characters (Unicode's Bidi_Control property): embeddings,
#: overrides, isolates and marks, which reorder the text around them on screen.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                          "\u2066\u2067\u2068\u2069")

#: Characters that print nothing: the soft hyphen, the zero-width space, joiners and
#: word joiner, invisible operators, the Mongolian vowel separator and U+FEFF (a
#: byte-order mark left inside a file by ``cat``).
INVISIBLE = frozenset("\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064"
                      "\ufeff")

#: Line breaks (and the tab), written as one space.
_BREAKS = re.compile("\r\n|[\t\n\v\f\r\x1c\x1d\x1e\x85\u2028\u2029]")
#: Control characters but tab, line feed and carriage return, and the bidi controls.
_HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
                     + "".join(sorted(BIDI_CONTROLS | INVISIBLE)) + "]")


def _escape_char(m: re.Match[str]) -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object, *, breaks: str | None = " ") -> str:
    """``text`` (``str()`` of it) with line breaks and tabs as ``breaks`` (one space;
    None keeps them), and every other control character (Unicode category Cc:
    U+0000..U+001F, U+007F..U+009F), bidirectional formatting character
    (:data:`BIDI_CONTROLS`) and invisible character (:data:`INVISIBLE`) written as its
    Python escape (``\\x1b``, ``\\u202e``, ``\\ufeff``).
    Other text is unchanged."""
    s = str(text)
    if breaks is not None:
        s = _BREAKS.sub(breaks, s)
    return _HIDDEN.sub(_escape_char, s)


# ------------------------------------------------------------------ terminals (rich)
def terminal_text(text: object) -> str:
    """``text`` for a terminal: :func:`visible`, so that no escape sequence (colours, a
    cleared screen, a rewritten title, a hyperlink) and no bidirectional override reaches
    the terminal. Print it with rich's ``markup=False``, or use :func:`rich_markup`."""
    return visible(text)


def terminal_lines(text: object) -> str:
    """``text`` of several lines for a terminal, its layout kept: line feeds and tabs stay,
    and each piece between them is :func:`terminal_text` (a carriage return, which would
    let a line overwrite the one shown, becomes a space; ``ESC`` is written ``\\x1b``)."""
    return "\n".join("\t".join(terminal_text(piece) for piece in line.split("\t"))
                     for line in str(text).split("\n"))


def for_stream(text: str, stream: Any) -> str:
    """``text`` as a command writes it to ``stream`` (standard output or error):
    :func:`terminal_lines` when the stream is a terminal (``isatty()``), so that no escape
    sequence held by a run tag, a query id or a plugin's name acts on the terminal;
    unchanged when it is a file or a pipe, so that what is written there is byte for byte
    what the format says (``evalkit eval -f trec``: trec_eval's output)."""
    try:
        tty = bool(stream.isatty())
    except (AttributeError, OSError, ValueError):  # no stream, or a closed one
        tty = False
    return terminal_lines(text) if tty else text


def rich_markup(text: object) -> str:
    """:func:`terminal_text` with rich's markup escaped (``[bold]`` prints as written), for
    a string that is printed with markup because it also holds evalkit's own."""
    from rich.markup import escape

    return escape(terminal_text(text))


def rich_cell(text: object) -> Any:
    """:func:`terminal_text` as a ``rich.text.Text``: a table cell or header that rich
    prints as written (a ``str`` cell would be read as markup)."""
    from rich.text import Text

    return Text(terminal_text(text))


# ------------------------------------------------------------------ Markdown (GitHub)
#: What makes Markdown of inline text, each escaped only where it has that meaning, so
#: that ordinary text (``>= 0.3``, ``< 0.0001``, ``[+0.04, +0.07]``, ``ndcg_cut``) stays
#: readable in the raw file: a backslash, a backtick, ``*``, ``|``, ``~``, ``$`` (GitHub
#: reads ``$x$`` as math) anywhere; ``_``
#: at the edge of a word (GFM never reads an underscore inside a word as emphasis); ``]``
#: before ``(``, ``[`` or ``:`` (the link and reference forms); ``<`` before a letter,
#: ``/``, ``!`` or ``?`` (a tag, comment, declaration or autolink); ``&`` before ``#`` or
#: a letter (a character reference); ``@`` before a name and not after a word character
#: (a mention that would notify a GitHub user or team; ``ndcg@10`` is none): a zero-width
#: space follows the ``@``, since GitHub finds mentions in the rendered text, where a
#: backslash is gone.
_MD_INLINE = re.compile(r"[\\`*|~$]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])|\](?=[(\[:])"
                        r"|<(?=[A-Za-z/!?])|&(?=[#A-Za-z])|(?<![0-9A-Za-z_.])@(?=[0-9A-Za-z])")
_MD_ENTITY = {"<": "&lt;", "&": "&amp;", "@": "@\u200b"}
#: A first character that would start a block: a heading, a quote, a list item, a rule,
#: a setext underline, a link reference definition, a table of its own.
_MD_BLOCK_START = re.compile(r"^( {0,3})(?:([#>+\-=\[])|(\d+)([.)]))")


def _md_inline(m: re.Match[str]) -> str:
    ch = m.group(0)
    return _MD_ENTITY.get(ch) or "\\" + ch


def markdown_text(text: object, *, line_start: bool = False) -> str:
    """``text`` as GitHub-flavoured Markdown inline text that renders as written, in a
    paragraph or a table cell: :func:`visible` (a line break would end a table row or
    start a block), then each character that would make Markdown or HTML escaped where
    it would (``<`` before a tag as ``&lt;``, ``&`` before a reference as ``&amp;``, ``@``
    before a name followed by a zero-width space (no mention); a backslash before
    `` \\ ` * | ~ $``, an underscore at the edge of a word and a ``]``
    that would close a link). With ``line_start`` (the text begins a line, or a quote's
    line) also a first ``#``, ``>``, ``+``, ``-``, ``=``, ``[`` or the ``.``/``)`` of a
    first number (no heading, quote, list, rule or link definition). CommonMark, sections
    2.4 (backslash escapes), 2.5 (entity references), 6.3 (links), 6.6 (raw HTML); GFM,
    sections 4.10 (tables), 6.5 (strikethrough)."""
    s = _MD_INLINE.sub(_md_inline, visible(text))
    if not line_start:
        return s
    return _MD_BLOCK_START.sub(lambda m: m.group(1) + (
        "\\" + m.group(2) if m.group(2) else m.group(3) + "\\" + m.group(4)), s, count=1)


def markdown_code(text: object, *, in_table: bool = False) -> str:
    """``text`` as a Markdown code span that shows it exactly: :func:`visible` (a line
    break would end the span's paragraph or table row), fenced by one backtick more than
    the longest run of backticks inside, with a space inside each fence when the text
    starts or ends with a backtick or a space (CommonMark, section 6.1). Inside a table
    (``in_table``) ``|`` is written ``\\|``, which GitHub's table reads as the character
    (GFM, section 4.10); elsewhere a backslash in a code span is shown, so it is not added.
    An empty text is an empty string (a code span cannot be empty)."""
    s = visible(text)
    if not s:
        return ""
    if in_table:
        s = s.replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", s)), default=0)
    fence = "`" * (longest + 1)
    if s[0] in "` " or s[-1] in "` ":
        s = f" {s} "
    return f"{fence}{s}{fence}"


# ------------------------------------------------------------------ CSV (spreadsheets)
#: The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV
#: Injection"): ``=``, ``+``, ``-``, ``@``, tab, carriage return.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value: object, raw: bool = False) -> str:
    """``value`` as the text of a CSV cell (the :mod:`csv` writer quotes it): empty for
    None and NaN; a float as its ``repr`` (which reads back as the same float; ``inf``,
    ``-inf``); an int or a bool as ``str``; text as is, except that text starting with one
    of :data:`FORMULA_START` gets a leading ``'``, which Excel and LibreOffice show as
    text rather than evaluate (OWASP, "CSV Injection"). Text that is a plain decimal
    number (``-1``, ``+2.5e3``) is not a formula and is left as it is. With ``raw``, text
    is always as is (``evalkit eval --csv-raw``: for programs that join on the ids)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    if isinstance(value, int):  # bool included: True, False
        return str(value)
    s = str(value)
    if not raw and s.startswith(FORMULA_START) and not _NUMBER.fullmatch(s):
        return "'" + s
    return s


# ------------------------------------------------------------------ LaTeX
_LATEX = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "%": r"\%", "_": r"\_", "^": r"\textasciicircum{}", "~": r"\textasciitilde{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
}
_LATEX_RE = re.compile("[" + re.escape("".join(_LATEX)) + "]")


def latex_text(text: object) -> str:
    """``text`` as LaTeX text: :func:`visible` (a line break becomes a space, a control or
    bidirectional formatting character its escape, which is then printed as text), then
    the ten special characters (``\\ { } $ & # % _ ^ ~``) and ``< > |`` (which the default
    OT1 font encoding prints as other glyphs) with their text commands. Other characters
    pass unchanged (pdflatex reads UTF-8; accented Latin letters compile, scripts it has
    no font for need xelatex or lualatex)."""
    return _LATEX_RE.sub(lambda m: _LATEX[m.group(0)], visible(text))


# ------------------------------------------------------------------ XML 1.0 (JUnit)
def xml_text(text: object, *, breaks: str | None = " ") -> str:
    """``text`` for an XML 1.0 document (an attribute value or element text), before the
    XML library escapes ``<``, ``>``, ``&`` and quotes: :func:`visible`, so the control
    characters XML 1.0 cannot hold even as references (U+0000..U+001F but tab and line
    breaks) and the bidirectional formatting characters are written as their escapes;
    U+FFFE and U+FFFF (not XML characters) and lone surrogates are too. ``breaks=None``
    keeps line breaks and tabs (element text of several lines)."""
    s = visible(text, breaks=breaks)
    return re.sub("[\ufffe\uffff\ud800-\udfff]", _escape_char, s)


def xml_data(value: Any) -> Any:
    """``value`` (JSON-like data: mappings, lists, tuples, scalars) copied with every
    string, keys included, passed through :func:`xml_text` (line breaks kept), so that no
    control or bidirectional formatting character reaches an XML or HTML document or an
    SVG renderer (vl-convert aborts the process on a control character in a chart's
    text). Other values are returned as they are."""
    if isinstance(value, str):
        return xml_text(value, breaks=None)
    if isinstance(value, Mapping):
        return {xml_data(k): xml_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [xml_data(v) for v in value]
    return value


__all__ = ["BIDI_CONTROLS", "FORMULA_START", "csv_cell", "for_stream", "latex_text",
           "markdown_code", "markdown_text", "rich_cell", "rich_markup", "terminal_lines",
           "terminal_text", "visible", "xml_data", "xml_text"]
