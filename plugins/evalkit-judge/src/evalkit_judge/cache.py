"""The grade cache: one SQLite row per grade, committed as each grade arrives.

Layout (``meta.format = "evalkit-judge-cache"``, ``meta.version = "1"``):

* ``grades(key, case_id, model, score, reason, input_tokens, output_tokens,
  cache_creation_input_tokens, cache_read_input_tokens, served_model, source, created,
  reply)``: one row per valid grade, keyed by the hash of the request that produced it;
  ``reply`` is the API reply as JSON text;
* ``rejected(id, key, case_id, model, error, reply, created)``: replies that arrived but
  were not a valid grade (no tool call, score outside the scale). They are kept because
  they were paid for, and never served as grades;
* ``seed_grades(seed_key, score, reason, source_file, imported)``: grades imported from
  the 0.2 JSON cache, looked up by the 0.2 key (see :meth:`GradeCache.seed_get`).

Concurrency: the database is in WAL mode with a busy timeout; each thread (and each
process) has its own connection; every write is a single-statement transaction, so a
grade is durable once :meth:`GradeCache.put` returns. Opening a cache checks it under a
lock file (``<path>.lock``): a missing file starts a new cache; an empty, corrupted or
foreign file is renamed aside (``<name>.corrupt-<time>``), never deleted, and a new cache
is started; a 0.2 JSON cache is renamed aside (``<name>.seed-<time>.json``) and its grades
imported. Each event is appended to :attr:`GradeCache.notices`, logged (INFO), and warned about
with :class:`JudgeCacheWarning` (a new cache in place of a missing file is logged only).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.io.redaction import mask
from evalkit.io.user_warnings import UserNotice
from evalkit_judge.budget import Usage
from evalkit_judge.cache_format import (
    FORMAT,
    SCHEMA,
    SQLITE_MAGIC,
    VERSION,
    read_head,
    read_seed_json,
)

try:  # POSIX advisory locks; elsewhere the open check runs unlocked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("evalkit_judge")


class JudgeCacheWarning(UserNotice):
    """A cache file was set aside (renamed) or imported when the cache was opened (the
    command line prints it as one ``warning:`` line)."""


#: How often opening a cache looks again at a lock file another process holds (seconds).
_LOCK_POLL_S = 0.05


class CacheError(RuntimeError):
    """The cache cannot be used (for example its directory is not writable)."""


@dataclass(frozen=True)
class StoredGrade:
    """A grade read back from the cache."""

    key: str
    case_id: str
    model: str
    score: int
    reason: str
    usage: Usage
    served_model: str | None
    source: str


class GradeCache:
    """A SQLite grade cache at ``path``, safe for concurrent threads and processes.

    Args:
        path: the database file; its directory is created if needed.
        busy_timeout: seconds a write waits for another writer's lock before failing,
            and opening the cache for another process that holds ``<path>.lock``.
        durable: ``True`` (default) syncs every commit to disk (``synchronous=FULL``), so a
            grade survives a power loss, not only a crash of the process; ``False`` uses
            ``synchronous=NORMAL`` (a crash of the process still loses nothing).

    Raises:
        CacheError: the directory cannot be created, the file cannot be opened, set
            aside or created, or another process holds ``<path>.lock`` for more than
            ``busy_timeout``.
    """

    def __init__(self, path: str | Path, *, busy_timeout: float = 30.0,
                 durable: bool = True) -> None:
        self.path = Path(path)
        self.busy_timeout = float(busy_timeout)
        self.durable = durable
        self.notices: list[str] = []
        self._local = threading.local()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._file_lock():
                self._prepare()
        except OSError as exc:
            raise CacheError(f"judge cache {self.path}: {exc}") from exc

    # ------------------------------------------------------------------ opening
    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        lock_path = self.path.with_name(self.path.name + ".lock")
        if fcntl is None:  # pragma: no cover - Windows
            yield
            return
        with open(lock_path, "a+b") as fh:
            # bounded like a write: another process checks the cache under this lock for
            # as long as its check takes, and a stopped one (SIGSTOP) would hold it for ever
            deadline = time.monotonic() + self.busy_timeout
            while True:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise CacheError(
                            f"judge cache {self.path}: another process has held "
                            f"{lock_path} for more than busy_timeout "
                            f"({self.busy_timeout:g} s) while it opens the cache; "
                            "stop it, or use another cache_path") from None
                    time.sleep(_LOCK_POLL_S)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _notice(self, message: str, *, warn: bool = True) -> None:
        self.notices.append(message)
        log.info(message)  # warned about once, not logged at WARNING as well
        if warn:
            warnings.warn(message, JudgeCacheWarning, stacklevel=4)

    def _prepare(self) -> None:
        p = self.path
        from evalkit.io.user_files import regular_file_problem

        problem = regular_file_problem(p, "judge cache")
        if problem is not None:  # a FIFO would block the read below; /dev/null be renamed
            kind = "a directory" if p.is_dir() else "a pipe or device, not a regular file"
            raise CacheError(f"judge cache {p}: is {kind}; the judge cache is a SQLite file "
                             "that evalkit reads and writes: pass the path of a file (it is "
                             "created when missing)")
        if not p.exists():
            self._create()
            self._notice(f"judge cache {p}: no file; a new cache was started", warn=False)
            return
        head = read_head(p)
        if head == b"":
            aside = self._set_aside("corrupt")
            self._create()
            self._notice(f"judge cache {p}: the file was empty; it was renamed to {aside} "
                         "and a new cache was started")
            return
        if head.startswith(SQLITE_MAGIC):
            problem = self._check_sqlite()
            if problem is None:
                return
            aside = self._set_aside("corrupt")
            self._create()
            self._notice(f"judge cache {p}: {problem}; the file was renamed to {aside} and a "
                         "new cache was started (its grades will be requested again)")
            return
        if head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"["):
            grades, skipped, problem = read_seed_json(p)
            if problem is None:
                aside = self._set_aside("seed", suffix=".json")
                self._create()
                self._insert_seed(grades, str(aside))
                extra = f" ({skipped} malformed entr(y/ies) skipped)" if skipped else ""
                self._notice(f"judge cache {p}: a 0.2 JSON cache; {len(grades)} grade(s) "
                             f"imported{extra}, the JSON file was renamed to {aside}")
                return
            aside = self._set_aside("corrupt")
            self._create()
            self._notice(f"judge cache {p}: {problem}; the file was renamed to {aside} and a "
                         "new cache was started")
            return
        aside = self._set_aside("corrupt")
        self._create()
        self._notice(f"judge cache {p}: not a judge cache (neither SQLite nor JSON); it was "
                     f"renamed to {aside} and a new cache was started")

    def _check_sqlite(self) -> str | None:
        """``None`` when the file is a usable judge cache, else what is wrong with it."""
        try:
            conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout,
                                   isolation_level=None)
        except sqlite3.Error as exc:
            return f"cannot be opened ({exc})"
        try:
            row = conn.execute("PRAGMA quick_check").fetchone()
            if row is None or row[0] != "ok":
                return f"failed its integrity check ({row[0] if row else 'no answer'})"
            tables = {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "meta" not in tables:
                return "is an SQLite database but not a judge cache (no meta table)"
            meta = dict(conn.execute("SELECT name, value FROM meta").fetchall())
            if meta.get("format") != FORMAT:
                return "is an SQLite database but not a judge cache"
            if meta.get("version") != VERSION:
                return (f"has cache format version {meta.get('version')!r}; this "
                        f"evalkit-judge reads version {VERSION}")
            conn.executescript(SCHEMA)
            conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.Error as exc:
            return f"is corrupted ({exc})"
        finally:
            conn.close()
        return None

    def _set_aside(self, label: str, suffix: str = "") -> Path:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        n = 0
        while True:
            tail = f".{label}-{stamp}" + (f"-{n}" if n else "") + suffix
            target = self.path.with_name(self.path.name + tail)
            if not target.exists():
                break
            n += 1
        os.replace(self.path, target)
        for side in ("-wal", "-shm", "-journal"):
            extra = self.path.with_name(self.path.name + side)
            if extra.exists():
                os.replace(extra, target.with_name(target.name + side))
        return target

    def _create(self) -> None:
        conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(SCHEMA)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (FORMAT,))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (VERSION,))
        except sqlite3.Error as exc:
            raise CacheError(f"judge cache {self.path}: cannot create it ({exc})") from exc
        finally:
            conn.close()

    def _insert_seed(self, grades: Mapping[str, tuple[int, str]], source: str) -> int:
        now = time.time()
        conn = self._conn()
        with _transaction(conn):
            before = conn.total_changes
            conn.executemany(
                "INSERT OR IGNORE INTO seed_grades VALUES (?, ?, ?, ?, ?)",
                [(k, s, r, source, now) for k, (s, r) in grades.items()],
            )
            return conn.total_changes - before

    # ------------------------------------------------------------------ connections
    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            return conn
        try:
            conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout,
                                   isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout={int(self.busy_timeout * 1000)}")
            conn.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'NORMAL'}")
        except sqlite3.Error as exc:
            raise CacheError(f"judge cache {self.path}: cannot open it ({exc})") from exc
        self._local.conn = conn
        self._local.pid = os.getpid()
        with self._conns_lock:
            self._conns.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection this object opened (in any thread of this process)."""
        with self._conns_lock:
            conns, self._conns = self._conns, []
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()

    # ------------------------------------------------------------------ grades
    def get(self, key: str) -> StoredGrade | None:
        """The grade stored under ``key``, or ``None``.

        Raises:
            CacheError: the database cannot be read.
        """
        try:
            row = self._conn().execute(
                "SELECT case_id, model, score, reason, input_tokens, output_tokens, "
                "cache_creation_input_tokens, cache_read_input_tokens, served_model, source "
                "FROM grades WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"judge cache {self.path}: cannot read a grade ({exc})") from exc
        if row is None:
            return None
        return StoredGrade(key=key, case_id=row[0], model=row[1], score=int(row[2]),
                           reason=row[3], usage=Usage(row[4], row[5], row[6], row[7]),
                           served_model=row[8], source=row[9])

    def put(self, key: str, *, case_id: str, model: str, score: int, reason: str,
            usage: Usage, served_model: str | None, source: str,
            reply: Mapping[str, Any] | None) -> bool:
        """Store one grade and commit it before returning.

        Returns:
            ``True`` if the row was written, ``False`` if another writer had already
            stored a grade under ``key`` (the first one is kept).

        Raises:
            CacheError: the write failed (disk full, lock held past ``busy_timeout``).
        """
        text = None if reply is None else mask(json.dumps(reply, ensure_ascii=False,
                                                          default=str))
        reason = mask(reason)  # a reply may quote a registered secret: never stored
        try:
            cur = self._conn().execute(
                "INSERT OR IGNORE INTO grades VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key, case_id, model, int(score), reason, usage.input_tokens,
                 usage.output_tokens, usage.cache_creation_input_tokens,
                 usage.cache_read_input_tokens, served_model, source, time.time(), text))
        except sqlite3.Error as exc:
            raise CacheError(f"judge cache {self.path}: cannot store a grade ({exc})") from exc
        return cur.rowcount == 1

    def reject(self, key: str, *, case_id: str, model: str, error: str,
               reply: Mapping[str, Any] | None) -> None:
        """Keep a reply that was not a valid grade (it is never served as one).

        Raises:
            CacheError: the write failed.
        """
        text = None if reply is None else mask(json.dumps(reply, ensure_ascii=False,
                                                          default=str))
        try:
            self._conn().execute(
                "INSERT INTO rejected (key, case_id, model, error, reply, created) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (key, case_id, model, mask(error), text, time.time()))
        except sqlite3.Error as exc:
            raise CacheError(f"judge cache {self.path}: cannot store a reply ({exc})") from exc

    def seed_get(self, seed_key: str) -> tuple[int, str] | None:
        """The imported 0.2 grade ``(score, reason)`` under the 0.2 key, or ``None``."""
        try:
            row = self._conn().execute(
                "SELECT score, reason FROM seed_grades WHERE seed_key = ?",
                (seed_key,)).fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"judge cache {self.path}: cannot read a grade ({exc})") from exc
        return None if row is None else (int(row[0]), str(row[1]))

    def has_seed_grades(self) -> bool:
        """Whether any 0.2 grades were imported.

        Raises:
            CacheError: the database cannot be read.
        """
        try:
            row = self._conn().execute("SELECT 1 FROM seed_grades LIMIT 1").fetchone()
        except sqlite3.Error as exc:
            raise CacheError(f"judge cache {self.path}: cannot read it ({exc})") from exc
        return row is not None

    def import_seed_json(self, path: str | Path) -> int:
        """Import the grades of a 0.2 JSON cache file (left in place, unchanged).

        Returns:
            The number of grades added (grades already imported are not counted).

        Raises:
            CacheError: the file is not a 0.2 JSON cache.
        """
        grades, _skipped, problem = read_seed_json(Path(path))
        if problem is not None:
            raise CacheError(f"{path}: {problem}")
        return self._insert_seed(grades, str(path))

    def counts(self) -> dict[str, int]:
        """``{"grades": n, "rejected": n, "seed_grades": n}``."""
        conn = self._conn()
        return {table: int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
                for table in ("grades", "rejected", "seed_grades")}

    def __len__(self) -> int:
        return self.counts()["grades"]


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


