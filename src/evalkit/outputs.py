"""Writing output files: check a destination before the work, and say why a write failed.

Every file evalkit writes (run artifacts, baselines, reports) goes through :func:`writing`,
so a failure names the destination that was asked for, never the temporary file written
beside it, says that it cannot be *written* (an operating system's "No such file or
directory" for a file being created reads like a missing input) and why: permission
denied, a read-only file system, a folder that does not exist and cannot be created, a
folder that is a file, a full disk.

:func:`check_writable` asks the same question before any work is done, so that a command
refuses a destination it could not write instead of evaluating first and failing at the
end. Missing folders are not an error: writers create them, and the check asks whether
the nearest existing folder lets them be created.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


class UnwritableError(OSError):
    """``path`` cannot be written; ``reason`` says why in words.

    ``str()`` is the whole message: ``"<path>: cannot be written: <reason>"``. ``errno`` is
    the operating system's error number when one caused it.
    """

    def __init__(self, path: str | os.PathLike[str], reason: str,
                 code: int | None = None) -> None:
        super().__init__(code, reason)
        self.path = Path(path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.path}: cannot be written: {self.reason}"


def _existing_folder(path: Path) -> tuple[Path, Path | None]:
    """``(nearest existing ancestor of path's folder, topmost missing folder or None)``."""
    folder, missing = path.parent, None
    while not (folder.exists() or folder.is_symlink()) and folder != folder.parent:
        missing, folder = folder, folder.parent
    return folder, missing


def _not_a_folder(folder: Path) -> str:
    if folder.is_symlink() and not folder.exists():
        return f"{folder} is a broken symbolic link, not a folder"
    return f"{folder} is a file, not a folder"


def _why(code: int | None, strerror: str | None, folder: Path, path: Path) -> str:
    """Why a file could not be created in (or written to) ``folder``, in words."""
    if code in (errno.EACCES, errno.EPERM):
        if path.is_file() and not os.access(path, os.W_OK):
            return "permission denied: the file is read-only (check its permissions)"
        return f"permission denied: the folder {folder} is not writable"
    if code == errno.EROFS:
        return f"the folder {folder} is on a read-only file system"
    if code == errno.ENOENT:
        # the folder exists, yet creating a file in it says "no such file": a virtual
        # file system such as /proc
        return f"the folder {folder} does not accept new files"
    if code == errno.ENOSPC:
        return f"no space left on the device that holds {folder}"
    if code == getattr(errno, "EDQUOT", None):
        return f"disk quota exceeded on the device that holds {folder}"
    if code == errno.ENAMETOOLONG:
        return "the file name is too long"
    return strerror or "unknown error"


def reason_for(path: str | os.PathLike[str], exc: OSError) -> str:
    """Why writing ``path`` failed with ``exc``, naming the folder at fault."""
    p = Path(path)
    if p.is_dir():
        return f"it is a directory; name a file inside it (for example {p / 'NAME'})"
    folder, missing = _existing_folder(p)
    if not folder.is_dir():
        return _not_a_folder(folder)
    code = exc.errno
    if code == errno.EISDIR:
        return f"it is a directory; name a file inside it (for example {p / 'NAME'})"
    why = _why(code, exc.strerror, folder, p)
    if missing is not None:
        return f"the folder {missing} does not exist and cannot be created: {why}"
    return why


def unwritable(path: str | os.PathLike[str], exc: OSError) -> UnwritableError:
    """``exc`` (raised while writing ``path``) as an :class:`UnwritableError` naming
    ``path``."""
    if isinstance(exc, UnwritableError):
        return exc
    return UnwritableError(path, reason_for(path, exc), exc.errno)


@contextlib.contextmanager
def writing(path: str | os.PathLike[str]) -> Iterator[None]:
    """Run a block that writes ``path`` (directly or through a temporary file beside it):
    an :class:`OSError` it raises comes out as an :class:`UnwritableError` naming ``path``.
    """
    try:
        yield
    except OSError as exc:
        raise unwritable(path, exc) from exc


def check_writable(path: str | os.PathLike[str], *, in_place: bool = False) -> None:
    """Refuse, before any work, a destination that cannot be written.

    The path must not be a directory, and the folder that will hold it must let a file be
    created (tried for real: a temporary file is created and removed, since permission
    bits say nothing for root or for virtual file systems such as ``/proc``). Missing
    folders are accepted when the nearest existing one lets them be created. An existing
    device or pipe (``/dev/stdout``) is accepted as is. With ``in_place`` (the file is
    written into rather than replaced) an existing file must itself be writable.

    Raises:
        UnwritableError: the message names ``path`` and why it cannot be written.
    """
    p = Path(path)
    if p.is_dir():
        raise UnwritableError(p, reason_for(p, OSError(errno.EISDIR, "")), errno.EISDIR)
    if p.exists() and not p.is_file():
        return
    folder, _missing = _existing_folder(p)
    if not folder.is_dir():
        raise UnwritableError(p, _not_a_folder(folder), errno.ENOTDIR)
    try:
        fd, probe = tempfile.mkstemp(prefix=".evalkit-write-check-", dir=folder)
    except OSError as exc:
        raise unwritable(p, exc) from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    if in_place and p.is_file() and not os.access(p, os.W_OK):
        raise UnwritableError(p, _why(errno.EACCES, None, folder, p), errno.EACCES)


__all__ = ["UnwritableError", "check_writable", "reason_for", "unwritable", "writing"]
