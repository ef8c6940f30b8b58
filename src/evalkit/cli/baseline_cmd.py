"""``evalkit baseline``: store a run as the baseline gates compare against, and show one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalkit.cli.errors import CliError

app = typer.Typer(
    help="Store and inspect baselines (the reference runs of `evalkit gate`).",
    no_args_is_help=True,
    add_completion=False,
)

DEFAULT_TO = Path(".evalkit") / "baseline.jsonl"


@app.command("promote", short_help="Store a run as a baseline, fingerprinted.")
def promote(
    run: Annotated[Path, typer.Argument(
        metavar="RUN", help="A run artifact (evalkit eval --save, evalkit run).",
        show_default=False,
    )],
    to: Annotated[Path, typer.Option(
        "--to", help="Where to write the baseline.",
    )] = DEFAULT_TO,
    drop_rankings: Annotated[bool, typer.Option(
        "--drop-rankings",
        help="Store retrieval rows without their ranked ids (metrics only): a baseline small "
        "enough to commit. Gates read only the metrics of retrieval rows.",
    )] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Replace an existing baseline at --to.",
    )] = False,
) -> None:
    """Store RUN as a baseline, with a fingerprint of its golden set and metric definitions.

    A later `evalkit gate --baseline` refuses to compare against it (exit 2, saying what
    changed) when the qrels or golden set, the case ids, the evaluation settings or a
    metric's definition differ.
    """
    from evalkit.baseline import fingerprint, load_baseline
    from evalkit.baseline import promote as do_promote
    from evalkit.cli.inputs import (
        not_artifact_message,
        require_artifact_rows,
        require_file,
        require_writable,
    )
    from evalkit.outputs import destination
    from evalkit.results import RunResult, is_artifact

    require_file(run, "run")
    if not is_artifact(run):
        raise CliError(not_artifact_message(run, "run"))
    require_artifact_rows(run, "run")
    require_writable(to, "--to", "baseline.jsonl", inputs=[run])
    stream = destination(to) == "stream"  # a device or pipe: written to, never replaced
    if to.exists() and not force and not stream:
        raise CliError(
            f"--to {to} already exists{_what_is(to)}; pass --force to replace it, or choose "
            "another --to"
        )
    path = do_promote(run, to, drop_rankings=drop_rankings)
    if stream:  # cannot be read back
        source = RunResult.load(run)
        name, fp = source.name, fingerprint(source)
    else:
        stored = load_baseline(path)
        name, fp = stored.name, stored.fingerprint
    typer.echo(f"promoted {run} (run {name!r}) to {path}")
    for line in describe(fp):
        typer.echo(f"  {line}")


@app.command("show", short_help="Print what a baseline holds and its fingerprint.")
def show(
    path: Annotated[Path, typer.Argument(
        metavar="BASELINE", help="A baseline file.", show_default=False,
    )] = DEFAULT_TO,
) -> None:
    """Print a baseline's fingerprint: cases, expected values, settings, metric definitions."""
    from evalkit.baseline import load_baseline
    from evalkit.cli.inputs import not_artifact_message, require_file
    from evalkit.results import is_artifact

    require_file(path, "baseline")
    if not is_artifact(path):
        raise CliError(not_artifact_message(
            path, "baseline", "pass a file written by `evalkit baseline promote`"
        ))
    stored = load_baseline(path)
    state = f"promoted {stored.promoted_at}" if stored.promoted else "a plain run, not promoted"
    typer.echo(f"{path}: run {stored.name!r}, {state}")
    for line in describe(stored.fingerprint):
        typer.echo(f"  {line}")


def _what_is(path: Path) -> str:
    """`` (the baseline of run 'x', promoted ...)`` when ``path`` is a baseline, else ``""``."""
    from evalkit.baseline import load_baseline

    try:
        stored = load_baseline(path)
    except Exception:  # whatever it is, it is not replaced without --force
        return ""
    when = f", promoted {stored.promoted_at}" if stored.promoted else ""
    return f" (the baseline of run {stored.name!r}{when})"


def describe(fp: object) -> list[str]:
    """Lines describing a :class:`~evalkit.baseline.Fingerprint`."""
    from evalkit.baseline import Fingerprint

    assert isinstance(fp, Fingerprint)
    lines = [f"cases: {fp.n_cases} (ids sha256 {fp.ids_sha256[:12]})"]
    if fp.expected_source:
        lines.append(f"expected values: {fp.expected_source} sha256 "
                     f"{(fp.expected_sha256 or '')[:12]}")
    else:
        lines.append("expected values: not recorded by the run")
    if fp.settings:
        lines.append("settings: " + ", ".join(f"{k}={v!r}" for k, v in fp.settings.items()))
    for name, d in sorted(fp.metrics.items()):
        lines.append(f"metric {name}: {d.get('provider')} definition v{d.get('version')}")
    if fp.aggregates:
        lines.append("aggregates: " + ", ".join(
            f"{n} ({d.get('provider')} v{d.get('version')})" for n, d in sorted(
                fp.aggregates.items())))
    return lines
