"""The grade cache's file format: its SQLite schema and version, and the 0.2 JSON cache
that a new cache imports."""

from __future__ import annotations

import json
import re
from pathlib import Path

FORMAT = "evalkit-judge-cache"


VERSION = "1"


SQLITE_MAGIC = b"SQLite format 3\x00"


_SEED_KEY = re.compile(r"^[0-9a-f]{64}$")


SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS grades (
    key TEXT PRIMARY KEY,
    case_id TEXT NOT NULL,
    model TEXT NOT NULL,
    score INTEGER NOT NULL,
    reason TEXT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0,
    cache_read_input_tokens INTEGER NOT NULL DEFAULT 0,
    served_model TEXT,
    source TEXT NOT NULL,
    created REAL NOT NULL,
    reply TEXT
);
CREATE TABLE IF NOT EXISTS rejected (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    case_id TEXT NOT NULL,
    model TEXT NOT NULL,
    error TEXT NOT NULL,
    reply TEXT,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS seed_grades (
    seed_key TEXT PRIMARY KEY,
    score INTEGER NOT NULL,
    reason TEXT NOT NULL,
    source_file TEXT NOT NULL,
    imported REAL NOT NULL
);
"""


def read_head(path: Path) -> bytes:
    """The first 64 bytes of the cache file ``path``.

    Raises:
        ValueError: ``path`` is a directory, a pipe or a device (opened without blocking,
            :func:`evalkit.io.user_files.open_input`), naming it.
    """
    from evalkit.io.user_files import open_input

    with open_input(path, "judge cache", error=ValueError) as fh:
        return fh.read(64)


def read_seed_json(path: Path) -> tuple[dict[str, tuple[int, str]], int, str | None]:
    """Parse a 0.2 JSON cache: ``{sha256 hex: {"score": int, "reason": str}}``.

    Returns ``(grades, skipped entries, problem)``; ``problem`` is ``None`` when the file
    is a 0.2 cache (an empty object is one).
    """
    from evalkit.io.limits import LimitError, loads_json
    from evalkit.io.user_files import read_input

    try:  # bounded depth: a file nested 200,000 deep is refused, not a RecursionError
        data = loads_json(read_input(path, "JSON cache", max_bytes=1 << 30,
                                     error=LimitError).decode("utf-8-sig"))
    except LimitError as exc:
        return {}, 0, f"is refused: {str(exc).removeprefix(f'{path}: ')}"
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return {}, 0, f"is not valid JSON ({exc})"
    if not isinstance(data, dict):
        return {}, 0, "is JSON but not an object of grades"
    grades: dict[str, tuple[int, str]] = {}
    skipped = 0
    for key, value in data.items():
        score = value.get("score") if isinstance(value, dict) else None
        reason = value.get("reason", "") if isinstance(value, dict) else None
        if (_SEED_KEY.match(str(key)) and isinstance(score, int)
                and not isinstance(score, bool) and isinstance(reason, str)):
            grades[str(key)] = (score, reason)
        else:
            skipped += 1
    if data and not grades:
        return {}, skipped, "is JSON but holds no 0.2 grades"
    return grades, skipped, None
