"""The neutral report model every reporter renders: one shape for gates and comparisons.

A :class:`Report` is a title, the two things compared (``subject``: the run or system A;
``reference``: the baseline or system B, if any), one :class:`ReportRow` per check or
metric, an overall status and summary, and an exit code for gates. Gate reports come from
:func:`report_from_gate` (``GateReport.to_report()``); comparisons from
:func:`report_from_comparison`. Reporters take a :class:`Report` or anything with a
``to_report()`` method (:func:`as_report`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from evalkit.formatting import p_phrase, signed

if TYPE_CHECKING:
    from evalkit.gate import GateReport

ReportKind = Literal["gate", "compare"]


def _clean(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


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
        coverage: ``"k/n cases"`` (gate) or ``"n queries"`` (compare).
        detail: one human-readable sentence with the numbers and the reason.
        failed: counts as a failure (a blocking check that failed).
        errored: counts as an error (a blocking check that could not be judged).
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

    @property
    def has_comparison(self) -> bool:
        return self.difference is not None or self.p_value is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "status": self.status, "metric": self.metric,
            "level": self.level, "value": _clean(self.value),
            "reference_value": _clean(self.reference_value), "rule": self.rule,
            "difference": _clean(self.difference), "ci_low": _clean(self.ci_low),
            "ci_high": _clean(self.ci_high), "confidence": self.confidence,
            "p_value": _clean(self.p_value), "p_adjusted": _clean(self.p_adjusted),
            "coverage": self.coverage, "detail": self.detail, "failed": self.failed,
            "errored": self.errored,
        }


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

    def counts(self) -> dict[str, int]:
        """``{status: number of rows}``."""
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.status] = out.get(r.status, 0) + 1
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind, "title": self.title, "subject": self.subject,
            "reference": self.reference, "status": self.status, "summary": self.summary,
            "exit_code": self.exit_code, "counts": self.counts(),
            "rows": [r.to_dict() for r in self.rows], "notes": list(self.notes),
            "correction": self.correction,
        }
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
        f"cannot render {type(obj).__name__}: expected evalkit.reporters.Report or an "
        "object with to_report()"
    )


def _rule(check: Any) -> str:
    if check.kind == "threshold":
        return f"{check.op} {check.threshold:g}"
    return f"no regression (alpha {check.alpha:g})"


def report_from_gate(gate: GateReport) -> Report:
    """The :class:`Report` of a gate: one row per check, in check order."""
    rows: list[ReportRow] = []
    for r in gate.results:
        c = r.comparison
        rows.append(ReportRow(
            name=r.check.id, status=r.verdict, metric=r.check.metric, level=r.check.level,
            value=r.observed, reference_value=None if c is None else c.baseline_value,
            rule=_rule(r.check),
            difference=None if c is None else c.difference,
            ci_low=None if c is None else c.ci_low, ci_high=None if c is None else c.ci_high,
            confidence=None if c is None else 1 - c.alpha,
            p_value=None if c is None else c.p_value,
            p_adjusted=None if c is None else c.p_adjusted,
            n_resamples=None if c is None else c.n_resamples,
            coverage=r.coverage, detail=r.detail(),
            failed=r.blocking and r.verdict == "fail",
            errored=r.blocking and r.verdict == "error",
        ))
    return Report(
        kind="gate", title="evalkit gate", subject=gate.run_name,
        reference=gate.baseline_name, rows=tuple(rows), status=gate.status,
        summary=gate.summary(), exit_code=gate.exit_code,
        notes=(*(f"incomplete: {m}" for m in gate.incomplete), *gate.notes),
        data=gate.to_dict(),
        correction="Holm" if any(r.p_adjusted is not None for r in rows) else None,
    )


#: How a correction named by :mod:`evalkit.stats` (``PairedTestResult.correction``) is
#: written in a report.
CORRECTION_LABELS: dict[str, str] = {
    "holm": "Holm", "bh": "Benjamini-Hochberg", "westfall-young": "Westfall-Young max-T",
}


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _first(obj: Any, *names: str) -> Any:
    for name in names:
        value = _get(obj, name)
        if value is not None:
            return value
    return None


def report_from_comparison(
    results: Iterable[Any],
    *,
    name_a: str | None = None,
    name_b: str | None = None,
    means: Mapping[str, tuple[float, float]] | None = None,
    polarity: Mapping[str, bool] | None = None,
    title: str = "evalkit compare",
    notes: Iterable[str] = (),
    correction: str | None = None,
) -> Report:
    """The :class:`Report` of a paired comparison, one row per (metric, candidate).

    Args:
        results: per-metric results, objects or mappings, in either of two shapes:
            the statistics' (``BootstrapResult`` / ``PairedTestResult``: ``metric``,
            ``observed`` = A minus B, ``ci_low``, ``ci_high``, ``p_value``,
            ``significant``, optional ``p_adjusted``, ``alpha``, ``name_a``, ``name_b``,
            ``n_queries``, ``method``) or ``evalkit compare``'s rows (``metric``,
            ``candidate``, ``baseline``, ``diff`` = candidate minus baseline,
            ``candidate_mean``, ``baseline_mean``, ``ci_low``, ``ci_high``, ``p_value``,
            ``significant``, ``higher_is_better``, optional ``p_adjusted``). A is the
            candidate, B the baseline. ``significant``, when present, is taken as the
            verdict; an interval bound may be ``None`` (not computed).
        name_a, name_b: system names (default: taken from the first result).
        means: ``{metric: (mean of A, mean of B)}``, when the results do not carry them.
        polarity: ``{metric: higher_is_better}``, when the results do not carry it; with
            a polarity the status says which system is better, without it which is higher.
        title: the heading.
        notes: remarks shown under the table.
        correction: the name of the correction behind ``p_adjusted``, as printed
            (``"Holm"``); default: the results' own ``correction`` (``"holm"``, ``"bh"``,
            ``"westfall-young"``, as :mod:`evalkit.stats` names them).

    Returns:
        A ``kind="compare"`` report; ``exit_code`` is ``None``. With several candidates the
        rows are named ``"metric (candidate)"`` and the subject lists the candidates.
    """
    items = list(results)
    cands = list(dict.fromkeys(str(_first(it, "name_a", "candidate") or name_a or "A")
                               for it in items))
    if items:
        name_a = name_a or _first(items[0], "name_a", "candidate")
        name_b = name_b or _first(items[0], "name_b", "baseline")
    several = len(cands) > 1
    a_default, b = str(name_a or "A"), str(name_b or "B")
    if correction is None:
        named = {str(c) for c in (_get(it, "correction") for it in items) if c}
        if len(named) == 1:
            only = named.pop()
            correction = CORRECTION_LABELS.get(only, only)
    rows: list[ReportRow] = []
    n_sig = 0
    for it in items:
        metric = str(_get(it, "metric"))
        a = str(_first(it, "name_a", "candidate") or a_default)
        diff = float(_first(it, "observed", "diff"))
        p_raw = float(_get(it, "p_value"))
        p_adj = _get(it, "p_adjusted")
        alpha = float(_get(it, "alpha", 0.05) or 0.05)
        verdict = _get(it, "significant")
        if verdict is not None:  # the result's own verdict wins
            sig = bool(verdict)
        else:
            sig = float(p_adj if p_adj is not None else p_raw) < alpha
        hib = _get(it, "higher_is_better")
        if hib is None and polarity is not None:
            hib = polarity.get(metric)
        if sig and diff != 0:
            n_sig += 1
            higher = a if diff > 0 else b
            if hib is not None:
                status = f"{higher if hib else (b if higher == a else a)} better"
            else:
                status = f"{higher} higher"
        else:
            status = "no significant difference"
        ma, mb = (means or {}).get(metric, (None, None))
        ma = _first(it, "candidate_mean", "mean_a") if ma is None else ma
        mb = _first(it, "baseline_mean", "mean_b") if mb is None else mb
        n = _get(it, "n_queries")
        lo, hi = _get(it, "ci_low"), _get(it, "ci_high")
        ci_low = None if lo is None else float(lo)
        ci_high = None if hi is None else float(hi)
        method = _get(it, "method")
        b_res = _first(it, "p_resamples", "n_resamples")
        if method == "t-test" or _get(it, "exact"):
            b_res = None  # an analytic or exact p has no resampling floor
        b_res = None if b_res is None else int(b_res)
        # the row's name (the metric) heads the detail wherever a reporter shows it
        detail = f"{a} minus {b} = {signed(diff)}"
        if ci_low is not None and ci_high is not None:
            detail += f", {1 - alpha:.0%} CI [{signed(ci_low)}, {signed(ci_high)}]"
        detail += f", {p_phrase(p_raw, b_res)}"
        if p_adj is not None:
            by = f" by {correction}" if correction else ""
            detail += f", adjusted{by}: {p_phrase(float(p_adj), b_res)}"
        if method:
            detail += f" ({method})"
        rows.append(ReportRow(
            name=f"{metric} ({a})" if several else metric, status=status, metric=metric,
            level="info", value=None if ma is None else float(ma),
            reference_value=None if mb is None else float(mb), difference=diff,
            ci_low=ci_low, ci_high=ci_high, confidence=1 - alpha, p_value=p_raw,
            p_adjusted=None if p_adj is None else float(p_adj), n_resamples=b_res,
            coverage="" if n is None else f"{n} queries", detail=detail,
        ))
    subject = ", ".join(cands) if several else a_default
    summary = (f"{subject} vs {b}: {n_sig} of {len(rows)} comparison(s) differ "
               "significantly" if rows else f"{subject} vs {b}: nothing compared")
    adjusted = any(r.p_adjusted is not None for r in rows)
    return Report(
        kind="compare", title=title, subject=subject, reference=b, rows=tuple(rows),
        status="done", summary=summary, exit_code=None, notes=tuple(notes),
        correction=correction if adjusted else None,
    )


__all__ = [
    "CORRECTION_LABELS", "Report", "ReportRow", "as_report", "report_from_comparison",
    "report_from_gate",
]
