"""``evalkit keywords``: the command this plugin adds to evalkit.

evalkit imports this module only when the command runs (``evalkit --help`` lists it from
the plugin's :class:`~evalkit.core.specs.CommandSpec`), so it may import what it needs at
the top; the golden-set reader is imported inside the function all the same, as evalkit's
own commands do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def keywords(
    goldens: Annotated[Path, typer.Argument(
        metavar="GOLDENS", help="A golden set (jsonl, yaml or csv).", show_default=False)],
    missing_only: Annotated[bool, typer.Option(
        "--missing-only", help="List only the cases without a keyword (keyword_recall "
        "scores them 0).")] = False,
) -> None:
    """Print the keywords keyword_recall looks for in each case of a golden set: one line
    per case, its id, a tab, and its keywords separated by spaces."""
    from evalkit.data.goldens import load_goldens
    from evalkit_example_plugin.plugin import keywords_of

    for case in load_goldens(goldens):
        found = keywords_of(case)
        if found and missing_only:
            continue
        typer.echo(f"{case.id}\t{' '.join(found)}")
