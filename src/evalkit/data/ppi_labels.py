"""A run's judge values paired with human labels, and the PPI++ intervals they give.

:func:`metric_labels` pairs a run's per-case values of one metric with the human labels
of the same cases. :func:`ppi_means` is the PPI++ mean of every labelled metric that
``evalkit run --ppi`` records in a run's header (:func:`ppi_mean_line` prints one);
:func:`paired_ppi` is the PPI++ interval of the difference of two runs on their shared
labelled cases, which ``evalkit compare --ppi`` and the gate's ``vs_baseline`` checks use
(:func:`ppi_sentence` prints one). The formulas are :mod:`evalkit.stats.ppi`'s. The
judge plugin's ``evalkit agreement`` pairs values and labels with :func:`metric_labels`
too.
"""

from __future__ import annotations

import math
from collections.abc import Container, Mapping
from dataclasses import dataclass
from typing import Any

from evalkit.data.labels import HumanLabels, LabelError
from evalkit.io.limits import shown
from evalkit.stats.ppi import (
    DegenerateLabelsError,
    PPIResult,
    adjustment_text,
    ppi_mean,
    ppi_paired_difference,
)


@dataclass(frozen=True)
class LabelledValues:
    """One metric's judge values split by whether a human labelled the case.

    Attributes:
        ids: the labelled case ids (in the run's order).
        human, judge: their labels and the judge's values, in that order.
        unlabelled: the judge's values on the other cases.
    """

    ids: list[str]
    human: list[float]
    judge: list[float]
    unlabelled: list[float]


def metric_labels(values: Mapping[str, float], labels: HumanLabels, metric: str,
                  left_out: Container[str] = ()) -> LabelledValues:
    """Pair ``values`` (``{case id: judge value}``) with the labels of ``metric``;
    ``left_out``: cases of the run that ``values`` lacks on purpose (the metric failed
    on them), whose labels are not paired.

    Raises:
        LabelError: a label of ``metric`` on a case ``values`` does not hold and
            ``left_out`` does not name (the file and line named).
    """
    own = labels.for_metric(metric)
    for cid in own:
        if cid not in values and cid not in left_out:
            raise LabelError(f"{labels.where(cid)}: case {shown(cid)} is labelled for "
                             f"{shown(metric)} but the run has no such case")
    ids = [cid for cid in values if cid in own]
    return LabelledValues(ids, [own[c] for c in ids], [values[c] for c in ids],
                          [v for c, v in values.items() if c not in own])


@dataclass(frozen=True)
class PairedPPI:
    """The PPI++ interval of the human difference ``a - b`` of one metric.

    Attributes:
        metric: the metric.
        result: :func:`evalkit.stats.ppi.ppi_paired_difference` of the shared labelled
            cases and the others (``n_labels`` human labels per run).
        judge_difference: the mean judge difference ``a - b`` over every paired case.
        labels: where each run's labels came from, ``b``'s (the baseline's) first, in the
            order the command line takes them (``--labels BASELINE --labels CANDIDATE``).
        notes: too few labels for the interval (:attr:`PPIResult.note`), the cases
            labelled in one run only (left out), and each labels' selection warning
            (:meth:`HumanLabels.selection_warning`).
    """

    metric: str
    result: PPIResult
    judge_difference: float
    labels: tuple[str | None, str | None]
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """``result.to_dict()`` with ``p_value`` (:meth:`PPIResult.p_value`),
        ``judge_difference``, ``labels`` and ``notes``."""
        return {**self.result.to_dict(), "p_value": self.result.p_value(),
                "judge_difference": self.judge_difference, "labels": list(self.labels),
                "notes": list(self.notes)}


def ppi_means(run: Any, labels: HumanLabels, *, alpha: float = 0.05) -> dict[str, Any]:
    """The PPI++ mean of every labelled metric the run has, as a run's header records it
    (``evaluate(..., ppi=True)``): ``{"labels", "selection", "seed", "warning",
    "metrics": {metric: PPIResult.to_dict() | {"note": why approximate} or {"note":
    why none}}}`` (none: the metric failed on a case, every case labelled, fewer than 2
    labels, or labels that do not vary, :class:`evalkit.stats.ppi.DegenerateLabelsError`);
    the judge's values are the run's per-case values (a case's mean over its samples).

    Raises:
        LabelError: a label of a case the run does not hold (file and line named).
    """
    labels.check_ids(run.ids(), f"run {shown(run.name)}")
    out: dict[str, Any] = {}
    for metric in labels.metrics():
        if metric not in run.metric_names():
            continue
        try:
            pairs = metric_labels(run.scores(metric), labels, metric)
        except KeyError as exc:  # the metric failed on a case: no mean, so no PPI mean
            out[metric] = {"note": str(exc.args[0]) if exc.args else "the metric failed"}
            continue
        if not pairs.unlabelled:
            out[metric] = {"note": "every case is labelled: the labels' own mean is the "
                                   "answer"}
        elif len(pairs.human) < 2:
            out[metric] = {"note": "fewer than 2 labelled cases"}
        else:
            try:
                found = ppi_mean(pairs.human, pairs.judge, pairs.unlabelled, alpha=alpha)
            except DegenerateLabelsError as exc:
                out[metric] = {"note": str(exc)}
                continue
            out[metric] = found.to_dict() | ({"note": found.note} if found.note else {})
    return {"labels": labels.source, "selection": labels.selection, "seed": labels.seed,
            "warning": labels.selection_warning(len(run.ids())), "metrics": out}


def ppi_mean_line(metric: str, found: Mapping[str, Any]) -> str:
    """``correctness: human mean (PPI++) 3.4100 [3.1200, 3.7000] (95%) on 12 human labels
    and 28 judge-only cases, judge mean 3.9000`` (or why there is none), with the
    adjustment for pass/fail labels and the note when there is one."""
    if "estimate" not in found:
        return f"{metric}: human mean (PPI++) none: {found.get('note')}"
    return (f"{metric}: human mean (PPI++) {found['estimate']:.4f} "
            f"[{found['ci_low']:.4f}, {found['ci_high']:.4f}] "
            f"({round(float(found['confidence']) * 100):d}%) on {found['n_labels']} human "
            f"labels and {found['n_unlabelled']} judge-only cases, judge mean "
            f"{found['judge_mean']:.4f}{adjustment_text(found.get('adjustment'))}"
            + (f"; {found['note']}" if found.get("note") else ""))


def ppi_sentence(ppi: Mapping[str, Any]) -> str:
    """The line every report prints for a PPI++ interval of a difference
    (:meth:`PairedPPI.to_dict`): which interval, on how many human labels."""
    return (f"interval PPI++ on {ppi['n_labels']} human labels per run and "
            f"{ppi['n_unlabelled']} judge-only cases: human difference "
            f"{ppi['estimate']:+.4f} [{ppi['ci_low']:+.4f}, {ppi['ci_high']:+.4f}] "
            f"({round(float(ppi['confidence']) * 100):d}%), judge difference "
            f"{ppi['judge_difference']:+.4f}, lambda {ppi['lambda']:.3f}"
            f"{adjustment_text(ppi.get('adjustment'))}")


def has_labels(labels: HumanLabels, metric: str) -> bool:
    """Whether any case of ``labels`` is labelled for ``metric``."""
    return any(metric in row for row in labels.labels.values())


def paired_ppi(values_a: Mapping[str, float], values_b: Mapping[str, float],
               labels_a: HumanLabels, labels_b: HumanLabels, metric: str, *,
               alpha: float = 0.05) -> PairedPPI:
    """The PPI++ interval of the mean human difference ``a - b`` over the cases both
    ``values_a`` and ``values_b`` hold (``{case id: judge value}``, one judge), the
    labelled subset being the cases labelled for ``metric`` in both runs' labels
    (:func:`evalkit.stats.ppi.ppi_paired_difference`; module docstring of
    :mod:`evalkit.stats.ppi`).

    Raises:
        LabelError: a label of a case a run does not hold (file and line named), fewer
            than 2 shared labelled cases, or every case labelled (no judge-only case).
        DegenerateLabelsError: labels not pass/fail whose labelled differences do not
            vary (:func:`evalkit.stats.ppi.ppi_paired_difference`); the message names the
            labels and the metric.
    """
    ids = [cid for cid in values_a if cid in values_b]
    own_a = metric_labels(values_a, labels_a, metric)
    own_b = metric_labels(values_b, labels_b, metric)
    set_a, set_b = set(own_a.ids), set(own_b.ids)
    shared = [cid for cid in ids if cid in set_a and cid in set_b]
    where = f"{labels_a.source or 'labels'} and {labels_b.source or 'labels'}"
    if len(shared) < 2:
        raise LabelError(f"{where}: {len(shared)} case(s) labelled for {shown(metric)} in both "
                         "runs; a PPI interval of the difference needs at least 2 shared "
                         "labelled cases (label the same cases of both runs)")
    if len(shared) == len(ids):
        raise LabelError(f"{where}: every case is labelled for {shown(metric)} in both runs; "
                         "the labels' own difference needs no PPI (leave --ppi out)")
    rest = [cid for cid in ids if cid not in set(shared)]
    ha, hb = labels_a.for_metric(metric), labels_b.for_metric(metric)
    try:
        result = ppi_paired_difference(
            [ha[c] for c in shared], [hb[c] for c in shared],
            [values_a[c] for c in shared], [values_b[c] for c in shared],
            [values_a[c] for c in rest], [values_b[c] for c in rest], alpha=alpha)
    except DegenerateLabelsError as exc:
        raise DegenerateLabelsError(f"{where}: {metric}: {exc}") from None
    notes: list[str] = []
    few = result.note
    if few:
        notes.append(f"{metric}: {few}")
    alone = len(set_a ^ set_b)
    if alone:
        notes.append(f"{metric}: {alone} case(s) labelled in one run only are treated as "
                     "unlabelled; the PPI interval rests on the cases labelled in both")
    for lab in [labels_a] + ([labels_b] if labels_b is not labels_a else []):
        warning = lab.selection_warning(len(ids))
        if warning:
            notes.append(warning)
    diff = math.fsum(values_a[c] - values_b[c] for c in ids) / len(ids)
    return PairedPPI(metric, result, diff, (labels_b.source, labels_a.source),
                     tuple(dict.fromkeys(notes)))


__all__ = [
    "LabelledValues",
    "PairedPPI",
    "has_labels",
    "metric_labels",
    "paired_ppi",
    "ppi_mean_line",
    "ppi_means",
    "ppi_sentence",
]
