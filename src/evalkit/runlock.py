"""One writer per run artifact: an exclusive advisory lock on ``<artifact>.lock``.

The target runner replaces its artifact by rename (on resume and at the end), so two
processes writing the same artifact would each replace the other's rows. :func:`run_lock`
holds an exclusive ``flock`` on a sidecar file for the whole run; a second writer is
refused at once, naming the path and the holder's pid.

The kernel releases an ``flock`` when the process holding it dies, however it dies
(``kill -9`` included), so a resume after a crash is never blocked by a stale lock; the
pid written in the file is only there for the message. The lock file is removed when the
run ends. POSIX only: where ``fcntl`` does not exist the run is not locked.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]


class ArtifactBusyError(OSError):
    """Another process is writing the artifact (the message names it and the pid)."""

    def __init__(self, message: str, pid: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.pid = pid

    def __str__(self) -> str:
        return self.message


def lock_path(artifact: str | Path) -> Path:
    """The sidecar lock file of ``artifact``: ``<artifact>.lock``."""
    p = Path(artifact)
    return p.with_name(p.name + ".lock")


def _holder(fd: int) -> int | None:
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _acquire(artifact: Path, lock: Path) -> int:
    for _ in range(20):  # a finishing holder may remove the file between open and lock
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder(fd)
            os.close(fd)
            who = f"pid {pid}" if pid is not None else "a process whose pid is not written yet"
            raise ArtifactBusyError(
                f"{artifact} is being written by another run ({who} holds {lock}); "
                "wait for it to finish, or write to another output", pid) from None
        except BaseException:
            os.close(fd)
            raise
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
            return fd
        os.close(fd)  # we locked a file the previous holder had just removed
    raise ArtifactBusyError(f"{artifact}: could not take {lock}; another run keeps "
                            "replacing it", None)


@contextlib.contextmanager
def run_lock(artifact: str | Path) -> Iterator[Path]:
    """Hold the exclusive lock of ``artifact`` for the block; yields the lock file.

    Raises:
        ArtifactBusyError: (an ``OSError``) another process holds it; raised at once.
        evalkit.outputs.UnwritableError: the lock file cannot be created.
    """
    from evalkit.outputs import writing

    art = Path(artifact)
    lock = lock_path(art)
    if fcntl is None:  # pragma: no cover - not POSIX
        yield lock
        return
    with writing(lock):  # says why when the lock file cannot be created at all
        lock.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(lock, os.O_RDWR | os.O_CREAT, 0o644))
    fd = _acquire(art, lock)
    try:
        yield lock
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)  # while still holding it: the next writer locks a new file
        os.close(fd)
