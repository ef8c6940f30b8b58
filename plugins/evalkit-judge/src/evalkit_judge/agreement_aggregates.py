"""Aggregates of a metric that hold a judge to human labels, so a gate can set a floor.

``krippendorff_alpha(correctness) >= 0.67`` in a gate's checks: each aggregate here is
registered *of a metric* (:attr:`evalkit.core.specs.AggregateSpec.of_metric`) and
computed over the run's cases that a human labelled for that metric, pairing the
judge's per-case value (a case's mean over its samples) with the label
(:func:`evalkit.data.ppi_labels.metric_labels`):

* ``krippendorff_alpha`` (interval), ``krippendorff_alpha_ordinal``,
  ``krippendorff_alpha_nominal``; ``cohen_kappa`` (unweighted), ``cohen_kappa_linear``,
  ``cohen_kappa_quadratic``; ``spearman_rho`` — higher is better (formulas and sources:
  :mod:`evalkit_judge.agreement_stats`);
* ``judge_abs_bias``: ``|mean(judge - human)|`` in the metric's unit, lower is better;
* ``labelled_cases``: the number of labelled cases with a judge value, higher is better.

Each says the cases it rests on (:attr:`evalkit.core.specs.AggregateSpec.rests_on`,
:func:`labelled_cases`), so a gate's check shows ``10 labelled of 20 cases``.

The labels are those in effect (:func:`evalkit.data.labels.labels_in_effect`): the gate
sets them from the checks file's ``labels:`` (or ``evalkit gate --labels``), else from
the golden file the run's header names when its cases carry ``labels``. Without labels,
with the metric failed on a labelled case of the rows
(:func:`evalkit_judge.agreement.failed_cases`: they are named; the statistic over the
others would leave out the cases where the judge failed),
fewer than two labelled cases, or a statistic that is undefined (NaN: no variation),
the aggregate raises :class:`~evalkit.execute.aggregates.AggregateError`, which a gate
reports as an error, never a pass.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from evalkit.core.specs import AggregateSpec
from evalkit.execute.aggregates import AggregateError, checked_rows

#: name -> (statistic, its argument, higher is better, description); the statistic is a
#: function of :mod:`evalkit_judge.agreement_stats` (imported when an aggregate is computed, so
#: that registering these imports no numpy)
_STATS: dict[str, tuple[str, str | None, bool, str]] = {
    "krippendorff_alpha": ("alpha", "interval", True,
                           "Krippendorff's alpha (interval) of judge and human labels"),
    "krippendorff_alpha_ordinal": ("alpha", "ordinal", True, "Krippendorff's alpha (ordinal)"),
    "krippendorff_alpha_nominal": ("alpha", "nominal", True, "Krippendorff's alpha (nominal)"),
    "cohen_kappa": ("kappa", "none", True,
                    "Cohen's kappa (unweighted) of judge and human labels"),
    "cohen_kappa_linear": ("kappa", "linear", True, "Cohen's kappa, linear weights"),
    "cohen_kappa_quadratic": ("kappa", "quadratic", True, "Cohen's kappa, quadratic weights"),
    "spearman_rho": ("rho", None, True, "Spearman's rho of judge and human labels"),
    "judge_abs_bias": ("bias", None, False, "|mean judge - human| over the labelled cases"),
    "labelled_cases": ("count", None, True, "labelled cases with a judge value"),
}


def _statistic(kind: str, arg: str | None, judge: list[float], human: list[float]) -> float:
    from evalkit_judge import agreement_stats as ag

    if kind == "alpha":
        return ag.krippendorff_alpha([judge, human], arg)  # type: ignore[arg-type]
    if kind == "kappa":
        return ag.cohen_kappa(judge, human, arg)  # type: ignore[arg-type]
    if kind == "rho":
        return ag.spearman_rho(judge, human)
    if kind == "bias":
        return abs(ag.mean_bias(judge, human).mean)
    return float(len(judge))


def undefined_cause(judge: Sequence[float], human: Sequence[float]) -> str:
    """Why an agreement statistic of these values is undefined (NaN): which side has
    one value only."""
    same_judge, same_human = len(set(judge)) <= 1, len(set(human)) <= 1
    if same_judge and same_human:
        return "no variation: the judge's values and the labels are all one value"
    if same_judge:
        return "no variation: the judge gave every labelled case the same value"
    if same_human:
        return "no variation: every label is the same value"
    return "no variation between the categories the statistic compares"


def _pairs(rows: Sequence[Any], name: str, metric: str) -> tuple[list[float], list[float]]:
    from evalkit.data.labels import active_labels
    from evalkit_judge.agreement import case_means, failed_cases, failed_text

    labels = active_labels()
    if labels is None:
        raise AggregateError(
            f"{name}: no human labels: name a labels file in the checks (labels: FILE), "
            "pass evalkit gate --labels FILE, or give the golden cases labels:")
    values = case_means(checked_rows(rows, name), metric)
    own = labels.for_metric(metric)
    failed = failed_cases(rows, metric, own)
    if failed:
        raise AggregateError(
            f"{name}: metric {metric!r} failed on {len(failed)} labelled case(s): "
            f"{failed_text(failed)}; the agreement is not computed without them (they are the "
            "cases where the judge failed). Rescore the run once the judge is fixed "
            "(evalkit rescore)")
    if not values:
        raise AggregateError(f"{name}: the run has no {metric!r} values")
    ids = [c for c in values if c in own]
    if len(ids) < 2:
        raise AggregateError(f"{name}: {len(ids)} case(s) of the run are labelled for "
                             f"{metric!r} ({labels.source or 'labels'}); it needs 2 or more")
    return [values[c] for c in ids], [own[c] for c in ids]


def labelled_cases(rows: Sequence[Any], metric: str | None) -> int:
    """The labelled cases of the run with a ``metric`` value: those every aggregate here
    rests on (a gate's check says ``10 labelled of 20 cases``).

    Raises:
        AggregateError: as the aggregates do (no labels, no values, fewer than two).
    """
    if metric is None:
        raise AggregateError("an agreement aggregate rests on the cases labelled for its "
                             "metric: write it as NAME(METRIC)")
    return len(_pairs(rows, f"labelled_cases(metric={metric})", metric)[0])


def _bound(base: str, kind: str, arg: str | None
           ) -> Callable[[str], Callable[[Sequence[Any]], float]]:
    def of_metric(metric: str) -> Callable[[Sequence[Any]], float]:
        name = f"{base}(metric={metric})"

        def fn(rows: Sequence[Any]) -> float:
            from evalkit_judge.agreement_stats import AgreementError

            judge, human = _pairs(rows, name, metric)
            try:
                value = float(_statistic(kind, arg, judge, human))
            except AgreementError as exc:
                raise AggregateError(f"{name}: {exc}") from None
            if math.isnan(value):
                raise AggregateError(f"{name}: undefined on these labels "
                                     f"({undefined_cause(judge, human)})")
            return value

        fn.__name__ = base
        return fn

    return of_metric


def _unbound(base: str) -> Callable[[Sequence[Any]], float]:
    def fn(rows: Sequence[Any]) -> float:
        raise AggregateError(f"{base} is an aggregate of a metric: write {base}(METRIC), "
                             f"e.g. {base}(correctness)")

    fn.__name__ = base
    return fn


def agreement_aggregates() -> list[AggregateSpec]:
    """The records the kernel's built-in plugin registers (module docstring)."""
    return [AggregateSpec(name, _unbound(name), hib, f"{text}; write {name}(METRIC)",
                          of_metric=_bound(name, kind, arg), rests_on=labelled_cases,
                          rests_on_word="labelled")
            for name, (kind, arg, hib, text) in _STATS.items()]


__all__ = ["agreement_aggregates", "labelled_cases"]
