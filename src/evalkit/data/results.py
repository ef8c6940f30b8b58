"""A run: its per-query rows, the header that says how they were made, and the
per-metric values and means derived from the rows.

Every aggregate is derived from the rows; nothing else is stored as truth. A row is
:mod:`evalkit.data.rows`' :class:`QueryResult` (or a target run's
:class:`~evalkit.data.rows.CaseResult`); the run's artifact file, its format, and
:func:`is_artifact` are :mod:`evalkit.data.result_files`; its columns, DataFrame and notebook
views :mod:`evalkit.data.run_views`; its fields and what is read straight off the rows
:mod:`evalkit.data.run_record`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.data.artifact import SCHEMA_VERSION as SCHEMA_VERSION
from evalkit.data.artifact import ArtifactError as ArtifactError
from evalkit.data.artifact import Integrity
from evalkit.data.artifact import artifact_line as artifact_line
from evalkit.data.provenance import settings_differences as settings_differences
from evalkit.data.result_files import is_artifact as is_artifact
from evalkit.data.result_files import read_run, write_run
from evalkit.data.rows import QueryResult as QueryResult
from evalkit.data.run_record import RunRecord

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.data.coverage import Coverage
    from evalkit.data.metric_counts import MetricCounts

#: Row types whose ``error`` is always None (a scored ranking made no call that can fail).
_NO_CALL_ROWS = frozenset({QueryResult})

__all__ = ["SCHEMA_VERSION", "ArtifactError", "CountNotMetricError", "Integrity",
           "MetricFailedError", "QueryResult", "RunResult", "artifact_line", "is_artifact",
           "settings_differences"]


class CountNotMetricError(KeyError):
    """A per-query count (``num_rel``, ``num_ret``, ``num_rel_ret``...: kept in each row's
    ``counts``, not its ``metrics``) asked for as a metric (:meth:`RunResult.scores`,
    :meth:`RunResult.mean`). The message names the run and the count, gives its summary
    (trec_eval's: the total over the queries) and says how to read it:
    :meth:`RunResult.summary`, or each row's ``counts``."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class MetricFailedError(KeyError):
    """A metric has no value on some case of a run: it failed there (the row records why
    in ``metric_errors``), or the case's target call failed. The message names the run,
    the metric and every such case; ``cases`` maps each case id to its reason."""

    def __init__(self, message: str, cases: Mapping[str, str]) -> None:
        super().__init__(message)
        self.message = message
        self.cases = dict(cases)

    def __str__(self) -> str:
        return self.message


class RunResult(RunRecord):
    """A named run: the per-query rows and the header that says how they were made.

    ``per_query`` is always retained; :meth:`mean` and every comparison derive from it
    and pair by query id. With K >= 2 samples per case, ``per_query`` holds the reduced
    rows and ``samples`` every sample row (:mod:`evalkit.data.samples`). The fields and
    what is read straight off the rows are :class:`~evalkit.data.run_record.RunRecord`'s.
    """

    @property
    def epochs(self) -> int:
        """K, the samples per case (1 for a run without repeated samples)."""
        from evalkit.data.samples import epochs_of

        return epochs_of(self.header, self.samples) if self.samples else 1

    def __repr__(self) -> str:
        names = self.metric_names()
        shown = names[:6] + (["..."] if len(names) > 6 else [])
        status = self.header.get("status")
        return (f"RunResult(name={self.name!r}, {len(self.per_query)} rows, metrics={shown!r}"
                + (f", status={status!r}" if status else "") + ")")

    # -- derived views -------------------------------------------------------
    def ids(self) -> list[str]:
        """The row ids in stored order."""
        return [r.query_id for r in self.per_query]

    def scores(self, metric: str) -> dict[str, float]:
        """``{query id: value}`` of one metric.

        Raises:
            MetricFailedError: (a ``KeyError``) the metric failed on some case, or a
                case's target call failed; the message names the run, the metric and
                every such case.
            CountNotMetricError: (a ``KeyError``) ``metric`` is a per-query count
                (``num_rel``...), kept in the rows' ``counts``: see :meth:`summary`.
            KeyError: some row lacks the metric (the message names the run and a row).
        """
        metric = self._stored_name(metric)
        rows = self.per_query
        try:  # every row has a value and no call failed: the usual case, in one pass
            out = {r.query_id: float(r.metrics[metric]) for r in rows}
        except Exception:
            pass
        else:
            if set(map(type, rows)) <= _NO_CALL_ROWS or not any(
                    r.error is not None for r in rows):
                return out
        return self._checked_scores(metric)

    def _checked_scores(self, metric: str) -> dict[str, float]:
        """:meth:`scores` row by row, raising on the first failure it documents."""
        failed = self._failures(metric)
        if failed:
            shown = "; ".join(failed[i] for i in list(failed)[:10])
            more = f"; and {len(failed) - 10} more" if len(failed) > 10 else ""
            raise MetricFailedError(
                f"run {self.name!r} has no {metric!r} value on {len(failed)} case(s): "
                f"{shown}{more}", failed)
        out: dict[str, float] = {}
        for r in self.per_query:
            if metric not in r.metrics:
                if metric in (getattr(r, "counts", None) or {}):
                    raise CountNotMetricError(self._count_message(metric))
                have = ", ".join(sorted(r.metrics)) or "none"
                raise KeyError(
                    f"run {self.name!r} has no metric {metric!r} on query {r.query_id!r} "
                    f"(it has: {have})"
                )
            out[r.query_id] = float(r.metrics[metric])
        return out

    def _count_message(self, name: str) -> str:
        """Why the count ``name`` has no mean or metric values, and how to read it."""
        from evalkit.data.summaries import summary_kind

        kind = summary_kind(name, count=True)
        what = {"sum": "the total", "mean": "the mean"}.get(kind, kind)
        try:
            value = f" ({self.summary(name):g} here)"
        except KeyError:  # some row lacks the count
            value = ""
        return (f"run {self.name!r}: {name!r} is a per-query count, not a metric: its summary "
                f"is {what} over the queries, as trec_eval's 'all' line gives it{value}. "
                f"Read it with run.summary({name!r}), each query's with "
                f"run.per_query[i].counts[{name!r}] (or the {name!r} column of "
                "run.to_pandas())")

    def summary(self, name: str) -> float:
        """The summary of a metric or a per-query count over the rows, as trec_eval's
        ``all`` line gives it (:mod:`evalkit.data.summaries`): for a metric its
        :meth:`mean`; for a count (``num_rel``, ``num_ret``, ``num_rel_ret``..., kept in
        each row's ``counts``) the sum over the rows, or the summary its record declares
        (``rbp_resid``: the mean).

        Raises:
            ValueError: the run has no rows.
            MetricFailedError: (a ``KeyError``) as :meth:`mean`, for a metric.
            KeyError: ``name`` is neither a metric nor a count of every row (the message
                names the run, a row and what it has).
        """
        from evalkit.data.summaries import summary_value

        if not self.per_query:
            raise ValueError(f"run {self.name!r} has no rows; its summary is undefined")
        first = self.per_query[0]
        if self._stored_name(name) in first.metrics:
            return self.mean(name)
        for r in self.per_query:
            held = getattr(r, "counts", None) or {}
            if name not in held:
                have = sorted(r.metrics) + sorted(held)
                raise KeyError(f"run {self.name!r} has no metric or count {name!r} on query "
                               f"{r.query_id!r} (it has: {', '.join(have) or 'none'})")
        return summary_value(self, name, count=True)

    def _failures(self, metric: str) -> dict[str, str]:
        """``{case id: why}`` of the cases where ``metric`` has no value because the
        call or the metric failed."""
        out: dict[str, str] = {}
        for r in self.per_query:
            if r.error is not None:
                out[r.query_id] = f"case {r.query_id!r} errored ({r.error})"
            elif metric in getattr(r, "metric_errors", {}) and metric not in r.metrics:
                out[r.query_id] = f"case {r.query_id!r} failed: {r.metric_errors[metric]}"
        return out

    def metric_counts(self) -> dict[str, MetricCounts]:
        """Per metric the run asked for: how many rows it scored and failed on, and its
        failures grouped by message (:mod:`evalkit.data.metric_counts`).

        Returns:
            ``{metric: MetricCounts}``; each has ``cases``, ``scored``, ``errored``,
            ``no_response`` (rows whose call failed) and ``errors``, a tuple of
            ``MessageGroup(message, cases, ids)``, most frequent first. ``evalkit run``
            prints them as ``judged: scored on 27 of 30 cases; 3 errors: ...`` and exits
            4 when a metric failed on some case.
        """
        from evalkit.data.metric_counts import metric_counts

        return metric_counts(self)

    def coverage(self) -> Coverage:
        """Whether the run saw every case it should have (:mod:`evalkit.data.coverage`)."""
        from evalkit.data.coverage import coverage_of

        return coverage_of(self)

    def require_complete(self, role: str = "run", *, allow_incomplete: bool = False) -> Coverage:
        """:meth:`coverage`, raising when it fails.

        Raises:
            evalkit.data.coverage.IncompleteRunError: (a ``ValueError``) the run fails coverage
                and ``allow_incomplete`` is false; the message says how many and which
                cases are missing, and why.
        """
        from evalkit.data.coverage import require_complete

        return require_complete(self, role, allow_incomplete=allow_incomplete)

    def mean(self, metric: str) -> float:
        """Mean of ``metric`` over all rows (each query weighs the same); for a measure
        whose per-query values are logarithms (gm_map, gm_bpref: summary ``exp_mean``)
        ``exp`` of their mean, trec_eval's geometric mean
        (:func:`evalkit.data.summaries.mean_value`).

        A per-query count (``num_rel``...) has no mean here: its summary (trec_eval's, the
        total over the queries) is :meth:`summary`'s.

        Raises:
            ValueError: the run has no rows.
            MetricFailedError: (a ``KeyError``) the metric failed on some case; the
                message names the run, the metric and the cases.
            CountNotMetricError: (a ``KeyError``) ``metric`` is a per-query count; the
                message gives its summary and how to read it.
            KeyError: a row lacks the metric.
        """
        if not self.per_query:
            raise ValueError(f"run {self.name!r} has no rows; its mean is undefined")
        from evalkit.data.summaries import mean_value

        values = list(self.scores(metric).values())
        return mean_value(values, metric)  # fsum / n, without fsum's overflow at +-1e308

    @property
    def row_nouns(self) -> tuple[str, str]:
        """``("case", "cases")`` for a target run (header ``kind: "target"``: its rows are
        golden cases), else ``("query", "queries")`` (a TREC run's topics)."""
        return ("case", "cases") if self.header.get("kind") == "target" else (
            "query", "queries")

    def means(self) -> dict[str, float]:
        """``{metric: mean}`` for every metric present on all rows."""
        return {m: self.mean(m) for m in self.metric_names()}

    def to_pandas(self, samples: bool = False) -> pd.DataFrame:
        """The rows as a ``pandas.DataFrame``: one row per query, ``qid`` (text), one float
        column per metric (NaN where it failed), one per count (``num_ret``, ...), then
        ``error`` and ``latency_ms`` (:func:`evalkit.data.run_views.run_frame`). With
        ``samples=True`` and a run of K >= 2 samples per case, one row per (case,
        sample) instead, with a ``sample`` column (the per-case rows are their mean, or
        the run's reduction).

        Raises:
            evalkit.tables.frames.MissingExtraError: (an ``ImportError``) pandas is not
                installed: ``pip install 'paired-evalkit[pandas]'``.
        """
        from dataclasses import replace

        from evalkit.data.run_views import run_frame

        run = replace(self, per_query=list(self.samples)) if samples and self.samples else self
        return run_frame(run)

    def _repr_html_(self) -> str:
        """Jupyter's view of the run: each metric's mean, each count's total, how many rows
        errored (:func:`evalkit.data.run_views.run_html`)."""
        from evalkit.data.run_views import run_html

        return run_html(self)

    # -- artifact --------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the run artifact (header line, one line per row, the trailer), atomically.

        A regular file is written beside ``path`` and renamed over it, so a crash never
        leaves a half-written artifact; a character device or FIFO (``/dev/stdout``) is
        written to directly (:func:`evalkit.io.outputs.write_output`). Registered secrets
        are masked (:func:`artifact_line`). The header is written with this evalkit's
        ``schema_version`` (a loaded schema 1 run is saved as schema 2).

        A non-finite metric value (NaN, infinity: only possible in hand-built rows, scoring
        refuses them) is written as that metric's error on its row (``metric_errors``:
        ``the value is nan, not a finite number``), not as the non-standard JSON token
        ``NaN``: the file stays JSON, and every reader sees a failed metric (a gate check
        on it is an error; ``evalkit eval`` warns), never a number.

        Raises:
            evalkit.io.outputs.UnwritableError: an :class:`OSError` naming ``path`` (not the
                temporary file) and why it cannot be written.
        """
        return write_run(path, self.name, self.header, self.samples or self.per_query)

    @classmethod
    def load(cls, path: str | Path) -> RunResult:
        """Read a run artifact written by :meth:`save` (or by the runner).

        The run's :attr:`integrity` records what the file proves: a schema 2 file without
        its trailer, or whose trailer disagrees with its rows, is read but fails
        :meth:`coverage`.

        Raises:
            ArtifactError: missing header, unknown schema, malformed line (file and line
                named), duplicate row id.
        """
        from evalkit.data.provenance import restore_recorded

        read = read_run(path)
        restore_recorded(read.header)  # metrics defined by the run (a declared judge)
        return cls(name=read.name, per_query=read.per_query, header=read.header,
                   integrity=read.integrity, samples=read.samples)
