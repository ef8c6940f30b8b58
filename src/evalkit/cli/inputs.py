"""The commands' checks of the files they are given, from the library.

What a file is and what to say when it is not what a command takes lives in
:mod:`evalkit.input_files`; output paths in :mod:`evalkit.outputs`; ``--report`` targets
in :mod:`evalkit.reporters`. This module keeps the names the commands import.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evalkit.cli.errors import CliError
from evalkit.input_files import (
    QRELS_LINE,
    RUN_LINE,
    Sniffed,
    no_rows_message,
    not_a_run_message,
    not_artifact_message,
    not_qrels_message,
    require_artifact_rows,
    require_file,
    sniff,
)

__all__ = [
    "QRELS_LINE", "RUN_LINE", "Sniffed", "check_report_targets", "file_targets",
    "no_rows_message", "not_a_run_message", "not_artifact_message", "not_qrels_message",
    "require_artifact_rows", "require_file", "require_writable", "sniff",
]


def require_writable(path: Path, option: str, example: str, *, in_place: bool = False,
                     inputs: Sequence[Path | None] = ()) -> None:
    """:func:`evalkit.outputs.require_writable`, its refusal as a :class:`CliError`."""
    from evalkit.outputs import DestinationError
    from evalkit.outputs import require_writable as check

    try:
        check(path, option, example, in_place=in_place, inputs=inputs)
    except DestinationError as exc:
        raise CliError(str(exc)) from None


def check_report_targets(targets: Sequence[str], *, as_json: bool = False,
                         inputs: Sequence[Path | None] = ()) -> bool:
    """:func:`evalkit.reporters.check_report_targets` (imported when called)."""
    from evalkit.reporters import check_report_targets as check

    return check(targets, as_json=as_json, inputs=inputs)


def file_targets(targets: Sequence[str]) -> tuple[list[str], list[str]]:
    """:func:`evalkit.reporters.file_targets` (imported when called)."""
    from evalkit.reporters import file_targets as split

    return split(targets)

