"""The kernel's four reporters as records: console, json, markdown, junit (the
``latex`` reporter is the evalkit-report-tables plugin's, ``html`` evalkit-report-html's).

Each renderer is imported when first called, so registering the reporters (every command,
``evalkit plugins list``) imports neither rich nor the report model.
"""

from __future__ import annotations

from typing import Any

from evalkit.core.specs import ReporterSpec


def _console(obj: Any) -> str:
    from evalkit.report.console import render_console

    return render_console(obj)


def _json(obj: Any) -> str:
    from evalkit.report.json_report import render_json

    return render_json(obj)


def _markdown(obj: Any) -> str:
    from evalkit.report.markdown import render_markdown

    return render_markdown(obj)


def _junit(obj: Any) -> str:
    from evalkit.report.junit import render_junit

    return render_junit(obj)


def builtin_reporters() -> list[ReporterSpec]:
    """The kernel's reporters: ``console``, ``json``, ``markdown``, ``junit``."""
    return [
        ReporterSpec("console", _console, ".txt", "a plain-text table (rich)"),
        ReporterSpec("json", _json, ".json", "one JSON document, NaN written as null"),
        ReporterSpec("markdown", _markdown, ".md",
                     "a table for a pull-request comment or a CI step summary"),
        ReporterSpec("junit", _junit, ".xml", "JUnit XML, one test case per check"),
    ]
