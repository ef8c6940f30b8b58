"""``evalkit compare --collections FILE``: the collections file read, the candidate
compared with the baseline in each collection and the differences pooled
(:func:`evalkit.meta_compare`), printed as tables (:mod:`evalkit.report.pooled_table`),
JSON (``MetaComparison.to_json``) or ``--report FORMAT:PATH``; every refusal is the
library's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from evalkit.cli.output import compared_metrics, note, progress


def given_options(ctx: typer.Context) -> list[str]:
    """The options of the command given on the command line (their first spelling)."""
    def given(name: str) -> bool:  # by name: typer may carry its own click
        source = ctx.get_parameter_source(name)
        return getattr(source, "name", None) == "COMMANDLINE"

    return [p.opts[0] for p in ctx.command.params
            if p.name is not None and p.param_type_name == "option" and given(p.name)]


def run_collections(path: Path, *, metric: list[str] | None, as_json: bool,
                    report: list[str] | None, **options: Any) -> None:
    """Read ``path``, run :func:`evalkit.meta_compare` with ``options`` and print it."""
    from evalkit.cli.output import show_result
    from evalkit.comparison.collections_file import load_collections
    from evalkit.comparison.meta_compute import meta_compare
    from evalkit.report.pooled_table import print_pooled_table
    from evalkit.report.writing import check_report_targets

    collections = load_collections(path)
    targets = list(report or [])
    named = [Path(str(p)) for entry in collections.values() for p in entry]
    to_stdout = check_report_targets(targets, as_json=as_json, inputs=[path, *named])
    names = compared_metrics(metric)
    with progress(f"comparing {len(collections)} collections"):
        result = meta_compare(collections, metrics=names, **options)
    for w in result.warnings:
        note(f"warning: {w}")
    show_result(result, targets, as_json=as_json, to_stdout=to_stdout,
                table=print_pooled_table)
