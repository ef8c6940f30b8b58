"""Score (response, case) pairs with registered metrics: the one path every runner uses.

``run()``, ``evaluate_run()`` and the target runner all call :func:`score_cases`, so a
metric registered once scores every kind of run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalkit.core.registry import Registry, RegistryError
from evalkit.core.specs import AggregateSpec, MetricSpec
from evalkit.data.judged_queries import case_ids
from evalkit.data.ranked_ids import RankedIds
from evalkit.data.results import QueryResult
from evalkit.execute.case_needs import MissingCaseFieldsError as MissingCaseFieldsError
from evalkit.execute.case_needs import UnansweredCasesError as UnansweredCasesError
from evalkit.execute.case_needs import UnjudgedCasesError as UnjudgedCasesError
from evalkit.execute.case_needs import require_case_fields
from evalkit.execute.spending import SpendingLimitReached
from evalkit.plugins.default import default_registry
from evalkit.stats.declared_values import declared_range, value_problem
from evalkit.stats.numeric import real_number

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse


class MetricError(ValueError):
    """A metric could not be computed for a case (the message names metric and case)."""


class RunAborted(BaseException):
    """Raised by a metric when no case can be scored, for a reason that is not the case's
    (an LLM judge without credentials, or whose credentials the API refused).

    It derives from :class:`BaseException`, as ``KeyboardInterrupt`` does, so that the
    per-case ``except Exception`` handlers (the metric's own, and :func:`score_cases`'s,
    which turn a failure into that case's :class:`MetricError`) let it through instead of
    recording the same error on every case. :func:`score_cases` raises :attr:`error` in
    its place, once: an ordinary exception that says what to fix. The target runner then
    stops (no new case is started, the rows already written are kept, so a resume
    continues once the cause is fixed) and
    :func:`~evalkit.execute.target_runner.evaluate` raises it.

    Attributes:
        error: the exception to report (its message names the metric and the remedy).
    """

    def __init__(self, error: Exception) -> None:
        super().__init__(str(error))
        self.error = error


def name_list(names: str | Sequence[str]) -> list[str]:
    """The names a caller gave: a list or tuple of names, or one name on its own (``"ap"``
    is ``["ap"]``, never ``["a", "p"]``)."""
    return [names] if isinstance(names, str) else list(names)


def require_metrics(names: str | Sequence[str]) -> None:
    """Refuse an empty metric list where scoring is the point (``evaluate_run``, ``run``);
    a target run may be measured by aggregates alone."""
    if not name_list(names):
        raise ValueError("no metric given; name one or more, e.g. ['ap', 'ndcg@10']")


def resolve_metrics(
    names: str | Sequence[str], registry: Registry | None = None
) -> list[MetricSpec]:
    """Resolve spec strings to per-case metric specs, keeping order and dropping repeats.
    ``names`` is a list of names, or a single name.

    Raises:
        RegistryError: an unknown or blocked name, or an aggregate where a per-case metric
            is needed.
    """
    reg = registry or default_registry()
    out: list[MetricSpec] = []
    seen: set[str] = set()
    for name in name_list(names):
        spec = reg.resolve(name)
        if isinstance(spec, AggregateSpec):
            raise RegistryError(
                f"{name!r} is a whole-run aggregate, not a per-case metric; "
                "pass it as an aggregate"
            )
        if spec.name not in seen:
            seen.add(spec.name)
            out.append(spec)
    return out


def resolve_aggregates(names: str | Sequence[str]) -> list[AggregateSpec]:
    """Resolve aggregate names (a list, or a single name), keeping order and dropping
    repeats.

    Raises:
        RegistryError: unknown name, or a per-case metric where an aggregate is needed.
    """
    reg = default_registry()
    out: list[AggregateSpec] = []
    for n in name_list(names):
        spec = reg.resolve(n)
        if not isinstance(spec, AggregateSpec):
            raise RegistryError(
                f"{n!r} is a per-case metric, not a whole-run aggregate; pass it as a metric"
            )
        if spec not in out:
            out.append(spec)
    return out


def score_cases(
    responses: Sequence[TargetResponse],
    cases: Sequence[GoldenCase],
    specs: Sequence[MetricSpec],
) -> list[dict[str, float]]:
    """One ``{metric name: value}`` per case, in input order.

    Metrics with the same ``prepare`` function share its prepared state; others are
    called per case. Count-kind specs are included under their names too.

    Raises:
        MissingCaseFieldsError: a case lacks a field a metric needs (``MetricSpec.needs``;
            :func:`~evalkit.execute.case_needs.require_case_fields`), before any scoring.
        MetricError: a metric raised or returned a non-finite value (names the case).
        Exception: the :attr:`RunAborted.error` of a metric that raised
            :class:`RunAborted` (no case can be scored; not a case's error).
    """
    columns = score_columns(responses, cases, specs)
    if not columns:
        return [{} for _ in range(len(cases))]
    names = list(columns)
    return [dict(zip(names, row, strict=True)) for row in zip(*columns.values(), strict=True)]


def score_columns(
    responses: Sequence[TargetResponse],
    cases: Sequence[GoldenCase],
    specs: Sequence[MetricSpec],
) -> dict[str, list[float]]:
    """As :func:`score_cases`, by metric: ``{metric name: one value per case}`` (the
    form rows are built from without a Python step per value).

    Raises:
        MissingCaseFieldsError, MetricError, Exception: as :func:`score_cases`.
    """
    if len(responses) != len(cases):
        raise ValueError("responses and cases must have the same length")
    require_case_fields(specs, cases)  # every batch path: run(), evaluate_run(), rescore
    try:
        return _score(responses, cases, specs)
    except RunAborted as exc:
        raise exc.error from exc


def _score(
    responses: Sequence[TargetResponse],
    cases: Sequence[GoldenCase],
    specs: Sequence[MetricSpec],
) -> dict[str, list[float]]:
    columns: dict[str, list[float]] = {}
    prepared: dict[int, Any] = {}
    for spec in specs:
        if spec.prepare is not None and spec.batch is not None:
            key = id(spec.prepare)
            if key not in prepared:
                prepared[key] = spec.prepare(responses, cases)
            values = list(spec.batch(prepared[key]))
            if len(values) != len(cases):
                raise MetricError(f"metric {spec.name!r} returned {len(values)} values for "
                                  f"{len(cases)} cases")
            # checked in bulk; a case is built only to report its error
            span = declared_range(spec)
            if set(map(type, values)) - {float} or not all(map(math.isfinite, values)) \
                    or (span is not None and not all(span[0] <= v <= span[1] for v in values)) \
                    or (spec.value_type == "binary" and not all(v in (0.0, 1.0)
                                                                for v in values)):
                # each value checked on its own (value_problem allows rounding's slack)
                values = [_check(spec, qid, v) for qid, v in zip(case_ids(cases), values,
                                                                  strict=True)]
            columns[spec.name] = values
        else:
            columns[spec.name] = [_check(spec, case.id, _call_fn(spec, resp, case))
                                  for resp, case in zip(responses, cases, strict=True)]
    return columns


def score_case(
    response: TargetResponse, case: GoldenCase, specs: Sequence[MetricSpec]
) -> tuple[dict[str, float], dict[str, str]]:
    """Score one case with each metric on its own: ``(values, errors)``, where a metric
    that fails leaves the others' values and ``errors[name]`` holds its message.

    Metrics with the same ``prepare`` share its state; a ``prepare`` that fails fails
    every metric that shares it. The target runner scores with this function, so a judge
    call that fails on a case costs that case its judge metric only.

    Raises:
        Exception: the :attr:`RunAborted.error` of a metric that raised
            :class:`RunAborted`, or an unexpected error of a vectorised metric (a bug).
        SpendingLimitReached: a paid metric's spending limit (the run stops).
    """
    values, errors, stop = score_case_until_stop(response, case, specs)
    if stop is not None:
        raise stop
    return values, errors


def score_case_until_stop(
    response: TargetResponse, case: GoldenCase, specs: Sequence[MetricSpec]
) -> tuple[dict[str, float], dict[str, str], BaseException | None]:
    """As :func:`score_case`, but a stop of the whole run raised by a metric (its
    :class:`RunAborted`, whose :attr:`~RunAborted.error` is returned, or a
    :class:`~evalkit.execute.spending.SpendingLimitReached`) is returned as the third
    item instead of raised, after every metric was tried: the metrics it stopped are
    that case's errors ("not graded: ..."), the others keep their values, so that the
    row of a target call already made can be written before the run stops (and a
    resume scores it again without calling the target).

    Raises:
        Exception: an unexpected error of a vectorised metric (a bug).
    """
    values: dict[str, float] = {}
    errors: dict[str, str] = {}
    prepared: dict[int, Any] = {}
    broken: dict[int, str] = {}
    stop: BaseException | None = None
    for spec in specs:
        try:
            if spec.prepare is not None and spec.batch is not None:
                key = id(spec.prepare)
                if key in broken:
                    errors[spec.name] = broken[key]
                    continue
                if key not in prepared:
                    try:
                        prepared[key] = spec.prepare([response], [case])
                    except MetricError as exc:
                        broken[key] = errors[spec.name] = str(exc)
                        continue
                    except SystemExit as exc:  # a sys.exit(): that case's failure
                        broken[key] = errors[spec.name] = _failed(spec, case, exc)
                        continue
                value = spec.batch(prepared[key])[0]
            else:
                value = _call_fn(spec, response, case)
            values[spec.name] = _check(spec, case.id, value)
        except MetricError as exc:
            errors[spec.name] = str(exc)
        except SystemExit as exc:  # a sys.exit() in a vectorised metric
            errors[spec.name] = _failed(spec, case, exc)
        except (RunAborted, SpendingLimitReached) as exc:
            found: BaseException = exc.error if isinstance(exc, RunAborted) else exc
            if isinstance(exc, RunAborted) and found.__cause__ is None:
                found.__cause__ = exc
            stop = stop or found
            errors[spec.name] = (f"metric {spec.name!r} not graded on case {case.id!r}: the "
                                 f"run stopped ({exc}); --resume grades it again")
    return values, errors, stop


def _call_fn(spec: MetricSpec, response: TargetResponse, case: GoldenCase) -> Any:
    """``spec.fn(response, case)``; an exception becomes the case's :class:`MetricError`
    (a :class:`RunAborted`, a ``BaseException``, passes through)."""
    try:
        return spec.fn(response, case)
    except SystemExit as exc:  # a sys.exit() in a metric fails its case too
        raise MetricError(_failed(spec, case, exc)) from exc
    except Exception as exc:
        raise MetricError(f"metric {spec.name!r} failed on case {case.id!r}: {exc}") from exc


def _failed(spec: MetricSpec, case: GoldenCase, exc: SystemExit) -> str:
    """The case's metric error for a metric that called ``sys.exit()``."""
    from evalkit.io.redaction import error_text

    return f"metric {spec.name!r} failed on case {case.id!r}: {error_text(exc)}"


def _check(spec: MetricSpec, case_id: str, value: Any) -> float:
    """``value`` as the case's score: a real number (:func:`evalkit.stats.numeric.real_number`,
    the rule the conformance suite applies: no ``str``, no ``bool``) that is finite and
    what the metric declares (:func:`evalkit.stats.declared_values.value_problem`: inside
    its ``bounds``, 0 or 1 for ``"binary"``); else that case's :class:`MetricError`
    naming the metric, its provider, the case and the value."""
    try:
        v = real_number(value, f"metric {spec.name!r} on case {case_id!r}: its value")
    except ValueError as exc:
        raise MetricError(str(exc)) from None
    if not math.isfinite(v):
        raise MetricError(f"metric {spec.name!r} returned {v} for case {case_id!r}")
    problem = value_problem(spec, v)
    if problem is not None:
        raise MetricError(
            f"metric {spec.name!r}{_provided_by(spec)} returned {v!r} for case {case_id!r}: "
            f"{problem}; fix the metric, or its declaration")
    return v


def _provided_by(spec: MetricSpec) -> str:
    """`` (provided by evalkit-mine 0.1.0)``, the plugin or module that registered
    ``spec`` in the default registry, or ``""`` when it is not registered there."""
    try:
        return f" (provided by {default_registry().provider_of(spec.name)})"
    except RegistryError:
        return ""


def registered_counts(registry: Registry | None = None) -> list[MetricSpec]:
    """Every registered count-kind spec (num_rel, num_ret, num_rel_ret, ...)."""
    reg = registry or default_registry()
    return [
        e.spec for _, _, e in reg.entries("metric")
        if isinstance(e.spec, MetricSpec) and e.spec.kind == "count"
    ]


def score_rankings(
    responses: Sequence[TargetResponse],
    cases: Sequence[GoldenCase],
    specs: Sequence[MetricSpec],
) -> list[QueryResult]:
    """One :class:`~evalkit.data.results.QueryResult` per ranked case: ``specs`` on
    ``metrics`` and every registered count with ``always`` set on ``counts`` (a count that
    was asked for explicitly is kept on ``counts`` too, never on ``metrics``; integral
    values as integers, a residual such as rbp_resid as a float).

    Raises:
        MetricError: as :func:`score_cases`.
    """
    counts = [c for c in registered_counts() if c.always]
    count_names = {c.name for c in counts} | {s.name for s in specs if s.kind == "count"}
    wanted = [*specs, *(c for c in counts if c.name not in {s.name for s in specs})]
    columns = score_columns(responses, cases, wanted)
    metric_names = [k for k in columns if k not in count_names]
    count_columns = {k: [int(x) if x.is_integer() else x for x in v]
                     for k, v in columns.items() if k in count_names}
    n = len(cases)
    metric_rows = (zip(*(columns[k] for k in metric_names), strict=True) if metric_names
                   else [()] * n)
    count_rows = zip(*count_columns.values(), strict=True) if count_columns else [()] * n
    return [
        QueryResult(
            query_id=qid, retrieved=_kept(r.ranked_ids),
            metrics=dict(zip(metric_names, m, strict=True)),
            counts=dict(zip(count_columns, c, strict=True)),
        )
        for qid, r, m, c in zip(case_ids(cases), responses, metric_rows, count_rows,
                                strict=True)
    ]


def _kept(ids: Sequence[str]) -> Sequence[str]:
    """The ids a row keeps: a lazy :class:`~evalkit.data.ranked_ids.RankedIds` view as it is
    (its strings are made only if read), anything else as a list of ``str``."""
    return ids if isinstance(ids, RankedIds) else [str(x) for x in ids]
