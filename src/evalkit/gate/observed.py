"""What a check observes on a run's rows: the metric it names, the values of the cases
it covers, their mean or the aggregate over them, and why a value cannot be used.

A value that cannot be used (a metric that failed or is missing on a covered case, NaN, an
errored case anywhere in the run, a count, an unknown name) raises :class:`CheckFailure`,
which the gate turns into an ``error`` verdict: an error is never a pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.core.registry import Registry, RegistryError
from evalkit.core.specs import AggregateSpec, MetricSpec
from evalkit.gate.check_verdicts import (
    CheckResult,
    MetricKind,
)
from evalkit.gate.checks import CheckSpec, row_error, row_id
from evalkit.plugins.failures import PLUGIN_FAILURES
from evalkit.stats.numeric import finite_number, finite_real


@dataclass(frozen=True)
class Resolved:
    name: str
    kind: MetricKind
    spec: MetricSpec | AggregateSpec | None


class CheckFailure(Exception):
    """Internal: the check cannot be judged; becomes an error verdict."""


def _row_metrics(rows: Sequence[Any]) -> list[str]:
    return sorted({str(k) for r in rows for k in getattr(r, "metrics", {})})


def _did_you_mean(name: str, rows: Sequence[Any]) -> str:
    """``"; did you mean 'x'?"`` naming the metrics of ``rows`` that ``name`` looks like a
    misspelling of (:func:`evalkit.core.metric_lookup.suggestion`), or ``""``."""
    from evalkit.core.metric_lookup import suggestion

    return suggestion(name, _row_metrics(rows))


def resolve_check_metric(check: CheckSpec, reg: Registry, rows: Sequence[Any],
                         headers: Sequence[Mapping[str, Any]] = ()) -> Resolved:
    """The metric or aggregate of ``check``; ``headers`` (the run's, the baseline's) name
    who scored a metric that is not registered now
    (:func:`evalkit.data.provenance.unregistered_metric`).

    Raises:
        CheckFailure: the check cannot be judged (the message says why).
    """
    try:
        spec = reg.resolve(check.metric)
    except RegistryError as exc:
        on_rows = any(check.metric in getattr(r, "metrics", {}) for r in rows)
        if check.kind == "threshold" and on_rows:
            # not registered in this process, but the run carries the values
            return Resolved(check.metric, "metric", None)
        from evalkit.data.provenance import unregistered_metric

        why = unregistered_metric(check.metric, headers, reg) if on_rows else None
        if why is not None:
            raise CheckFailure(f"{why}; a baseline check needs its polarity (which "
                               "direction is worse)") from None
        if on_rows:  # a baseline check needs the definition, not only the values
            raise CheckFailure(
                f"metric {check.metric!r} is on the run's rows but not registered in this "
                "process, and a baseline check needs its polarity (which direction is "
                "worse). A metric a plugin's config section registers (in its apply) is "
                "registered for the gate when the gate reads that eval config: pass it "
                "with --config (in Python: evalkit.execute.run_checks.apply_config_sections "
                "before evaluate_gate), or give the "
                "section a restore(header) that registers it again from the run's "
                "header (docs/plugins.md)") from None
        hint = _did_you_mean(check.metric, rows)
        if hint:  # a misspelling of a metric the run holds (a project's own, say)
            raise CheckFailure(f"unknown metric {check.metric!r}{hint} The run's rows have: "
                               f"{', '.join(_row_metrics(rows))}") from None
        raise CheckFailure(str(exc)) from None
    if isinstance(spec, AggregateSpec):
        return Resolved(spec.name, "aggregate", spec)
    if spec.kind == "count":
        raise CheckFailure(
            f"{check.metric!r} is a per-query count, reported but never gated; gate a "
            "metric instead"
        )
    name = spec.name
    if not any(name in getattr(r, "metrics", {}) for r in rows) and any(
        check.metric in getattr(r, "metrics", {}) for r in rows
    ):
        name = check.metric
    return Resolved(name, "metric", spec)


def case_values(rows: Sequence[Any], metric: str, run_name: str) -> dict[str, float]:
    """``{case id: value}``; raises CheckFailure on a failed, missing or NaN value."""
    failed = [(row_id(r), r.metric_errors[metric]) for r in rows
              if metric not in r.metrics and metric in getattr(r, "metric_errors", {})]
    if failed:
        raise CheckFailure(
            f"metric {metric!r} failed in {run_name} on {len(failed)} of {len(rows)} "
            f"case(s) this check covers: {_cases_and_why(failed, 10)}. The check is not "
            "judged without them; the other metrics of these cases keep their values"
        )
    missing = [row_id(r) for r in rows if metric not in r.metrics]
    if missing:
        have = _row_metrics(rows)
        shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
        raise CheckFailure(
            f"metric {metric!r} is missing from {run_name} on {len(missing)} of {len(rows)} "
            f"case(s) ({shown}); the rows have: {', '.join(have) or 'no metrics'}"
            + (_did_you_mean(metric, rows) if len(missing) == len(rows) else "")
        )
    out = {row_id(r): float(r.metrics[metric]) for r in rows}
    bad = [i for i, v in out.items() if not math.isfinite(v)]
    if bad:
        shown = ", ".join(f"{i} ({out[i]})" for i in bad[:10])
        raise CheckFailure(
            f"metric {metric!r} is not a finite number in {run_name} on {len(bad)} case(s): "
            f"{shown}"
        )
    return out


def check_coverage(check: CheckSpec, rows: Sequence[Any], reg: Registry,
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
        res = resolve_check_metric(check, reg, usable)
    except PLUGIN_FAILURES:  # unknown, a count, a failing plugin: the check says why
        res = Resolved(check.metric, "metric", None)
    if isinstance(res.spec, AggregateSpec):
        try:
            return (len(usable) if usable and math.isfinite(float(res.spec.fn(usable)))
                    else 0), n
        except PLUGIN_FAILURES:
            return 0, n
    k = 0
    for r in usable:
        value = getattr(r, "metrics", {}).get(res.name)
        if finite_real(value) is not None:
            k += 1
    return k, n


def require_no_errors(rows: Sequence[Any], label: str) -> None:
    """Raise CheckFailure when any row of the run errored, covered by the check or not."""
    errored = [(row_id(r), str(row_error(r))) for r in rows if row_error(r) is not None]
    if errored:
        raise CheckFailure(
            f"{label} has {len(errored)} errored case(s) outside this check's cases: "
            f"{_cases_and_why(errored, 5)}. A run with errored cases is incomplete, and no "
            "check passes on an incomplete run"
        )


def _cases_and_why(cases: Sequence[tuple[str, str]], limit: int) -> str:
    """``a (why); b (why); and 3 more``."""
    shown = "; ".join(f"{i} ({e})" for i, e in cases[:limit])
    return shown + (f"; and {len(cases) - limit} more" if len(cases) > limit else "")


def mean_of(values: Mapping[str, float], name: str) -> float:
    """The mean of metric ``name``'s per-case values, or for a measure whose values are
    logs (gm_map) ``exp`` of it, as every mean is shown (:mod:`evalkit.data.summaries`)."""
    from evalkit.data.summaries import mean_value

    return mean_value(list(values.values()), name)


def aggregate_value(spec: AggregateSpec, rows: Sequence[Any], run_name: str) -> float:
    """``spec.fn(rows)`` as a finite float.

    Raises:
        CheckFailure: the aggregate raised (its error, or for one that reads what a
            retrieval run's rows lack, which aggregates apply to such a run) or is not
            finite.
    """
    try:
        returned = spec.fn(list(rows))
    except AttributeError as exc:
        from evalkit.data.rows import QueryResult

        if not isinstance(exc.obj, QueryResult):
            raise CheckFailure(f"aggregate {spec.name!r} could not be computed on "
                               f"{run_name}: {type(exc).__name__}: {exc}") from None
        from evalkit.plugins.call_errors import provider_text

        raise CheckFailure(
            f"aggregate {spec.name!r} (of {provider_text(spec, 'metric')}) cannot be "
            f"computed on {run_name}: it reads `row.{exc.name}`, which only the rows of a "
            "target's run have, and this is a retrieval run scored from rankings (a TREC "
            "run file, `evalkit eval`), whose rows hold only their ranked ids and metric "
            "values. On such a "
            "run use per-query metrics or the aggregates over ranked ids "
            "(max_item_share, max_item_share@k, entropy); aggregates over a target's "
            "responses (latency, cost, tokens) apply to runs made by `evalkit run`"
        ) from None
    except PLUGIN_FAILURES as exc:
        raise CheckFailure(
            f"aggregate {spec.name!r} could not be computed on {run_name}: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    try:
        return finite_number(returned, f"aggregate {spec.name!r} on {run_name}")
    except ValueError as exc:
        raise CheckFailure(str(exc)) from None


def rests_on(res: Resolved, rows: Sequence[Any]) -> tuple[int, str] | None:
    """``(count, word)`` of the cases an aggregate's value rests on when it says
    (:attr:`AggregateSpec.rests_on`: the labelled cases of an agreement aggregate), for
    the check's coverage; ``None`` for anything else, or when counting fails (the value
    itself was computed, so the count only words the coverage)."""
    spec = res.spec
    if res.kind != "aggregate" or not isinstance(spec, AggregateSpec) or \
            spec.rests_on is None:
        return None
    try:
        count = int(spec.rests_on(list(rows), None))
    except PLUGIN_FAILURES:
        return None
    return count, spec.rests_on_word or "of them"


def observed_value(res: Resolved, rows: Sequence[Any], run_name: str) -> float:
    if not rows:
        raise CheckFailure(f"{run_name} has no case this check covers")
    if res.kind == "aggregate":
        assert isinstance(res.spec, AggregateSpec)
        return aggregate_value(res.spec, rows, run_name)
    return mean_of(case_values(rows, res.name, run_name), res.name)


def error_result(check: CheckSpec, cov: tuple[int, int], message: str,
           observed: float | None = None, kind: MetricKind | None = None) -> CheckResult:
    return CheckResult(check, "error", observed, cov[0], cov[1], message, kind)
