"""``evalkit rescore``: recompute metrics and aggregates from a run's stored responses.

The target is not called. The golden set is the file the run header records, or
``--goldens``. The artifact is replaced atomically unless ``--output`` names another file.
Exit status: 0 complete, 1 incomplete (rows whose call failed stay errored; cases without
a row stay missing: a partial run is never marked complete), 2 usage error, 4 a metric
failed on some case (as ``evalkit run``; ``--allow-metric-errors`` accepts a metric that
scored some cases).
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
) -> None:
    """Recompute metrics and aggregates of RUN from its stored responses."""
    from evalkit.cli.output import finish_run
    from evalkit.execute.measure_args import measure_names
    from evalkit.execute.rescore import check_rescore_paths, rescore
    from evalkit.report.target_run import rescore_line, summary_json, summary_lines

    check_rescore_paths(run, output, goldens, overwrite=overwrite)
    names = measure_names(metrics)
    if not names:
        raise typer.BadParameter("name at least one metric", param_hint="--metrics")
    agg = None if aggregates is None else measure_names(aggregates)
    result = rescore(run, names, agg, goldens=goldens, output=output)
    path = output if output is not None else run
    for problem in (result.header.get("rescored") or {}).get("input_problems") or []:
        # the input was altered after it was written: the output stays incomplete
        typer.echo(f"warning: run {run} is incomplete: {problem}", err=True)
    if as_json:
        from evalkit.io.interrupts import stdout_document

        stdout_document(summary_json(result, path, rescored=True))
    else:
        from evalkit.report.escaping import terminal_text

        for line in (rescore_line(result), *summary_lines(result)):
            typer.echo(terminal_text(line))
        typer.echo(f"artifact: {path}")
    finish_run(result, allow_metric_errors=allow_metric_errors)
