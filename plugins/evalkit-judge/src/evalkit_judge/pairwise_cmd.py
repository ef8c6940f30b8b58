"""``evalkit pairwise RUN_A RUN_B [MORE ...] --judge NAME``: the command the judge plugin
adds (:func:`evalkit_judge.plugin.evalkit_register_commands`).

It parses its options, calls :func:`evalkit_judge.pairwise.pairwise` and prints
(:mod:`evalkit_judge.pairwise_report`), with a progress bar of the verdicts on stderr
(on a terminal, unless ``--no-progress``). Exit status: 0 every verdict was had; 2 a usage
error, or the judge stopped (no usable credentials, a refused key, requests failing the same
way: :mod:`evalkit_judge.systemic`), one line, no traceback; 3 a spending limit (``--max-calls``/
``--max-cost``) stopped it; 4 some verdict could not be had (the result, status
``incomplete``, is printed and written, its win rates over the comparisons left), or the
``--flips``/``--ties`` rules dropped every comparison of a pair (no evidence); 130 Ctrl-C
or SIGTERM (the first one starts no new request and waits up to 10 s for those in flight, a
second one stops at once). After 2, 3, 4 or 130 the verdicts received are in the judge's
cache: the same command again continues without paying for them twice.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

#: The exit status when a spending limit stopped the comparison (as ``evalkit run``'s).
STOPPED = 3
#: The exit status after Ctrl-C or SIGTERM (128 + SIGINT, as every evalkit command's).
INTERRUPTED = 130
#: The exit status when some verdict could not be had (as ``evalkit run``'s for a metric
#: that failed on some case).
VERDICT_ERRORS = 4


class Flips(StrEnum):
    """How a verdict that changes with the order counts."""

    tie = "tie"
    average = "average"
    drop = "drop"


class Ties(StrEnum):
    """How a tie counts in the win rate."""

    half = "half"
    drop = "drop"


def _reports(values: list[str]) -> list[tuple[str, Path]]:
    from evalkit_judge.pairwise_report import FORMATS

    out = []
    for value in values:
        fmt, sep, path = value.partition(":")
        if not sep or fmt not in FORMATS or not path:
            raise typer.BadParameter(f"{value!r}: expected FORMAT:PATH with FORMAT one of "
                                     f"{', '.join(FORMATS)} (html:out/pairwise.html)",
                                     param_hint="--report")
        out.append((fmt, Path(path)))
    return out


def _check_outputs(output: Path | None, reports: list[tuple[str, Path]],
                   inputs: list[Path | None]) -> None:
    """Refuse, before any request, an ``-o`` or ``--report`` path that is one of the
    command's inputs, a directory or a file that cannot be written (missing folders
    are created when written).

    Raises:
        evalkit.io.outputs.DestinationError: naming the option and the path.
    """
    from evalkit.io.outputs import require_writable

    if output is not None:
        require_writable(output, "-o", "pairwise.jsonl", inputs=inputs)
    for fmt, path in reports:
        require_writable(path, "--report", f"pairwise.{fmt}", inputs=[*inputs, output])


def command(
    runs: Annotated[list[Path], typer.Argument(
        metavar="RUN_A RUN_B [MORE...]", help="Two or more target-run artifacts (evalkit "
        "run) answering the same golden set.", show_default=False)],
    judge: Annotated[str, typer.Option(
        "--judge", help="The LLM-judge metric whose provider, model, cache, prices and "
        "rubric decide the verdicts: registered by a plugin, or declared in the eval "
        "config (judges:) the runs were made with or the one --config names.",
        show_default=False)],
    config: Annotated[Path | None, typer.Option(
        "--config", help="An eval config (evalkit.yaml or pyproject.toml) whose judges: "
        "section declares the judge; its definition wins over the runs' headers.",
        show_default=False)] = None,
    goldens: Annotated[Path | None, typer.Option(
        "--goldens", help="Golden file (default: the one the first run's header records).",
        show_default=False)] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Write the pairwise artifact (JSON Lines) here.",
        show_default=False)] = None,
    report: Annotated[list[str] | None, typer.Option(
        "--report", help="Also write FORMAT:PATH (markdown, html, json, table); "
        "repeatable.", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    flips: Annotated[Flips, typer.Option(
        "--flips", help="A verdict that changes when the answers swap places: tie counts "
        "it as a tie (the default), average takes the average of both orders, drop leaves "
        "it out.")] = Flips.tie,
    ties: Annotated[Ties, typer.Option(
        "--ties", help="A tie: half counts it as half a win (the default), drop leaves it "
        "out of the win rate."
    )] = Ties.half,
    alpha: Annotated[float, typer.Option(
        "--alpha", help="Significance level (after Holm's correction across pairs); the "
        "intervals have confidence 1 - alpha.")] = 0.05,
    test: Annotated[str, typer.Option(
        "--test", help="The kernel's paired test of the case scores (as evalkit compare's "
        "--test).")] = "auto",
    resamples: Annotated[int, typer.Option(
        "--resamples", min=1, help="Resamples of the paired tests.")] = 10_000,
    bt_resamples: Annotated[int, typer.Option(
        "--bt-resamples", min=1, help="Bootstrap resamples of cases for the "
        "Bradley-Terry intervals (three systems or more).")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resampling.")] = 42,
    max_concurrency: Annotated[int, typer.Option(
        "--max-concurrency", min=1, help="Verdict requests in flight at once.")] = 4,
    max_calls: Annotated[int | None, typer.Option(
        "--max-calls", min=0, help="Send at most N judge requests.", show_default=False
    )] = None,
    max_cost: Annotated[float | None, typer.Option(
        "--max-cost", min=0.0, help="Spend at most USD on judge requests (needs prices).",
        show_default=False)] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Ask nothing: count the cached verdicts and estimate the cost of "
        "the others.")] = False,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="Progress bar of the verdicts on stderr "
        "(default: on a terminal only).", show_default=False)] = None,
    allow_incomplete: Annotated[bool, typer.Option(
        "--allow-incomplete", help="Compare the cases both runs answered when one lacks a "
        "response (an errored case, a stopped run); by default that is refused.")] = False,
) -> None:
    """Ask a judge which of two systems' stored answers is better, for every case and
    every pair of runs, in both orders; print win rates, position flips, intervals, Holm-
    corrected tests and (three runs or more) Bradley-Terry strengths."""
    from evalkit.io.outputs import write_output
    from evalkit_judge.budget import Budget, BudgetExhausted
    from evalkit_judge.pairwise import pairwise
    from evalkit_judge.pairwise_report import RENDERERS

    if len(runs) < 2:
        raise typer.BadParameter("name at least two runs to compare", param_hint="RUN_A RUN_B")
    reports = _reports(report or [])
    _check_outputs(output, reports, [*runs, goldens, config])
    if config is not None:
        from evalkit.core.pyproject_config import YAML_NAMES
        from evalkit.io.input_files import refuse_directory
        from evalkit_judge.declared import apply_config_judges

        refuse_directory(config, "config", label="--config",
                         inside=(*YAML_NAMES, "pyproject.toml"))

        apply_config_judges(config, preflight=not dry_run)
    budget = Budget(max_calls=max_calls, max_cost=max_cost, dry_run=dry_run) \
        if (max_calls is not None or max_cost is not None or dry_run) else None
    from evalkit.execute.progress import ProgressBar

    show = sys.stderr.isatty() if progress is None else progress
    try:
        with ProgressBar("verdicts", 0, 0, show and not dry_run,
                         unit="verdicts") as bar:
            result = pairwise(runs, judge, goldens=goldens, flips=flips.value,
                              ties=ties.value, alpha=alpha, method=test,
                              n_resamples=resamples, seed=seed, bt_resamples=bt_resamples,
                              max_concurrency=max_concurrency, budget=budget,
                              output=None if dry_run else output,
                              progress=bar.count, allow_incomplete=allow_incomplete,
                              note=bar.note)
    except BudgetExhausted as exc:
        described = "" if budget is None \
            else budget.describe().replace("grade(s)", "verdict(s)")
        if described:
            typer.echo(described, err=True)
        if exc.reason not in described:  # one line saying why, not two
            typer.echo(f"stopped: {exc.reason}", err=True)
        typer.echo("the verdicts received are in the judge's cache: run the same command "
                   "again (with a larger limit) to continue; none is paid twice", err=True)
        raise typer.Exit(STOPPED) from None
    except KeyboardInterrupt as exc:
        from evalkit.execute.calls import CallsInterrupted

        kept = ("the verdicts received are in the judge's cache; run the same command "
                "again to continue (none is paid twice)")
        typer.echo(exc.line("verdicts received", kept) if isinstance(exc, CallsInterrupted)
                   else f"interrupted: {kept}", err=True)
        raise typer.Exit(INTERRUPTED) from None
    if dry_run and budget is not None:
        typer.echo(budget.describe().replace("grade(s)", "verdict(s)"))
        return
    from evalkit.io.interrupts import STDOUT_DOCUMENT, Outputs, report_label, write_whole

    labels = [report_label(f"{fmt}:{path}") for fmt, path in reports]
    # a Ctrl-C names the outputs written and those not
    with Outputs([*labels, *([STDOUT_DOCUMENT] if as_json else [])]) as outputs:
        for (fmt, path), label in zip(reports, labels, strict=True):
            write_output(path, RENDERERS[fmt](result))
            outputs.done(label)
        if as_json:
            write_whole(sys.stdout, RENDERERS["json"](result), STDOUT_DOCUMENT, outputs)
        else:
            typer.echo(RENDERERS["table"](result), nl=False)
    if output is not None and not as_json:
        typer.echo(f"artifact: {output}")
    totals = result.header["totals"]
    if totals["errors"]:
        asked = totals["errors"] + totals["verdicts"]
        typer.echo(f"error: {totals['errors']} of {asked} verdict(s) could not be had, so "
                   "the win rates are over the comparisons left, not the systems' (exit "
                   f"{VERDICT_ERRORS}); the note above names the first failure: fix it and "
                   "run the same command again (the verdicts received come from the "
                   "judge's cache, none is paid twice)", err=True)
        raise typer.Exit(VERDICT_ERRORS)
    empty = result.header.get("no_evidence") or []
    if empty:
        typer.echo(f"error: {', '.join(empty)}: every comparison was dropped by the "
                   f"--flips/--ties rules, so there is no evidence to compare (not 'no "
                   f"difference'; exit {VERDICT_ERRORS}); count them with --flips tie or average "
                   "(and --ties half)", err=True)
        raise typer.Exit(VERDICT_ERRORS)
