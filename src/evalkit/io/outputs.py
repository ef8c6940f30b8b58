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
the nearest existing folder lets them be created. :func:`require_writable` adds the
refusals a command (or :func:`evalkit.report.check_report_targets`) makes of an output
option: one of its own inputs, a directory.

What a destination is decides how it is written (:func:`destination`, :func:`write_output`):

* a regular file, or a path that does not exist yet, is replaced atomically: the text is
  written to a temporary file beside it, synced, renamed over it, and the folder synced,
  so a crash leaves either the old file or the new one (an existing file's permission
  bits are kept);
* a character device or a FIFO (``/dev/null``, ``/dev/stdout``, a named pipe) is written
  to directly: renaming over it would replace the device by a regular file;
* anything else (a directory, a socket, a block device) is refused before any work.

A symbolic link is followed: what it points to decides, and a regular file it points to
is the one replaced (in the folder of that file), so the link itself stays a link.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Literal


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
    if code == errno.EFBIG:
        return "the file would exceed the largest size this process may write"
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


def destination(path: str | os.PathLike[str]) -> Literal["file", "stream"]:
    """How ``path`` is written: ``"file"`` (a regular file or a missing path, replaced
    atomically) or ``"stream"`` (a character device or a FIFO, written to directly).
    Symbolic links are followed.

    Raises:
        UnwritableError: ``path`` is a directory, a socket, a block device or another
            kind of file that is not written to.
    """
    p = Path(path)
    try:
        mode = os.stat(p).st_mode
    except OSError:  # missing (a dangling link: its target is created), or the writer says
        return "file"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return "stream"
    if stat.S_ISDIR(mode):
        raise UnwritableError(p, reason_for(p, OSError(errno.EISDIR, "")), errno.EISDIR)
    kind = "a socket" if stat.S_ISSOCK(mode) else (
        "a block device" if stat.S_ISBLK(mode) else "not a regular file")
    raise UnwritableError(
        p, f"it is {kind}; evalkit writes regular files (replaced atomically), character "
        "devices and named pipes (written directly)", errno.EINVAL)


def sync_folder(folder: str | os.PathLike[str]) -> None:
    """``fsync`` a folder, so that a rename in it is durable (errors are ignored: some
    file systems cannot sync a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_output(path: str | os.PathLike[str], text: str | bytes | Iterable[str]) -> Path:
    """Write ``text`` (one string, pieces written in order, or bytes such as a Parquet
    file; text as UTF-8, a lone surrogate written as its ``\\udxxx`` escape) to ``path``
    as :func:`destination` says: a regular file is replaced atomically
    (temporary file beside it, fsync, rename, folder fsync; missing folders are created);
    a character device or FIFO is written to directly.

    Returns:
        ``path``.

    Raises:
        UnwritableError: names ``path`` (never the temporary file) and why it cannot be
            written; an existing file is left as it was.
    """
    p = Path(path)
    pieces: Iterable[str | bytes] = [text] if isinstance(text, str | bytes) else text
    binary = isinstance(text, bytes)

    def open_for_writing(target: Path) -> IO[Any]:
        # a lone surrogate (text UTF-8 cannot write) is written as its \\udxxx escape
        return target.open("wb") if binary else target.open(
            "w", encoding="utf-8", errors="backslashreplace")

    with writing(p):
        if destination(p) == "stream":
            with open_for_writing(p) as fh:
                for piece in pieces:
                    fh.write(piece)
            return p
        real = Path(os.path.realpath(p)) if p.is_symlink() else p
        real.parent.mkdir(parents=True, exist_ok=True)
        tmp = real.with_name(f".{real.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            with open_for_writing(tmp) as fh:
                for piece in pieces:
                    fh.write(piece)
                fh.flush()
                with contextlib.suppress(OSError):  # keep an existing file's permissions
                    os.chmod(fh.fileno(), stat.S_IMODE(os.stat(real).st_mode))
                os.fsync(fh.fileno())
            os.replace(tmp, real)
        finally:
            with contextlib.suppress(OSError):  # never hides the error being raised
                tmp.unlink(missing_ok=True)
        sync_folder(real.parent)
    return p


def check_writable(path: str | os.PathLike[str], *, in_place: bool = False) -> None:
    """Refuse, before any work, a destination that cannot be written.

    The path must not be a directory, and the folder that will hold it must let a file be
    created (tried for real: a temporary file is created and removed, since permission
    bits say nothing for root or for virtual file systems such as ``/proc``). Missing
    folders are accepted when the nearest existing one lets them be created. An existing
    character device or FIFO (``/dev/stdout``) is accepted as is; a socket or a block
    device is refused (see :func:`destination`). With ``in_place`` (the file is written
    into rather than replaced) an existing file must itself be writable.

    Raises:
        UnwritableError: the message names ``path`` and why it cannot be written.
    """
    p = Path(path)
    if p.is_dir():
        raise UnwritableError(p, reason_for(p, OSError(errno.EISDIR, "")), errno.EISDIR)
    if destination(p) == "stream":
        return
    # a link is followed: the file it points to is replaced, in that file's folder
    folder, _missing = _existing_folder(Path(os.path.realpath(p)) if p.is_symlink() else p)
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


class DestinationError(ValueError):
    """An output path refused before any work; the message names the option and the path
    (``--save out/: is a directory; ...``)."""


def reached(path: Path) -> Path:
    """The file a writer reaches through ``path`` once it has created the missing folders:
    links followed and ``..`` applied where the folders do not exist yet (``new/../run.txt``
    is ``run.txt``, which ``Path.exists`` does not see before ``new`` is made)."""
    return Path(os.path.realpath(path))


def _same_file(a: Path, b: Path) -> bool:
    try:
        a, b = reached(a), reached(b)
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def refuse_overwriting_inputs(path: Path, option: str, inputs: Sequence[Path | None]) -> None:
    """Refuse an output that is one of the command's own input files (by identity, so a
    relative path, a symlink or a hard link to the input is caught too): writing it would
    destroy the input before, or while, it is read.

    Raises:
        DestinationError: naming ``option``, ``path`` and the input it is.
    """
    for given in inputs:
        if given is not None and _same_file(path, Path(given)):
            raise DestinationError(
                f"{option} {path}: is also an input of this command ({given}); writing it "
                "would destroy that file. Choose another path"
            )


def refuse_existing(path: Path, option: str, flag: str = "--overwrite") -> None:
    """Refuse an output ``path`` that is an existing regular file (a run artifact that
    may have cost calls to make), unless the command was given ``flag``. A character
    device or FIFO (``/dev/null``) is not replaced, so it is never refused here.

    Raises:
        DestinationError: ``<option> <path>: already exists; pass <flag> to replace it,
            or choose another path``.
    """
    if reached(path).exists() and destination(reached(path)) == "file":
        raise DestinationError(f"{option} {path}: already exists; pass {flag} to replace "
                               "it, or choose another path")


def require_writable(path: Path, option: str, example: str, *, in_place: bool = False,
                     inputs: Sequence[Path | None] = (), overwrite: bool = True) -> None:
    """Refuse, before any work, an output path that cannot be written: one of the
    command's ``inputs``, a directory (``example`` is a file name to suggest), or a file
    whose folder does not let it be created (permission, read-only file system, a folder
    that is a file...). See :func:`check_writable` (``in_place``: the file is written
    into, not replaced). ``overwrite=False``: an existing regular file is refused too
    (:func:`refuse_existing`, naming ``--overwrite``).

    Raises:
        DestinationError: the message begins with ``option`` and ``path``.
    """
    refuse_overwriting_inputs(path, option, inputs)
    if reached(path).is_dir():
        raise DestinationError(
            f"{option} {path}: is a directory; name the file to write, e.g. "
            f"{option} {path / example}"
        )
    try:
        check_writable(path, in_place=in_place)
    except UnwritableError as exc:
        raise DestinationError(f"{option} {path}: cannot be written: {exc.reason}") from None
    if not overwrite:
        refuse_existing(path, option)


__all__ = [
    "DestinationError",
    "UnwritableError",
    "check_writable",
    "destination",
    "reached",
    "reason_for",
    "refuse_existing",
    "refuse_overwriting_inputs",
    "require_writable",
    "sync_folder",
    "unwritable",
    "write_output",
    "writing",
]
