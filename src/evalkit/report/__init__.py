"""Reports: the :class:`Report` model every reporter renders, the renderers, and numbers
written the way people read them.

Holds the model (:mod:`.model`: :class:`Report`, :class:`ReportRow` and their parts, built
by a ``GateReport`` or a ``Comparison`` in their ``to_report()``, the rows of a
comparison, :mod:`.comparison_rows`, and a metric pooled over collections,
:mod:`.pooled`), the kernel's renderers (console, json, markdown,
junit, latex; :mod:`.builtin` makes their records; plain HTML tables of reports for
notebooks, :mod:`.html_table`), the tables the commands print
(:mod:`.compare_table`, :mod:`.pooled_table`, :mod:`.plugin_listing`,
:mod:`.target_run`), tables as CSV (:mod:`.tables`), reports written to
``--report FORMAT:PATH`` targets (:mod:`.writing`) and number formatting
(:mod:`.formatting`).

May import: io, stats, core, plugins, data, tables. The model sits below the gate and the
comparison, which build it from their fields: nothing here names their types. A reporter
is found in the registry by name, never imported, so a plugin's reporter (``html``) works
like the built-in ones; so is a run format of ``evalkit eval --format`` (:mod:`.run_formats`;
the retrieval plugin's ``trec``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

_LAZY: dict[str, str] = {
    "QueryDelta": "evalkit.report.model",
    "Report": "evalkit.report.model",
    "ReportCase": "evalkit.report.model",
    "ReportRow": "evalkit.report.model",
    "ReportRun": "evalkit.report.model",
    "as_report": "evalkit.report.model",
    "report_from_gate": "evalkit.report.model",
    "PooledEffect": "evalkit.report.pooled",
    "CollectionEffect": "evalkit.report.pooled",
    "report_from_comparison": "evalkit.report.comparison_rows",
    "builtin_reporters": "evalkit.report.builtin",
    "PLUGIN_REPORTERS": "evalkit.report.writing",
    "ReportTargetError": "evalkit.report.writing",
    "check_report_targets": "evalkit.report.writing",
    "file_targets": "evalkit.report.writing",
    "get_reporter": "evalkit.report.writing",
    "is_recorder": "evalkit.report.writing",
    "show_result": "evalkit.report.writing",
    "parse_report_target": "evalkit.report.writing",
    "render_report": "evalkit.report.writing",
    "write_report": "evalkit.report.writing",
    "write_reports": "evalkit.report.writing",
}
__all__ = sorted(_LAZY)
# registering the reporters (every command) imports neither rich nor the model
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

if TYPE_CHECKING:
    from evalkit.report.builtin import builtin_reporters as builtin_reporters
    from evalkit.report.comparison_rows import report_from_comparison as report_from_comparison
    from evalkit.report.model import QueryDelta as QueryDelta
    from evalkit.report.model import Report as Report
    from evalkit.report.model import ReportCase as ReportCase
    from evalkit.report.model import ReportRow as ReportRow
    from evalkit.report.model import ReportRun as ReportRun
    from evalkit.report.model import as_report as as_report
    from evalkit.report.model import report_from_gate as report_from_gate
    from evalkit.report.pooled import CollectionEffect as CollectionEffect
    from evalkit.report.pooled import PooledEffect as PooledEffect
    from evalkit.report.writing import PLUGIN_REPORTERS as PLUGIN_REPORTERS
    from evalkit.report.writing import ReportTargetError as ReportTargetError
    from evalkit.report.writing import check_report_targets as check_report_targets
    from evalkit.report.writing import file_targets as file_targets
    from evalkit.report.writing import get_reporter as get_reporter
    from evalkit.report.writing import is_recorder as is_recorder
    from evalkit.report.writing import parse_report_target as parse_report_target
    from evalkit.report.writing import render_report as render_report
    from evalkit.report.writing import show_result as show_result
    from evalkit.report.writing import write_report as write_report
    from evalkit.report.writing import write_reports as write_reports
