"""Prediction-powered intervals in a comparison (``evalkit compare --ppi``).

With ``ppi=True`` each compared metric that has human labels in both runs of a row gets
the PPI++ interval of the human difference on the cases labelled in both
(:func:`evalkit.data.ppi_labels.paired_ppi`): the row's ``ci_low``/``ci_high`` become
that interval, its ``ci_method`` ``"ppi++"`` and its ``ppi`` the estimate, the number of
human labels and lambda. The p-value, the verdict, wins/ties/losses and the per-query
differences stay those of the paired test on the judge's values. Labels come one per run
(``labels=``), or from the golden file each run's header names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from os import PathLike
from pathlib import Path
from typing import Any

from evalkit.comparison.records import ComparisonError, MetricComparison
from evalkit.data.labels import HumanLabels
from evalkit.io.setting_names import Setting

#: Human labels of one run: read, or the path of a labels file or labelled golden file.
LabelsArg = HumanLabels | str | PathLike[str]

#: What :func:`evalkit.compare` takes as ``labels``: one per run (baseline first), or by
#: run name.
RunLabelsArg = Sequence[LabelsArg | None] | Mapping[str, LabelsArg]

PPI_INTERVAL = "ppi++"


def read_run_labels(labels: RunLabelsArg | None, n_runs: int
                    ) -> list[HumanLabels | None] | dict[str, HumanLabels]:
    """Every labels file read (a bad one stops before any work).

    Raises:
        ComparisonError: a sequence that does not give one entry per run.
        LabelError: a labels file that cannot be read (file and line named).
    """
    from evalkit.data.labels import read_labels

    def one(x: LabelsArg) -> HumanLabels:
        return x if isinstance(x, HumanLabels) else read_labels(Path(x))

    if labels is None:
        return [None] * n_runs
    if isinstance(labels, Mapping):
        return {str(k): one(v) for k, v in labels.items()}
    if isinstance(labels, str | PathLike | HumanLabels):
        raise ComparisonError("labels: give one labels file per run (baseline first), or "
                              "{run name: labels}")
    given = list(labels)
    if len(given) != n_runs:
        raise ComparisonError(f"--labels given {len(given)} time(s) for {n_runs} runs: give "
                              "one labels file per run, in the order of the runs (baseline "
                              "first)")
    return [None if x is None else one(x) for x in given]


def run_labels(read: list[HumanLabels | None] | dict[str, HumanLabels], runs: Sequence[Any]
               ) -> dict[str, HumanLabels]:
    """``{run name: labels}``: those given, else the labels of the golden file each run's
    header names (:func:`evalkit.data.labels.run_golden_labels`); runs without any are
    left out.

    Raises:
        ComparisonError: labels by name for a run the comparison does not hold.
    """
    from evalkit.data.labels import run_golden_labels

    names = [r.name for r in runs]
    if isinstance(read, dict):
        unknown = [n for n in read if n not in names]
        if unknown:
            raise ComparisonError(f"labels for run {unknown[0]!r}, which is not compared "
                                  f"(the runs: {', '.join(names)})")
        given: list[HumanLabels | None] = [read.get(n) for n in names]
    else:
        given = list(read)
    out: dict[str, HumanLabels] = {}
    for run, found in zip(runs, given, strict=True):
        found = found if found is not None else run_golden_labels(run.header)
        if found is not None:
            out[run.name] = found
    return out


def with_ppi(results: Sequence[MetricComparison], labels: Mapping[str, HumanLabels],
             alpha: float) -> tuple[list[MetricComparison], list[str]]:
    """``results`` with the PPI++ interval on every row whose metric both runs have
    labels for, and the notes (:func:`evalkit.data.ppi_labels.paired_ppi`).

    Raises:
        ComparisonError: no row has labels in both runs.
        LabelError: a row's labels that cannot give an interval (fewer than 2 shared
            labelled cases, every case labelled, a label of a case the run lacks).
        DegenerateLabelsError: every labelled row's labels are refused as not varying
            (a row refused among others keeps its own interval, with a note).
    """
    from evalkit.data.ppi_labels import has_labels, paired_ppi
    from evalkit.stats.ppi import DegenerateLabelsError

    out: list[MetricComparison] = []
    notes: list[str] = []
    refused: list[tuple[str, str]] = []
    for r in results:
        la, lb = labels.get(r.candidate), labels.get(r.baseline)
        if la is None or lb is None or not (has_labels(la, r.metric)
                                            and has_labels(lb, r.metric)):
            out.append(r)
            continue
        try:
            found = paired_ppi(dict(zip(r.query_ids, r.candidate_values, strict=True)),
                               dict(zip(r.query_ids, r.baseline_values, strict=True)),
                               la, lb, r.metric, alpha=alpha)
        except DegenerateLabelsError as exc:  # no interval: the row keeps its own
            refused.append((r.metric, str(exc)))
            out.append(r)
            continue
        notes.extend(found.notes)
        res = found.result
        out.append(replace(r, ci_low=res.ci_low, ci_high=res.ci_high,
                           ci_method=PPI_INTERVAL, ppi=found.to_dict()))
    if all(r.ppi is None for r in out):
        if refused:
            raise DegenerateLabelsError(refused[0][1])
        have = {name: lab.metrics() for name, lab in labels.items()}
        raise ComparisonError(
            Setting("ppi", True), ", but no compared metric has human labels in both runs of a "
            "comparison (labelled: " + ("; ".join(f"{n}: {', '.join(m)}" for n, m in
                                                  have.items()) or "no run") + "); pass "
            "one labels file per run (--labels, baseline first) or label the runs' golden "
            "files")
    said = [f"{metric}: no PPI interval, the interval shown is the paired test's on the "
            f"judge's values: {why}" for metric, why in refused]
    return out, list(dict.fromkeys([*said, *notes]))


__all__ = ["PPI_INTERVAL", "LabelsArg", "RunLabelsArg", "read_run_labels", "run_labels",
           "with_ppi"]
