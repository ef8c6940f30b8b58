"""What a gate decided: per check a :class:`CheckResult`, per gate a :class:`GateReport`
(with the exit code every reporter and the CLI use), and the statistics of a baseline
check (:class:`BaselineComparison`). :mod:`evalkit.gate` computes them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, overload

from evalkit.gate.checks import CheckSpec
from evalkit.report.formatting import p_phrase, signed

if TYPE_CHECKING:
    from pathlib import Path

    import pandas as pd

    from evalkit.data.results import RunResult
    from evalkit.report.model import Report

Verdict = Literal["pass", "fail", "warn", "error"]
MetricKind = Literal["metric", "aggregate"]


@dataclass(frozen=True)
class BaselineComparison:
    """The statistics of one baseline check.

    Attributes:
        baseline_value: the baseline's mean (per-case metric) or aggregate value.
        difference: run minus baseline, in the metric's units (for gm_map and gm_bpref,
            whose per-case values are logs, the difference of mean logs; the two
            means are geometric means, docs/metrics.md).
        ci_low, ci_high: the ``1 - alpha`` confidence interval of ``difference``.
        p_value: two-sided p of "no difference".
        p_adjusted: Holm-adjusted p (blocking checks), ``None`` for warn-level checks.
        alpha: the check's significance level.
        method: the test used (``"bootstrap-t"``, ``"bootstrap over case ids"``, ...).
        n_cases: number of paired cases.
        higher_is_better: the metric's polarity.
        outcome: ``"regressed"``, ``"improved"`` or ``"no significant change"`` (set once
            the p-value used for the decision is known).
    """

    baseline_value: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    alpha: float
    method: str
    n_cases: int
    higher_is_better: bool
    p_adjusted: float | None = None
    outcome: str = "no significant change"
    n_resamples: int | None = None

    @property
    def p_decision(self) -> float:
        """The p-value the verdict used: adjusted when present, else raw."""
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    @property
    def worse(self) -> bool:
        """Whether the observed difference points in the worse direction."""
        return self.difference < 0 if self.higher_is_better else self.difference > 0

    def to_dict(self) -> dict[str, Any]:
        """The statistics as JSON-ready values (non-finite numbers are None)."""
        return {
            "baseline_value": _finite_or_none(self.baseline_value),
            "difference": _finite_or_none(self.difference),
            "ci_low": _finite_or_none(self.ci_low),
            "ci_high": _finite_or_none(self.ci_high),
            "p_value": self.p_value,
            "p_adjusted": self.p_adjusted,
            "alpha": self.alpha,
            "method": self.method,
            "n_cases": self.n_cases,
            "n_resamples": self.n_resamples,
            "higher_is_better": self.higher_is_better,
            "outcome": self.outcome,
        }


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one check.

    Attributes:
        check: the check.
        verdict: ``"pass"``, ``"fail"``, ``"warn"`` or ``"error"``.
        observed: the run's value (mean over the covered cases, or the aggregate), or
            ``None`` when it could not be computed; may be NaN on an error verdict.
        evaluated, covered: cases with a usable value of the check's metric (for an
            aggregate: the rows it is computed over) over cases the check covers.
        message: one sentence saying why (the failure, or the error).
        metric_kind: ``"metric"`` (per-case, mean) or ``"aggregate"``, when resolved.
        comparison: the statistics of a baseline check that reached its test.
    """

    check: CheckSpec
    verdict: Verdict
    observed: float | None
    evaluated: int
    covered: int
    message: str = ""
    metric_kind: MetricKind | None = None
    comparison: BaselineComparison | None = None

    @property
    def coverage(self) -> str:
        """``"k/n cases"``."""
        return f"{self.evaluated}/{self.covered} cases"

    @property
    def blocking(self) -> bool:
        """Whether the check decides the exit code (level ``block``)."""
        return self.check.blocking

    def line(self) -> str:
        """``"<id>: <verdict> (<k>/<n> cases)"``."""
        return f"{self.check.id}: {self.verdict} ({self.coverage})"

    def detail(self) -> str:
        """One line of numbers and reasons to print under :meth:`line`."""
        parts: list[str] = []
        c = self.comparison
        word = "mean " if self.metric_kind == "metric" else ""
        if self.check.kind == "threshold" and self.observed is not None and self.verdict in (
            "pass", "fail", "warn"
        ):
            parts.append(self.message or (
                f"{word}{self.check.metric} {fmt_value(self.observed)} (required "
                f"{self.check.op} {self.check.threshold:g})"))
        elif c is not None:
            padj = "" if c.p_adjusted is None else (
                f", Holm-adjusted p {p_text(c.p_adjusted, c.n_resamples)}")
            direction = "higher" if c.higher_is_better else "lower"
            parts.append(
                f"{word}{self.check.metric} {fmt_value(self.observed)} vs baseline "
                f"{fmt_value(c.baseline_value)}: difference {signed(c.difference)}, "
                f"{1 - c.alpha:.0%} CI [{signed(c.ci_low)}, {signed(c.ci_high)}], "
                f"p {p_text(c.p_value, c.n_resamples)}"
                f"{padj} (alpha {c.alpha:g}, {direction} is better): {c.outcome}"
            )
        elif self.message:
            parts.append(self.message)
        if not self.blocking and self.verdict != "pass":
            parts.append("warn level: does not affect the exit code")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The check's verdict as the JSON reporter writes it."""
        return {
            "id": self.check.id,
            "metric": self.check.metric,
            "kind": self.check.kind,
            "level": self.check.level,
            "verdict": self.verdict,
            "observed": _finite_or_none(self.observed),
            "observed_text": None if self.observed is None else fmt_value(self.observed),
            "op": self.check.op,
            "threshold": self.check.threshold,
            "scope": None if self.check.scope is None else list(self.check.scope),
            "coverage": {"evaluated": self.evaluated, "covered": self.covered,
                         "text": self.coverage},
            "metric_kind": self.metric_kind,
            "comparison": None if self.comparison is None else self.comparison.to_dict(),
            "message": self.message,
        }


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
        """2 if the evidence is incomplete or a blocking check is an error, else 1 if one
        failed, else 0."""
        if self.incomplete:
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
        """One sentence: the outcome, the counts and the exit code."""
        if self.incomplete:
            return (f"gate error: the evidence is incomplete, so none of the "
                    f"{len(self.results)} check(s) was judged (exit {self.exit_code})")
        c = self.counts()
        blocking_err = sum(1 for r in self.results if r.blocking and r.verdict == "error")
        warn_err = c["error"] - blocking_err
        parts = [f"{c['pass']} passed", f"{c['fail']} failed", f"{c['warn']} warned",
                 f"{blocking_err} {'error' if blocking_err == 1 else 'errors'}"]
        if warn_err:
            parts.append(f"{warn_err} {'error' if warn_err == 1 else 'errors'} on warn-level "
                         "checks")
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
        """The neutral report model every reporter renders."""
        from evalkit.report.model import report_from_gate

        return report_from_gate(self)

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
        (:func:`evalkit.report.tables.gate_columns`).

        Raises:
            evalkit.report.frames.MissingExtraError: (an ``ImportError``) pandas is not
                installed: ``pip install 'paired-evalkit[pandas]'``.
        """
        from evalkit.report.frames import gate_frame

        return gate_frame(self)

    def _repr_html_(self) -> str:
        """Jupyter's view: the checks as an HTML table, then the summary."""
        from evalkit.report.html_table import report_html

        return report_html(self)


# ------------------------------------------------------------------- helpers
def _finite_or_none(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def fmt_value(x: float | None) -> str:
    if x is None:
        return "n/a"
    if math.isnan(x):
        return "NaN"
    if x == int(x) and abs(x) < 1e15:
        return f"{x:.4f}" if abs(x) < 10 else f"{x:g}"
    return f"{x:.4f}" if abs(x) < 1000 else f"{x:.1f}"


def p_text(p: float, n_resamples: int | None = None) -> str:
    """``"= 0.0123"`` or ``"< 0.0001"`` (at the floor ``1/(B+1)`` of ``n_resamples``), to
    follow the letter p (:func:`evalkit.report.formatting.p_phrase`)."""
    return p_phrase(p, n_resamples).removeprefix("p ")


