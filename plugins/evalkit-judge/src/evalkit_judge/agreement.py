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
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from evalkit.data.labels import HumanLabels, LabelError
from evalkit.data.ppi_labels import metric_labels
from evalkit.stats.ppi import LabelPlan, PPIResult, labels_needed, ppi_mean
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


@dataclass(frozen=True)
class MetricAgreement:
    """Agreement and the PPI++ mean of one labelled metric.

    Attributes:
        table: the agreement statistics (:class:`~evalkit_judge.agreement_stats.AgreementTable`).
        ppi: the PPI++ estimate of the human mean, or ``None`` (see ``ppi_note``).
        ppi_note: why there is no PPI interval (every case labelled, fewer than 2
            labels), else ``None``.
        plan: with ``judge_agreement(..., plan_width=W)``, how many human labels a
            PPI++ interval of width ``W`` needs, these labels as the pilot
            (:func:`evalkit.stats.ppi.labels_needed`); else ``None``.
    """

    table: AgreementTable
    ppi: PPIResult | None
    ppi_note: str | None = None
    plan: LabelPlan | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: the table's fields, ``ppi``, ``ppi_note`` and, when planned,
        ``plan`` (:class:`~evalkit.stats.ppi.LabelPlan`'s fields)."""
        return {**self.table.to_dict(),
                "ppi": None if self.ppi is None else self.ppi.to_dict(),
                "ppi_note": self.ppi_note} | (
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

    Raises:
        LabelError: a label of a case the run does not hold, a metric the run lacks, or
            a requested metric without labels.
        KeyError: the metric failed on a case (:meth:`RunResult.scores`).
        PPIError: ``plan_width`` not positive, or fewer than 2 labelled cases to plan
            from.
    """
    labels.check_ids(run.ids(), f"run {run.name!r}")
    wanted = list(metrics) if metrics else labels.metrics()
    out: list[MetricAgreement] = []
    for metric in wanted:
        if metric not in labels.metrics():
            raise LabelError(f"{labels.source or 'labels'}: no case is labelled for "
                             f"{metric!r}; labelled: {', '.join(labels.metrics())}")
        if metric not in run.metric_names():
            raise LabelError(f"{labels.source or 'labels'}: metric {metric!r} is labelled "
                             f"but run {run.name!r} has no such metric (it has: "
                             f"{', '.join(run.metric_names())})")
        pairs = metric_labels(run.scores(metric), labels, metric)
        table = agreement_table(metric, pairs.judge, pairs.human, alpha)
        ppi: PPIResult | None = None
        note: str | None = None
        if not pairs.unlabelled:
            note = "every case is labelled: the labels' own mean is the answer"
        elif len(pairs.human) < 2:
            note = "fewer than 2 labelled cases"
        else:
            ppi = ppi_mean(pairs.human, pairs.judge, pairs.unlabelled, alpha=alpha)
        plan = None if plan_width is None else labels_needed(
            pairs.human, pairs.judge, [*pairs.judge, *pairs.unlabelled], plan_width,
            alpha=alpha)
        out.append(MetricAgreement(table, ppi, note, plan))
    return AgreementReport(
        run=run.name, n_cases=len(run.ids()), labels_source=labels.source,
        selection=labels.selection, seed=labels.seed,
        warning=labels.selection_warning(len(run.ids())), metrics=out)


__all__ = ["AgreementReport", "MetricAgreement", "case_means", "judge_agreement"]
