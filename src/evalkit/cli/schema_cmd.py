"""``evalkit schema``: the JSON Schema of a declarative file, for editors and CI linters.
Library imports happen inside the function."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer


class FileKind(StrEnum):
    """The files with a schema."""

    checks = "checks"
    config = "config"
    goldens = "goldens"


def command(
    kind: Annotated[FileKind, typer.Argument(
        metavar="KIND",
        help="checks (a checks file), config (evalkit.yaml) or goldens (a YAML golden "
        "set; each JSON Lines line is one of its cases).", show_default=False,
    )],
) -> None:
    """Print the JSON Schema of a checks file, evalkit.yaml or a golden set.

    Save it and point an editor's YAML language server at it (docs/configuration.md):
    `evalkit schema checks > checks.schema.json`.
    """
    import json

    from evalkit.cli.output import stdout_document
    from evalkit.file_schemas import json_schema

    left_out: list[str] = []  # a plugin's section whose model cannot be imported
    schema = json_schema(kind.value, left_out)
    for message in left_out:
        typer.echo(f"warning: {message}", err=True)
    stdout_document(json.dumps(schema, indent=2, ensure_ascii=False))
