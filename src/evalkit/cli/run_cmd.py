"""``evalkit run``: evaluate a target over a golden set as the eval config says.

Reads ``evalkit.yaml`` or ``[tool.evalkit]`` (see :mod:`evalkit.execute.evalconfig`), calls the
target on every case with a bounded thread pool, appends each row to the run artifact as
it completes, and prints the metric means, how many cases each metric scored, and the
aggregates. Exit status (docs/runner.md has the table): 0 when every case and every
metric succeeded, 1 when the run is incomplete, 2 for a config or usage error, 3 when a
judge spending limit stopped the run, 4 when a metric failed on some case
(``--allow-metric-errors`` accepts a metric that scored some cases; one that scored none
exits 4 still), 130 on Ctrl-C (one line, no traceback; ``--resume`` continues). ``--executor
dask [--scheduler ADDRESS]`` makes the calls on a Dask cluster (docs/scaling.md).
``--dry-run`` calls the target but sends no paid request (an LLM judge's) and writes no
artifact; it reports what the paid metrics found cached and would request. The spending
options reach the paid metrics through :mod:`evalkit.execute.spending`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from evalkit.io.limits import MAX_EPOCHS, MAX_GRACE_S


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
    epochs: Annotated[int | None, typer.Option(
        "--epochs", "-k", min=1, max=MAX_EPOCHS,
        help="Samples per case: answer each case K times (overrides the config's epochs).",
        show_default=False,
    )] = None,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="Progress bar (default: on a terminal only).",
        show_default=False,
    )] = None,
    ppi: Annotated[bool, typer.Option(
        "--ppi", help="Also give each labelled metric's human mean with its PPI++ interval "
        "(recorded in the header as 'ppi'), from --labels or the golden cases' labels.",
    )] = False,
    labels: Annotated[Path | None, typer.Option(
        "--labels", help="With --ppi: the human labels of this run's outputs (a labels "
        "file, JSON Lines {\"id\", \"labels\"}, or a labelled golden file). Default: the "
        "golden cases' labels.", show_default=False,
    )] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Call the target but send no paid request (an LLM judge's) and "
        "write no artifact; report how many grades are cached and how many would be "
        "requested (with their estimated cost when the judge has prices).",
    )] = False,
    max_calls: Annotated[int | None, typer.Option(
        "--max-calls", min=0, help="Stop the run cleanly before its paid metrics (an LLM "
        "judge) send more than N requests; grades received are kept and --resume continues.",
        show_default=False,
    )] = None,
    grace_s: Annotated[float | None, typer.Option(
        "--grace-s", min=0.0, max=MAX_GRACE_S,
        help="After Ctrl-C, how long the calls in flight may take to finish; their rows "
        "are written (a second Ctrl-C stops at once). Default: the smaller of the target's "
        "timeout per attempt and 10 s.",
        show_default=False,
    )] = None,
    executor: Annotated[str | None, typer.Option(
        "--executor", metavar="NAME", help="Where the target calls are made: local (threads, "
        "the default) or dask (the evalkit-dask plugin); overrides the config's executor.",
        show_default=False,
    )] = None,
    scheduler: Annotated[str | None, typer.Option(
        "--scheduler", metavar="ADDRESS", help="With --executor dask: the scheduler's "
        "address (tcp://host:8786); absent: a LocalCluster started and stopped by the run.",
        show_default=False,
    )] = None,
    max_cost: Annotated[float | None, typer.Option(
        "--max-cost", min=0.0, help="Stop the run cleanly once the next paid request (an "
        "LLM judge's) would not fit this many US dollars (the judge needs prices); spending "
        "passes it by less than one request's cost (docs/judge.md). --resume continues.",
        show_default=False,
    )] = None,
    allow_metric_errors: Annotated[bool, typer.Option(
        "--allow-metric-errors", help="Exit 0, not 4, when a metric failed on some cases "
        "but scored others (a metric that scored no case still exits 4).",
    )] = False,
    until_decided: Annotated[bool, typer.Option(
        "--until-decided", help="Call the cases in a random order (--seed) and stop once an "
        "anytime-valid confidence sequence of the mean difference from --baseline on "
        "--metric excludes 0, or lies inside +-MARGIN (--margin); docs/statistics.md.",
    )] = False,
    baseline: Annotated[Path | None, typer.Option(
        "--baseline", help="With --until-decided: the baseline run artifact, on the same "
        "golden set.", show_default=False,
    )] = None,
    metric: Annotated[str | None, typer.Option(
        "--metric", help="With --until-decided: the metric compared (default: the run's "
        "only metric, else the metric of the vs_baseline check in the config's checks).",
        show_default=False,
    )] = None,
    margin: Annotated[float | None, typer.Option(
        "--margin", min=0.0, help="With --until-decided: also stop once no difference larger "
        "than DELTA remains possible.", show_default=False, metavar="DELTA",
    )] = None,
    cluster: Annotated[bool, typer.Option(
        "--cluster", help="With --until-decided: the unit of the sequence is the cluster "
        "(each golden case's 'cluster'; whole clusters are called in the random order).",
    )] = False,
    seed: Annotated[int, typer.Option(
        "--seed", min=0, help="With --until-decided: the seed of the random order of the "
        "cases (recorded; --resume continues the same order).",
    )] = 0,
    report: Annotated[list[str] | None, typer.Option(
        "--report", metavar="FORMAT:TARGET",
        help="Also record the finished run with a reporter that stores runs (history:PATH "
        "from the evalkit-history plugin adds it to a run history); repeatable. A run "
        "that exits non-zero is not recorded.", show_default=False,
    )] = None,
    history: Annotated[bool, typer.Option(
        "--history", help="Add the finished run to the run history "
        ".evalkit/history.sqlite (the same as --report history:.evalkit/history.sqlite; "
        "needs the evalkit-history plugin).")] = False,
) -> None:
    """Run the target of the eval config on every golden case and write the run artifact."""
    from evalkit.cli.errors import INTERRUPTED, STOPPED, CliError
    from evalkit.cli.output import finish_run
    from evalkit.execute.evalconfig import load_eval_config
    from evalkit.execute.run_checks import prepare_run
    from evalkit.execute.target_runner import RunInterrupted, evaluate
    from evalkit.report.target_run import resume_line, summary_json, summary_lines

    if resume and overwrite:
        raise CliError(
            "--resume and --overwrite contradict each other: --resume continues the existing "
            "artifact, --overwrite replaces it; pass one of them"
        )
    sequential = _until_decided(until_decided, baseline, metric, margin, seed, cluster)
    if history:
        from evalkit.cli.output import HISTORY_REPORT

        report = [*(report or []), HISTORY_REPORT]
    if report:  # a malformed or unknown --report stops before any work
        from evalkit.report.writing import check_report_targets

        check_report_targets(report, records_only="evalkit run")
    from evalkit.core.pyproject_config import YAML_NAMES
    from evalkit.io.input_files import refuse_directory

    refuse_directory(config, "config", label="evalkit run", inside=(*YAML_NAMES,
                     "pyproject.toml"), error=CliError)
    cfg = load_eval_config(config)
    sequential = _gate_metric(sequential, cfg)
    if cfg.notice:
        typer.echo(cfg.notice, err=True)
    choice = executor_choice(cfg, executor, scheduler)
    goldens, path = prepare_run(cfg, output, resume=resume, dry_run=dry_run,
                                baseline=baseline)
    target = cfg.build_target()  # after the checks: building it may start work
    from evalkit.execute.spending import Spending, SpendingLimits, use_spending

    # installed even without limits: what the paid metrics sent and spent is printed
    spending = Spending(SpendingLimits(max_calls, max_cost, dry_run))
    try:
        with use_spending(spending):
            run = evaluate(
                target, goldens, cfg.metrics, cfg.aggregates,
                max_concurrency=max_concurrency or cfg.max_concurrency,
                artifact=None if dry_run else path, resume=resume and not dry_run,
                overwrite=overwrite, name=cfg.name, progress=progress, config=cfg.recorded(),
                grace_s=grace_s, epochs=epochs or cfg.epochs, reduce=cfg.reduce,
                requests_per_minute=cfg.requests_per_minute,
                tokens_per_minute=cfg.tokens_per_minute, executor=choice,
                ppi=ppi, labels=labels,
                until_decided=sequential,
                keep_responses=False,  # the artifact has them; memory stays bounded
            )
    except RunInterrupted as exc:  # the rows that arrived are written; say so in a line
        typer.echo(exc.line(None if dry_run else path), err=True)
        raise typer.Exit(INTERRUPTED) from None
    except BaseException as exc:
        from evalkit.execute.spending import SpendingLimitReached

        if not isinstance(exc, SpendingLimitReached):
            raise
        described = spending.describe()
        typer.echo(described, err=True)
        if exc.reason not in described:  # a metric with limits of its own stopped
            typer.echo(f"stopped: {exc.reason}", err=True)
        record = getattr(exc, "sequential", None)
        if record is not None:  # both rules could stop it: say which came first
            typer.echo(f"the spending limit came first: the sequential rule had not "
                       f"decided ({sequential_line(record)})", err=True)
        typer.echo(f"the rows completed so far are kept in {path} (a case answered but not "
                   "graded too); continue with --resume, which calls no answered case "
                   "again", err=True)
        if as_json:  # the status, why, and what was sent and spent
            from evalkit.cli.output import stdout_document

            stdout_document(json.dumps({
                "status": "stopped", "exit_code": STOPPED, "reason": exc.reason,
                "spending": spending.report(), "artifact": None if dry_run else str(path)},
                indent=2, default=str))
        raise typer.Exit(STOPPED) from None
    finally:
        close = getattr(target, "close", None)
        if callable(close):
            close()
    if dry_run:
        if as_json:
            from evalkit.cli.output import stdout_document

            stdout_document(json.dumps(spending.report(), indent=2))
        else:
            typer.echo(spending.describe())
        return
    if spending.accounts or max_calls is not None or max_cost is not None:
        typer.echo(spending.describe(), err=True)
    resumed = resume_line(run) if resume else None
    if as_json:
        from evalkit.cli.output import exit_status, stdout_document

        code, _ = exit_status(run, allow_metric_errors=allow_metric_errors)
        if "sequential" in run.header:  # as without --json: the early stop is said
            typer.echo(sequential_line(run.header["sequential"]), err=True)
        stdout_document(summary_json(run, path, resumed=resume, exit_status=code))
    else:
        from evalkit.report.escaping import terminal_text

        for line in summary_lines(run):  # a target's error message may hold escapes
            typer.echo(terminal_text(line))
        if resumed:
            typer.echo(resumed)
        if "sequential" in run.header:
            typer.echo(sequential_line(run.header["sequential"]))
        typer.echo(f"artifact: {path}")
    try:
        finish_run(run, allow_metric_errors=allow_metric_errors)
    except typer.Exit:
        if report:
            typer.echo(f"not recorded by --report {' '.join(report)}: the run did not "
                       "finish cleanly", err=True)
        raise
    if report:
        from evalkit.data.results import RunResult
        from evalkit.io.interrupts import Outputs, report_label
        from evalkit.report.writing import write_reports

        with Outputs(map(report_label, report)) as outputs:  # Ctrl-C: what was written
            write_reports(RunResult.load(path), report, outputs)  # the artifact on disk


def _until_decided(on: bool, baseline: Path | None, metric: str | None,
                   margin: float | None, seed: int, cluster: bool) -> Any:
    """The :class:`UntilDecided` of ``--until-decided``, or ``None`` without it.

    Raises:
        CliError: ``--until-decided`` without ``--baseline``, or its options without it.
    """
    from evalkit.cli.errors import CliError

    if not on:
        given = [o for o, v in (("--baseline", baseline), ("--metric", metric),
                                ("--margin", margin),
                                ("--cluster", cluster or None)) if v is not None]
        if given:
            raise CliError(f"{', '.join(given)} only act with --until-decided; add it, or "
                           "leave them out")
        return None
    if baseline is None:
        raise CliError("--until-decided needs --baseline RUN: the artifact of the run to "
                       "compare with, on the same golden set")
    from evalkit.execute.run_files import require_artifact
    from evalkit.execute.sequential_run import UntilDecided

    require_artifact(baseline, "baseline")
    return UntilDecided(baseline, metric=metric, margin=margin or None, seed=seed,
                        clusters=cluster)


def _gate_metric(sequential: Any, cfg: Any) -> Any:
    """``sequential`` given the metrics of the gate's ``vs_baseline`` checks (from the
    checks file the eval config names), the default of ``--metric`` when the run has
    several metrics.

    Raises:
        CliError: that checks file cannot be read (file and problem named).
    """
    if sequential is None or sequential.metric is not None or cfg.checks is None \
            or len(cfg.metrics) < 2:
        return sequential
    from dataclasses import replace

    from evalkit.cli.errors import CliError
    from evalkit.gate.checks import CheckError, load_checks

    try:
        checks = load_checks(cfg.checks)
    except CheckError as exc:
        raise CliError(f"--until-decided without --metric compares the metric of the "
                       f"gate's vs_baseline check, and {cfg.source} names checks that "
                       f"cannot be read: {exc}; fix them, or pass --metric NAME") from None
    return replace(sequential, gate_source=str(cfg.checks),
                   gate_metrics=tuple(c.metric for c in checks if c.vs_baseline is not None))


def sequential_line(record: Any) -> str:
    """One line: what the sequential rule did (``header["sequential"]``): after how many
    units it decided, how many more cases were called meanwhile (in flight, or allowed
    to start, when it decided), and the interval over the prefix the run holds."""
    low, high = (record.get("interval") or [None, None])[:2]
    shown = "[" + ", ".join(f"{x:+.4f}" if isinstance(x, int | float) else "?"
                            for x in (low, high)) + "]"
    clusters = record.get("unit") == "cluster"

    def units(n: Any, cases: Any) -> str:
        return (f"{n} of {record.get('units')} clusters ({cases} cases)" if clusters
                else f"{cases} of {record.get('units')} cases")

    used = units(record.get("used"), record.get("cases_used"))
    at, cases_at = record.get("decided_at"), record.get("cases_at_decision")
    decided = ""
    if isinstance(at, int) and isinstance(cases_at, int):
        more = int(record.get("cases_called") or 0) - cases_at
        decided = (f"; it decided after {units(at, cases_at)}" + (
            f", and {more} more case(s) in flight or already started then were called "
            "and kept" if more > 0 else ""))
    if record.get("stopped_early"):
        what = {"differs": "the difference is decided (the interval excludes 0)",
                "equivalent": f"no difference larger than {record.get('margin')} remains "
                              "(the interval lies inside the margin)"}.get(
            str(record.get("reason")), str(record.get("reason")))
        return (f"stopped early by the sequential rule: {what}{decided}; "
                f"{record.get('metric')} difference {shown} (anytime-valid) after {used}")
    return (f"sequential rule on {record.get('metric')}: {record.get('decision')}"
            f"{decided}; interval {shown} (anytime-valid) after {used}")


def executor_choice(cfg: Any, name: str | None, scheduler: str | None) -> Any:
    """The executor of the run: ``--executor``/``--scheduler`` over the config's
    ``executor`` (its options apply when the name is the same).

    Raises:
        CliError: ``--scheduler`` with an executor that has no scheduler; an empty
            ``--executor``.
    """
    from evalkit.cli.errors import CliError
    from evalkit.execute.executor_api import ExecutorChoice

    if name is not None and not name.strip():
        raise CliError("--executor needs a name: local (threads, the default) or dask "
                       "(the evalkit-dask plugin)")
    chosen = name or cfg.executor
    options = dict(cfg.executor_options) if chosen == cfg.executor else {}
    if scheduler is not None:
        if chosen == "local":
            raise CliError("--scheduler needs a distributed executor: add --executor dask "
                           "(the local executor runs threads of this process)")
        options["address"] = scheduler
    return ExecutorChoice(chosen, options, cfg.target_recipe())
