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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evalkit.baseline import (
    Baseline,
    Fingerprint,
    aggregate_definitions,
    case_set_difference,
    fingerprint,
    fingerprint_differences,
)
from evalkit.checks import CheckError, CheckSpec, row_error, row_id
from evalkit.coverage import Coverage, coverage_of
from evalkit.formatting import signed
from evalkit.gate_report import (
    BaselineComparison,
    CheckResult,
    GateReport,
    MetricKind,
    Verdict,
    fmt_value,
    p_text,
)
from evalkit.numeric import exact_mean
from evalkit.registry import Registry, RegistryError, default_registry
from evalkit.results import RunResult
from evalkit.specs import AggregateSpec, MetricSpec

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 42


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
    """``{case id: value}``; raises _CheckFailure on a failed, missing or NaN value."""
    failed = [(row_id(r), r.metric_errors[metric]) for r in rows
              if metric not in r.metrics and metric in getattr(r, "metric_errors", {})]
    if failed:
        raise _CheckFailure(
            f"metric {metric!r} failed in {run_name} on {len(failed)} of {len(rows)} "
            f"case(s) this check covers: {_cases_and_why(failed, 10)}. The check is not "
            "judged without them; the other metrics of these cases keep their values"
        )
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


def _coverage(check: CheckSpec, rows: Sequence[Any], reg: Registry,
              expected: int | None = None) -> tuple[int, int]:
    """``(k, n)``: of the ``n`` cases ``check`` covers, the ``k`` with a usable value.

    An unscoped check covers every case of the run: its rows, or the ``expected`` number
    of cases its header records when more (a run cut short covers 107 of its 240 cases,
    not 107 of 107). A case has a usable value when its row is present, not errored and,
    for a per-case metric, holds a finite value of the metric (an unresolved name is
    looked up on the rows as written). For an aggregate, k is the number of rows it is
    computed over: the present, non-errored covered rows when it yields a finite value on
    them, else 0.
    """
    n = check.coverage_counts(rows)[1]
    if check.scope is None and expected is not None:
        n = max(n, expected)
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
    errored = [(row_id(r), str(row_error(r))) for r in rows if row_error(r) is not None]
    if errored:
        raise _CheckFailure(
            f"{label} has {len(errored)} errored case(s) outside this check's cases: "
            f"{_cases_and_why(errored, 5)}. A run with errored cases is incomplete, and no "
            "check passes on an incomplete run"
        )


def _cases_and_why(cases: Sequence[tuple[str, str]], limit: int) -> str:
    """``a (why); b (why); and 3 more``."""
    shown = "; ".join(f"{i} ({e})" for i, e in cases[:limit])
    return shown + (f"; and {len(cases) - limit} more" if len(cases) > limit else "")


def _mean(values: Mapping[str, float]) -> float:
    return exact_mean(list(values.values()))


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
    msg = (f"{word}{check.metric} {fmt_value(observed)} {broken} {check.threshold:g} (required "
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
           f"({direction} is better), {which} {p_text(comp.p_decision, comp.n_resamples)} "
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
    incomplete: list[str] = []
    lacking: list[str] = []
    run_cov = coverage_of(run)
    if not run_cov.complete:
        incomplete.append(_incomplete(run, run_cov, "run"))
        lacking.append("the run")
    notes.extend(run_cov.notes)
    if base is not None:
        base_cov = coverage_of(base.run)
        if not base_cov.complete:
            incomplete.append(_incomplete(base.run, base_cov, "baseline"))
            lacking.append("the baseline")
        notes.extend(base_cov.notes)
    run_fp: Fingerprint | None = None
    if base is not None and any(c.kind == "baseline" for c in checks):
        run_fp = fingerprint(run, aggregates=False)
        if run_fp.ids_sha256 != base.fingerprint.ids_sha256:
            notes.append(case_set_difference(base.run.ids(), run.ids()))
    results: list[CheckResult] = []
    for check in checks:
        cov = _coverage(check, run.per_query, reg, run_cov.expected)
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
    if incomplete:  # no verdict rests on evidence the gate did not fully see
        which = " and ".join(lacking)
        results = [r if r.verdict == "error" else replace(
            r, verdict="error", observed=None, comparison=None,
            message=f"not judged: {which} {'are' if len(lacking) > 1 else 'is'} "
                    "incomplete (see below)") for r in results]
    return GateReport(
        results=tuple(results), run_name=run.name,
        baseline_name=None if base is None else base.name, notes=tuple(notes),
        incomplete=tuple(incomplete), run=run,
    )


def _incomplete(run: RunResult, cov: Coverage, role: str) -> str:
    where = f" ({run.integrity.path})" if run.integrity is not None else ""
    return f"{role} {run.name!r}{where} is incomplete: " + "; ".join(cov.problems)


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
