"""Hook implementations of the evalkit-report-html plugin: the ``html`` reporter.

Registering imports nothing heavy: jinja2 and vl-convert are loaded when a report is
rendered.
"""

from __future__ import annotations

from typing import Any

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import ReporterSpec


def render(report: Any) -> str:
    """The ``html`` reporter (see :func:`evalkit_report_html.render.render_html`)."""
    from evalkit_report_html.render import render_html

    return render_html(report)


@hookimpl
def evalkit_register_reporters() -> list[ReporterSpec]:
    return [
        ReporterSpec(
            "html", render, ".html",
            "one self-contained interactive HTML file: tables, forest plot, per-query "
            "differences, scatter, null distribution, movers (opens offline)",
        )
    ]
