"""The gate: evaluate checks against a run (and a baseline) and decide an exit code.

Verdicts, per check:

* ``pass``: the threshold holds, or the baseline comparison shows no significant move in
  the worse direction (noise and significant improvements both pass);
* ``fail``: a blocking check whose threshold does not hold, or whose metric moved
  significantly in the worse direction (its polarity decides which direction is worse);
* ``warn``: what would be ``fail`` on a check with ``level: warn``;
* ``error``: the check could not be judged: NaN value, metric missing on some case,
  a scoped case without a row, any errored case in the run (covered or not: a run with
  errored cases is incomplete), unknown metric, a baseline check with no
  baseline, a baseline over other cases or with a different fingerprint, a metric with no
  declared polarity. An error is never a pass.

Exit code (:attr:`GateReport.exit_code`): 2 if any blocking check is ``error``, else 1 if
any blocking check is ``fail``, else 0. Warn-level checks never change it.

Statistics of baseline checks: per-case metrics use :func:`evalkit.stats.paired_test`
(its default method, two-sided, confidence ``1 - alpha``) on the per-case values of the
covered cases; whole-run aggregates use a paired bootstrap over case ids (the same ids
resampled in both runs). The p-values of the blocking baseline checks that reached a test
are Holm-adjusted as one family, and each adjusted p is compared with its own check's
alpha; warn-level checks are judged on their unadjusted p. A move counts as significant
when ``p < alpha``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalkit.baseline import (
    Baseline,
    Fingerprint,
    aggregate_definitions,
    case_set_difference,
    fingerprint,
    fingerprint_differences,
)
from evalkit.checks import CheckError, CheckSpec, row_error, row_id
from evalkit.formatting import p_phrase, signed
from evalkit.registry import Registry, RegistryError, default_registry
from evalkit.results import RunResult
from evalkit.specs import AggregateSpec, MetricSpec

if TYPE_CHECKING:
    from evalkit.reporters.model import Report

Verdict = Literal["pass", "fail", "warn", "error"]
MetricKind = Literal["metric", "aggregate"]

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 42


# ------------------------------------------------------------------- results
@dataclass(frozen=True)
class BaselineComparison:
    """The statistics of one baseline check.

    Attributes:
        baseline_value: the baseline's mean (per-case metric) or aggregate value.
        difference: run minus baseline, in the metric's units.
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
                f"{word}{self.check.metric} {_fmt(self.observed)} (required "
                f"{self.check.op} {self.check.threshold:g})"))
        elif c is not None:
            padj = "" if c.p_adjusted is None else (
                f", Holm-adjusted p {_p_text(c.p_adjusted, c.n_resamples)}")
            direction = "higher" if c.higher_is_better else "lower"
            parts.append(
                f"{word}{self.check.metric} {_fmt(self.observed)} vs baseline "
                f"{_fmt(c.baseline_value)}: difference {signed(c.difference)}, "
                f"{1 - c.alpha:.0%} CI [{signed(c.ci_low)}, {signed(c.ci_high)}], "
                f"p {_p_text(c.p_value, c.n_resamples)}"
                f"{padj} (alpha {c.alpha:g}, {direction} is better): {c.outcome}"
            )
        elif self.message:
            parts.append(self.message)
        if not self.blocking and self.verdict != "pass":
            parts.append("warn level: does not affect the exit code")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.check.id,
            "metric": self.check.metric,
            "kind": self.check.kind,
            "level": self.check.level,
            "verdict": self.verdict,
            "observed": _finite_or_none(self.observed),
            "observed_text": None if self.observed is None else _fmt(self.observed),
            "op": self.check.op,
            "threshold": self.check.threshold,
            "scope": None if self.check.scope is None else list(self.check.scope),
            "coverage": {"evaluated": self.evaluated, "covered": self.covered,
                         "text": self.coverage},
            "metric_kind": self.metric_kind,
            "comparison": None if self.comparison is None else self.comparison.to_dict(),
            "message": self.message,
        }


@dataclass(frozen=True)
class GateReport:
    """The outcome of :func:`evaluate_gate`.

    Attributes:
        results: one :class:`CheckResult` per check, in check order.
        run_name: the gated run.
        baseline_name: the baseline run, if one was given.
        notes: remarks that apply to the whole gate (for example what changed between
            the baseline's fingerprint and the run's).
        run: the gated run, whose cases (errors, a judge's grades and reasons) the
            reports list; ``None`` when not kept. Not part of equality or ``to_dict``.
    """

    results: tuple[CheckResult, ...]
    run_name: str
    baseline_name: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    run: RunResult | None = field(default=None, compare=False, repr=False)

    @property
    def exit_code(self) -> int:
        """2 if a blocking check is an error, else 1 if one failed, else 0."""
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
        out.extend(f"note: {n}" for n in self.notes)
        out.append(self.summary())
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "gate",
            "run": self.run_name,
            "baseline": self.baseline_name,
            "status": self.status,
            "exit_code": self.exit_code,
            "counts": self.counts(),
            "checks": [r.to_dict() for r in self.results],
            "notes": list(self.notes),
        }

    def to_report(self) -> Report:
        """The neutral report model every reporter renders."""
        from evalkit.reporters.model import report_from_gate

        return report_from_gate(self)

    def to_html(self, path: str | Path) -> Path:
        """Write the interactive HTML report of the gate to ``path`` with the ``html``
        reporter of the registry (the ``evalkit-report-html`` plugin), as ``evalkit gate
        --report html:PATH`` does.

        Raises:
            RegistryError: the plugin is not installed or not enabled (the message says
                what to install).
        """
        from evalkit.reporters import write_report

        return write_report(self, "html", path)


# ------------------------------------------------------------------- helpers
def _finite_or_none(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def _fmt(x: float | None) -> str:
    if x is None:
        return "n/a"
    if math.isnan(x):
        return "NaN"
    if x == int(x) and abs(x) < 1e15:
        return f"{x:.4f}" if abs(x) < 10 else f"{x:g}"
    return f"{x:.4f}" if abs(x) < 1000 else f"{x:.1f}"


def _p_text(p: float, n_resamples: int | None = None) -> str:
    """``"= 0.0123"`` or ``"< 0.0001"`` (at the floor ``1/(B+1)`` of ``n_resamples``), to
    follow the letter p (:func:`evalkit.formatting.p_phrase`)."""
    return p_phrase(p, n_resamples).removeprefix("p ")


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in input order (:func:`evalkit.stats.holm`):
    ``p_adj(i) = max over j <= rank(i) of min(1, (m - j + 1) * p_(j))``, ``p_(j)`` sorted
    ascending (Holm 1979)."""
    if not p_values:
        return []
    from evalkit.stats import holm as stats_holm

    return [float(x) for x in stats_holm(list(p_values))]


@dataclass(frozen=True)
class _Resolved:
    name: str
    kind: MetricKind
    spec: MetricSpec | AggregateSpec | None


class _CheckFailure(Exception):
    """Internal: the check cannot be judged; becomes an error verdict."""


def _resolve(check: CheckSpec, reg: Registry, rows: Sequence[Any]) -> _Resolved:
    try:
        spec = reg.resolve(check.metric)
    except RegistryError as exc:
        on_rows = any(check.metric in getattr(r, "metrics", {}) for r in rows)
        if check.kind == "threshold" and on_rows:
            # not registered in this process, but the run carries the values
            return _Resolved(check.metric, "metric", None)
        raise _CheckFailure(str(exc)) from None
    if isinstance(spec, AggregateSpec):
        return _Resolved(spec.name, "aggregate", spec)
    if spec.kind == "count":
        raise _CheckFailure(
            f"{check.metric!r} is a per-query count, reported but never gated; gate a "
            "metric instead"
        )
    name = spec.name
    if not any(name in getattr(r, "metrics", {}) for r in rows) and any(
        check.metric in getattr(r, "metrics", {}) for r in rows
    ):
        name = check.metric
    return _Resolved(name, "metric", spec)


def _values(rows: Sequence[Any], metric: str, run_name: str) -> dict[str, float]:
    """``{case id: value}``; raises _CheckFailure on a missing or NaN value."""
    missing = [row_id(r) for r in rows if metric not in r.metrics]
    if missing:
        have = sorted({k for r in rows for k in r.metrics})
        shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise _CheckFailure(
            f"metric {metric!r} is missing from {run_name} on {len(missing)} of {len(rows)} "
            f"case(s) ({shown}); the rows have: {', '.join(have) or 'no metrics'}"
        )
    out = {row_id(r): float(r.metrics[metric]) for r in rows}
    bad = [i for i, v in out.items() if not math.isfinite(v)]
    if bad:
        shown = ", ".join(f"{i} ({out[i]})" for i in bad[:10])
        raise _CheckFailure(
            f"metric {metric!r} is not a finite number in {run_name} on {len(bad)} case(s): "
            f"{shown}"
        )
    return out


def _coverage(check: CheckSpec, rows: Sequence[Any], reg: Registry) -> tuple[int, int]:
    """``(k, n)``: of the ``n`` cases ``check`` covers, the ``k`` with a usable value.

    A case has a usable value when its row is present, not errored and, for a per-case
    metric, holds a finite value of the metric (an unresolved name is looked up on the
    rows as written). For an aggregate, k is the number of rows it is computed over: the
    present, non-errored covered rows when it yields a finite value on them, else 0.
    """
    n = check.coverage_counts(rows)[1]
    if check.scope is None:
        covered = list(rows)
    else:
        by_id = {row_id(r): r for r in rows}
        covered = [by_id[i] for i in check.scope if i in by_id]
    usable = [r for r in covered if row_error(r) is None]
    try:
        res = _resolve(check, reg, usable)
    except Exception:  # unknown, a count, a failing plugin: the check says why
        res = _Resolved(check.metric, "metric", None)
    if isinstance(res.spec, AggregateSpec):
        try:
            return (len(usable) if usable and math.isfinite(float(res.spec.fn(usable)))
                    else 0), n
        except Exception:
            return 0, n
    k = 0
    for r in usable:
        value = getattr(r, "metrics", {}).get(res.name)
        if isinstance(value, int | float) and not isinstance(value, bool) \
                and math.isfinite(value):
            k += 1
    return k, n


def _require_complete(rows: Sequence[Any], label: str) -> None:
    """Raise _CheckFailure when any row of the run errored, covered by the check or not."""
    errored = [(row_id(r), row_error(r)) for r in rows if row_error(r) is not None]
    if errored:
        shown = "; ".join(f"{i} ({e})" for i, e in errored[:5])
        more = f"; and {len(errored) - 5} more" if len(errored) > 5 else ""
        raise _CheckFailure(
            f"{label} has {len(errored)} errored case(s) outside this check's cases: "
            f"{shown}{more}. A run with errored cases is incomplete, and no check passes on "
            "an incomplete run"
        )


def _mean(values: Mapping[str, float]) -> float:
    return math.fsum(values.values()) / len(values)


def _aggregate(spec: AggregateSpec, rows: Sequence[Any], run_name: str) -> float:
    try:
        value = float(spec.fn(list(rows)))
    except Exception as exc:
        raise _CheckFailure(
            f"aggregate {spec.name!r} could not be computed on {run_name}: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if not math.isfinite(value):
        raise _CheckFailure(f"aggregate {spec.name!r} is {value} on {run_name}")
    return value


def _observed(res: _Resolved, rows: Sequence[Any], run_name: str) -> float:
    if not rows:
        raise _CheckFailure(f"{run_name} has no case this check covers")
    if res.kind == "aggregate":
        assert isinstance(res.spec, AggregateSpec)
        return _aggregate(res.spec, rows, run_name)
    return _mean(_values(rows, res.name, run_name))


# ---------------------------------------------------------------- statistics
@dataclass(frozen=True)
class _TestOutcome:
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str
    n_resamples: int | None


def _per_case_test(
    cand: Mapping[str, float], base: Mapping[str, float], metric: str, alpha: float,
    n_resamples: int, seed: int,
) -> _TestOutcome:
    """:func:`evalkit.stats.paired_test` with its default method on ``{case id: value}``
    maps: run minus baseline, two-sided, interval of confidence ``1 - alpha``."""
    from evalkit.stats import paired_test

    r = paired_test(dict(cand), dict(base), metric, alpha=alpha, alternative="two-sided",
                    n_resamples=n_resamples, seed=seed)
    return _TestOutcome(float(r.observed), float(r.ci_low), float(r.ci_high),
                        float(r.p_value), str(r.method), r.n_resamples)


def _aggregate_test(
    spec: AggregateSpec, cand_rows: Sequence[Any], base_rows: Sequence[Any], alpha: float,
    n_resamples: int, seed: int,
) -> _TestOutcome:
    """:func:`evalkit.stats.aggregate_bootstrap`: paired bootstrap over case ids of
    ``spec(run rows) - spec(baseline rows)``, percentile interval of confidence
    ``1 - alpha``, two-sided p of the centred null."""
    from evalkit.stats import aggregate_bootstrap

    r = aggregate_bootstrap(
        RunResult("run", list(cand_rows)), RunResult("baseline", list(base_rows)), spec.fn,
        name=spec.name, alpha=alpha, n_resamples=n_resamples, seed=seed,
    )
    return _TestOutcome(float(r.observed), float(r.ci_low), float(r.ci_high),
                        float(r.p_value), "bootstrap over case ids", r.n_resamples)


# --------------------------------------------------------------------- gate
def _as_run(run: RunResult | Any) -> RunResult:
    if isinstance(run, RunResult):
        return run
    raise TypeError(f"expected a RunResult, got {type(run).__name__}")


def _error(check: CheckSpec, cov: tuple[int, int], message: str,
           observed: float | None = None, kind: MetricKind | None = None) -> CheckResult:
    return CheckResult(check, "error", observed, cov[0], cov[1], message, kind)


def _threshold_result(
    check: CheckSpec, run: RunResult, reg: Registry, cov: tuple[int, int]
) -> CheckResult:
    try:
        rows = check.select(run.per_query)
        _require_complete(run.per_query, f"run {run.name!r}")
        res = _resolve(check, reg, rows)
        observed = _observed(res, rows, f"run {run.name!r}")
    except (CheckError, _CheckFailure) as exc:
        return _error(check, cov, str(exc))
    if check.passes(observed):
        return CheckResult(check, "pass", observed, cov[0], cov[1], "", res.kind)
    verdict: Verdict = "fail" if check.blocking else "warn"
    word = "mean " if res.kind == "metric" else ""
    broken = {">=": "<", "<=": ">", "==": "!="}[str(check.op)]
    msg = (f"{word}{check.metric} {_fmt(observed)} {broken} {check.threshold:g} (required "
           f"{check.op} {check.threshold:g})")
    return CheckResult(check, verdict, observed, cov[0], cov[1], msg, res.kind)


def _baseline_result(
    check: CheckSpec, run: RunResult, baseline: Baseline | None, reg: Registry,
    cov: tuple[int, int], n_resamples: int, seed: int, run_fp: Fingerprint | None,
) -> CheckResult:
    if baseline is None:
        return _error(check, cov, "this check compares against a baseline, but none was "
                                  "given (pass --baseline, or baseline= to evaluate_gate)")
    kind: MetricKind | None = None
    try:
        rows = check.select(run.per_query)
        try:
            base_rows = check.select(baseline.run.per_query)
        except CheckError as exc:
            raise _CheckFailure(f"in the baseline: {exc}") from None
        _require_complete(run.per_query, f"run {run.name!r}")
        _require_complete(baseline.run.per_query, f"baseline {baseline.name!r}")
        res = _resolve(check, reg, rows)
        kind = res.kind
        try:
            higher = reg.polarity(check.metric)
        except RegistryError as exc:
            raise _CheckFailure(str(exc)) from None
        ids = [row_id(r) for r in rows]
        base_ids = [row_id(r) for r in base_rows]
        if set(ids) != set(base_ids):
            raise _CheckFailure(case_set_difference(base_ids, ids))
        current = replace(run_fp or fingerprint(run, aggregates=False),
                          aggregates=aggregate_definitions([check.metric], reg))
        diffs = fingerprint_differences(
            baseline.fingerprint, current,
            metrics=[res.name] if res.kind == "metric" else [],
            aggregates=[res.name] if res.kind == "aggregate" else [],
            baseline_ids=baseline.run.ids(), current_ids=run.ids(), compare_ids=False,
        )
        if diffs:
            raise _CheckFailure(
                "the baseline is not comparable with this run: " + "; ".join(diffs)
                + ". Promote a new baseline from a run made with the current definitions"
            )
        alpha = float(check.alpha if check.alpha is not None else 0.05)
        if res.kind == "aggregate":
            assert isinstance(res.spec, AggregateSpec)
            observed = _aggregate(res.spec, rows, f"run {run.name!r}")
            base_value = _aggregate(res.spec, base_rows, f"baseline {baseline.name!r}")
            by_id = {row_id(r): r for r in base_rows}
            aligned = [by_id[i] for i in ids]
            t = _aggregate_test(res.spec, rows, aligned, alpha, n_resamples, seed)
        else:
            cand = _values(rows, res.name, f"run {run.name!r}")
            base = _values(base_rows, res.name, f"baseline {baseline.name!r}")
            observed, base_value = _mean(cand), _mean(base)
            t = _per_case_test(cand, base, res.name, alpha, n_resamples, seed)
    except (CheckError, _CheckFailure) as exc:
        return _error(check, cov, str(exc), kind=kind)
    except (ValueError, TypeError) as exc:
        return _error(check, cov, f"the comparison failed: {exc}", kind=kind)
    comp = BaselineComparison(
        baseline_value=base_value, difference=t.difference, ci_low=t.ci_low,
        ci_high=t.ci_high, p_value=t.p_value, alpha=alpha, method=t.method,
        n_cases=len(ids), higher_is_better=higher, n_resamples=t.n_resamples,
    )
    # verdict decided after Holm; "pass" is a placeholder
    return CheckResult(check, "pass", observed, cov[0], cov[1], "", kind, comp)


def _decide(result: CheckResult, p_adjusted: float | None) -> CheckResult:
    comp = result.comparison
    assert comp is not None
    comp = replace(comp, p_adjusted=p_adjusted)
    significant = comp.p_decision < comp.alpha
    if significant and comp.worse:
        outcome = "regressed"
    elif significant and comp.difference != 0:
        outcome = "improved"
    else:
        outcome = "no significant change"
    comp = replace(comp, outcome=outcome)
    if outcome != "regressed":
        return replace(result, verdict="pass", comparison=comp, message="")
    direction = "higher" if comp.higher_is_better else "lower"
    which = "Holm-adjusted p" if p_adjusted is not None else "p"
    msg = (f"{result.check.metric} moved {signed(comp.difference)} against the baseline "
           f"({direction} is better), {which} {_p_text(comp.p_decision, comp.n_resamples)} "
           f"< alpha {comp.alpha:g}")
    verdict: Verdict = "fail" if result.blocking else "warn"
    return replace(result, verdict=verdict, comparison=comp, message=msg)


def evaluate_gate(
    checks: Sequence[CheckSpec],
    run: RunResult,
    baseline: RunResult | Baseline | None = None,
    *,
    registry: Registry | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> GateReport:
    """Judge every check on ``run`` (and ``baseline`` for baseline checks).

    Args:
        checks: from :func:`evalkit.load_checks`; ids must be unique.
        run: the candidate run (rows of ``QueryResult`` or ``CaseResult``).
        baseline: a :class:`~evalkit.baseline.Baseline` (from ``load_baseline``), or a
            plain run used as one (its fingerprint is computed from its header).
        registry: where metric names are resolved (default: the process registry).
        n_resamples: resamples of the bootstrap tests.
        seed: seed of the bootstrap tests (fixed by default, so a gate is reproducible).

    Returns:
        A :class:`GateReport`; its ``exit_code`` is 0, 1 or 2.

    Raises:
        CheckError: ``checks`` is empty or has duplicate ids.
        TypeError: ``run`` is not a RunResult.
    """
    run = _as_run(run)
    if not checks:
        raise CheckError("no checks to evaluate; a gate without checks gates nothing")
    seen: set[str] = set()
    for c in checks:
        if c.id in seen:
            raise CheckError(f"duplicate check id {c.id!r}")
        seen.add(c.id)
    reg = registry or default_registry()
    base: Baseline | None
    if baseline is None or isinstance(baseline, Baseline):
        base = baseline
    else:
        base = Baseline.from_run(_as_run(baseline))
    notes: list[str] = []
    run_fp: Fingerprint | None = None
    if base is not None and any(c.kind == "baseline" for c in checks):
        run_fp = fingerprint(run, aggregates=False)
        if run_fp.ids_sha256 != base.fingerprint.ids_sha256:
            notes.append(case_set_difference(base.run.ids(), run.ids()))
    results: list[CheckResult] = []
    for check in checks:
        cov = _coverage(check, run.per_query, reg)
        try:
            if check.kind == "threshold":
                results.append(_threshold_result(check, run, reg, cov))
            else:
                results.append(
                    _baseline_result(check, run, base, reg, cov, n_resamples, seed, run_fp))
        except Exception as exc:  # a bug or a plugin failure: cannot judge, never a pass
            results.append(_error(check, cov, f"the check raised {type(exc).__name__}: {exc}"))
    family = [i for i, r in enumerate(results)
              if r.comparison is not None and r.blocking and r.verdict != "error"]
    adjusted = holm([results[i].comparison.p_value for i in family])  # type: ignore[union-attr]
    adj_by_index = dict(zip(family, adjusted, strict=True))
    for i, r in enumerate(results):
        if r.comparison is not None and r.verdict != "error":
            results[i] = _decide(r, adj_by_index.get(i))
    return GateReport(
        results=tuple(results), run_name=run.name,
        baseline_name=None if base is None else base.name, notes=tuple(notes), run=run,
    )


def gate_from_files(
    checks_path: str | Path, run_path: str | Path, baseline_path: str | Path | None = None,
    **kwargs: Any,
) -> GateReport:
    """:func:`evaluate_gate` on files: a checks file, a run artifact and optionally a
    baseline file. Scope ids are checked at load against the ids of the run and the
    baseline (an id in neither is a typo). ``kwargs`` go to :func:`evaluate_gate`.

    Raises:
        CheckError, ArtifactError, BaselineError: unusable input (file named).
    """
    from evalkit.baseline import load_baseline
    from evalkit.checks import load_checks

    run = RunResult.load(run_path)
    base = load_baseline(baseline_path) if baseline_path else None
    known = set(run.ids()) | (set(base.run.ids()) if base is not None else set())
    checks = load_checks(checks_path, known_case_ids=known)
    return evaluate_gate(checks, run, base, **kwargs)



__all__ = [
    "BaselineComparison",
    "CheckResult",
    "GateReport",
    "evaluate_gate",
    "gate_from_files",
    "holm",
]
