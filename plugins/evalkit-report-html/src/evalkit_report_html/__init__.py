"""The ``html`` reporter of paired-evalkit: a comparison or a gate as one self-contained
HTML file (charts by Vega-Lite, drawn as SVG when the report is written; HTML from jinja2
templates).

``render_html`` is imported on first use, so discovering the plugin (``evalkit plugins
list``, ``evalkit --help``) imports neither jinja2 nor the plotting library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.3.0"
__all__ = ["MAX_MARKS", "__version__", "render_html"]

if TYPE_CHECKING:
    from evalkit_report_html.charts import MAX_MARKS as MAX_MARKS
    from evalkit_report_html.render import render_html as render_html


def __getattr__(name: str) -> Any:
    if name == "render_html":
        from evalkit_report_html.render import render_html

        return render_html
    if name == "MAX_MARKS":
        from evalkit_report_html.charts import MAX_MARKS

        return MAX_MARKS
    raise AttributeError(f"module 'evalkit_report_html' has no attribute {name!r}")
