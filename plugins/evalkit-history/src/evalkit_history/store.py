"""The history database: runs added with their rows, read back as runs, listed with their
means and steps.

The database is one SQLite file (:mod:`sqlite3` of the standard library), by default
:data:`DEFAULT_DB`, named by a path or a ``sqlite:///`` URL (``sqlite:///rel/path`` or
``sqlite:////abs/path``, as SQLAlchemy and MLflow write them). It is opened in WAL mode
with a busy timeout of :data:`BUSY_TIMEOUT_S`, and every write is one ``BEGIN
IMMEDIATE`` transaction, so processes adding runs at once on one machine take turns
and none sees half of another's run (SQLite's locking; WAL needs a local file system,
not a network share). The schema and its migrations are :mod:`evalkit_history.schema`.

A run is stored whole: its header, each row as the run artifact writes it (registered
secrets masked), each metric's mean and each aggregate's value, its fingerprint, and
its step from the run before (:mod:`evalkit_history.steps`). :meth:`History.load` gives
back a :class:`~evalkit.data.results.RunResult` equal to the one added, so any two
stored runs can be compared with every test of the library.
"""

from __future__ import annotations

import errno
import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit_history.schema import HistorySchemaError, migrate, rollback
from evalkit_history.steps import MetricStep, Step

if TYPE_CHECKING:
    from evalkit.data.results import RunResult

#: Where ``evalkit history`` keeps its database when no ``--db`` is given.
DEFAULT_DB = ".evalkit/history.sqlite"
#: How long a writer waits for another to finish its transaction, in seconds.
BUSY_TIMEOUT_S = 60.0


def _disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk is full (SQLite's ``SQLITE_FULL``, "database or disk
    is full", or an ``OSError`` ``ENOSPC``/``EFBIG``)."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EFBIG)
    return isinstance(exc, sqlite3.Error) and (
        getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
        or "database or disk is full" in str(exc))


class HistoryError(ValueError):
    """A database that cannot be opened, or a run that cannot be added or found (the
    message names the database and says why)."""


def db_path(db: str | Path) -> Path:
    """The file of ``db``: a path, or a ``sqlite:///`` URL (three slashes and a relative
    path, four and an absolute one).

    Raises:
        HistoryError: a URL of another scheme, or of an in-memory database.
    """
    text = str(db)
    if "://" not in text:
        return Path(text)
    scheme, _, rest = text.partition("://")
    if scheme != "sqlite" or not rest.startswith("/") or rest in ("/", "/:memory:"):
        raise HistoryError(
            f"--db {text}: expected a path or a sqlite:/// URL of a file "
            "(sqlite:///relative/history.sqlite, sqlite:////absolute/history.sqlite)")
    return Path(rest[1:])


@dataclass(frozen=True)
class StoredRun:
    """A run of the history as :meth:`History.runs` lists it.

    Attributes:
        id: its number in the history (1, 2, ... in the order added).
        name: the run's name.
        label: the label given when it was added (None: none).
        commit: the commit given when it was added (None: none).
        added: when it was added (ISO 8601, UTC).
        created: when the run was made (its header's ``created``; None if not recorded).
        n_cases: its cases.
        means: ``{metric: mean}`` of its metrics.
        aggregates: ``{aggregate: value}`` of its whole-run aggregates.
        step: its step from the run before it.
    """

    id: int
    name: str
    label: str | None
    commit: str | None
    added: str
    created: str | None
    n_cases: int
    means: Mapping[str, float] = field(default_factory=dict)
    aggregates: Mapping[str, float] = field(default_factory=dict)
    step: Step = field(default_factory=lambda: Step(None, False))

    def to_json(self) -> dict[str, Any]:
        """The run as ``evalkit history show --json`` prints it."""
        return {
            "id": self.id, "name": self.name, "label": self.label, "commit": self.commit,
            "added": self.added, "created": self.created, "n_cases": self.n_cases,
            "means": dict(self.means), "aggregates": dict(self.aggregates),
            "step": {
                "previous": self.step.previous_id, "after": self.step.after,
                "break": self.step.is_break, "comparable": self.step.comparable,
                "reasons": list(self.step.reasons), "settings": dict(self.step.settings),
                "metrics": {m.metric: {
                    "n": m.n, "diff": m.diff, "ci_low": m.ci_low, "ci_high": m.ci_high,
                    "p_value": m.p_value, "p_adjusted": m.p_adjusted,
                    "significant": m.significant, "method": m.method,
                    "higher_is_better": m.higher_is_better,
                } for m in self.step.metrics},
            },
        }


class History:
    """A history database, opened (created and migrated when needed).

    Args:
        db: a path or a ``sqlite:///`` URL (:func:`db_path`); its folder is made.
        create: make the database when it does not exist (``history add``, the history
            reporter); False for the commands that only read one.

    Raises:
        HistoryError: the file cannot be opened, is not a history, or has a newer schema;
            or, with ``create=False``, does not exist.
    """

    def __init__(self, db: str | Path = DEFAULT_DB, *, create: bool = True) -> None:
        self.path = db_path(db)
        if not create and not self.path.exists():
            raise HistoryError(f"{self.path}: no run history there; add a run first with "
                               f"`evalkit history add RUN --db {self.path}`, or name the "
                               "history's file with --db")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            from evalkit.io.outputs import reason_for

            raise HistoryError(
                f"{self.path}: the history database cannot be created: "
                f"{reason_for(self.path, exc)}; name a file in a folder with --db (such as "
                f"--db {self.path.name}), or move what is in the way") from None
        existed = self.path.exists()
        con: sqlite3.Connection | None = None
        try:
            con = self._con = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S,
                                              isolation_level=None)
            con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            con.execute("PRAGMA journal_mode = WAL")
            con.execute("PRAGMA foreign_keys = ON")
            migrate(con, self._fill_steps)
        except BaseException as exc:
            if con is not None:
                con.close()
            if isinstance(exc, HistorySchemaError):
                raise HistoryError(f"{self.path}: {exc}") from None
            if not isinstance(exc, sqlite3.Error | OSError):
                raise
            if not existed and _disk_full(exc):  # the database this call began is removed
                for leftover in ("", "-wal", "-shm", "-journal"):
                    with suppress(OSError):
                        Path(f"{self.path}{leftover}").unlink(missing_ok=True)
            raise self._failure(exc, "cannot be opened as a history database") from None

    def _failure(self, exc: sqlite3.Error | OSError, what: str) -> HistoryError:
        """The error for ``exc`` raised by SQLite on this database: a full disk (SQLite's
        "database or disk is full", or ``ENOSPC``) is named as such, with the fix."""
        if _disk_full(exc):
            from evalkit.io.outputs import reason_for

            return HistoryError(
                f"{self.path}: cannot be written: "
                f"{reason_for(self.path, OSError(errno.ENOSPC, ''))} (SQLite: {exc}); "
                "nothing was added; free space there, or name a database on another disk "
                "with --db")
        return HistoryError(f"{self.path}: {what}: {exc}")

    def close(self) -> None:
        """Close the connection."""
        self._con.close()

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        try:
            self._con.execute("BEGIN IMMEDIATE")  # waits up to the busy timeout for a writer
            try:
                yield self._con
                self._con.execute("COMMIT")
            except BaseException:
                rollback(self._con)  # nothing of the run is kept
                raise
        except sqlite3.Error as exc:
            raise self._failure(exc, "cannot be written") from None

    # -- adding ----------------------------------------------------------------
    def add(self, run: RunResult, *, label: str | None = None,
            commit: str | None = None) -> StoredRun:
        """Add ``run`` as the history's newest run, with its step from the run before, or,
        when that one is not comparable (a break), from the latest earlier run that is.

        Returns:
            The run as stored.

        Raises:
            evalkit.gate.baseline.BaselineError: (a ``ValueError``) the run is
                incomplete as :func:`evalkit.gate.baseline.require_storable` says (no
                rows, errored cases, a case without a row, a metric that failed on a
                case, a non-finite value): a history run, like a baseline, must hold
                every metric on every case.
        """
        from evalkit.gate.baseline import require_storable
        from evalkit.gate.fingerprint import fingerprint

        require_storable(run, what="a run of a history", then="add it")
        current_fp = fingerprint(run, aggregates=False)
        with self._writing() as con:
            previous_id = con.execute("SELECT MAX(id) FROM runs").fetchone()[0]
            step = self._step_to(previous_id, run, current_fp)
            run_id = self._insert(con, run, label, commit, current_fp.to_json())
            self._insert_step(con, run_id, step)
        return self.stored(run_id)

    def _step_to(self, previous_id: int | None, run: RunResult, current_fp: Any) -> Step:
        """The step of ``run``: against ``previous_id`` (the run recorded just before it)
        when comparable, else against the latest earlier run evaluated alike (its
        fingerprint agrees and the comparison accepts them), the break's reasons kept;
        else the break alone."""
        from evalkit.gate.fingerprint import fingerprint_differences
        from evalkit_history.steps import Step, step_between

        if previous_id is None:
            return step_between(None, None, None, run, current_fp)
        just_before = step_between(self.load_id(previous_id), previous_id,
                                   self._fingerprint(previous_id), run, current_fp)
        if just_before.comparable:
            return just_before
        names = set(run.metric_names())
        for (earlier_id,) in self._con.execute(
                "SELECT id FROM runs WHERE id < ? ORDER BY id DESC", (previous_id,)
                ).fetchall():
            fp = self._fingerprint(earlier_id)
            shared = [m for (m,) in self._con.execute(
                "SELECT metric FROM means WHERE run_id = ? AND kind = 'metric'",
                (earlier_id,)) if m in names]
            if not shared or fingerprint_differences(fp, current_fp, metrics=shared):
                continue  # cheap: the run is loaded only when its fingerprint agrees
            step = step_between(self.load_id(earlier_id), earlier_id, fp, run, current_fp)
            if step.comparable:
                return Step(earlier_id, True, just_before.reasons, step.metrics,
                            step.settings, before_id=previous_id)
        return just_before

    def _fingerprint(self, run_id: int) -> Any:
        from evalkit.gate.fingerprint import Fingerprint

        fp_text = self._con.execute("SELECT fingerprint FROM runs WHERE id = ?",
                                    (run_id,)).fetchone()[0]
        return Fingerprint.from_json(self._json(fp_text), f"run #{run_id}")

    def _insert(self, con: sqlite3.Connection, run: RunResult, label: str | None,
                commit: str | None, fp: Mapping[str, Any]) -> int:
        from evalkit.data.artifact import artifact_line

        added = datetime.now(UTC).isoformat(timespec="seconds")
        cur = con.execute(
            "INSERT INTO runs (name, label, commit_sha, added, header, fingerprint) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (run.name, label, commit, added, artifact_line(run.header),
             json.dumps(fp, allow_nan=False)))
        run_id = cur.lastrowid
        assert run_id is not None
        rows = run.samples or run.per_query
        con.executemany(
            "INSERT INTO rows (run_id, seq, case_id, sample, row) VALUES (?, ?, ?, ?, ?)",
            [(run_id, i, r.query_id, r.sample, artifact_line(r.to_json()).rstrip("\n"))
             for i, r in enumerate(rows)])
        values = [(run_id, m, "metric", v) for m, v in run.means().items()]
        aggregates = run.header.get("aggregates")
        if isinstance(aggregates, Mapping):
            values += [(run_id, str(a), "aggregate", float(v)) for a, v in aggregates.items()
                       if isinstance(v, int | float)]
        con.executemany("INSERT INTO means (run_id, metric, kind, value) VALUES (?, ?, ?, ?)",
                        values)
        return run_id

    @staticmethod
    def _insert_step(con: sqlite3.Connection, run_id: int, step: Step) -> None:
        con.execute(
            "INSERT INTO steps (run_id, previous_id, comparable, reasons, settings) "
            "VALUES (?, ?, ?, ?, ?)",
            (run_id, step.previous_id, int(step.comparable),
             json.dumps(list(step.reasons), allow_nan=False),
             json.dumps(dict(step.settings), allow_nan=False)))
        con.executemany(
            "INSERT INTO step_metrics (run_id, metric, n, diff, ci_low, ci_high, p_value, "
            "p_adjusted, significant, method, higher_is_better) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(run_id, m.metric, m.n, m.diff, m.ci_low, m.ci_high, m.p_value, m.p_adjusted,
              int(m.significant), m.method, int(m.higher_is_better)) for m in step.metrics])

    def _fill_steps(self, con: sqlite3.Connection) -> None:
        """Migration 1 -> 2: the fingerprint and the step of every run already stored
        (each as :meth:`add` computes it, in the order added)."""
        from evalkit.gate.fingerprint import fingerprint

        previous_id: int | None = None
        for (run_id,) in con.execute("SELECT id FROM runs ORDER BY id").fetchall():
            run = self.load_id(run_id)
            fp = fingerprint(run, aggregates=False)
            con.execute("UPDATE runs SET fingerprint = ? WHERE id = ?",
                        (json.dumps(fp.to_json(), allow_nan=False), run_id))
            self._insert_step(con, run_id, self._step_to(previous_id, run, fp))
            previous_id = run_id

    # -- reading ---------------------------------------------------------------
    def _json(self, text: str) -> Any:
        """A JSON value stored in the database, read with the bounded loader of run
        artifacts (:func:`evalkit.io.limits.loads_json`).

        Raises:
            HistoryError: not JSON, or nested too deeply; naming the database.
        """
        from evalkit.io.limits import MAX_ARTIFACT_DEPTH, loads_json

        try:
            return loads_json(text, MAX_ARTIFACT_DEPTH)
        except ValueError as exc:
            raise HistoryError(f"{self.path}: a stored value cannot be read ({exc}); the "
                               "database was altered: add the runs again to a new one"
                               ) from None

    def load_id(self, run_id: int) -> RunResult:
        """The run stored as ``run_id``, rebuilt from its header and rows.

        Raises:
            HistoryError: no such run.
        """
        from evalkit.data.results import RunResult
        from evalkit.data.rows import row_from_json

        found = self._con.execute("SELECT name, header FROM runs WHERE id = ?",
                                  (run_id,)).fetchone()
        if found is None:
            raise HistoryError(f"{self.path}: no run #{run_id}")
        name, header_text = found
        header = self._json(header_text)
        rows = [row_from_json(self._json(text)) for (text,) in self._con.execute(
            "SELECT row FROM rows WHERE run_id = ? ORDER BY seq", (run_id,))]
        samples: list[Any] = []
        if any(r.sample is not None for r in rows):
            from evalkit.data.samples import split_samples

            rows, samples = split_samples(rows, header)
        return RunResult(name=name, per_query=rows, header=header, samples=samples)

    def find(self, ref: str) -> int:
        """The id of the run ``ref`` names: its number (``3`` or ``#3``), ``latest`` for
        the newest and ``latest~1`` for the one before it (or ``-1``, ``-2``), or its
        label, its commit (or a prefix of at least 7 characters) or its name, when
        exactly one run has it. Digits alone (``1111111``) are a run number when a run
        has that number, else a label, name or commit prefix; when both a run number and
        another run match, the number is used and a
        :class:`~evalkit.io.user_warnings.UserNotice` says so (``#N`` is always the
        number).

        Raises:
            HistoryError: no run, or several, match (the message lists them).
        """
        text = ref.removeprefix("#")
        if text == "latest" or (text.startswith("latest~") and text[7:].isdigit()):
            text = str(-1 - int(text[7:] or 0))
        if text.lstrip("-").isdigit():
            number = int(text)
            ids = [r[0] for r in self._con.execute("SELECT id FROM runs ORDER BY id")]
            if number < 0 and -number <= len(ids):
                return int(ids[number])
            named = [] if ref.startswith("#") or number < 0 else self._named(ref)
            if number > 0 and number in ids:
                if [i for i in named if i != number]:
                    import warnings

                    from evalkit.io.user_warnings import UserNotice

                    warnings.warn(UserNotice(
                        f"{ref} names run #{number}, and also the label, name or commit "
                        f"of run(s) {', '.join(f'#{i}' for i in named)}; run #{number} "
                        "is used (name the other by its number, or by more of its commit)"),
                        stacklevel=2)
                return number
            if not named:
                raise HistoryError(f"{self.path}: no run {ref} (the history holds "
                                   f"{len(ids)} run(s){', numbered from 1' if ids else ''})")
        matches = self._named(ref)
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise HistoryError(f"{self.path}: no run has the label, name or commit {ref!r}; "
                               "`evalkit history show` lists them")
        shown = ", ".join(f"#{i}" for i in matches[:10])
        raise HistoryError(f"{self.path}: {len(matches)} runs match {ref!r} ({shown}); "
                           "name one by its number")

    def _named(self, ref: str) -> list[int]:
        """The ids of the runs whose label, name or commit is ``ref``, or whose commit
        starts with it (7 characters or more)."""
        return [int(r[0]) for r in self._con.execute(
            "SELECT id FROM runs WHERE label = ? OR name = ? OR commit_sha = ? "
            "OR (length(?) >= 7 AND commit_sha LIKE ? || '%') ORDER BY id",
            (ref, ref, ref, ref, ref))]

    def stored(self, run_id: int) -> StoredRun:
        """The run ``run_id`` as listed (:meth:`runs`)."""
        (run,) = self._listed("WHERE r.id = ?", (run_id,))
        return run

    def runs(self, last: int | None = None) -> list[StoredRun]:
        """The runs in the order added, the ``last`` newest only when given, read from the
        stored means and steps (no run is rebuilt, nothing resampled)."""
        if last is not None:
            return self._listed("WHERE r.id IN (SELECT id FROM runs ORDER BY id DESC "
                                "LIMIT ?)", (last,))
        return self._listed("", ())

    def _listed(self, where: str, args: Sequence[Any]) -> list[StoredRun]:
        con = self._con
        heads = con.execute(
            "SELECT r.id, r.name, r.label, r.commit_sha, r.added, "
            "json_extract(r.header, '$.created'), "
            "(SELECT COUNT(DISTINCT case_id) FROM rows WHERE run_id = r.id), "
            "s.previous_id, s.comparable, s.reasons, s.settings, "
            "(SELECT MAX(id) FROM runs WHERE id < r.id) "
            f"FROM runs r LEFT JOIN steps s ON s.run_id = r.id {where} ORDER BY r.id",
            tuple(args)).fetchall()
        ids = [h[0] for h in heads]
        means: dict[int, dict[str, dict[str, float]]] = {i: {"metric": {}, "aggregate": {}}
                                                         for i in ids}
        steps: dict[int, list[MetricStep]] = {i: [] for i in ids}
        if ids:
            marks = ",".join("?" * len(ids))
            for run_id, metric, kind, value in con.execute(
                    f"SELECT run_id, metric, kind, value FROM means WHERE run_id IN ({marks})",
                    ids):
                means[run_id].setdefault(kind, {})[metric] = value
            for row in con.execute(
                    "SELECT run_id, metric, n, diff, ci_low, ci_high, p_value, p_adjusted, "
                    "significant, method, higher_is_better FROM step_metrics "
                    f"WHERE run_id IN ({marks})", ids):
                steps[row[0]].append(MetricStep(
                    row[1], row[2], row[3], row[4], row[5], row[6], row[7], bool(row[8]),
                    row[9], bool(row[10])))
        return [StoredRun(
            id=h[0], name=h[1], label=h[2], commit=h[3], added=h[4], created=h[5],
            n_cases=h[6], means=means[h[0]]["metric"], aggregates=means[h[0]]["aggregate"],
            step=Step(h[7], bool(h[8]), tuple(self._json(h[9] or "[]")),
                      tuple(steps[h[0]]), self._json(h[10] or "{}"), before_id=h[11]),
        ) for h in heads]


__all__ = ["BUSY_TIMEOUT_S", "DEFAULT_DB", "History", "HistoryError", "StoredRun", "db_path"]
