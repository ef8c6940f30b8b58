"""``evalkit rescore``: recompute metrics and aggregates from a run's stored responses.

The target is not called. The golden set is the file the run header records, or
``--goldens``. The artifact is replaced atomically unless ``--output`` names another file.
Exit status: 0 complete, 1 incomplete (rows whose call failed stay errored; cases without
a row stay missing: a partial run is never marked complete), 2 usage error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.eval_cmd import split_metrics


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
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Recompute metrics and aggregates of RUN from its stored responses."""
    from evalkit.cli.errors import CliError
    from evalkit.cli.inputs import not_artifact_message, require_file, require_writable
    from evalkit.cli.run_cmd import INCOMPLETE, summary_json, summary_lines
    from evalkit.evaluation import rescore
    from evalkit.results import is_artifact

    require_file(run, "run")
    if not is_artifact(run):
        raise CliError(not_artifact_message(
            run, "run", "rescore reads a target run written by `evalkit run` (a TREC run is "
            "scored again with `evalkit eval`)"))
    if output is not None:
        require_writable(output, "--output", run.name,
                         inputs=[goldens, _recorded_goldens(run)])
    else:  # RUN itself is replaced
        try:
            require_writable(run, "run", run.name)
        except CliError as exc:
            raise CliError(f"{exc}; pass --output to write the rescored run elsewhere") from None
    names = split_metrics(metrics)
    if not names:
        raise typer.BadParameter("name at least one metric", param_hint="--metrics")
    agg = None if aggregates is None else split_metrics(aggregates)
    result = rescore(run, names, agg, goldens=goldens, output=output)
    path = output if output is not None else run
    if as_json:
        typer.echo(summary_json(result, path))
    else:
        for line in summary_lines(result):
            typer.echo(line)
        typer.echo(f"artifact: {path}")
    if result.header.get("status") != "complete" or result.header.get("aggregate_errors"):
        raise typer.Exit(INCOMPLETE)


def _recorded_goldens(run: Path) -> Path | None:
    """The golden file the run header records (rescore reads it when --goldens is not
    given), or None."""
    import json

    try:
        with run.open(encoding="utf-8-sig") as fh:
            header = json.loads(fh.readline())
        recorded = (header.get("goldens") or {}).get("path")
    except (OSError, ValueError, AttributeError):
        return None
    return Path(recorded) if isinstance(recorded, str) else None
