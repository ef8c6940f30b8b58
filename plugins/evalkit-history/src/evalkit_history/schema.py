"""The history database's schema, its versions and the migrations between them.

Every database records the versions applied to it in ``schema_migrations`` (one row per
version, with the UTC time it was applied). :func:`migrate` brings a database of any
earlier version to :data:`SCHEMA_VERSION` inside one ``BEGIN IMMEDIATE`` transaction,
so two processes opening an old file at once migrate it once; a database written by a
newer evalkit-history is refused, never downgraded.

Version 1: ``runs`` (name, label, commit, time added, the artifact's header),
``rows`` (each case's row as the run artifact writes it) and ``means`` (each metric's
mean, each aggregate's value).

Version 2 adds each run's fingerprint (``runs.fingerprint``: what its values depend on,
:func:`evalkit.gate.fingerprint.fingerprint`) and the steps between consecutive runs:
``steps`` (whether a run is comparable with the one before it, and if not why) and
``step_metrics`` (per metric, the paired difference, its interval and p-value, and
whether it was significant). Migrating a version 1 file computes them for the runs it
holds.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime

#: The schema this evalkit-history writes.
SCHEMA_VERSION = 2

#: The tables of version 1, as they were created.
SCHEMA_1 = """
CREATE TABLE schema_migrations (
    version INTEGER PRIMARY KEY,
    applied TEXT NOT NULL
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    label TEXT,
    commit_sha TEXT,
    added TEXT NOT NULL,
    header TEXT NOT NULL
);
CREATE TABLE rows (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    sample INTEGER,
    row TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE means (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    kind TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (run_id, metric)
);
"""

#: What version 2 adds.
SCHEMA_2 = """
ALTER TABLE runs ADD COLUMN fingerprint TEXT;
CREATE TABLE steps (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    previous_id INTEGER REFERENCES runs(id),
    comparable INTEGER NOT NULL,
    reasons TEXT NOT NULL,
    settings TEXT
);
CREATE TABLE step_metrics (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    n INTEGER NOT NULL,
    diff REAL NOT NULL,
    ci_low REAL,
    ci_high REAL,
    p_value REAL NOT NULL,
    p_adjusted REAL,
    significant INTEGER NOT NULL,
    method TEXT,
    higher_is_better INTEGER NOT NULL,
    PRIMARY KEY (run_id, metric)
);
"""


class HistorySchemaError(ValueError):
    """A database that is not a history, or one of a newer schema than this plugin reads."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def current_version(con: sqlite3.Connection) -> int:
    """The highest version applied to the database (0 for an empty one).

    Raises:
        HistorySchemaError: the database has tables but no ``schema_migrations``.
    """
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "schema_migrations" not in tables:
        if tables - {"sqlite_sequence"}:
            raise HistorySchemaError(
                f"it holds tables ({', '.join(sorted(tables))}) but no schema_migrations: "
                "it is not an evalkit history; give another --db")
        return 0
    row = con.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def migrate(con: sqlite3.Connection, step_2: Callable[[sqlite3.Connection], None]) -> int:
    """Bring the database to :data:`SCHEMA_VERSION`, in one transaction.

    Args:
        con: a connection in autocommit mode (``isolation_level=None``).
        step_2: fills the steps of the runs a version 1 database holds (it needs the
            kernel's comparisons, which this module does not import).

    Returns:
        The version the database had before.

    Raises:
        HistorySchemaError: not a history, or a newer schema than :data:`SCHEMA_VERSION`.
    """
    con.execute("BEGIN IMMEDIATE")
    try:
        before = current_version(con)
        if before > SCHEMA_VERSION:
            raise HistorySchemaError(
                f"its schema is version {before}, newer than this evalkit-history reads "
                f"({SCHEMA_VERSION}); upgrade evalkit-history")
        if before < 1:
            _run_script(con, SCHEMA_1)
            con.execute("INSERT INTO schema_migrations VALUES (1, ?)", (_now(),))
        if before < 2:
            _run_script(con, SCHEMA_2)
            step_2(con)
            con.execute("INSERT INTO schema_migrations VALUES (2, ?)", (_now(),))
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
    return before


def rollback(con: sqlite3.Connection) -> None:
    """Undo the open transaction, if SQLite has not undone it already (it does after an
    error such as a full disk, and a second ``ROLLBACK`` would raise "no transaction is
    active" in place of the error being raised)."""
    if con.in_transaction:
        with suppress(sqlite3.Error):
            con.execute("ROLLBACK")


def _run_script(con: sqlite3.Connection, script: str) -> None:
    """Each statement of ``script`` in the open transaction (``executescript`` would
    commit it first)."""
    for statement in script.split(";"):
        if statement.strip():
            con.execute(statement)


__all__ = ["SCHEMA_1", "SCHEMA_2", "SCHEMA_VERSION", "HistorySchemaError", "current_version",
           "migrate", "rollback"]
