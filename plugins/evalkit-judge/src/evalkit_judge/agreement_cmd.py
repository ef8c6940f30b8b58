"""``evalkit agreement``, the command the judge plugin adds: how far a run's judge agrees
with human labels, and the human mean a prediction-powered interval gives
(:func:`evalkit_judge.agreement.judge_agreement`, printed by
:func:`evalkit_judge.agreement_text.agreement_lines`). Only typer is imported at module
level. Exit status: 0 done; 2 a usage error or bad labels (one line, no traceback); 4 the
judge metric failed on some case (the report, over the cases it scored, is printed and
written first), unless ``--allow-metric-errors``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer


class CliError(ValueError):
    """A problem with the command's arguments the user can fix: the ``evalkit`` command
    line prints its message as one line and exits 2, as for every user error."""


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
    plan: Annotated[float | None, typer.Option(
        "--plan", min=0.0, help="Also plan: how many human labels a PPI++ interval of "
        "this width (metric units) needs, the labels given as the pilot.",
        show_default=False)] = None,
    report: Annotated[list[str] | None, typer.Option(
        "--report", help="Also write the report, FORMAT:PATH: html (the agreement table "
        "and PPI line; the evalkit-report-html plugin) or json. Repeatable.",
        show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    allow_metric_errors: Annotated[bool, typer.Option(
        "--allow-metric-errors", help="Exit 0, not 4, when the judge failed on some cases "
        "(the agreement is then over the cases it scored).")] = False,
) -> None:
    """Agreement of a run's judge with human labels: per labelled metric the number of
    labelled cases, Cohen's kappa (unweighted, linear, quadratic), Krippendorff's alpha
    (nominal, ordinal, interval), Spearman's rho, the mean bias judge minus human with its
    t interval, the confusion matrix, and the PPI++ mean of the human grade with its
    interval. Warns when the labelled cases are not declared a random sample. With
    --plan WIDTH: how many labels a PPI++ interval of that width needs."""
    from dataclasses import replace

    from evalkit.data.labels import read_labels, run_golden_labels
    from evalkit.data.results import RunResult
    from evalkit.execute.run_files import require_artifact
    from evalkit.io.outputs import require_writable
    from evalkit_judge.agreement import judge_agreement
    from evalkit_judge.agreement_text import agreement_lines

    targets = _report_targets(report or [])
    for fmt, path in targets:  # before any work: not over an input, writable
        require_writable(path, "--report", f"agreement.{fmt}", inputs=[run, labels])
    require_artifact(run, "run")
    result = RunResult.load(run)
    found = read_labels(labels) if labels is not None else run_golden_labels(result.header)
    if found is None:
        raise CliError(f"{run}: no human labels: pass --labels FILE, or give the cases of "
                       "the golden file the run's header names labels: {metric: value}")
    if selection is not None and found.selection is None:
        kind, seed = _selection(selection)
        found = replace(found, selection=kind, seed=seed)  # type: ignore[arg-type]
    agreement = judge_agreement(result, found, metric or None, alpha=alpha, plan_width=plan)
    from evalkit.io.interrupts import STDOUT_DOCUMENT, Outputs, report_label, write_whole

    labels_of = [report_label(f"{fmt}:{path}") for fmt, path in targets]
    # a Ctrl-C names the outputs written and those not
    with Outputs([*labels_of, *([STDOUT_DOCUMENT] if as_json else [])]) as outputs:
        for (fmt, path), label in zip(targets, labels_of, strict=True):
            _write(agreement, fmt, path)
            outputs.done(label)
        if as_json:
            write_whole(sys.stdout, json.dumps(agreement.to_dict(), indent=2),
                        STDOUT_DOCUMENT, outputs)
    if as_json:
        for m in agreement.metrics:
            if m.warning:
                typer.echo(f"warning: {m.warning}", err=True)
        if agreement.warning:
            typer.echo(f"warning: {agreement.warning}", err=True)
    else:
        for line in agreement_lines(agreement):
            typer.echo(line)
    from evalkit.cli.errors import METRIC_ERRORS

    ungraded = [m for m in agreement.metrics if m.failed or m.failed_unlabelled]
    if ungraded and not allow_metric_errors:
        for m in ungraded:
            name = m.table.metric
            typer.echo(f"error: metric {name} has no grade on {len(m.failed)} labelled and "
                       f"{m.failed_unlabelled} unlabelled case(s), so the agreement is not "
                       f"the judge's on every case (exit {METRIC_ERRORS}); `evalkit rescore "
                       f"{run} -m {name}` grades them again, and --allow-metric-errors "
                       "accepts the cases scored", err=True)
        raise typer.Exit(METRIC_ERRORS)


#: The ``--report`` formats of ``evalkit agreement``.
FORMATS = ("html", "json")


def _report_targets(targets: list[str]) -> list[tuple[str, Path]]:
    """``[(format, path)]`` of ``--report FORMAT:PATH``, the format one of
    :data:`FORMATS` (refused before any work)."""
    from evalkit.report.writing import parse_report_target

    out: list[tuple[str, Path]] = []
    for text in targets:
        fmt, path = parse_report_target(text)
        if fmt not in FORMATS:
            raise CliError(f"--report {text!r}: evalkit agreement writes "
                           f"{' or '.join(FORMATS)} reports (html:agreement.html)")
        if path == "-":
            raise CliError(f"--report {text!r}: write the report to a file; --json prints "
                           "the report on standard output")
        out.append((fmt, Path(path)))
    return out


def _write(agreement: Any, fmt: str, path: Path) -> None:
    """The report written to ``path`` (secrets masked, replaced atomically): ``html`` by
    the registered html reporter, which knows agreement reports; ``json`` its dict."""
    from evalkit.io.outputs import write_output
    from evalkit.io.redaction import mask
    from evalkit.report.writing import get_reporter

    text = (get_reporter("html").render(agreement) if fmt == "html"
            else json.dumps(agreement.to_dict(), indent=2) + "\n")
    write_output(path, mask(text))
