"""Whether two runs are one piece of evidence: the same file (a path, a link, a hard
link), a byte copy of it, or a copy of the same recorded run. One implementation for the
gate (a baseline that is the gated run itself) and the pooling over collections (two
collections that are one collection).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

#: bytes read at a time when hashing a file
_CHUNK = 1 << 20


def file_key(path: str | os.PathLike[str] | None) -> tuple[int, int] | None:
    """``(device, inode)`` of the file ``path`` names, links followed (equal for a
    relative path, a link and a hard link to one file, as :func:`os.path.samefile`);
    None without a path or when it cannot be read."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def same_file(a: str | os.PathLike[str] | None, b: str | os.PathLike[str] | None) -> bool:
    """Whether paths ``a`` and ``b`` name one file (:func:`file_key`)."""
    key = file_key(a)
    return key is not None and key == file_key(b)


def content_digest(path: str | os.PathLike[str] | None) -> str | None:
    """The SHA-256 (hex) of the bytes of the regular file ``path`` (equal for byte
    copies); None without a path, for anything but a regular file, or when it cannot be
    read."""
    if path is None:
        return None
    try:
        p = Path(path)
        if not p.is_file():
            return None
        digest = hashlib.sha256()
        with p.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
    except (OSError, ValueError):
        return None
    return digest.hexdigest()


def run_identity(run: Any) -> tuple[Any, ...] | None:
    """What makes a :class:`~evalkit.RunResult` one run: its header's name and start and
    end times with every row's id, metric values and latency (a copy, or a baseline
    promoted from it, has the same); None without a recorded start (a TREC run file)."""
    header = run.header or {}
    if not header.get("created"):
        return None
    rows = tuple((_row_id(r), tuple(sorted(r.metrics.items())), getattr(r, "latency_ms", None))
                 for r in run.per_query)
    return (header.get("name"), header.get("created"), header.get("finished"), rows)




def _row_id(row: Any) -> str:
    """The case id of a row: ``case_id`` (target runs), ``query_id`` (retrieval runs) or
    ``id``; ``""`` for a row without one (it then matches only another without one)."""
    for attr in ("case_id", "query_id", "id"):
        value = getattr(row, attr, None)
        if value is not None:
            return str(value)
    return ""


__all__ = ["content_digest", "file_key", "run_identity", "same_file"]
