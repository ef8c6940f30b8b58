"""What a command prints besides its result: a spinner and remarks on stderr, the
console its tables go to, and how ``evalkit run`` and ``rescore`` end (:func:`finish_run`)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Any

import typer


class TableOrJson(StrEnum):
    """``--format`` of the commands that print a table or JSON."""

    table = "table"
    json = "json"


def stdout_document(text: str) -> None:
    """``print(text)`` on standard output, whole or not at all
    (:func:`evalkit.io.interrupts.write_whole`): a command's JSON document, or its text in a
    format (``evalkit eval -f trec``). On a terminal a control character it holds (a run
    tag's ``ESC``) is written as its escape (:func:`evalkit.report.escaping.for_stream`); a
    file or a pipe gets ``text`` as it is."""
    from evalkit.io.interrupts import write_whole
    from evalkit.report.escaping import for_stream

    write_whole(sys.stdout, for_stream(text, sys.stdout))


def pick_format(as_json: bool, given: str | None) -> str:
    """The format ``--json`` and ``--format`` ask for (``--json`` is ``--format json``;
    default ``table``).

    Raises:
        CliError: ``--json`` with another ``--format`` (``--json --format table``).
    """
    if as_json and given not in (None, "json"):
        from evalkit.cli.errors import CliError

        raise CliError(f"--json is --format json; it contradicts --format {given}: pick one")
    return "json" if as_json else (given or "table")


@contextmanager
def progress(message: str) -> Iterator[None]:
    """A spinner on stderr while long work runs (only when stderr is a terminal)."""

    if not sys.stderr.isatty():  # rich is not even imported
        yield
        return
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield
        return
    with console.status(message):
        yield


def note(message: str) -> None:
    """A remark for the reader on stderr (keeps stdout clean for machine formats), its
    control characters escaped on a terminal (:func:`evalkit.report.escaping.for_stream`)."""
    from evalkit.report.escaping import for_stream

    typer.echo(for_stream(message, sys.stderr), err=True)


def case_notes(names: list[str]) -> None:
    """A note for each requested measure name matched only ignoring case where spellings
    differing in case are different measures (:func:`evalkit.execute.measure_args.
    case_notes`: ``Rbp`` is ``rbp``, p=0.9, not ``RBP``, p=0.8)."""
    from evalkit.execute.measure_args import case_notes as notes

    for line in notes(names):
        note(line)


def compared_metrics(metric: list[str] | None, *, of: str = "comparison") -> list[str] | None:
    """The ``-m`` values a comparison (or a power plan, ``of="plan"``) takes, None for
    its default, after a note naming the per-query counts left out (``-m all_trec``: a
    count is reported by ``evalkit eval``, never compared)."""
    from evalkit.execute.measure_args import comparable_names

    names, left_out = comparable_names(metric)
    case_notes(names)
    if left_out:
        note(f"note: left out of the {of}, as counts are reported (evalkit eval), not "
             f"compared: {', '.join(left_out)}")
    return names or None


def output_console(**kwargs: Any) -> Any:
    """A :class:`rich.console.Console` for a command's output that raises
    :class:`BrokenPipeError` when the reader goes away (rich's own answer is exit 1), so
    that :func:`handle_errors` answers it like every closed pipe (:data:`PIPE_CLOSED`)."""
    from rich.console import Console

    class _OutputConsole(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError("standard output was closed")

    return _OutputConsole(**kwargs)


def exit_status(run: Any, *, allow_metric_errors: bool = False, command: str = "run"
                ) -> tuple[int, list[str]]:
    """The exit status of ``evalkit run`` or ``evalkit rescore`` (``command``) for
    ``run``, and the ``error:`` lines that explain a 4: :data:`~evalkit.cli.errors.INCOMPLETE`
    when a call failed or a case has no row (status ``incomplete``); else
    :data:`~evalkit.cli.errors.METRIC_ERRORS` when a metric did not measure the run (it
    failed on some case, unless ``allow_metric_errors``; it scored no case, whatever it
    is) or an aggregate was not computed
    (:func:`evalkit.report.target_run.unmeasured_lines`); else 0."""
    from evalkit.cli.errors import INCOMPLETE, METRIC_ERRORS
    from evalkit.report.target_run import unmeasured_lines

    if run.header.get("status") != "complete":
        return INCOMPLETE, []
    problems = unmeasured_lines(run, allow_errors=allow_metric_errors, command=command)
    return (METRIC_ERRORS if problems else 0), problems


def finish_run(run: Any, *, allow_metric_errors: bool = False, command: str = "run"
               ) -> None:
    """End ``evalkit run`` or ``evalkit rescore`` (``command``) with the run's exit
    status (:func:`exit_status`), once its summary is printed, after its ``error:``
    lines."""
    status, problems = exit_status(run, allow_metric_errors=allow_metric_errors,
                                   command=command)
    for line in problems:
        typer.echo(f"error: {line}", err=True)
    if status:
        raise typer.Exit(status)


def show_result(result: Any, targets: list[str], *, as_json: bool, to_stdout: bool,
                table: Any, outputs: Any = None) -> None:
    """:func:`evalkit.report.writing.show_result` on this command's console (the table
    on standard error when a report goes to standard output, ``to_stdout``), marking
    what it writes in ``outputs`` (an :class:`evalkit.io.interrupts.Outputs`)."""
    from evalkit.report.writing import show_result as show

    show(result, targets, as_json=as_json, table=table,
         console=output_console(highlight=False, stderr=to_stdout), outputs=outputs)


#: What ``--history`` adds to a command's ``--report`` targets: the run history of the
#: evalkit-history plugin, in its default file (docs/history.md).
HISTORY_REPORT = "history:.evalkit/history.sqlite"
