"""What a gate decided: its :class:`GateReport` (with the exit code every reporter and the
CLI use), made of a :class:`~evalkit.gate.check_verdicts.CheckResult` per check, and its
views: the reporters' :class:`~evalkit.report.Report` (:meth:`GateReport.to_report`), the
checks as columns (:func:`gate_columns`, :data:`GATE_FIELDS`) and as a DataFrame
(:func:`gate_frame`). :mod:`evalkit.gate` computes them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from evalkit.gate.check_verdicts import CheckResult

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

    from evalkit.data.results import RunResult
    from evalkit.report.model import Report, ReportCase, ReportRow
    from evalkit.tables.columns import Columns

#: The columns of a gate's table (:func:`gate_columns`).
GATE_FIELDS: tuple[str, ...] = (
    "check", "metric", "kind", "level", "verdict", "observed", "op", "threshold", "scope",
    "evaluated", "covered", "metric_kind", "baseline_value", "difference", "ci_low",
    "ci_high", "p_value", "p_adjusted", "alpha", "method", "n_cases", "message",
)


@dataclass(frozen=True, repr=False)
class GateReport:
    """The outcome of :func:`evaluate_gate`.

    Attributes:
        results: one :class:`CheckResult` per check, in check order.
        run_name: the gated run.
        baseline_name: the baseline run, if one was given.
        notes: remarks that apply to the whole gate (for example what changed between
            the baseline's fingerprint and the run's).
        incomplete: why the run or the baseline fails coverage (:mod:`evalkit.data.coverage`),
            one paragraph each; when not empty no check is judged and the exit code is 2,
            warn-level checks or not.
        run: the gated run, whose cases (errors, a judge's grades and reasons) the
            reports list; ``None`` when not kept. Not part of equality or ``to_dict``.
    """

    results: tuple[CheckResult, ...]
    run_name: str
    baseline_name: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    incomplete: tuple[str, ...] = field(default_factory=tuple)
    run: RunResult | None = field(default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        checks = ", ".join(f"{r.check.id}: {r.verdict} ({r.evaluated}/{r.covered})"
                           for r in self.results)
        base = f", baseline={self.baseline_name!r}" if self.baseline_name else ""
        inc = f", incomplete={len(self.incomplete)}" if self.incomplete else ""
        return (f"GateReport(run={self.run_name!r}{base}, exit_code={self.exit_code}"
                f"{inc}, checks=[{checks}])")

    @property
    def exit_code(self) -> int:
        """2 if the evidence is incomplete (for the whole gate, or for a check not judged
        on it, whatever its level) or a blocking check is an error, else 1 if one failed,
        else 0."""
        if self.incomplete or any(r.not_judged for r in self.results):
            return 2
        blocking = [r for r in self.results if r.blocking]
        if any(r.verdict == "error" for r in blocking):
            return 2
        if any(r.verdict == "fail" for r in blocking):
            return 1
        return 0

    @property
    def passed(self) -> bool:
        """Whether every blocking check passed (``exit_code == 0``)."""
        return self.exit_code == 0

    @property
    def status(self) -> str:
        """``"passed"``, ``"failed"`` or ``"error"`` (from :attr:`exit_code`)."""
        return {0: "passed", 1: "failed"}.get(self.exit_code, "error")

    def counts(self) -> dict[str, int]:
        """``{verdict: number of checks}`` for the four verdicts."""
        out = {"pass": 0, "fail": 0, "warn": 0, "error": 0}
        for r in self.results:
            out[r.verdict] += 1
        return out

    def summary(self) -> str:
        """One sentence: the outcome, the counts and the exit code. Each check is counted
        once: passed, failed, warned, errors (of blocking checks), errors on warn-level
        checks; the errors not judged (their evidence was incomplete, or they cannot
        fail) are said among the errors, e.g. ``1 error (not judged)``."""
        if self.incomplete:
            return (f"gate error: the evidence is incomplete, so none of the "
                    f"{len(self.results)} check(s) was judged (exit {self.exit_code})")
        c = self.counts()

        def errors(blocking: bool) -> tuple[int, str]:
            mine = [r for r in self.results if r.blocking == blocking and r.verdict == "error"]
            unjudged = sum(1 for r in mine if r.not_judged)  # each is an error (exit 2)
            text = f"{len(mine)} {'error' if len(mine) == 1 else 'errors'}"
            if unjudged:
                text += (" (not judged)" if unjudged == len(mine)
                         else f" ({unjudged} of them not judged)")
            return len(mine), text

        parts = [f"{c['pass']} passed", f"{c['fail']} failed", f"{c['warn']} warned",
                 errors(True)[1]]
        warn_err, warn_text = errors(False)
        if warn_err:
            parts.append(warn_text + " on warn-level checks")
        return f"gate {self.status}: {', '.join(parts)} (exit {self.exit_code})"

    def lines(self) -> list[str]:
        """The text the CLI prints: per check its line and an indented detail, then the
        summary."""
        out: list[str] = []
        for r in self.results:
            out.append(r.line())
            detail = r.detail()
            if detail:
                out.append(f"    {detail}")
        out.extend(f"incomplete: {n}" for n in self.incomplete)
        out.extend(f"note: {n}" for n in self.notes)
        out.append(self.summary())
        return out

    def to_dict(self) -> dict[str, Any]:
        """The gate as the JSON reporter writes it: status, exit code, counts, checks."""
        return {
            "kind": "gate",
            "run": self.run_name,
            "baseline": self.baseline_name,
            "status": self.status,
            "exit_code": self.exit_code,
            "counts": self.counts(),
            "incomplete": list(self.incomplete),
            "checks": [r.to_dict() for r in self.results],
            "notes": list(self.notes),
        }

    def to_report(self) -> Report:
        """The neutral report model every reporter renders: one row per check, in check
        order (a baseline check's statistics in the fields a comparison report fills),
        and the cases of the gated run when the gate kept it (:attr:`run`)."""
        from evalkit.report.formatting import log_scale_notes
        from evalkit.report.model import Report

        rows = [_report_row(r, self.run_name, self.baseline_name) for r in self.results]
        return Report(
            kind="gate", title="evalkit gate", subject=self.run_name,
            reference=self.baseline_name, rows=tuple(rows), status=self.status,
            summary=self.summary(), exit_code=self.exit_code,
            notes=(*(f"incomplete: {m}" for m in self.incomplete), *self.notes,
                   *log_scale_notes(rows)),
            data=self.to_dict(),
            correction="Holm" if any(r.p_adjusted is not None for r in rows) else None,
            cases=_report_cases(self.run),
        )

    @overload
    def to_html(self, path: None = None) -> str: ...

    @overload
    def to_html(self, path: str | Path) -> Path: ...

    def to_html(self, path: str | Path | None = None) -> str | Path:
        """The interactive HTML report of the gate, with the ``html`` reporter of the
        registry (the ``evalkit-report-html`` plugin), as ``evalkit gate --report
        html:PATH`` writes it: written to ``path`` (the path is returned), or returned as
        text when no ``path`` is given.

        Raises:
            RegistryError: the plugin is not installed or not enabled (the message says
                what to install).
        """
        from evalkit.report.writing import render_report, write_report

        return render_report(self, "html") if path is None else write_report(
            self, "html", path)

    def to_pandas(self) -> pd.DataFrame:
        """The checks as a ``pandas.DataFrame``, one row per check: id, metric, verdict,
        the run's value, the rule, coverage, and a baseline check's statistics
        (:func:`gate_columns`).

        Raises:
            evalkit.tables.frames.MissingExtraError: (an ``ImportError``) pandas is not
                installed: ``pip install 'paired-evalkit[pandas]'``.
        """
        return gate_frame(self)

    def _repr_html_(self) -> str:
        """Jupyter's view: the checks as an HTML table, then the summary."""
        from evalkit.report.html_table import report_html

        return report_html(self)


def _rule(check: Any) -> str:
    if check.kind == "threshold":
        return f"{check.op} {check.threshold:g}"
    return f"no regression (alpha {check.alpha:g})"


def _report_row(r: CheckResult, run_name: str, baseline_name: str | None) -> ReportRow:
    """The report row of one check: the check, its verdict, the run's value and the rule;
    for a baseline check that reached its test, its statistics."""
    from evalkit.report.model import ReportRow

    c = r.comparison
    return ReportRow(
        name=r.check.id, status=r.verdict, metric=r.check.metric, level=r.check.level,
        value=r.observed, reference_value=None if c is None else c.baseline_value,
        rule=_rule(r.check), difference=None if c is None else c.difference,
        ci_low=None if c is None else c.ci_low, ci_high=None if c is None else c.ci_high,
        confidence=None if c is None else 1 - c.alpha,
        p_value=None if c is None else c.p_value,
        p_adjusted=None if c is None else c.p_adjusted,
        n_resamples=None if c is None else c.n_resamples,
        coverage=r.coverage, detail=r.detail(),
        failed=r.blocking and r.verdict == "fail", errored=r.blocking and r.verdict == "error",
        # a baseline check's comparison, in the fields a comparison report fills
        candidate=None if c is None else run_name,
        baseline=None if c is None else baseline_name,
        n_queries=None if c is None else c.n_cases,
        significant=None if c is None else c.p_decision < c.alpha,
        method=None if c is None else c.method,
        higher_is_better=None if c is None else c.higher_is_better,
    )


def _report_cases(run: RunResult | None) -> tuple[ReportCase, ...]:
    """The report's case of each row of ``run``, in row order (none without a run)."""
    from evalkit.report.model import ReportCase

    out: list[ReportCase] = []
    for row in getattr(run, "per_query", None) or ():
        case_id = next((str(v) for a in ("case_id", "query_id", "id")
                        if (v := getattr(row, a, None)) is not None), "")
        error = getattr(row, "error", None)
        out.append(ReportCase(
            id=case_id, error=None if error is None else str(error),
            metric_errors=dict(getattr(row, "metric_errors", None) or {}),
            values={str(k): float(v) for k, v in (getattr(row, "metrics", None) or {}
                                                  ).items()},
            details=dict(getattr(row, "details", None) or {}),
        ))
    return tuple(out)


def gate_columns(g: GateReport) -> Columns:
    """One row per check of ``g``, in check order (:data:`GATE_FIELDS`): the check, its
    verdict, the run's value and the rule, coverage, and for a baseline check its
    statistics (``None`` elsewhere). :func:`evalkit.report.tables.write_csv` writes them."""
    out: Columns = {f: [] for f in GATE_FIELDS}
    for r in g.results:
        d = r.to_dict()
        comp: Mapping[str, Any] = d["comparison"] or {}
        row = {
            "check": d["id"], "metric": d["metric"], "kind": d["kind"], "level": d["level"],
            "verdict": d["verdict"], "observed": r.observed, "op": d["op"],
            "threshold": d["threshold"],
            "scope": None if d["scope"] is None else ",".join(map(str, d["scope"])),
            "evaluated": r.evaluated, "covered": r.covered, "metric_kind": r.metric_kind,
            "message": r.message or None,
        }
        for key in ("baseline_value", "difference", "ci_low", "ci_high", "p_value",
                    "p_adjusted", "alpha", "method", "n_cases"):
            row[key] = comp.get(key)
        for f in GATE_FIELDS:
            out[f].append(row[f])
    return out


def gate_frame(g: GateReport) -> pd.DataFrame:
    """``g`` as a ``pandas.DataFrame``, one row per check (:func:`gate_columns`).

    Raises:
        evalkit.tables.frames.MissingExtraError: pandas is not installed.
    """
    from evalkit.tables.frames import frame

    return frame(gate_columns(g), ("observed", "threshold", "baseline_value", "difference",
                                   "ci_low", "ci_high", "p_value", "p_adjusted", "alpha"))


__all__ = ["GATE_FIELDS", "GateReport", "gate_columns", "gate_frame"]
