"""Hook implementations of the evalkit-history plugin: the ``evalkit history`` command
and the ``history`` reporter, which records what ``evalkit gate`` and ``evalkit run``
ran (``--report history:PATH``).

Registering imports nothing but the records: the store (sqlite3) is imported when a run
is recorded, the command's module when it runs.
"""

from __future__ import annotations

from evalkit.core.hookspecs import hookimpl
from evalkit.core.specs import CommandSpec, ReporterSpec


def render(report: object) -> str:
    """The ``history`` reporter renders nothing: it records (:func:`record`).

    Raises:
        ValueError: always.
    """
    raise ValueError("the history reporter records runs in a database; it renders no text")


def record(obj: object, target: str) -> str:
    """The ``history`` reporter: add the run of ``obj`` (see
    :func:`evalkit_history.recording.record_run`) to the database ``target``."""
    from evalkit_history.recording import record_run

    return record_run(obj, target)


@hookimpl
def evalkit_register_commands() -> list[CommandSpec]:
    return [CommandSpec(
        "history", "Run history: each metric's trend and its significant steps.",
        "evalkit_history.commands:app")]


@hookimpl
def evalkit_register_reporters() -> list[ReporterSpec]:
    return [ReporterSpec(
        "history", render, ".sqlite",
        "records the gated or evaluated run in a run history: history:PATH (a SQLite file "
        "or sqlite:/// URL; evalkit gate and evalkit run)", record=record)]
