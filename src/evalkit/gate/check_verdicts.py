"""What each check of a gate decided: a :class:`CheckResult` per check, with the
statistics of a baseline check (:class:`BaselineComparison`); :mod:`evalkit.gate.verdicts`
puts them together as the gate's :class:`~evalkit.gate.GateReport`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from evalkit.gate.checks import CheckSpec
from evalkit.report.formatting import interval, p_phrase, signed

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
        n_clusters: the clusters the test took as its unit (``evaluate_gate(...,
            clusters=...)``), None when the cases were not clustered.
        ppi: with ``evaluate_gate(..., ppi=True)`` and human labels of the metric in
            the run and the baseline, the PPI++ interval of the human difference
            (:meth:`evalkit.data.ppi_labels.PairedPPI.to_dict`), which then gives
            ``difference``, the interval and ``p_value`` (``method`` ``"ppi++"``); else
            None.
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
    n_clusters: int | None = None
    ppi: Mapping[str, Any] | None = None

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
            "n_clusters": self.n_clusters,
            "n_resamples": self.n_resamples,
            "higher_is_better": self.higher_is_better,
            "outcome": self.outcome,
        } | ({"ppi": dict(self.ppi)} if self.ppi is not None else {})


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
        rests_on: for an aggregate whose value rests on fewer cases than it was given
            (:attr:`evalkit.core.specs.AggregateSpec.rests_on`), ``(count, word)``:
            ``(10, "labelled")``; else ``None``.
        not_judged: the gate's evidence (the run or the baseline) is incomplete, so the
            check was not judged: its verdict is ``error`` and the gate exits 2 whatever
            its level.
    """

    check: CheckSpec
    verdict: Verdict
    observed: float | None
    evaluated: int
    covered: int
    message: str = ""
    metric_kind: MetricKind | None = None
    comparison: BaselineComparison | None = None
    rests_on: tuple[int, str] | None = None
    not_judged: bool = False

    @property
    def coverage(self) -> str:
        """``"k/n cases"``; for an aggregate resting on some of them,
        ``"m <word> of k cases"`` (``"10 labelled of 20 cases"``, ``k/n`` when a check
        covers cases without a value)."""
        cases = f"{self.evaluated}/{self.covered} cases"
        if self.rests_on is None:
            return cases
        count, word = self.rests_on
        of = f"{self.evaluated} cases" if self.evaluated == self.covered else cases
        return f"{count} {word} of {of}"

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
            if c.method.startswith("sequential:"):  # no p-value: the sequence decides
                parts.append(
                    f"{word}{self.check.metric}: difference {signed(c.difference)} over "
                    f"{c.n_cases} cases before the sequential rule stopped the run, "
                    f"anytime-valid {1 - c.alpha:.0%} interval [{signed(c.ci_low)}, "
                    f"{signed(c.ci_high)}] ({direction} is better): {c.outcome}")
                return "; ".join(parts)
            parts.append(
                f"{word}{self.check.metric} {fmt_value(self.observed)} vs baseline "
                f"{fmt_value(c.baseline_value)}: difference {signed(c.difference)}, "
                f"{1 - c.alpha:.0%} CI {interval(c.ci_low, c.ci_high)}, "
                f"p {p_text(c.p_value, c.n_resamples)}"
                f"{padj} (alpha {c.alpha:g}, {direction} is better): {c.outcome}"
            )
            if c.ppi is not None:
                from evalkit.data.ppi_labels import ppi_sentence

                parts.append(ppi_sentence(c.ppi))
            if self.verdict == "error" and self.message:  # reached its test, not judged
                parts.append(self.message)
        elif self.message:
            parts.append(self.message)
        if not self.blocking and self.not_judged:
            parts.append("warn level, but incomplete evidence makes the gate exit 2 "
                         "whatever the checks' levels")
        elif not self.blocking and self.verdict != "pass":
            parts.append("warn level: this check's verdict does not change the exit code")
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
                         "text": self.coverage} | ({} if self.rests_on is None else {
                             "rests_on": self.rests_on[0], "rests_on_word": self.rests_on[1]}),
            "metric_kind": self.metric_kind,
            "comparison": None if self.comparison is None else self.comparison.to_dict(),
            "message": self.message,
        } | ({"scope_tags": list(self.check.scope_tags)}
             if self.check.scope_tags is not None else {})


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


__all__ = ["BaselineComparison", "CheckResult", "MetricKind", "Verdict", "fmt_value", "p_text"]
