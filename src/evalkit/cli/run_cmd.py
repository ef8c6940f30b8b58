"""``evalkit run``: evaluate a target over a golden set as the eval config says.

Reads ``evalkit.yaml`` or ``[tool.evalkit]`` (see :mod:`evalkit.evalconfig`), calls the
target on every case with a bounded thread pool, appends each row to the run artifact as
it completes, and prints the metric means and aggregates. Exit status: 0 when every case
succeeded, 1 when the run is incomplete (some case errored; nothing is scored as if
complete), 2 for a config or usage error, 3 when a judge spending limit (``--max-calls``,
``--max-cost``) stopped the run (``--resume`` continues), 130 on Ctrl-C (the calls in
flight that finish within ``--grace-s`` are written; ``--resume`` continues; one line,
no traceback, also for a second Ctrl-C that stops the wait). ``--dry-run`` calls the
target but sends no LLM-judge request and writes no artifact; it reports the grades found
in the judge cache and those that would be requested (the spending options come from the
``evalkit-judge`` plugin). A metric that failed on a case (``metric_errors``) leaves the
run complete; the summary says which.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from evalkit.results import RunResult

INCOMPLETE = 1
STOPPED = 3

#: kinds of error printed under an incomplete run's status line (all go in --json)
SHOWN_ERROR_KINDS = 3


def error_groups(run: RunResult) -> list[dict[str, Any]]:
    """The errored rows grouped by message, most frequent first.

    Messages that differ only in the case id they name (``target 'x' failed on case
    '001': ...``) are one group. Each group: ``message`` (the first case's own text),
    ``cases`` (how many) and ``ids`` (up to 20).
    """
    groups: dict[str, dict[str, Any]] = {}
    for r in run.per_query:
        err = getattr(r, "error", None)
        if err is None:
            continue
        rid = str(r.query_id)
        key = str(err)
        for quoted in (repr(rid), f'"{rid}"'):
            key = key.replace(quoted, "<case>")
        g = groups.setdefault(key, {"message": str(err), "cases": 0, "ids": []})
        g["cases"] += 1
        if len(g["ids"]) < 20:
            g["ids"].append(rid)
    return sorted(groups.values(), key=lambda g: -int(g["cases"]))


def error_lines(run: RunResult) -> list[str]:
    """Why cases errored, for people: the first message of each kind, with its cases."""
    groups = error_groups(run)
    lines: list[str] = []
    for g in groups[:SHOWN_ERROR_KINDS]:
        n = int(g["cases"])
        ids = ", ".join(repr(i) for i in g["ids"][:3]) + (", ..." if n > 3 else "")
        which = f"{n} case{'' if n == 1 else 's'} ({ids})"
        lines.append(f"  {which}: {g['message']}")
    rest = groups[SHOWN_ERROR_KINDS:]
    if rest:
        n = sum(int(g["cases"]) for g in rest)
        lines.append(f"  and {n} more case{'' if n == 1 else 's'} with {len(rest)} other "
                     "error message(s); --json lists them all")
    return lines


def summary_lines(run: RunResult) -> list[str]:
    """Metric means, aggregates and the status line of a target run, for people."""
    from evalkit.evaluation import status_line

    lines: list[str] = []
    complete = run.header.get("status") == "complete"
    names = list((run.header.get("config") or {}).get("metrics") or [])
    if complete and names:
        failed = run.metric_failures()
        width = max(len(n) for n in names)
        lines.append(f"{'metric':<{width}}  {'mean':>8}")
        for n in names:
            if n in failed:  # its mean is undefined; the other metrics keep theirs
                lines.append(f"{n:<{width}}  {'n/a':>8}  (failed on {len(failed[n])} "
                             f"case(s): {', '.join(repr(c) for c in list(failed[n])[:3])}"
                             f"{', ...' if len(failed[n]) > 3 else ''})")
            else:
                lines.append(f"{n:<{width}}  {run.mean(n):>8.4f}")
    aggs: dict[str, float] = run.header.get("aggregates") or {}
    for n, v in aggs.items():
        lines.append(f"{n}: {v:.4f}")
    for n, problem in (run.header.get("aggregate_errors") or {}).items():
        lines.append(f"{n}: not computed ({problem})")
    lines.append(status_line(run))
    lines.extend(error_lines(run))
    return lines


def resume_line(run: RunResult) -> str:
    """What ``--resume`` did: rows kept from the earlier run and cases called now (or that
    there was no earlier run to resume)."""
    rec = run.header.get("resume")
    if not isinstance(rec, dict):  # the artifact did not exist: a new run
        n = len(run.per_query)
        return f"resume: no earlier run in the artifact; all {n} case(s) were called"
    kept, called, retried = int(rec["kept"]), int(rec["called"]), int(rec.get("retried", 0))
    again = f" ({retried} of them had errored before)" if retried else ""
    rescored = int(rec.get("rescored", 0))
    scored = (f"; {rescored} kept row(s) had a failed metric, scored again from the stored "
              "response" if rescored else "")
    return (f"resume: {kept} row(s) kept from the earlier run, {called} case(s) called "
            f"now{again}{scored}")


def summary_json(run: RunResult, path: Path | None, *, resumed: bool = False) -> str:
    """The same summary as JSON (means only when the run is complete); with ``resumed``
    (``evalkit run --resume``), also ``resume``: ``{"kept", "called", "retried"}``, or
    null when there was no earlier run."""
    complete = run.header.get("status") == "complete"
    names = list((run.header.get("config") or {}).get("metrics") or [])
    failed = run.metric_failures()
    out: dict[str, Any] = {
        "name": run.name,
        "artifact": None if path is None else str(path),
        "status": run.header.get("status"),
        "cases": len(run.per_query),
        "errors": run.header.get("errors", 0),
        "error_ids": run.header.get("error_ids", []),
        "error_messages": error_groups(run),
        "means": {n: None if n in failed else run.mean(n) for n in names} if complete else {},
        "metric_errors": {m: {"cases": len(c), "ids": list(c)[:20], "first": next(iter(
            c.values()))} for m, c in failed.items()},
        "aggregates": run.header.get("aggregates") or {},
        "aggregate_errors": run.header.get("aggregate_errors") or {},
    }
    if resumed:
        out["resume"] = run.header.get("resume")
    return json.dumps(out, indent=2)


def command(
    config: Annotated[Path | None, typer.Argument(
        metavar="[CONFIG]",
        help="evalkit.yaml or pyproject.toml (default: evalkit.yaml, else pyproject.toml "
        "[tool.evalkit], in the working directory).",
        show_default=False,
    )] = None,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue the run in the output artifact: completed cases are not "
        "called again; errored ones are.",
    )] = False,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace an existing output artifact.",
    )] = False,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Artifact path (overrides the config's output).",
        show_default=False,
    )] = None,
    max_concurrency: Annotated[int | None, typer.Option(
        "--max-concurrency", "-j", min=1,
        help="Most target calls in flight (overrides the config).", show_default=False,
    )] = None,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="Progress bar (default: on a terminal only).",
        show_default=False,
    )] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Call the target but send no LLM-judge request and write no "
        "artifact; report how many grades are cached and how many would be requested "
        "(with their estimated cost when the judge has prices).",
    )] = False,
    max_calls: Annotated[int | None, typer.Option(
        "--max-calls", min=0, help="Stop the run cleanly before the LLM judge sends more "
        "than N requests; grades received are kept and --resume continues.",
        show_default=False,
    )] = None,
    grace_s: Annotated[float | None, typer.Option(
        "--grace-s", min=0.0,
        help="After Ctrl-C, how long the calls in flight may take to finish; their rows "
        "are written (a second Ctrl-C stops at once). Default: the smaller of the target's "
        "timeout per attempt and 10 s.",
        show_default=False,
    )] = None,
    max_cost: Annotated[float | None, typer.Option(
        "--max-cost", min=0.0, help="Stop the run cleanly once the next LLM-judge request "
        "would not fit this many US dollars (the judge needs prices); spending passes it by "
        "less than one request's cost (docs/judge.md). --resume continues.",
        show_default=False,
    )] = None,
) -> None:
    """Run the target of the eval config on every golden case and write the run artifact."""
    from evalkit.cli.errors import INTERRUPTED, CliError
    from evalkit.evalconfig import check_names, load_eval_config
    from evalkit.evaluation import RunInterrupted, evaluate
    from evalkit.goldens import load_goldens
    from evalkit.scoring import require_judgments, resolve_metrics

    if resume and overwrite:
        raise CliError(
            "--resume and --overwrite contradict each other: --resume continues the existing "
            "artifact, --overwrite replaces it; pass one of them"
        )
    cfg = load_eval_config(config)
    if cfg.notice:
        typer.echo(cfg.notice, err=True)
    check_names(cfg)
    goldens = load_goldens(cfg.goldens, cfg.goldens_loader)
    # before the target is built (building it may start work) and before any call
    require_judgments(resolve_metrics(cfg.metrics), list(goldens))
    path = output.resolve() if output is not None else cfg.output
    if not dry_run:  # refused before any case is called
        from evalkit.cli.errors import CliError
        from evalkit.cli.inputs import require_writable

        try:
            # a resumed artifact is replaced (rewritten beside it); a new one written into
            require_writable(path, "--output" if output is not None else "output",
                             "run.jsonl", in_place=not resume,
                             inputs=[Path(cfg.goldens), cfg.path])
        except CliError as exc:
            if output is not None:
                raise
            raise CliError(f"{exc}; the output is set in {cfg.source} (or pass --output)"
                           ) from None
    target = cfg.build_target()  # after the checks: building it may start work
    judge: Any = None
    budget: Any = None
    if dry_run or max_calls is not None or max_cost is not None:
        from evalkit.plugins import import_optional

        judge = import_optional("evalkit_judge", "evalkit-judge",
                                "--dry-run, --max-calls and --max-cost")
        budget = judge.Budget(max_calls=max_calls, max_cost=max_cost, dry_run=dry_run)
    try:
        with judge.use_budget(budget) if budget is not None else nullcontext():
            run = evaluate(
                target, goldens, cfg.metrics, cfg.aggregates,
                max_concurrency=max_concurrency or cfg.max_concurrency,
                artifact=None if dry_run else path, resume=resume and not dry_run,
                overwrite=overwrite, name=cfg.name, progress=progress, config=cfg.recorded(),
                grace_s=grace_s,
            )
    except RunInterrupted as exc:  # the rows that arrived are written; say so in a line
        typer.echo(exc.line(None if dry_run else path), err=True)
        raise typer.Exit(INTERRUPTED) from None
    except BaseException as exc:
        if judge is None or not isinstance(exc, judge.BudgetExhausted):
            raise
        typer.echo(budget.describe(), err=True)
        typer.echo(f"the rows completed so far are kept in {path}; continue with --resume",
                   err=True)
        raise typer.Exit(STOPPED) from None
    finally:
        close = getattr(target, "close", None)
        if callable(close):
            close()
    if dry_run:
        typer.echo(json.dumps(budget.report(), indent=2) if as_json else budget.describe())
        return
    if budget is not None:
        typer.echo(budget.describe(), err=True)
    resumed = resume_line(run) if resume else None
    if as_json:
        typer.echo(summary_json(run, path, resumed=resume))
    else:
        for line in summary_lines(run):
            typer.echo(line)
        if resumed:
            typer.echo(resumed)
        typer.echo(f"artifact: {path}")
    if run.header.get("status") != "complete" or run.header.get("aggregate_errors"):
        raise typer.Exit(INCOMPLETE)
