"""``evalkit gate``: judge a run against a checks file and exit 0, 1 or 2 (the exit codes
are the command's docstring's; 2 wins over 1). Options left out come from the eval config
(:mod:`evalkit.execute.gate_options`); library imports happen inside the function."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.errors import CliError


def command(
    checks: Annotated[Path | None, typer.Option(
        "--checks", "-c", help="The checks file (YAML, a 'checks:' list); - or /dev/stdin "
        "reads it from standard input (another pipe or a device is refused). Default: the "
        "eval config's checks.",
        show_default=False,
    )] = None,
    run: Annotated[Path | None, typer.Option(
        "--run", "-r", help="The run to gate: a run artifact (evalkit eval --save, evalkit "
        "run). Default: the eval config's output.", show_default=False,
    )] = None,
    baseline: Annotated[Path | None, typer.Option(
        "--baseline", "-b",
        help="The baseline for vs_baseline checks: a file from `evalkit baseline promote` "
        "(or a plain run artifact). Default: the eval config's baseline, when the config "
        "is read.",
        show_default=False,
    )] = None,
    report: Annotated[list[str] | None, typer.Option(
        "--report",
        help="Also write a report, FORMAT:PATH (console, json, markdown, junit, latex, and html "
        "from the evalkit-report-html plugin; PATH - is standard output, and then the "
        "verdict lines go to standard error). Repeatable. Default: the eval config's "
        "reporters, when the config is read.",
        show_default=False,
    )] = None,
    config: Annotated[Path | None, typer.Option(
        "--config", help="The eval config whose gate settings (checks, output, baseline, "
        "reporters) fill in the options left out, and whose plugins' sections are "
        "applied as evalkit run applies them (a metric a section registers can be "
        "checked) (default: evalkit.yaml or [tool.evalkit], found from the working "
        "directory; read only when an option is missing). A run gated as the config's "
        "output, or with --config given, must have been made from the config as it is "
        "now (target, golden set, metrics: the comparison --resume makes), else the "
        "evidence is incomplete (exit 2).", show_default=False,
    )] = None,
    resamples: Annotated[int, typer.Option(
        "--resamples", "-B", min=100, max=1_000_000, help="Resamples of the baseline checks' "
        "tests: the sign-flip randomization test of a per-case metric (and the bootstrap-t "
        "joining it on skewed differences; the t-test of a 0/1 metric has none), the "
        "bootstrap of an aggregate."
    )] = 10_000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the resampling.")] = 42,
    tags: Annotated[Path | None, typer.Option(
        "--tags", show_default=False,
        help="The cases' tags for checks scoped by tag (scope: {tags: [...]}): one "
        "'query id<TAB>tag' per line. Default: the tags of the golden set the run was "
        "made from.")] = None,
    labels: Annotated[Path | None, typer.Option(
        "--labels", help="Human labels that agreement aggregates such as "
        "krippendorff_alpha(correctness) read: a labels file (JSON Lines, {\"id\", "
        "\"labels\"}) or a golden file with labels. Default: the checks file's 'labels', "
        "else the labels of the golden file the run's header names.", show_default=False,
    )] = None,
    ppi: Annotated[bool, typer.Option(
        "--ppi", help="Decide each baseline check on a metric with human labels in the run "
        "and the baseline by the PPI++ interval of the human difference on the cases "
        "labelled in both (docs/gate.md#prediction-powered-baseline-checks).",
    )] = False,
    baseline_labels: Annotated[Path | None, typer.Option(
        "--baseline-labels", help="With --ppi: the baseline's human labels. Default: the "
        "checks file's 'baseline_labels', else the labels of the golden file the "
        "baseline's header names.", show_default=False,
    )] = None,
    cluster: Annotated[bool, typer.Option(
        "--cluster", help="Clustered cases: the baseline checks' tests take each golden "
        "case's 'cluster' (of the golden set the run was made from) as their unit "
        "(docs/statistics.md#clustered-cases).")] = False,
    clusters_file: Annotated[Path | None, typer.Option(
        "--clusters", show_default=False,
        help="Clustered cases from a file: 'case id<TAB>cluster' lines, or a golden set "
        "whose cases name their 'cluster'; implies --cluster.")] = None,
    history: Annotated[bool, typer.Option(
        "--history", help="Add the gated run to the run history .evalkit/history.sqlite "
        "(the same as --report history:.evalkit/history.sqlite; needs the evalkit-history "
        "plugin).")] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the verdict as JSON for scripts (the json report on standard "
        "output: every check, its verdict, numbers and coverage, and exit_code); the verdict "
        "lines go to standard error.")] = False,
) -> None:
    """Judge a run against checks (thresholds, and no-regression tests against a baseline).

    Prints one line per check, `id: verdict (k/n cases)`, with its numbers underneath.
    Exit 0 when every blocking check passes, 1 when one fails, 2 when one cannot be judged,
    the run or baseline is incomplete (then no check is judged), or the input is wrong.
    Warn-level checks never change the exit code. Options left out come from the eval
    config (evalkit.yaml or [tool.evalkit]: checks, output, baseline, reporters).
    """
    from evalkit.data.labels import read_labels
    from evalkit.execute.gate_options import gate_options
    from evalkit.execute.run_files import require_artifact
    from evalkit.gate.evaluate import checks_source, gate_from_files
    from evalkit.io.interrupts import STDOUT_DOCUMENT, Outputs, report_label
    from evalkit.report.escaping import terminal_text
    from evalkit.report.writing import check_report_targets, file_targets, write_reports

    if history:
        from evalkit.cli.output import HISTORY_REPORT

        report = [*(report or []), HISTORY_REPORT]
    options = gate_options(checks, run, baseline, report or [], config)
    run, baseline = options.run, options.baseline
    targets = [*options.reports, *(["json:-"] if as_json else [])]
    # refuse a malformed, unknown or unwritable --report before any work
    # (--json checked as such, so that a clash names it as compare does)
    to_stdout = check_report_targets(
        options.reports, as_json=as_json,
        inputs=[run, checks_source(options.checks), baseline, tags, clusters_file, labels,
                baseline_labels]) or as_json
    checks_file = checks_source(options.checks)
    require_artifact(run, "run")
    if baseline is not None:
        require_artifact(baseline, "baseline")
    # a Ctrl-C names the outputs written and those not (--json is the report json:-)
    with Outputs(map(report_label, targets),
                 {report_label("json:-"): STDOUT_DOCUMENT} if as_json else None) as outputs:
        try:
            gate = gate_from_files(
                checks_file, run, baseline, n_resamples=resamples, seed=seed, case_tags=tags,
                labels=None if labels is None else read_labels(labels), ppi=ppi,
                baseline_labels=None if baseline_labels is None
                else read_labels(baseline_labels),
                clusters=clusters_file if clusters_file is not None else (cluster or None),
                origin=options.origin)
        except (ValueError, LookupError, OSError, ImportError):
            raise  # user errors: reported by the CLI's handler, exit 2
        except Exception as exc:
            if os.environ.get("EVALKIT_DEBUG"):
                raise
            # anything else must not exit 1, which means "a check failed"
            raise CliError(f"the gate could not run: {type(exc).__name__}: {exc}") from exc
        # report files first: one that cannot be written ends the command (exit 2) before
        # a verdict line is printed, so no printed verdict is contradicted by the exit
        # code (recording reporters too: the verdict line states the exit code)
        to_files, to_std = file_targets(targets, records_last=False)
        write_reports(gate, to_files, outputs)
        # a report on stdout must be the only thing there (json:- is parsed by scripts)
        for line in gate.lines():
            typer.echo(terminal_text(line), err=to_stdout)
        write_reports(gate, to_std, outputs)
    raise typer.Exit(gate.exit_code)
