"""``evalkit rescore``: recompute metrics and aggregates from a run's stored responses.

The target is not called. The golden set is the file the run header records, or
``--goldens``. The artifact is replaced atomically unless ``--output`` names another file.
A paid metric (an LLM judge) sends the requests its cache cannot answer, within the
spending options ``evalkit run`` has (``--max-calls``, ``--max-cost``, ``--dry-run``,
:mod:`evalkit.execute.spending`); what it sent and spent is printed as ``run`` prints it.
The metrics not named keep their stored values, errors and details on every row (a
judge's paid grades are never dropped).
Exit status: 0 complete, 1 incomplete (rows whose call failed stay errored; cases without
a row stay missing: a partial run is never marked complete), 2 usage error, or a judge
that stopped (credentials, requests failing the same way; nothing is written), 3 a
spending limit stopped the rescoring (nothing is written; the grades received stay in
the judge's cache), 4 a metric failed on some case or an aggregate was not computed (as
``evalkit run``; ``--allow-metric-errors`` accepts a metric that scored some cases),
130 Ctrl-C or SIGTERM (nothing is written; the first one scores no new row and waits
up to 10 s for the one in flight, a second one stops at once); ``--json`` has
``exit_status``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def command(
    run: Annotated[Path, typer.Argument(
        metavar="RUN", help="A run artifact written by `evalkit run`.", show_default=False,
    )],
    metrics: Annotated[list[str], typer.Option(
        "--metrics", "-m", help="Metrics to compute, repeatable or comma-separated.",
        show_default=False,
    )],
    aggregates: Annotated[list[str] | None, typer.Option(
        "--aggregates", "-a",
        help="Aggregates to compute (default: those the run recorded).", show_default=False,
    )] = None,
    goldens: Annotated[Path | None, typer.Option(
        "--goldens", help="Golden file (default: the one the run header records).",
        show_default=False,
    )] = None,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Write here instead of replacing RUN.", show_default=False,
    )] = None,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace an existing file at --output (RUN itself, the "
        "default destination, needs no flag).",
    )] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    allow_metric_errors: Annotated[bool, typer.Option(
        "--allow-metric-errors", help="Exit 0, not 4, when a metric failed on some cases "
        "but scored others (a metric that scored no case still exits 4).",
    )] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Send no paid request (an LLM judge's) and write nothing; report "
        "how many grades are cached and how many would be requested (with their estimated "
        "cost when the judge has prices).",
    )] = False,
    max_calls: Annotated[int | None, typer.Option(
        "--max-calls", min=0, help="Stop before the paid metrics (an LLM judge) send more "
        "than N requests (exit 3, nothing written; the grades received stay cached).",
        show_default=False,
    )] = None,
    max_cost: Annotated[float | None, typer.Option(
        "--max-cost", min=0.0, help="Stop once the next paid request (an LLM judge's) would "
        "not fit this many US dollars (the judge needs prices; exit 3, nothing written).",
        show_default=False,
    )] = None,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="Progress bar of the rows scored on stderr "
        "(default: on a terminal only).", show_default=False,
    )] = None,
) -> None:
    """Recompute metrics and aggregates of RUN from its stored responses."""
    from evalkit.cli.output import exit_status, finish_run
    from evalkit.execute.measure_args import measure_names
    from evalkit.execute.rescore import check_rescore_paths, rescore
    from evalkit.report.target_run import rescore_line, summary_json, summary_lines

    check_rescore_paths(run, output, goldens, overwrite=overwrite)
    names = measure_names(metrics)
    if not names:
        raise typer.BadParameter("name at least one metric", param_hint="--metrics")
    agg = None if aggregates is None else measure_names(aggregates)
    from evalkit.cli.errors import STOPPED
    from evalkit.execute.spending import (
        Spending,
        SpendingLimitReached,
        SpendingLimits,
        use_spending,
    )

    spending = Spending(SpendingLimits(max_calls, max_cost, dry_run))
    import sys

    from evalkit.execute.calls import CallsInterrupted
    from evalkit.execute.progress import ProgressBar

    show = sys.stderr.isatty() if progress is None else progress
    try:
        with use_spending(spending), ProgressBar("rescore", 0, 0, show, unit="rows") as bar:
            result = rescore(run, names, agg, goldens=goldens, output=output,
                             write=not dry_run, progress=bar.count, note=bar.note,
                             keep_responses=False)  # the artifact has them; memory bounded
    except SpendingLimitReached as exc:
        described = spending.describe()
        typer.echo(described, err=True)
        if exc.reason not in described:  # a metric with limits of its own stopped
            typer.echo(f"stopped: {exc.reason}", err=True)
        typer.echo(f"nothing was written; the grades received are kept in the judge's "
                   f"cache, so rescoring {run} again does not pay for them twice", err=True)
        raise typer.Exit(STOPPED) from None
    except CallsInterrupted as exc:
        from evalkit.cli.errors import INTERRUPTED

        typer.echo(exc.line("rows scored", f"nothing was written; the grades received are "
                            f"kept in the judge's cache, so rescoring {run} again does not "
                            "pay for them twice"), err=True)
        raise typer.Exit(INTERRUPTED) from None
    if dry_run:
        if as_json:
            import json

            from evalkit.cli.output import stdout_document

            stdout_document(json.dumps(spending.report(), indent=2))
        else:
            typer.echo(spending.describe())
        return
    if spending.accounts:  # a paid metric was called: what it sent and spent
        typer.echo(spending.describe(), err=True)
    path = output if output is not None else run
    for problem in (result.header.get("rescored") or {}).get("input_problems") or []:
        # the input was altered after it was written: the output stays incomplete
        typer.echo(f"warning: run {run} is incomplete: {problem}", err=True)
    if as_json:
        from evalkit.cli.output import stdout_document

        code, _ = exit_status(result, allow_metric_errors=allow_metric_errors,
                              command="rescore")
        stdout_document(summary_json(result, path, rescored=True, exit_status=code))
    else:
        from evalkit.report.escaping import terminal_text

        for line in (rescore_line(result), *summary_lines(result)):
            typer.echo(terminal_text(line))
        typer.echo(f"artifact: {path}")
    finish_run(result, allow_metric_errors=allow_metric_errors, command="rescore")
