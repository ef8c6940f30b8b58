"""The neutral report model every reporter renders: one shape for gates and comparisons.

A :class:`Report` is a title, the two things compared (``subject``: the run or system A;
``reference``: the baseline or system B, if any), one :class:`ReportRow` per check or
metric, an overall status and summary, and an exit code for gates. Gate reports come from
``GateReport.to_report()`` (:func:`report_from_gate`); comparisons from
:meth:`evalkit.comparison.Comparison.to_report`, which fills every field of a comparison
(wins/ties/losses, the queries that moved most with their text and per-case details, the
per-query differences, the binned null or resampling distribution, the settings, the
test's description, warnings and provenance), or from
:func:`evalkit.report.report_from_comparison` for bare statistics results. Reporters
take a :class:`Report` or anything with a ``to_report()`` method (:func:`as_report`).
This module sits below the gate and the comparison, which build it from their fields: it
imports neither and names none of their types.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from evalkit.report.pooled import PooledEffect
    from evalkit.report.slices import SliceEffect
    from evalkit.stats.histogram import Histogram
    from evalkit.stats.spread import WithinCaseSpread

ReportKind = Literal["gate", "compare"]


def _clean(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


@dataclass(frozen=True)
class QueryDelta:
    """One query's values of one metric in two runs (a row of "the queries that moved
    most", and how :class:`evalkit.comparison.Comparison` carries them).

    Attributes:
        id: the query (case) id.
        baseline, candidate: the two runs' values.
        diff: candidate minus baseline, as the test saw it (rounding noise removed).
        text: the query's text, when the comparison was given it (``topics=``, or the
            golden set the runs were made from); else None.
        details: per-case details the metric published, ``{"baseline": {...} | None,
            "candidate": {...} | None}`` (an LLM judge: ``score``, ``reason``, ``model``,
            tokens, cost); None when neither run has any.
    """

    id: str
    baseline: float
    candidate: float
    diff: float
    text: str | None = None
    details: Mapping[str, Any] | None = None

    def reason(self, side: str = "candidate") -> str | None:
        """The ``reason`` in the details of one side (``"candidate"`` or ``"baseline"``),
        if there is one."""
        found = (self.details or {}).get(side)
        value = found.get("reason") if isinstance(found, Mapping) else None
        return None if value is None else str(value)

    def to_dict(self) -> dict[str, Any]:
        """The query's values as JSON-ready values (:meth:`from_dict` reads them back)."""
        return {"id": self.id, "baseline": self.baseline, "candidate": self.candidate,
                "diff": self.diff, "text": self.text,
                "details": None if self.details is None else dict(self.details)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QueryDelta:
        """The inverse of :meth:`to_dict` (``text`` and ``details`` may be absent)."""
        details = data.get("details")
        return cls(id=str(data["id"]), baseline=float(data["baseline"]),
                   candidate=float(data["candidate"]), diff=float(data["diff"]),
                   text=None if data.get("text") is None else str(data["text"]),
                   details=None if details is None else dict(details))


@dataclass(frozen=True)
class ReportRun:
    """A run a report is about: its name, where it came from, and its role
    (``"baseline"`` or ``"candidate"``)."""

    name: str
    source: str | None
    role: str


@dataclass(frozen=True)
class ReportRow:
    """One line of a report: a gate check, or one metric of a comparison.

    Attributes:
        name: the check id (gate) or metric name (compare).
        status: gate: ``"pass" | "fail" | "warn" | "error"``; compare: ``"a better"``,
            ``"b better"`` (when polarity is known), ``"a higher"``, ``"b higher"``,
            ``"no significant difference"`` or ``"error"``.
        metric: the metric or aggregate name.
        level: ``"block"`` or ``"warn"`` for checks; ``"info"`` for comparisons.
        value: the subject's value (run mean / aggregate, or system A's mean).
        reference_value: the reference's value (baseline, or system B's mean).
        rule: what was required, in words (``">= 0.6"``; empty for comparisons).
        difference: subject minus reference, metric units.
        ci_low, ci_high: interval of ``difference``; ``confidence`` its level (0.95).
        p_value, p_adjusted: raw and multiplicity-adjusted p.
        n_resamples: ``B`` of the resampling test that gave the p-values (its floor is
            ``1/(B+1)``, printed as ``< 0.0001`` for B = 10,000), or None.
        p_note: why the p-values are shown as words instead of numbers, or None: with
            every per-query difference equal and too few queries
            (:data:`evalkit.stats.results.N_TOO_SMALL`, ``"n too small"``), the
            degenerate-input rule of docs/statistics.md decides "not significant" while
            the test's p (``1/(B+1)``) would read as significant. Every reporter prints
            it in the p cells (:meth:`p_display`).
        coverage: ``"k/n cases"`` (gate) or ``"n queries"`` (compare).
        detail: one human-readable sentence with the numbers and the reason.
        failed: counts as a failure (a blocking check that failed).
        errored: counts as an error (a blocking check that could not be judged).

    Comparison rows also carry (None or empty elsewhere):

    Attributes:
        candidate, baseline: the names of the two runs of this row.
        n_queries: paired queries.
        significant: the comparison's verdict (adjusted p below alpha, or for
            ``"bootstrap"`` without correction, an interval excluding 0).
        wins, ties, losses: queries where the candidate is better, equal, worse (polarity).
        effect_size: Cohen's d_z of the per-query differences (mean / sd).
        method, ci_method: the test and the interval that ran.
        higher_is_better: the metric's polarity.
        warnings: the statistics' and the inputs' notes on this row.
        top_gains, top_losses: the queries that moved most up and down (QueryDelta).
        query_ids, differences: every paired query and its difference, in one order.
        baseline_values, candidate_values: each paired query's value in the baseline and
            in the candidate, in the order of ``query_ids`` (empty when not known).
        distribution: the binned null or resampling distribution of the test's
            statistic (:class:`evalkit.stats.histogram.Histogram`), or None.
        details: per-case details, ``{query id: {"baseline": ..., "candidate": ...}}``.
    """

    name: str
    status: str
    metric: str
    level: str = "block"
    value: float | None = None
    reference_value: float | None = None
    rule: str = ""
    difference: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    coverage: str = ""
    detail: str = ""
    failed: bool = False
    errored: bool = False
    n_resamples: int | None = None
    candidate: str | None = None
    baseline: str | None = None
    n_queries: int | None = None
    significant: bool | None = None
    wins: int | None = None
    ties: int | None = None
    losses: int | None = None
    effect_size: float | None = None
    method: str | None = None
    ci_method: str | None = None
    higher_is_better: bool | None = None
    warnings: tuple[str, ...] = ()
    top_gains: tuple[QueryDelta, ...] = ()
    top_losses: tuple[QueryDelta, ...] = ()
    query_ids: tuple[str, ...] = ()
    differences: Sequence[float] = ()
    distribution: Histogram | None = None
    details: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    baseline_values: tuple[float, ...] = ()
    candidate_values: tuple[float, ...] = ()
    spread: WithinCaseSpread | None = None  # K >= 2 in both runs (evalkit.stats.spread)
    p_note: str | None = None

    @property
    def has_comparison(self) -> bool:
        """Whether the row carries a paired test (a difference or a p-value)."""
        return self.difference is not None or self.p_value is not None

    def p_display(self, adjusted: bool = False) -> str:
        """The p-value (``adjusted``: the adjusted one) as a table cell: ``0.0123``,
        ``< 0.0001`` at the resampling floor (:func:`evalkit.report.formatting.p_cell`),
        empty when there is none, or :attr:`p_note` when the p-values are not shown."""
        from evalkit.report.formatting import p_cell

        p = self.p_adjusted if adjusted else self.p_value
        if self.p_note and p is not None:
            return self.p_note
        return p_cell(p, self.n_resamples)

    @property
    def wins_ties_losses(self) -> str:
        """``"80/1/12"``, or empty when the row has no counts."""
        if self.wins is None or self.ties is None or self.losses is None:
            return ""
        return f"{self.wins}/{self.ties}/{self.losses}"

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values (non-finite numbers are None)."""
        return {
            "name": self.name, "status": self.status, "metric": self.metric,
            "level": self.level, "value": _clean(self.value),
            "reference_value": _clean(self.reference_value), "rule": self.rule,
            "difference": _clean(self.difference), "ci_low": _clean(self.ci_low),
            "ci_high": _clean(self.ci_high), "confidence": self.confidence,
            "p_value": _clean(self.p_value), "p_adjusted": _clean(self.p_adjusted),
            "p_note": self.p_note,
            "coverage": self.coverage, "detail": self.detail, "failed": self.failed,
            "errored": self.errored, "n_resamples": self.n_resamples,
            "candidate": self.candidate, "baseline": self.baseline,
            "n_queries": self.n_queries, "significant": self.significant,
            "wins": self.wins, "ties": self.ties, "losses": self.losses,
            "effect_size": _clean(self.effect_size), "method": self.method,
            "ci_method": self.ci_method, "higher_is_better": self.higher_is_better,
            "warnings": list(self.warnings),
            "top_gains": [m.to_dict() for m in self.top_gains],
            "top_losses": [m.to_dict() for m in self.top_losses],
            "query_ids": list(self.query_ids), "differences": list(self.differences),
            "distribution": self.distribution and self.distribution.to_dict(),
            "details": {k: dict(v) for k, v in self.details.items()},
            "baseline_values": [_clean(x) for x in self.baseline_values],
            "candidate_values": [_clean(x) for x in self.candidate_values],
            "spread": None if self.spread is None else self.spread.to_dict(),
        }


@dataclass(frozen=True)
class ReportCase:
    """One case of a gated run, for the reports that list cases (the HTML report's
    errored cases and a judge's grades).

    Attributes:
        id: the case id.
        error: the message of a failed target call, or None.
        metric_errors: ``{metric: message}`` of the metrics that failed on this case.
        values: ``{metric: value}`` the case has.
        details: ``{metric: {...}}`` a metric published for the case (an LLM judge:
            ``score``, ``reason``, ``model``, tokens, cost).
    """

    id: str
    error: str | None = None
    metric_errors: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, float] = field(default_factory=dict)
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The case as JSON-ready values (non-finite numbers are None)."""
        return {"id": self.id, "error": self.error, "metric_errors": dict(self.metric_errors),
                "values": {k: _clean(v) for k, v in self.values.items()},
                "details": dict(self.details)}


#: The version of the JSON a :class:`Report` is written as (``Report.to_dict``).
REPORT_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Report:
    """A gate result or a comparison, ready to render.

    Attributes:
        kind: ``"gate"`` or ``"compare"``.
        title: heading (``"evalkit gate"``).
        subject: the run (gate) or system A (compare).
        reference: the baseline (gate, when given) or system B (compare).
        rows: one per check or metric.
        status: gate: ``"passed" | "failed" | "error"``; compare: ``"done"``.
        summary: one sentence.
        exit_code: the gate's exit code; ``None`` for comparisons.
        notes: remarks that apply to the whole report.
        data: the source object's own ``to_dict()`` (the JSON reporter embeds it).
        correction: the name of the multiple-comparison correction behind ``p_adjusted``
            (``"Holm"``), for the column heading; ``None`` when nothing is adjusted or it
            is unknown.
        description: how the comparison was tested, in one line (``"sign-flip
            randomization test (--test auto); test-inversion CI; ..."``).
        settings: the comparison's settings (method, correction, alpha, resamples,
            seed, ``top``, ...), as in its JSON.
        provenance: where the numbers come from (versions, each run's scoring).
        runs: the runs compared, baseline first (:class:`ReportRun`).
        warnings: notes on the inputs (they open ``notes`` too).
        queries: ``{query id: text}`` where the text is known.
        cases: a gate's cases (:class:`ReportCase`), when the gate kept its run; empty
            for comparisons.
        pooled: a comparison over several collections (:func:`evalkit.meta_compare`):
            one :class:`~evalkit.report.pooled.PooledEffect` per metric, with its
            collections' rows; ``rows`` then hold the pooled differences. Empty otherwise.
        slices: a comparison made slice by slice (``evalkit compare --by tag``): one
            :class:`~evalkit.report.slices.SliceEffect` per (slice, metric, candidate);
            ``rows`` hold the overall comparison. Empty otherwise.
    """

    kind: ReportKind
    title: str
    subject: str
    rows: tuple[ReportRow, ...]
    status: str
    summary: str
    reference: str | None = None
    exit_code: int | None = None
    notes: tuple[str, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)
    correction: str | None = None
    description: str = ""
    settings: Mapping[str, Any] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)
    runs: tuple[ReportRun, ...] = ()
    warnings: tuple[str, ...] = ()
    queries: Mapping[str, str] = field(default_factory=dict)
    cases: tuple[ReportCase, ...] = ()
    pooled: tuple[PooledEffect, ...] = ()
    slices: tuple[SliceEffect, ...] = ()

    def counts(self) -> dict[str, int]:
        """``{status: number of rows}``."""
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values: ``type`` (``"report"``) and
        ``schema_version`` (:data:`REPORT_SCHEMA_VERSION`), as every evalkit JSON
        document opens, then ``kind``, with ``counts``, ``pooled`` (when there are
        pooled metrics), ``slices`` (when compared slice by slice) and the source's
        ``data`` (for a comparison, its own document: ``"type": "comparison"``)."""
        out: dict[str, Any] = {
            "type": "report", "schema_version": REPORT_SCHEMA_VERSION, "kind": self.kind,
            "title": self.title, "subject": self.subject,
            "reference": self.reference, "status": self.status, "summary": self.summary,
            "exit_code": self.exit_code, "counts": self.counts(),
            "rows": [r.to_dict() for r in self.rows], "notes": list(self.notes),
            "correction": self.correction, "description": self.description,
            "settings": dict(self.settings), "provenance": dict(self.provenance),
            "runs": [{"name": r.name, "source": r.source, "role": r.role}
                     for r in self.runs],
            "warnings": list(self.warnings), "queries": dict(self.queries),
            "cases": [c.to_dict() for c in self.cases],
        }
        if self.pooled:
            out["pooled"] = [p.to_dict() for p in self.pooled]
        if self.slices:
            out["slices"] = [x.to_dict() for x in self.slices]
        if self.data:
            out["data"] = dict(self.data)
        return out


def as_report(obj: Any) -> Report:
    """``obj`` as a :class:`Report`: itself, or ``obj.to_report()``.

    Raises:
        TypeError: ``obj`` is neither.
    """
    if isinstance(obj, Report):
        return obj
    to_report = getattr(obj, "to_report", None)
    if callable(to_report):
        rep = to_report()
        if isinstance(rep, Report):
            return rep
    raise TypeError(
        f"cannot render {type(obj).__name__}: expected evalkit.report.Report or an "
        "object with to_report()"
    )


def report_from_gate(gate: Any) -> Report:
    """The :class:`Report` of a gate: ``gate.to_report()``, which
    :meth:`evalkit.gate.GateReport.to_report` builds (one row per check, in check order,
    and the cases of the gated run when the gate kept it).

    Raises:
        TypeError: ``gate`` has no ``to_report()``, or its report is not a gate's.
    """
    report = as_report(gate)
    if report.kind != "gate":
        raise TypeError(f"expected a gate, got a {report.kind!r} report of "
                        f"{type(gate).__name__}")
    return report


__all__ = ["REPORT_SCHEMA_VERSION", "QueryDelta", "Report", "ReportCase", "ReportRow",
           "ReportRun", "as_report", "report_from_gate"]
