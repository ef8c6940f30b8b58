"""``evalkit compare --baseline RUN DIR_OR_GLOB...``: the baseline compared with every run
a folder holds or a pattern matches (:mod:`evalkit.io.run_paths`); a candidate that cannot
be read or paired is named, left out, and the command exits 2 after the comparison."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from evalkit.cli.errors import CliError, _user_error_types, message_of
from evalkit.cli.output import note

T = TypeVar("T")


def runs_to_compare(baseline: Path | None, args: list[Path]) -> tuple[list[Path], bool]:
    """``(baseline then candidates, whether folders or patterns were given)``: with
    ``--baseline``, the candidates are every run the arguments name but the baseline.

    Raises:
        CliError: a folder or pattern without files; no candidate left.
    """
    from evalkit.io.run_paths import expand_run_paths, is_many

    many = baseline is not None or any(is_many(a) for a in args)
    if not many:
        return args, False
    try:
        expanded = expand_run_paths(args)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    if baseline is None:
        return expanded, True
    from evalkit.io.symlink_loops import resolve_input

    first = resolve_input(baseline, "baseline", label="--baseline", error=CliError)
    candidates = [p for p in expanded
                  if resolve_input(p, "run", error=CliError) != first]
    if not candidates:
        raise CliError(f"--baseline {baseline}: no candidate to compare it with; pass run "
                       "files, folders of them or glob patterns")
    return [baseline, *candidates], True


def leaving_out_bad(runs: list[Path], work: Callable[[list[Path]], T],
                    left_out: list[Path]) -> T:
    """``work(runs)``; when it fails on a candidate its message names, that candidate is
    reported, left out (added to ``left_out``) and the work done again, while a candidate
    remains; a failure that names no candidate is raised."""
    runs = list(runs)
    while True:
        try:
            return work(runs)
        except _user_error_types() as exc:
            text = message_of(exc, runs)
            culprit = next((p for p in runs[1:] if str(p) in text), None)
            if culprit is None or len(runs) <= 2:
                raise
            note(f"error: {text} (left out of the comparison)")
            runs.remove(culprit)
            left_out.append(culprit)


def finish(left_out: list[Path], total: int) -> None:
    """Exit 2 when candidates were left out (after the comparison was shown).

    Raises:
        CliError: naming them.
    """
    if left_out:
        raise CliError(f"{len(left_out)} of {total} candidates left out: "
                       f"{', '.join(map(str, left_out))}")
