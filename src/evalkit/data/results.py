"""Per-query rows, the run that holds them, and the JSON Lines run artifact.

Every aggregate is derived from the rows; nothing else is stored as truth.

Artifact format (``schema_version`` 2; :mod:`evalkit.data.artifact`), one JSON object per
line, UTF-8:

* line 1, the header: ``{"type": "header", "schema_version": 2, "name": ...,
  "evalkit_version": ..., "plugins": {distribution: version}, "metrics": {name:
  {"provider": ..., "version": ...}}, "qrels": {"path": ..., "sha256": ...},
  "relevance_level": 1, "missing": "zero" | "skip", "depth": null | int,
  "created": ISO-8601 UTC, "notes": {...}}``;
* then one line per query or case: ``{"type": "row", "id": ..., "metrics": {...},
  "counts": {...}, "retrieved": [...]}``, with ``metric_errors`` (``{metric: message}``)
  when a metric failed on the row and ``sample`` (an integer) when the run holds
  repeated samples (target runs add ``response``, ``latency_ms`` and ``error``);
* last, the trailer: ``{"type": "trailer", "rows": n, "sha256": ...}``.

Schema 1 files (no trailer, no ``metric_errors``) are read too.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.data.artifact import (
    SCHEMA_VERSION,
    ArtifactError,
    Integrity,
    artifact_line,
    finished_lines,
    header_line,
    metric_errors_of,
    read_artifact,
    sample_of,
    upgrade_schema1_rows,
)
from evalkit.data.provenance import settings_differences as settings_differences
from evalkit.data.run_views import RunViews
from evalkit.io.limits import LimitError, check_id, check_name
from evalkit.stats.numeric import exact_mean

if TYPE_CHECKING:
    from evalkit.data.coverage import Coverage

__all__ = ["SCHEMA_VERSION", "ArtifactError", "Integrity", "MetricFailedError", "QueryResult",
           "RunResult", "artifact_line", "is_artifact", "iter_rows", "settings_differences"]


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


@dataclass
class QueryResult:
    """One query's row: what was retrieved and every metric value.

    Attributes:
        query_id: the query id (text).
        retrieved: ids best first, as scored (after any depth limit): a list, or a
            read-only lazy view (:class:`evalkit.execute.ranking.RankedIds`) for a run read
            from a TREC file.
        metrics: ``{canonical metric name: value}``.
        counts: per-query values that are reported but never gated or compared: counts
            (num_rel, num_ret, num_rel_ret; integers) and residuals (rbp_resid).
        metric_errors: ``{metric: message}`` for metrics that failed on this query (they
            have no value in ``metrics``).
        sample: the sample number of a run with repeated samples; ``None`` (the usual
            case) means the run has one sample per query.
    """

    query_id: str
    retrieved: Sequence[str]
    metrics: dict[str, float]
    counts: dict[str, float] = field(default_factory=dict)
    metric_errors: dict[str, str] = field(default_factory=dict)
    sample: int | None = None

    @property
    def id(self) -> str:
        """The query id (``query_id``)."""
        return self.query_id

    @property
    def error(self) -> str | None:
        """Always None: a scored ranking has no failed call."""
        return None

    def to_json(self) -> dict[str, Any]:
        """The row's artifact line (the module docstring gives its keys)."""
        row: dict[str, Any] = {"type": "row", "id": self.query_id}
        if self.sample is not None:
            row["sample"] = self.sample
        row["metrics"] = self.metrics
        if self.metric_errors:
            row["metric_errors"] = self.metric_errors
        if self.counts:
            row["counts"] = self.counts
        row["retrieved"] = list(self.retrieved)
        return row


@dataclass(repr=False)
class RunResult(RunViews):
    """A named run: the per-query rows and the header that says how they were made.

    ``per_query`` is always retained; :meth:`mean` and every comparison derive from it
    and pair by query id. With K >= 2 samples per case, ``per_query`` holds the reduced
    rows and ``samples`` every sample row (:mod:`evalkit.data.samples`).
    """

    name: str
    per_query: list[Any]
    header: dict[str, Any] = field(default_factory=dict)
    #: what reading the file proved (set by :meth:`load`; ``None`` for a run built in
    #: memory)
    integrity: Integrity | None = field(default=None, compare=False, repr=False)
    #: the sample rows (by case, then sample) when K >= 2; empty otherwise
    samples: list[Any] = field(default_factory=list, repr=False)

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

    def metric_names(self) -> list[str]:
        """Metric names present on every row, in first-row order."""
        if not self.per_query:
            return []
        names = list(self.per_query[0].metrics)
        return [n for n in names if all(n in r.metrics for r in self.per_query)]

    def scores(self, metric: str) -> dict[str, float]:
        """``{query id: value}`` of one metric.

        Raises:
            MetricFailedError: (a ``KeyError``) the metric failed on some case, or a
                case's target call failed; the message names the run, the metric and
                every such case.
            KeyError: some row lacks the metric (the message names the run and a row).
        """
        metric = self._stored_name(metric)
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
                have = ", ".join(sorted(r.metrics)) or "none"
                raise KeyError(
                    f"run {self.name!r} has no metric {metric!r} on query {r.query_id!r} "
                    f"(it has: {have})"
                )
            out[r.query_id] = float(r.metrics[metric])
        return out

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

    def available_scores(self, metric: str) -> dict[str, float]:
        """``{query id: value}`` of the cases that have a value of ``metric``: rows whose
        call or whose metric failed are left out (:meth:`scores` refuses them). For
        comparisons that pair what two incomplete runs share (``allow_incomplete``)."""
        metric = self._stored_name(metric)
        return {r.query_id: float(r.metrics[metric]) for r in self.per_query
                if r.error is None and metric in r.metrics}

    def metric_failures(self) -> dict[str, dict[str, str]]:
        """``{metric: {case id: message}}`` of every metric that failed on some case
        (rows whose target call failed are not included: see :meth:`coverage`)."""
        out: dict[str, dict[str, str]] = {}
        for r in self.per_query:
            for m, message in getattr(r, "metric_errors", {}).items():
                out.setdefault(m, {})[r.query_id] = message
        return out

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

    def _stored_name(self, metric: str) -> str:
        """The name rows store for ``metric``: itself, or its canonical registry name
        (so ``"AP"``, ``"map"`` and ``"nDCG@10"`` find ``ap`` and ``ndcg@10``)."""
        if not self.per_query or metric in self.per_query[0].metrics:
            return metric
        from evalkit.core.registry import RegistryError
        from evalkit.plugins.default import default_registry

        try:
            canonical = default_registry().resolve(metric).name
        except RegistryError:
            return metric
        return canonical if canonical in self.per_query[0].metrics else metric

    def mean(self, metric: str) -> float:
        """Mean of ``metric`` over all rows (each query weighs the same).

        Raises:
            ValueError: the run has no rows.
            MetricFailedError: (a ``KeyError``) the metric failed on some case; the
                message names the run, the metric and the cases.
            KeyError: a row lacks the metric.
        """
        if not self.per_query:
            raise ValueError(f"run {self.name!r} has no rows; its mean is undefined")
        values = list(self.scores(metric).values())
        return exact_mean(values)  # fsum / n, without fsum's overflow at +-1e308

    def means(self) -> dict[str, float]:
        """``{metric: mean}`` for every metric present on all rows."""
        return {m: self.mean(m) for m in self.metric_names()}

    # -- artifact --------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the run artifact (header line, one line per row, the trailer), atomically.

        A regular file is written beside ``path`` and renamed over it, so a crash never
        leaves a half-written artifact; a character device or FIFO (``/dev/stdout``) is
        written to directly (:func:`evalkit.io.outputs.write_output`). Registered secrets
        are masked (:func:`artifact_line`). The header is written with this evalkit's
        ``schema_version`` (a loaded schema 1 run is saved as schema 2).

        Non-finite values (only possible in hand-built rows: scoring refuses them) are
        written as ``NaN``/``Infinity``, which Python's json reads back, so nothing is lost
        and a gate can report them as errors.

        Raises:
            evalkit.io.outputs.UnwritableError: an :class:`OSError` naming ``path`` (not the
                temporary file) and why it cannot be written.
        """
        from evalkit.io.outputs import write_output

        p = Path(path)
        rows = [artifact_line(row.to_json()) for row in self.samples or self.per_query]
        write_output(p, finished_lines(header_line(self.name, self.header), rows))
        return p

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
        p = Path(path)
        header, lines, integrity = read_artifact(p)
        # an unfinished file (schema 2, no trailer) is a log in completion order: a case
        # a resume scored again has two rows there, and the later one counts
        unfinished = integrity.schema_version >= 2 and not integrity.has_trailer
        by_key: dict[tuple[str, int | None], Any] = {}
        for lineno, obj in lines:
            rid = _bounded(p, lineno, check_id, str(obj["id"]), "row id")
            try:
                row = _row_from_json(obj)
            except (ValueError, TypeError, AttributeError) as exc:
                raise ArtifactError(f"{p}:{lineno}: row {rid!r}: {exc}") from None
            key = (rid, row.sample)
            if key in by_key and not unfinished:
                what = "" if row.sample is None else f" sample {row.sample}"
                raise ArtifactError(f"{p}:{lineno}: duplicate row id {rid!r}{what}")
            by_key.pop(key, None)
            by_key[key] = row
        rows = list(by_key.values())
        if integrity.schema_version < 2:
            upgrade_schema1_rows(rows, header)
        name = _bounded(p, 1, check_name, str(header.get("name") or p.stem), "run name")
        samples: list[Any] = []
        if any(r.sample is not None for r in rows):
            from evalkit.data.samples import SampleError, split_samples

            try:
                rows, samples = split_samples(rows, header)
            except SampleError as exc:
                raise ArtifactError(f"{p}:1: header 'samples': {exc}") from None
        return cls(name=name, per_query=rows, header=dict(header), integrity=integrity,
                   samples=samples)


def _bounded(p: Path, lineno: int, check: Callable[[str, str], str], text: str,
             what: str) -> str:
    try:
        return check(text, what)
    except LimitError as exc:
        raise ArtifactError(f"{p}:{lineno}: {exc}") from None


def _row_from_json(obj: Mapping[str, Any]) -> Any:
    if "response" in obj or "error" in obj:
        from evalkit.data.rows import case_result_from_json

        return case_result_from_json(obj)
    return QueryResult(
        query_id=str(obj["id"]),
        retrieved=[str(x) for x in obj.get("retrieved", [])],
        metrics={str(k): _value(v, "metric", k, float) for k, v in obj.get("metrics", {}).items()},
        counts={str(k): _count(v, k) for k, v in obj.get("counts", {}).items()},
        metric_errors=metric_errors_of(obj),
        sample=sample_of(obj),
    )


def _value(value: Any, what: str, name: str, kind: type[float] | type[int]) -> Any:
    """A stored number; text or a structure is refused naming the metric."""
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            kind is int and isinstance(value, float) and not value.is_integer()):
        noun = "an integer" if kind is int else "a number"
        raise ValueError(f"{what} {name!r} is {value!r}, not {noun}")
    return kind(value)


def _count(value: Any, name: str) -> float:
    """A stored count (an integer) or, for a count-kind measure whose summary is a mean
    (a residual such as rbp_resid), a number."""
    if isinstance(value, float) and not value.is_integer() and _is_residual(name):
        return value
    count: int = _value(value, "count", name, int)
    return count


def _is_residual(name: str) -> bool:
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    try:
        return getattr(default_registry().resolve(name), "summary", None) == "mean"
    except RegistryError:
        return False


def is_artifact(path: str | Path) -> bool:
    """Whether ``path`` starts with an evalkit run header line."""
    try:
        with Path(path).open("r", encoding="utf-8-sig") as fh:
            first = fh.readline()
    except (OSError, UnicodeDecodeError):
        return False
    try:
        obj = json.loads(first)
    except (ValueError, RecursionError):  # not JSON, or nested too deeply to be a header
        return False
    return isinstance(obj, dict) and obj.get("type") == "header"


def iter_rows(runs: Iterable[RunResult]) -> Iterator[tuple[str, Any]]:
    """``(run name, row)`` for every row of every run, in order."""
    for run in runs:
        for row in run.per_query:
            yield run.name, row
