"""Baseline checks: the paired test of a run against its baseline, and the verdict after
the Holm adjustment.

Per-case metrics are tested with :func:`evalkit.stats.paired_test` (its default method,
two-sided) on the covered cases' values; whole-run aggregates with a paired bootstrap over
case ids (:func:`evalkit.stats.aggregate_bootstrap`). A baseline over other cases or with a
different fingerprint is refused before any test, naming the difference.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evalkit.core.registry import Registry, RegistryError
from evalkit.core.specs import AggregateSpec, MetricSpec
from evalkit.data.coverage import (
    decided_after,
    sequential_baseline_sha256,
    sequential_baseline_values,
)
from evalkit.data.labels import HumanLabels
from evalkit.data.results import RunResult
from evalkit.data.samples import sample_rows
from evalkit.gate.baseline import Baseline
from evalkit.gate.check_verdicts import (
    BaselineComparison,
    CheckResult,
    MetricKind,
    Verdict,
    p_text,
)
from evalkit.gate.checks import CheckError, CheckSpec, row_id
from evalkit.gate.fingerprint import (
    Fingerprint,
    aggregate_definitions,
    case_set_difference,
    fingerprint,
    fingerprint_differences,
)
from evalkit.gate.observed import (
    CheckFailure,
    aggregate_value,
    case_values,
    error_result,
    mean_of,
    require_no_errors,
    resolve_check_metric,
    rests_on,
)
from evalkit.report.formatting import signed


# ---------------------------------------------------------------- statistics
@dataclass(frozen=True)
class _TestOutcome:
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    method: str
    n_resamples: int | None
    n_clusters: int | None = None
    ppi: Mapping[str, Any] | None = None


def _ppi_test(cand: Mapping[str, float], base: Mapping[str, float], metric: str,
              alpha: float, labels: tuple[HumanLabels, HumanLabels] | None
              ) -> _TestOutcome | None:
    """The PPI++ interval of the human difference run minus baseline and its normal
    two-sided p (:func:`evalkit.data.ppi_labels.paired_ppi`), when both runs have
    labels of ``metric``; else None.

    Raises:
        CheckFailure: labels that cannot give an interval (fewer than 2 shared labelled
            cases, every case labelled, a label of a case the run lacks, labels not
            pass/fail whose differences do not vary): the check is an error, never a
            pass on a zero-width interval.
    """
    from evalkit.data.labels import LabelError
    from evalkit.data.ppi_labels import has_labels, paired_ppi

    if labels is None or not all(has_labels(x, metric) for x in labels):
        return None
    try:
        found = paired_ppi(cand, base, labels[0], labels[1], metric, alpha=alpha)
    except (LabelError, ValueError) as exc:
        raise CheckFailure(f"the PPI interval (--ppi) failed: {exc}") from None
    r = found.result
    return _TestOutcome(r.estimate, r.ci_low, r.ci_high, r.p_value(), PPI_METHOD, None,
                        ppi=found.to_dict())


#: ``BaselineComparison.method`` of a check decided by a PPI++ interval.
PPI_METHOD = "ppi++"
#: ``BaselineComparison.method`` of a check of a whole-run aggregate.
AGGREGATE_METHOD = "bootstrap over case ids"


def _per_case_test(
    cand: Mapping[str, float], base: Mapping[str, float], metric: str, alpha: float,
    n_resamples: int, seed: int, value_type: str | None = None,
    clusters: Mapping[str, Hashable] | None = None,
) -> _TestOutcome:
    """:func:`evalkit.stats.paired_test` with its default method on ``{case id: value}``
    maps: run minus baseline, two-sided, interval of confidence ``1 - alpha``; "auto"
    chooses the test from the metric's declared ``value_type``; with ``clusters`` (of
    these cases and perhaps others) the cluster is the test's unit."""
    from evalkit.stats import paired_test

    mine = None if clusters is None else {i: clusters[i] for i in cand if i in clusters}
    r = paired_test(dict(cand), dict(base), metric, alpha=alpha, alternative="two-sided",
                    n_resamples=n_resamples, seed=seed, value_type=value_type,
                    clusters=mine)
    return _TestOutcome(float(r.observed), float(r.ci_low), float(r.ci_high),
                        float(r.p_value), str(r.method), r.n_resamples, r.n_clusters)


def _part(name: str, run: RunResult, rows: Sequence[Any]) -> RunResult:
    """The cases ``rows`` of ``run`` as a run (with their samples, if it has any)."""
    return RunResult(name, list(rows), samples=sample_rows(run, rows) if run.samples
                     else [])


def _aggregate_test(
    spec: AggregateSpec, cand: RunResult, base: RunResult, alpha: float,
    n_resamples: int, seed: int,
) -> _TestOutcome:
    """:func:`evalkit.stats.aggregate_bootstrap`: paired bootstrap over case ids of
    ``spec(run rows) - spec(baseline rows)`` (a drawn case brings all its samples),
    percentile interval of confidence ``1 - alpha``, two-sided p of the centred null."""
    from evalkit.stats import aggregate_bootstrap

    r = aggregate_bootstrap(
        cand, base, spec.fn,
        name=spec.name, alpha=alpha, n_resamples=n_resamples, seed=seed,
    )
    return _TestOutcome(float(r.observed), float(r.ci_low), float(r.ci_high),
                        float(r.p_value), AGGREGATE_METHOD, r.n_resamples)


def baseline_result(
    check: CheckSpec, run: RunResult, baseline: Baseline | None, reg: Registry,
    cov: tuple[int, int], n_resamples: int, seed: int, run_fp: Fingerprint | None,
    clusters: Mapping[str, Hashable] | None = None,
    ppi_labels: tuple[HumanLabels, HumanLabels] | None = None,
) -> CheckResult:
    """One baseline check judged (its verdict placeholder "pass" until :func:`decide`);
    a per-case metric's test takes ``clusters`` as its unit when given (a whole-run
    aggregate's bootstrap resamples cases); with ``ppi_labels`` (the run's labels, the
    baseline's) and labels of the metric in both, the PPI++ interval of the human
    difference and its p decide instead (:func:`_ppi_test`); or an error result naming
    what failed."""
    if baseline is None:
        return error_result(check, cov, "this check compares against a baseline, but none was "
                                  "given (pass --baseline, or baseline= to evaluate_gate)")
    kind: MetricKind | None = None
    try:
        rows = check.select(run.per_query)
        try:
            base_rows = check.select(baseline.run.per_query)
        except CheckError as exc:
            raise CheckFailure(f"in the baseline: {exc}") from None
        require_no_errors(run.per_query, f"run {run.name!r}")
        require_no_errors(baseline.run.per_query, f"baseline {baseline.name!r}")
        res = resolve_check_metric(check, reg, rows,
                                   (run.header or {}, baseline.run.header or {}))
        kind = res.kind
        try:
            higher = reg.polarity(check.metric)
        except RegistryError as exc:
            raise CheckFailure(str(exc)) from None
        recorded_polarity(res.name, run, baseline, reg)
        ids = [row_id(r) for r in rows]
        base_ids = [row_id(r) for r in base_rows]
        if set(ids) != set(base_ids):
            raise CheckFailure(case_set_difference(base_ids, ids))
        current = replace(run_fp or fingerprint(run, aggregates=False),
                          aggregates=aggregate_definitions([check.metric], reg))
        diffs = fingerprint_differences(
            baseline.fingerprint, current,
            metrics=[res.name] if res.kind == "metric" else [],
            aggregates=[res.name] if res.kind == "aggregate" else [],
            baseline_ids=baseline.run.ids(), current_ids=run.ids(), compare_ids=False,
        )
        if diffs:
            raise CheckFailure(
                "the baseline is not comparable with this run: " + "; ".join(diffs)
                + ". Promote a new baseline from a run made with the current definitions"
            )
        if res.kind == "metric":  # an aggregate reads every sample row, not reduced ones
            _require_same_reduction(baseline, run)
        alpha = float(check.alpha if check.alpha is not None else 0.05)
        if res.kind == "aggregate":
            assert isinstance(res.spec, AggregateSpec)
            observed = aggregate_value(res.spec, sample_rows(run, rows), f"run {run.name!r}")
            basis = rests_on(res, sample_rows(run, rows))
            base_value = aggregate_value(res.spec, sample_rows(baseline.run, base_rows),
                                         f"baseline {baseline.name!r}")
            by_id = {row_id(r): r for r in base_rows}
            aligned = [by_id[i] for i in ids]
            t = _aggregate_test(res.spec, _part("run", run, rows),
                                _part("baseline", baseline.run, aligned), alpha, n_resamples,
                                seed)
        else:
            basis = None
            cand = case_values(rows, res.name, f"run {run.name!r}")
            base = case_values(base_rows, res.name, f"baseline {baseline.name!r}")
            observed, base_value = mean_of(cand, res.name), mean_of(base, res.name)
            t = _ppi_test(cand, base, res.name, alpha, ppi_labels) or _per_case_test(
                cand, base, res.name, alpha, n_resamples, seed,
                res.spec.value_type if isinstance(res.spec, MetricSpec) else None,
                clusters=clusters)
    except (CheckError, CheckFailure) as exc:
        return error_result(check, cov, str(exc), kind=kind)
    except (ValueError, TypeError) as exc:
        return error_result(check, cov, f"the comparison failed: {exc}", kind=kind)
    comp = BaselineComparison(
        baseline_value=base_value, difference=t.difference, ci_low=t.ci_low,
        ci_high=t.ci_high, p_value=t.p_value, alpha=alpha, method=t.method,
        n_cases=len(ids), higher_is_better=higher, n_resamples=t.n_resamples,
        n_clusters=t.n_clusters, ppi=t.ppi,
    )
    # verdict decided after Holm; "pass" is a placeholder
    return CheckResult(check, "pass", observed, cov[0], cov[1], "", kind, comp, basis)


def recorded_polarity(name: str, run: RunResult, baseline: Baseline, reg: Registry
                      ) -> list[str]:
    """The warnings of :func:`evalkit.data.provenance.comparison_polarity` for the check
    of ``name`` (canonical) on ``run`` against ``baseline``: the provider or version
    registered now differs from the one that scored a run, the polarity agreeing.

    Raises:
        CheckFailure: the run and the baseline recorded opposite polarities, or the
            definition registered now has the opposite of theirs: a verdict read in the
            current direction would call a regression an improvement.
    """
    from evalkit.data.provenance import PolarityMismatch, comparison_polarity

    runs = [(f"run {run.name!r}", run.header or {}),
            (f"baseline {baseline.name!r}", baseline.run.header or {})]
    try:
        return comparison_polarity(name, runs, reg)[1]
    except PolarityMismatch as exc:
        raise CheckFailure(str(exc)) from None


def polarity_notes(checks: Sequence[CheckSpec], run: RunResult, baseline: Baseline,
                   reg: Registry) -> list[str]:
    """The gate's notes that the definition registered now of a baseline check's metric
    is not the one that scored the run or the baseline, the polarity agreeing (once per
    metric; a disagreement is that check's error: :func:`recorded_polarity`)."""
    notes: list[str] = []
    for check in checks:
        if check.kind != "baseline":
            continue
        try:
            found = recorded_polarity(reg.resolve(check.metric).name, run, baseline, reg)
        except Exception:  # the check itself says what is wrong
            continue
        notes.extend(n for n in found if n not in notes)
    return notes


def _require_same_reduction(baseline: Baseline, run: RunResult) -> None:
    """Raise :class:`CheckFailure` when the baseline's per-case values are its samples
    reduced otherwise than the run's (:func:`evalkit.data.samples.reduction_difference`:
    ``reduce: max`` against ``reduce: mean``, or the max of 3 samples against the max of
    5): incomparable evidence, whatever the test would say."""
    from evalkit.data.samples import reduction_difference

    why = reduction_difference(baseline.run, run)
    if why is not None:
        raise CheckFailure(f"the baseline is not comparable with this run: {why}")


def sequential_result(check: CheckSpec, run: RunResult, baseline: Baseline | None,
                      reg: Registry, cov: tuple[int, int], record: Mapping[str, Any]
                      ) -> CheckResult:
    """A baseline check on a run a sequential rule stopped early
    (``header["sequential"]``, :mod:`evalkit.execute.sequential_run`): the check of the
    sequence's own metric over every case is decided by the sequence (its last
    interval, anytime-valid, excludes 0: regressed or improved; lies inside the margin:
    no change larger than it); any other baseline check is an error, since the cases
    the run holds are the prefix the rule chose for that one metric, and so is a check
    whose ``alpha`` is not the rule's (the interval answers at the rule's level only)."""
    if baseline is None:
        return baseline_result(check, run, baseline, reg, cov, 0, 0, None)
    try:
        name = resolve_check_metric(check, reg, run.per_query,
                                    (run.header or {}, baseline.run.header or {})).name
    except (CheckError, CheckFailure) as exc:
        return error_result(check, cov, str(exc))
    try:
        _require_same_reduction(baseline, run)
    except CheckFailure as exc:
        return error_result(check, cov, str(exc), kind="metric")
    metric = str(record.get("metric"))
    stopped = (f"the run was stopped early by a sequential rule on {metric} after "
               f"{decided_after(record)} cases")
    if name != metric or check.scope is not None:
        what = f"metric {name}" if name != metric else "a scoped check"
        return error_result(check, cov, (
            f"not judged: {stopped}, so its cases are incomplete evidence for {what} (the "
            f"rule chose where to stop for {metric} over every case only); run the other "
            "cases (`evalkit run` without --until-decided) to judge it"), kind="metric")
    other = _other_baseline(record, baseline, metric, stopped)
    if other is not None:
        return error_result(check, cov, other)
    alpha = float(record.get("alpha") or 0.05)
    if check.alpha is not None and not math.isclose(check.alpha, alpha, rel_tol=1e-9):
        # the sequence's interval answers at its own level only: never silently another
        return error_result(check, cov, (
            f"not judged: {stopped} at alpha {alpha:g}, whose anytime-valid interval "
            f"answers at that level only, and this check asks for alpha {check.alpha:g}; "
            f"set the check's alpha to {alpha:g}, stop the run at the check's level "
            "(`UntilDecided(alpha=...)`), or run every case (`evalkit run` without "
            "--until-decided)"), kind="metric")
    low, high = (float(x) for x in record["interval"])
    try:
        higher = reg.polarity(check.metric)
        recorded_polarity(name, run, baseline, reg)
    except RegistryError as exc:
        return error_result(check, cov, str(exc))
    except CheckFailure as exc:
        return error_result(check, cov, str(exc), kind="metric")
    used = int(record.get("cases_used") or 0)
    diff = float(record.get("mean_difference") or 0.0)
    # the means over the cases the run holds (the ones the rule drew), each run's own
    observed = {str(r.query_id): float(r.metrics[name]) for r in run.per_query
                if name in r.metrics and getattr(r, "error", None) is None}
    base_value = mean_of({str(r.query_id): float(r.metrics[name])
                          for r in baseline.run.per_query
                          if name in r.metrics and str(r.query_id) in observed}, name)
    reason = str(record.get("reason"))
    worse = (high < 0) if higher else (low > 0)
    outcome = ("regressed" if worse else "improved") if reason == "differs" else \
        "no significant change"
    comp = BaselineComparison(
        baseline_value=base_value, difference=diff, ci_low=low, ci_high=high,
        p_value=math.nan, alpha=alpha,  # no p-value: the sequence's interval decides
        method=f"sequential: {record.get('method')}", n_cases=used,
        higher_is_better=higher, outcome=outcome)
    result = CheckResult(check, "pass", mean_of(observed, name), cov[0], cov[1], "",
                         "metric", comp)
    if not worse or reason != "differs":
        return result
    msg = (f"{metric} moved {signed(diff)} against the baseline: {stopped}, and its "
           f"anytime-valid interval [{low:+.4f}, {high:+.4f}] excludes 0 "
           f"({'higher' if higher else 'lower'} is better)")
    verdict: Verdict = "fail" if result.blocking else "warn"
    return replace(result, verdict=verdict, message=msg)


def _other_baseline(record: Mapping[str, Any], baseline: Baseline, metric: str,
                    stopped: str) -> str | None:
    """Why the sequence in ``record`` is no evidence against ``baseline``: it decided
    against another baseline (its ``baseline_sha256``, the digest of the values it
    compared with, differs from ``baseline``'s values of ``metric``; a record without
    one names the baseline's path, which must then be ``baseline``'s); else None."""
    recorded = str(record.get("baseline"))
    given = f"{baseline.name!r}" + (f" ({baseline.path})" if baseline.path else "")
    digest = record.get("baseline_sha256")
    if isinstance(digest, str):
        same = digest == sequential_baseline_sha256(
            sequential_baseline_values(baseline.run.per_query, metric))
        why = f"whose {metric} values differ from those the rule compared with"
    else:
        same = baseline.path is not None and (
            str(baseline.path) == recorded
            or Path(baseline.path).resolve() == Path(recorded).resolve())
        why = ("and the run records no digest of its baseline's values, only its path, "
               "which is not this baseline's")
    if same:
        return None
    return (f"not judged: {stopped} against baseline {recorded}, not the baseline given, "
            f"{given}, {why}; the rule's interval is evidence for that comparison only. "
            f"Gate the run with -b {recorded} (the baseline it decided against), or run "
            "every case (`evalkit run` without --until-decided) to compare it with "
            "another baseline")


def decide(result: CheckResult, p_adjusted: float | None) -> CheckResult:
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
