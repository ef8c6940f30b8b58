"""``evalkit agreement``: how far a run's judge agrees with human labels, and the human
mean a prediction-powered interval gives (:func:`evalkit.data.judge_agreement.judge_agreement`,
printed by :func:`evalkit.report.agreement_text.agreement_lines`). Only typer is imported
at module level."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.errors import CliError


def _selection(text: str) -> tuple[str, int | None]:
    if text == "all":
        return "all", None
    kind, _, seed = text.partition(":")
    if kind == "random" and seed.strip().lstrip("-").isdigit():
        return "random", int(seed)
    raise CliError(f"--selection {text!r}: write all or random:SEED (random:7)")


def command(
    run: Annotated[Path, typer.Argument(
        help="The run artifact (evalkit run, evalkit eval --save) whose judge is checked.",
        show_default=False)],
    labels: Annotated[Path | None, typer.Option(
        "--labels", "-l", help="The human labels: a labels file (JSON Lines: "
        "{\"id\": ..., \"labels\": {metric: value}}, optionally a first line "
        "{\"selection\": \"random\", \"seed\": S}) or a golden file whose cases have "
        "labels. Default: the golden file the run's header names.", show_default=False,
    )] = None,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m", help="Report this labelled metric (repeatable; default: every "
        "labelled metric).", show_default=False)] = None,
    selection: Annotated[str | None, typer.Option(
        "--selection", help="How the labelled cases were chosen, when the labels do not "
        "say: all, or random:SEED.", show_default=False)] = None,
    alpha: Annotated[float, typer.Option(
        "--alpha", min=1e-6, max=0.5, help="1 - confidence of the bias and PPI intervals."
    )] = 0.05,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Agreement of a run's judge with human labels: per labelled metric the number of
    labelled cases, Cohen's kappa (unweighted, linear, quadratic), Krippendorff's alpha
    (nominal, ordinal, interval), Spearman's rho, the mean bias judge minus human with its
    t interval, the confusion matrix, and the PPI++ mean of the human grade with its
    interval. Warns when the labelled cases are not declared a random sample."""
    from dataclasses import replace

    from evalkit.data.judge_agreement import judge_agreement
    from evalkit.data.labels import read_labels, run_golden_labels
    from evalkit.data.results import RunResult
    from evalkit.execute.run_files import require_artifact
    from evalkit.report.agreement_text import agreement_lines

    require_artifact(run, "run")
    result = RunResult.load(run)
    found = read_labels(labels) if labels is not None else run_golden_labels(result.header)
    if found is None:
        raise CliError(f"{run}: no human labels: pass --labels FILE, or give the cases of "
                       "the golden file the run's header names labels: {metric: value}")
    if selection is not None and found.selection is None:
        kind, seed = _selection(selection)
        found = replace(found, selection=kind, seed=seed)  # type: ignore[arg-type]
    report = judge_agreement(result, found, metric or None, alpha=alpha)
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2))
        if report.warning:
            typer.echo(f"warning: {report.warning}", err=True)
        return
    for line in agreement_lines(report):
        typer.echo(line)
