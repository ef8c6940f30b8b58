"""The ``evalkit`` command line (typer). Commands import heavy modules lazily."""

from __future__ import annotations


def main() -> None:
    from evalkit.cli.app import app

    app()
