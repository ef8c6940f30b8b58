"""How far a run's judge agrees with human labels, and the human mean it implies.

:func:`judge_agreement` pairs a run's per-case values of each labelled metric (with
repeated samples, a case's mean over its samples) with the human labels of the same
cases (:func:`evalkit.data.ppi_labels.metric_labels`), and gives per metric the agreement
table of :mod:`evalkit_judge.agreement_stats` and the PPI++ mean of
:mod:`evalkit.stats.ppi` (the judge's values on the unlabelled cases as predictions).
``evalkit agreement`` prints it (:mod:`evalkit_judge.agreement_cmd`); :func:`case_means`
is the per-case mean the agreement aggregates (:mod:`evalkit_judge.agreement_aggregates`)
pair with the labels.
"""

from __future__ import annotations

import math
from collections.abc import Container, Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from evalkit.data.labels import HumanLabels, LabelError, off_scale
from evalkit.data.ppi_labels import metric_labels
from evalkit.stats.ppi import (
    DegenerateLabelsError,
    LabelPlan,
    PPIResult,
    labels_needed,
    ppi_mean,
)
from evalkit_judge.agreement_stats import AgreementTable, agreement_table


def case_means(rows: Sequence[Any], metric: str) -> dict[str, float]:
    """``{case id: mean of metric}`` over rows (several sample rows of a case averaged),
    leaving out rows without the metric."""
    sums: dict[str, list[float]] = {}
    for r in rows:
        value = getattr(r, "metrics", {}).get(metric)
        if value is not None:
            sums.setdefault(str(r.query_id), []).append(float(value))
    return {cid: math.fsum(v) / len(v) for cid, v in sums.items()}


def failed_cases(rows: Sequence[Any], metric: str, among: Container[str]
                 ) -> dict[str, str]:
    """``{case id: why}`` of the cases in ``among`` (the labelled ones) with a row of
    ``rows`` that holds no ``metric`` value (with repeated samples, any sample's): the
    metric's error on that case (``metric_errors``), the target's failed call, or
    "no value"; in row order."""
    out: dict[str, str] = {}
    for r in rows:
        cid = str(r.query_id)
        if cid in among and cid not in out and getattr(r, "metrics", {}).get(metric) is None:
            why = (getattr(r, "metric_errors", None) or {}).get(metric) or getattr(
                r, "error", None) or "no value"
            out[cid] = str(why)
    return out


def failed_text(failed: dict[str, str], limit: int = 10) -> str:
    """``q00, q06 and 4 more (the first: why)`` of :func:`failed_cases`' answer."""
    ids = list(failed)
    more = len(ids) - limit
    first = next(iter(failed.values()), "")
    return (", ".join(ids[:limit]) + (f" and {more} more" if more > 0 else "")
            + (f" (the first: {first})" if first else ""))


@dataclass(frozen=True)
class MetricAgreement:
    """Agreement and the PPI++ mean of one labelled metric.

    Attributes:
        table: the agreement statistics (:class:`~evalkit_judge.agreement_stats.AgreementTable`).
        ppi: the PPI++ estimate of the human mean, or ``None`` (see ``ppi_note``).
        ppi_note: why there is no PPI interval (every case labelled, fewer than 2
            labels, labels that do not vary), or why the interval is approximate
            (:attr:`~evalkit.stats.ppi.PPIResult.note`), else ``None``.
        plan: with ``judge_agreement(..., plan_width=W)``, how many human labels a
            PPI++ interval of width ``W`` needs, these labels as the pilot
            (:func:`evalkit.stats.ppi.labels_needed`); else ``None``.
        failed: the labelled cases the metric failed on (:func:`failed_cases`), left out
            of the table, the PPI++ mean and the plan, in row order.
        failed_unlabelled: the unlabelled cases it failed on, left out of the PPI++ mean.
    """

    table: AgreementTable
    ppi: PPIResult | None
    ppi_note: str | None = None
    plan: LabelPlan | None = None
    failed: tuple[str, ...] = ()
    failed_unlabelled: int = 0
    failed_why: str = ""
    scale_note: str | None = None

    @property
    def warning(self) -> str | None:
        """What the metric's failures leave out, naming the labelled cases, and labels
        off the judge's declared scale (:attr:`scale_note`); None without either."""
        if not self.failed and not self.failed_unlabelled:
            return self.scale_note
        t = self.table
        parts = [self.scale_note] if self.scale_note else []
        if self.failed:
            parts.append(f"metric {t.metric!r} failed on {len(self.failed)} labelled "
                         f"case(s): {self.failed_why}; the agreement is over the {t.n} "
                         "labelled cases it scored, without those where the judge failed "
                         "(a gate's agreement check on this run is an error)")
        if self.failed_unlabelled:
            parts.append(f"metric {t.metric!r} failed on {self.failed_unlabelled} "
                         "unlabelled case(s), left out of the PPI++ mean")
        return "; ".join(parts) + ". Rescore the run once the judge is fixed (evalkit rescore)"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the table's fields, ``ppi``, ``ppi_note``, ``failed`` (the
        labelled cases the metric failed on), ``failed_unlabelled``, ``warning`` and,
        when planned, ``plan`` (:class:`~evalkit.stats.ppi.LabelPlan`'s fields)."""
        return {**self.table.to_dict(),
                "ppi": None if self.ppi is None else self.ppi.to_dict(),
                "ppi_note": self.ppi_note, "failed": list(self.failed),
                "failed_unlabelled": self.failed_unlabelled, "warning": self.warning} | (
            {"plan": asdict(self.plan)} if self.plan is not None else {})


@dataclass(frozen=True)
class AgreementReport:
    """:func:`judge_agreement`'s answer for one run.

    Attributes:
        run: the run's name.
        n_cases: the run's cases.
        labels_source, selection, seed: where the labels came from and how the labelled
            cases were chosen (:class:`~evalkit.data.labels.HumanLabels`).
        warning: :meth:`HumanLabels.selection_warning`, or ``None``.
        metrics: one :class:`MetricAgreement` per labelled metric.
    """

    kind: ClassVar[str] = "agreement"  # what a reporter (the HTML page) recognises

    run: str
    n_cases: int
    labels_source: str | None
    selection: str | None
    seed: int | None
    warning: str | None
    metrics: list[MetricAgreement]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (what ``evalkit agreement --json`` prints)."""
        return {"run": self.run, "n_cases": self.n_cases, "labels": self.labels_source,
                "selection": self.selection, "seed": self.seed, "warning": self.warning,
                "metrics": [m.to_dict() for m in self.metrics]}


def judge_agreement(run: Any, labels: HumanLabels, metrics: Sequence[str] | None = None,
                    *, alpha: float = 0.05, plan_width: float | None = None
                    ) -> AgreementReport:
    """Agreement between a run's values and human labels, per labelled metric.

    Args:
        run: a :class:`~evalkit.data.results.RunResult`.
        labels: the human labels (:func:`evalkit.data.labels.read_labels`).
        metrics: the metrics to report; by default every labelled metric.
        alpha: 1 - confidence of the bias and PPI intervals.
        plan_width: also plan, per metric, how many human labels a PPI++ interval of
            this width needs (metric units; :func:`evalkit.stats.ppi.labels_needed` with
            these labels as the pilot and the judge's values on every case).

    A case the metric failed on (a judge's rejected grade) is left out, and the
    metric's :attr:`MetricAgreement.warning` names the labelled ones: the agreement is
    reported on the labelled cases the metric scored, where a gate's agreement check on
    the same run is an error.

    Raises:
        LabelError: a label of a case the run does not hold, a metric the run lacks (no
            case has a value or an error of it), or a requested metric without labels.
        PPIError: ``plan_width`` not positive, or fewer than 2 labelled cases to plan
            from.
    """
    labels.check_ids(run.ids(), f"run {run.name!r}")
    wanted = list(metrics) if metrics else labels.metrics()
    out: list[MetricAgreement] = []
    from evalkit.core.metric_lookup import suggestion

    # labels off the judge's declared scale (a 0-4 labelling of a 1-5 judge): a warning
    scale_notes = off_scale(labels, (getattr(run, "header", None) or {}).get("details") or {})

    for metric in wanted:
        if metric not in labels.metrics():
            raise LabelError(f"{labels.source or 'labels'}: no case is labelled for "
                             f"{metric!r}{suggestion(metric, labels.metrics())}; labelled: "
                             f"{', '.join(labels.metrics())}")
        failed = failed_cases(run.per_query, metric, set(run.ids()))
        if metric not in run.metric_names() and len(failed) == len(run.ids()) and not any(
                metric in (getattr(r, "metric_errors", None) or {}) for r in run.per_query):
            raise LabelError(f"{labels.source or 'labels'}: metric {metric!r} is labelled "
                             f"but run {run.name!r} has no such metric"
                             f"{suggestion(metric, run.metric_names())} (it has: "
                             f"{', '.join(run.metric_names())})")
        values = run.scores(metric) if not failed else case_means(run.per_query, metric)
        own = labels.for_metric(metric)
        pairs = metric_labels(values, labels, metric, left_out=failed)
        table = agreement_table(metric, pairs.judge, pairs.human, alpha)
        ppi: PPIResult | None = None
        note: str | None = None
        if not pairs.unlabelled:
            note = "every case is labelled: the labels' own mean is the answer"
        elif len(pairs.human) < 2:
            note = "fewer than 2 labelled cases"
        else:
            try:
                ppi = ppi_mean(pairs.human, pairs.judge, pairs.unlabelled, alpha=alpha)
                note = ppi.note
            except DegenerateLabelsError as exc:
                note = str(exc)
        plan = None if plan_width is None else labels_needed(
            pairs.human, pairs.judge, [*pairs.judge, *pairs.unlabelled], plan_width,
            alpha=alpha)
        mine = {c: why for c, why in failed.items() if c in own}
        out.append(MetricAgreement(table, ppi, note, plan, tuple(mine),
                                   len(failed) - len(mine), failed_text(mine),
                                   scale_notes.get(metric)))
    return AgreementReport(
        run=run.name, n_cases=len(run.ids()), labels_source=labels.source,
        selection=labels.selection, seed=labels.seed,
        warning=labels.selection_warning(len(run.ids())), metrics=out)


__all__ = ["AgreementReport", "MetricAgreement", "case_means", "failed_cases", "failed_text",
           "judge_agreement"]
