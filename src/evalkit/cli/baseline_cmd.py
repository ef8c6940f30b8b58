"""``evalkit baseline``: store a run as the baseline gates compare against, and show one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
        "--force", "--overwrite", help="Replace an existing baseline at --to "
        "(--overwrite is the same flag, named as in `evalkit run`, `eval`, `rescore`).",
    )] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the stored baseline as JSON (as baseline show --json) "
        "instead of lines, with the run it was promoted from as \"source\".",
    )] = False,
) -> None:
    """Store RUN as a baseline, with a fingerprint of its golden set and metric definitions.

    A later `evalkit gate --baseline` refuses to compare against it (exit 2, saying what
    changed) when the qrels or golden set, the case ids, the evaluation settings or a
    metric's definition differ.
    """
    from evalkit.execute.run_files import require_artifact
    from evalkit.gate.baseline import promote as do_promote
    from evalkit.gate.baseline import promoted_fingerprint, refuse_replacing
    from evalkit.io.outputs import require_writable

    require_artifact(run, "run")
    require_writable(to, "--to", "baseline.jsonl", inputs=[run])
    refuse_replacing(to, force=force)
    path = do_promote(run, to, drop_rankings=drop_rankings)
    if as_json:
        from evalkit.gate.baseline import load_baseline

        _print_json({**load_baseline(path).to_json(), "source": str(run)})
        return
    name, fp = promoted_fingerprint(run, path)
    typer.echo(f"promoted {run} (run {name!r}) to {path}")
    for line in fp.lines():
        typer.echo(f"  {line}")


@app.command("show", short_help="Print what a baseline holds and its fingerprint.")
def show(
    path: Annotated[Path, typer.Argument(
        metavar="BASELINE", help="A baseline file.", show_default=False,
    )] = DEFAULT_TO,
    allow_incomplete: Annotated[bool, typer.Option(
        "--allow-incomplete", help="Show the fingerprint of a baseline edited or damaged "
        "after it was written (its trailer does not match).",
    )] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the baseline as JSON: path, run, promoted, promoted_at and "
        "the fingerprint as the baseline stores it.",
    )] = False,
) -> None:
    """Print a baseline's fingerprint: cases, expected values, settings, metric definitions."""
    from evalkit.execute.run_files import refuse_altered, require_artifact
    from evalkit.gate.baseline import load_baseline

    require_artifact(path, "baseline", "Pass a file written by `evalkit baseline promote`",
                     rows=False)
    stored = load_baseline(path)
    refuse_altered(stored.run, "baseline", allow=allow_incomplete)
    if as_json:
        _print_json(stored.to_json())
        return
    state = f"promoted {stored.promoted_at}" if stored.promoted else "a plain run, not promoted"
    typer.echo(f"{path}: run {stored.name!r}, {state}")
    for line in stored.fingerprint.lines():
        typer.echo(f"  {line}")


def _print_json(document: dict[str, object]) -> None:
    """A command's JSON document on standard output, whole or not at all."""
    import json

    from evalkit.cli.output import stdout_document

    stdout_document(json.dumps(document, indent=2, allow_nan=False))
