"""``render_html(report) -> str``: a comparison or a gate as one self-contained HTML page.

The page is a jinja2 template (``templates/compare.html.j2``, ``gate.html.j2`` or
``agreement.html.j2`` on ``base.html.j2``) filled from
:func:`~evalkit_report_html.compare_page.compare_context`,
:func:`~evalkit_report_html.gate_page.gate_context` or
:func:`~evalkit_report_html.agreement_page.agreement_context`. Every chart is drawn as SVG here,
when the report is written (:func:`evalkit_report_html.vega.to_svg`), and inlined, so the
charts show without JavaScript; the style sheet and a small script
(``templates/report.js``: the hover over a query's mark, sorting and filtering) are
inlined too, with the hover's data as one JSON block, so the file needs no network to
open. Every text from the report is first written as XML 1.0 can hold it and as a reader
sees it (:func:`evalkit.report.escaping.xml_text`: a control character or a bidirectional
override becomes its visible escape, ``\x1b``, ``\u202e``, as in every other report), in
the templates (jinja2's ``finalize``), the chart specifications and the hover data
(:func:`evalkit.report.escaping.xml_data`); then escaped by jinja2's autoescaping (and in
the SVG by Vega);
JSON in the page has ``<``, ``>`` and ``&`` written as ``\\uXXXX`` so that no value can
close its ``<script>``.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

#: Written in place of ``</script`` in inlined JavaScript (the same text to JavaScript).
_SCRIPT_END = re.compile(r"</(script)", re.I)


@functools.lru_cache(maxsize=1)
def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("evalkit_report_html", "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
        lstrip_blocks=True, finalize=_finalize,
    )


def _finalize(value: Any) -> Any:
    """What a template writes: text made visible (:func:`evalkit.report.escaping.xml_text`)
    before autoescaping; markup built here (the SVG, the script, the style) as it is."""
    from markupsafe import Markup

    from evalkit.report.escaping import xml_text

    if isinstance(value, str) and not isinstance(value, Markup):
        return xml_text(value, breaks=None)
    return value


@functools.lru_cache(maxsize=4)
def _asset(name: str) -> str:
    from importlib.resources import files

    return files("evalkit_report_html").joinpath("templates", name).read_text("utf-8")


def script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside ``<script>``: compact, strict (no NaN), with
    ``<``, ``>`` and ``&`` escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def inline_script(code: str) -> str:
    """JavaScript ``code`` that cannot end its ``<script>`` element early."""
    return _SCRIPT_END.sub(r"<\\/\1", code)


def render_html(obj: Any, *, max_marks: int | None = None) -> str:
    """The HTML page of a report.

    Args:
        obj: an :class:`evalkit.report.Report`, or anything with ``to_report()`` (a
            ``Comparison``, a ``GateReport``), or an agreement report
            (:class:`evalkit_judge.agreement.AgreementReport`, ``kind
            "agreement"``: :mod:`evalkit_report_html.agreement_page`).
        max_marks: the most queries a per-query plot draws before it is downsampled
            (default :data:`evalkit_report_html.charts.MAX_MARKS`).

    Returns:
        The page, one self-contained HTML document.

    Raises:
        TypeError: ``obj`` is not a report.
    """
    from markupsafe import Markup

    from evalkit import __version__ as evalkit_version
    from evalkit.report.escaping import xml_data
    from evalkit.report.model import as_report
    from evalkit_report_html import __version__ as plugin_version
    from evalkit_report_html.charts import MAX_MARKS
    from evalkit_report_html.vega import to_svg, versions

    if getattr(obj, "kind", None) == "agreement":  # evalkit agreement --report html:PATH
        from evalkit_report_html.agreement_page import agreement_context

        context = agreement_context(obj)
    elif (report := as_report(obj)).kind == "gate":
        from evalkit_report_html.gate_page import gate_context

        context = gate_context(report)
    else:
        from evalkit_report_html.compare_page import compare_context

        context = compare_context(report, max_marks or MAX_MARKS)
    svgs = {c["id"]: Markup(to_svg(xml_data(c["spec"]), c["id"]))
            for c in context.pop("charts")}
    hover = xml_data(context.pop("hover", {}))
    template = _environment().get_template(f"{context['kind']}.html.j2")
    return str(template.render(
        **context, svgs=svgs, hover_json=Markup(script_json(hover)),
        app_js=Markup(inline_script(_asset("report.js"))),
        css=Markup(_asset("report.css").replace("</", "<\\/")),
        versions=versions(), evalkit_version=evalkit_version,
        plugin_version=plugin_version,
    ))


__all__ = ["inline_script", "render_html", "script_json"]
