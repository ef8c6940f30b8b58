"""The comparison object: what :func:`evalkit.compare` returns and every reporter renders.

A :class:`Comparison` holds one :class:`MetricComparison` per (candidate, metric), plus
the runs (:class:`RunInfo`), the :class:`Settings`, the one-line description of the test,
the warnings on the inputs, the query ids and texts, and provenance. It is immutable,
reads back from its JSON (:meth:`Comparison.from_json`) and becomes a reporters'
:class:`~evalkit.report.Report` with :meth:`Comparison.to_report`; :meth:`Comparison.to_html`
writes the HTML report and :meth:`Comparison.to_latex` the LaTeX table.
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, overload

from evalkit.comparison.records import (
    ComparisonError,
    ComparisonRecord,
    MetricComparison,
    QueryDelta,
    RunInfo,
    Settings,
)

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.report.model import Report


class Comparison(ComparisonRecord):
    """Candidates against a baseline (or every pair), metric by metric.

    Attributes:
        baseline: the first run; ``candidates``: the others, in the order given.
        results: one :class:`MetricComparison` per (candidate, metric): metrics in the
            order compared and, within a metric, candidates in order (every pair with
            ``all_pairs``).
        metrics: the metrics compared.
        settings: :class:`Settings`.
        description: how it was tested, in one line (the line ``evalkit compare``
            prints above its table).
        warnings: notes on the inputs (judged queries a run lacks, topics without
            judgments, queries left out by ``allow_incomplete``).
        query_ids: the paired query ids, sorted.
        queries: ``{query id: text}`` for the queries whose text is known.
        provenance: ``evalkit_version`` and the statistics' ``generator``.
        slices: with ``by="tag"``, one :class:`~evalkit.report.slices.SliceEffect` per
            (tag, metric, candidate): the comparison on that tag's cases alone, its p
            adjusted over slices x metrics x candidates (a slice of one case has no
            test and is not counted); empty otherwise.
    """

    def notes(self) -> list[tuple[str, str]]:
        """The statistics' notes (skewed differences, few queries...) once each, labelled
        with the metrics and pairs they concern: ``("ap (bm25 vs tfidf)", "...")``."""
        from evalkit.comparison.text import result_notes

        return result_notes(self.results, self.warnings)

    def to_json(self) -> dict[str, Any]:
        """The versioned JSON document of ``evalkit compare --json`` (docs/comparison.md);
        strict JSON once dumped: non-finite numbers are None."""
        from evalkit.comparison.serialize import to_json

        return to_json(self)

    def write_json(self, file: TextIO) -> None:
        """Write :meth:`to_json`'s document to ``file`` as ``evalkit compare --json``
        prints it: the text of ``json.dumps(c.to_json(), indent=2)`` and a line break,
        one comparison's row at a time (the whole document, every per-query value of
        every row, is never held at once).

        Raises:
            OSError: ``file`` cannot be written.
        """
        from evalkit.comparison.serialize import json_text

        for piece in json_text(self):
            file.write(piece)
        file.write("\n")

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | str) -> Comparison:
        """Read :meth:`to_json`'s document back (a mapping, or its JSON text).

        Raises:
            ValueError: not a comparison document, or a version this evalkit cannot
                read.
        """
        from evalkit.comparison.serialize import from_json

        return from_json(doc, cls)

    def to_report(self) -> Report:
        """The reporters' :class:`~evalkit.report.Report`, carrying every field."""
        from evalkit.comparison.report import to_report

        return to_report(self)

    @overload
    def to_html(self, path: None = None) -> str: ...

    @overload
    def to_html(self, path: str | PathLike[str]) -> Path: ...

    def to_html(self, path: str | PathLike[str] | None = None) -> str | Path:
        """The interactive HTML report (one self-contained file), with the ``html``
        reporter looked up in the registry (the ``evalkit-report-html`` plugin); the
        same file as ``evalkit compare --report html:PATH``.

        Args:
            path: write it to this file; without one, the HTML text is returned.

        Returns:
            The path written, or the HTML text when no ``path`` is given.

        Raises:
            RegistryError: the plugin is not installed or not enabled (the message says
                what to install).
            evalkit.io.outputs.UnwritableError: the file cannot be written.
        """
        from evalkit.report.writing import render_report, write_report

        return render_report(self, "html") if path is None else write_report(
            self, "html", path)

    def to_pandas(self, long: bool = False) -> pd.DataFrame:
        """The comparison as a ``pandas.DataFrame``: one row per (candidate, metric) with
        every field of its table (means, ``diff``, interval, ``p_value``, ``p_adjusted``,
        verdicts, wins/ties/losses, effect size, test); with ``long=True`` one row per
        run, metric and paired query, columns ``qid, system, metric, value`` (PyTerrier's
        ``perquery=True``). See :mod:`evalkit.comparison.tables`.

        Raises:
            evalkit.tables.frames.MissingExtraError: (an ``ImportError``) pandas is not
                installed: ``pip install 'paired-evalkit[pandas]'``.
        """
        from evalkit.comparison.tables import comparison_frame

        return comparison_frame(self, long=long)

    def _repr_html_(self) -> str:
        """Jupyter's view: the table of ``evalkit compare`` as HTML, under the test's
        description."""
        from evalkit.report.html_table import report_html

        return report_html(self)

    def to_latex(self, path: str | PathLike[str] | None = None) -> str:
        """The comparison as the booktabs table of an IR paper (one row per system, one
        column per metric, the best value per column in bold, significance marks at the
        corrected p, a caption naming the test, correction, alpha, queries and
        resamples), rendered by the ``latex`` reporter looked up in the registry; the
        text of ``evalkit compare --report latex:PATH`` (docs/tables.md#latex-tables-for-papers).

        Args:
            path: also write the table to this file (its folder is made when missing).

        Returns:
            The LaTeX text (it needs ``\\usepackage{booktabs}``).

        Raises:
            RegistryError: no ``latex`` reporter is registered.
            evalkit.io.outputs.UnwritableError: ``path`` cannot be written.
        """
        from evalkit.report.writing import render_text

        return render_text(self, "latex", path)


__all__ = ["Comparison", "ComparisonError", "MetricComparison", "QueryDelta", "RunInfo",
           "Settings"]
