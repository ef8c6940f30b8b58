"""``evalkit history``: add runs to a run history, show each metric's trend and its
steps, compare two stored runs, draw the trend as a page.

evalkit imports this module when the command runs (``evalkit --help`` lists it from the
plugin's :class:`~evalkit.core.specs.CommandSpec`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from evalkit.report.escaping import for_stream
from evalkit_history.store import DEFAULT_DB

app = typer.Typer(
    help="A run history in a SQLite database: every run's rows, each metric's trend, the "
    "paired difference and significance of each step between comparable runs.",
    no_args_is_help=True,
    add_completion=False,
)

Db = Annotated[str, typer.Option(
    "--db", metavar="PATH|URL", help="The history database: a path or a sqlite:/// URL.")]
Metrics = Annotated[list[str] | None, typer.Option(
    "-m", "--metric", metavar="METRIC", help="A metric or aggregate to show (repeatable, or "
    "comma-separated; default: every one the runs hold).", show_default=False)]
Last = Annotated[int | None, typer.Option(
    "--last", min=1, metavar="N", help="Only the N newest runs.", show_default=False)]


def _echo(line: str) -> None:
    from evalkit.report.escaping import terminal_text

    typer.echo(terminal_text(line))  # run names and labels are printed as written


@app.command("add", short_help="Record a run artifact in the history.")
def add(
    run: Annotated[Path, typer.Argument(
        metavar="RUN", help="A run artifact (evalkit run, evalkit eval --save).",
        show_default=False)],
    label: Annotated[str | None, typer.Option(
        "--label", metavar="TEXT", help="A label for the run (a release, a PR).",
        show_default=False)] = None,
    commit: Annotated[str | None, typer.Option(
        "--commit", metavar="SHA", help="The commit the run was made from.",
        show_default=False)] = None,
    db: Db = DEFAULT_DB,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the run as recorded as JSON (an entry of history show "
        "--json).")] = False,
) -> None:
    """Record RUN (its header, its rows, each metric's mean) as the newest run of the
    history, with the paired difference and significance of each metric against the run
    before it when the two are comparable (same cases, golden set or qrels, settings and
    metric definitions), or a break saying why not; after a break the step is against
    the latest earlier run evaluated alike, when there is one. An incomplete run is refused, as a
    baseline is."""
    from evalkit.data.results import RunResult
    from evalkit.execute.run_files import require_artifact
    from evalkit_history.store import History
    from evalkit_history.table import step_line

    require_artifact(run, "run")
    loaded = RunResult.load(run)
    with History(db) as history:
        stored = history.add(loaded, label=label, commit=commit)
    if as_json:
        from evalkit.cli.output import stdout_document

        stdout_document(json.dumps({"database": str(db), "run": stored.to_json()},
                                   indent=2, allow_nan=False))
        return
    _echo(step_line(stored))


@app.command("show", short_help="Print the runs over time with each metric's steps.")
def show(
    metric: Metrics = None,
    last: Last = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as JSON.")] = False,
    db: Db = DEFAULT_DB,
) -> None:
    """Print the runs, oldest first, with each metric's mean and its paired difference
    from the run before (* when significant); a run not comparable with the one before
    is preceded by a break line saying why. Read from what was stored when each run was
    added: nothing is resampled."""
    from evalkit_history.store import History
    from evalkit_history.table import chosen_metrics, history_lines

    with History(db, create=False) as history:
        runs = history.runs(last)
    names = chosen_metrics(runs, metric or [])
    if as_json:
        keep = set(names)
        out = []
        for r in runs:
            item = r.to_json()
            item["means"] = {k: v for k, v in item["means"].items() if k in keep}
            item["aggregates"] = {k: v for k, v in item["aggregates"].items() if k in keep}
            item["step"]["metrics"] = {k: v for k, v in item["step"]["metrics"].items()
                                       if k in keep}
            out.append(item)
        from evalkit.cli.output import stdout_document

        stdout_document(json.dumps({"database": str(db), "runs": out}, indent=2,
                                   allow_nan=False))
        return
    for line in history_lines(runs, names):
        _echo(line)


@app.command("diff", short_help="Compare two stored runs, as evalkit compare does.")
def diff(
    a: Annotated[str, typer.Argument(
        metavar="A", help="The baseline: a run's number (3), latest or latest~N (N runs "
        "before the newest), or its label, commit or name.", show_default=False)],
    b: Annotated[str, typer.Argument(
        metavar="B", help="The candidate, named as A.", show_default=False)],
    metric: Metrics = None,
    report: Annotated[list[str] | None, typer.Option(
        "--report", metavar="FORMAT:PATH", help="Also write a report of the comparison "
        "(console, json, markdown, junit, latex, html...).", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")
                       ] = False,
    db: Db = DEFAULT_DB,
) -> None:
    """Compare stored run B with stored run A, paired by case, every metric they share (or
    those named by -m): `evalkit compare` of the two runs, rebuilt from the database
    without their files."""
    from rich.console import Console

    from evalkit.comparison import compare
    from evalkit.io.interrupts import STDOUT_DOCUMENT, Outputs, report_label
    from evalkit.report.compare_table import print_compare_table
    from evalkit.report.writing import check_report_targets, show_result
    from evalkit_history.store import History, db_path

    targets = list(report or [])
    to_stdout = check_report_targets(targets, as_json=as_json, inputs=[db_path(db)])
    # a Ctrl-C names the outputs written and those not
    with Outputs([*map(report_label, targets), *([STDOUT_DOCUMENT] if as_json else [])]
                 ) as outputs:
        with History(db, create=False) as history:
            ids = history.find(a), history.find(b)
            first, second = (history.load_id(i) for i in ids)
        # named as `history show` lists them, so that a message names runs it shows
        first.name, second.name = (f"#{i} {r.name}" for i, r in zip(ids, (first, second),
                                                                    strict=True))
        names = [n.strip() for m in metric or [] for n in m.split(",") if n.strip()] or None
        result = compare(first, second, metrics=names)
        for w in result.warnings:
            typer.echo(for_stream(f"warning: {w}", sys.stderr), err=True)
        show_result(result, targets, as_json=as_json, table=print_compare_table,
                    console=Console(highlight=False, stderr=to_stdout), outputs=outputs)


@app.command("report", short_help="Write the trend of each metric as a page.")
def report(
    report: Annotated[list[str], typer.Option(
        "--report", metavar="FORMAT:PATH", help="html:PATH (the trend charts: each metric's "
        "mean with its interval, significant steps marked, breaks drawn) or json:PATH; "
        "repeatable.", show_default=False)],
    metric: Metrics = None,
    last: Last = None,
    db: Db = DEFAULT_DB,
) -> None:
    """Write the history's trend: for each metric, its mean run by run with the interval of
    each step's difference, the significant steps marked and the breaks between
    non-comparable runs drawn as gaps."""
    from evalkit.io.outputs import write_output
    from evalkit.report.writing import parse_report_target
    from evalkit_history.store import History
    from evalkit_history.table import chosen_metrics
    from evalkit_history.trend import TREND_FORMATS, render_trend

    plan = [parse_report_target(t) for t in report]
    for fmt, _ in plan:
        if fmt not in TREND_FORMATS:
            raise typer.BadParameter(
                f"{fmt!r} is not a format of the trend; use one of {', '.join(TREND_FORMATS)}",
                param_hint="--report")
    with History(db, create=False) as history:
        runs = history.runs(last)
    names = chosen_metrics(runs, metric or [])
    for fmt, path in plan:
        text = render_trend(runs, names, fmt, title=f"Run history: {db}")
        if path == "-":
            typer.echo(for_stream(text, sys.stdout))
        else:
            write_output(Path(path), text)
            typer.echo(f"wrote {path}", err=True)
