"""Hook implementations of the evalkit-report-tables plugin: the ``latex`` reporter.

Registering imports nothing but this module: the table is rendered by
:mod:`evalkit_report_tables.latex`, imported when a report is written
(``Comparison.to_latex()``, ``--report latex:PATH``).
"""

from __future__ import annotations

from typing import Any

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import ReporterSpec


def render(report: Any) -> str:
    """The ``latex`` reporter (:func:`evalkit_report_tables.latex.render_latex`)."""
    from evalkit_report_tables.latex import render_latex

    return render_latex(report)


@hookimpl
def evalkit_register_reporters() -> list[ReporterSpec]:
    return [
        ReporterSpec("latex", render, ".tex",
                     "a booktabs table for a paper: one row per system, one column per "
                     "metric, best in bold, significance marks"),
    ]
