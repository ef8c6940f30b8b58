"""``evalkit gate``: judge a run against a checks file and exit 0, 1 or 2.

Exit codes: 0 every blocking check passed; 1 a blocking check failed; 2 the run or the
baseline is incomplete (cases without a row, a file cut short, a run still running or
killed: no check is judged), a blocking check could not be judged (NaN, a metric that
failed on a case it covers, incomparable baseline...) or the input is unusable (2 wins
over 1). Warn-level checks are printed and never change the exit
code. Left out, ``--checks``, ``--run``, ``--baseline`` and ``--report`` come from the
eval config (``checks``, ``output``, ``baseline``, ``reporters`` of ``evalkit.yaml`` or
``[tool.evalkit]``), so ``evalkit run && evalkit gate`` gates the run just written.
Library imports happen inside the function.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from evalkit.cli.errors import CliError


def _require_artifact(path: Path, what: str) -> None:
    from evalkit.cli.inputs import not_artifact_message, require_artifact_rows, require_file
    from evalkit.results import is_artifact

    require_file(path, what)
    if not is_artifact(path):
        raise CliError(not_artifact_message(path, what))
    require_artifact_rows(path, what)


def _checks_path(path: Path) -> Path:
    """The checks file to read: any non-directory path (``/dev/stdin`` and pipes too);
    ``-`` is standard input."""
    if str(path) == "-":
        stdin = Path("/dev/stdin")
        if not stdin.exists():
            raise CliError("-c -: this system has no /dev/stdin to read the checks from; "
                           "write them to a file and pass its path")
        return stdin
    if path.is_dir():
        found = sorted(p.name for p in path.glob("*.y*ml"))
        hint = f" (it holds {', '.join(found[:5])})" if found else ""
        raise CliError(
            f"checks {path}: is a directory{hint}; pass the checks file itself, e.g. "
            f"-c {path / (found[0] if found else 'checks.yaml')}"
        )
    if not path.exists():
        raise CliError(f"checks {path}: no such file")
    return path


def _config(config: Path | None, missing: str | None) -> Any:
    """The eval config whose gate settings fill in the options left out (``missing`` names
    the first required one), or ``None`` when no option is missing and ``--config`` is not
    given.

    Raises:
        CliError: an option is missing and no eval config is found, or the config does not
            set it.
    """
    if missing is None and config is None:
        return None
    from evalkit.evalconfig import ConfigError, find_config, load_eval_config

    usage = f"evalkit gate: missing option {missing} (see `evalkit gate --help`)"
    if config is None:
        try:
            find_config()
        except ConfigError:
            raise CliError(usage) from None
    cfg = load_eval_config(config)
    if missing == "--checks/-c" and cfg.checks is None:
        raise CliError(f"evalkit gate: missing option --checks/-c, and {cfg.source} sets no "
                       "'checks' (see `evalkit gate --help`)")
    return cfg


def command(
    checks: Annotated[Path | None, typer.Option(
        "--checks", "-c", help="The checks file (YAML, a 'checks:' list); - or /dev/stdin "
        "reads it from standard input. Default: the eval config's checks.",
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
        "reporters) fill in the options left out (default: evalkit.yaml or "
        "[tool.evalkit], found from the working directory; read only when an option is "
        "missing).", show_default=False,
    )] = None,
    resamples: Annotated[int, typer.Option(
        "--resamples", "-B", min=100, help="Resamples of the bootstrap tests."
    )] = 10_000,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Seed of the resampling.")] = 42,
) -> None:
    """Judge a run against checks (thresholds, and no-regression tests against a baseline).

    Prints one line per check, `id: verdict (k/n cases)`, with its numbers underneath.
    Exit 0 when every blocking check passes, 1 when one fails, 2 when one cannot be judged,
    the run or baseline is incomplete (then no check is judged), or the input is wrong.
    Warn-level checks never change the exit code. Options left out come from the eval
    config (evalkit.yaml or [tool.evalkit]: checks, output, baseline, reporters).
    """
    from evalkit.cli.inputs import check_report_targets, file_targets
    from evalkit.gate import gate_from_files
    from evalkit.reporters import write_reports

    missing = "--checks/-c" if checks is None else "--run/-r" if run is None else None
    cfg = _config(config, missing)
    if cfg is not None:
        checks = checks if checks is not None else cfg.checks
        run = run if run is not None else cfg.output
        baseline = baseline if baseline is not None else cfg.baseline
        report = report if report else list(cfg.reporters)
    assert checks is not None and run is not None
    targets = list(report or [])
    # refuse a malformed, unknown or unwritable --report before any work
    to_stdout = check_report_targets(targets, inputs=[run, _checks_path(checks), baseline])
    checks = _checks_path(checks)
    _require_artifact(run, "run")
    if baseline is not None:
        _require_artifact(baseline, "baseline")
    try:
        gate = gate_from_files(checks, run, baseline, n_resamples=resamples, seed=seed)
    except (ValueError, LookupError, OSError, ImportError):
        raise  # user errors: reported by the CLI's handler, exit 2
    except Exception as exc:
        if os.environ.get("EVALKIT_DEBUG"):
            raise
        # anything else must not exit 1, which means "a check failed"
        raise CliError(f"the gate could not run: {type(exc).__name__}: {exc}") from exc
    # report files first: one that cannot be written ends the command (exit 2) before a
    # verdict line is printed, so no printed verdict is contradicted by the exit code
    to_files, to_std = file_targets(targets)
    write_reports(gate, to_files)
    # a report on stdout must be the only thing there (json:- is parsed by scripts)
    for line in gate.lines():
        typer.echo(line, err=to_stdout)
    write_reports(gate, to_std)
    raise typer.Exit(gate.exit_code)
