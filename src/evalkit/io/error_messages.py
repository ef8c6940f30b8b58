"""An exception as one message a person can act on.

:func:`message_of` is what the command line prints after ``error:``: a file-system error
names its path and says what is wrong in words (``out/: is a directory; give the path of
a file``), a text file that is not UTF-8 is named with the byte at fault, a KeyError's
quotes are dropped. :func:`reading` marks the file a reader is holding in memory, so that
running out of memory is reported as one line naming it (:func:`out_of_memory`). Only the
standard library is imported.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path

_READING: ContextVar[tuple[str, str] | None] = ContextVar("evalkit_reading", default=None)


@contextlib.contextmanager
def reading(path: str | Path, what: str) -> Iterator[None]:
    """Mark ``path`` (a ``what`` file: ``"run"``, ``"qrels"``) as the file being read in
    this context, for :func:`out_of_memory`."""
    token = _READING.set((str(path), what))
    try:
        yield
    except MemoryError as exc:  # the innermost file read keeps its name on the error
        if getattr(exc, "evalkit_reading", None) is None:
            exc.evalkit_reading = (str(path), what)  # type: ignore[attr-defined]
        raise
    finally:
        _READING.reset(token)


def _size(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError:
        return ""
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if size >= 1 << shift:
            return f" ({size / (1 << shift):.1f} {unit} on disk)"
    return f" ({size} bytes on disk)"


def out_of_memory(exc: MemoryError, paths: Sequence[Path] = ()) -> str:
    """The message for ``exc``: the file being read (:func:`reading`) when memory ran
    out, else the command's input ``paths``, with their sizes, and what to do."""
    current = getattr(exc, "evalkit_reading", None) or _READING.get()
    if current is not None:
        path, what = current
        where = f"while reading the {what} file {path}{_size(Path(path))}"
    elif paths:
        where = "with the inputs " + ", ".join(f"{p}{_size(p)}" for p in paths)
    else:
        where = "during the command"
    return (f"out of memory {where}: evalkit holds each input in memory, and this one is "
            "larger than this machine can hold. Check that it is the right file; split it, "
            "or run on a machine with more memory")


def _not_utf8(path: Path) -> bool:
    """Whether ``path`` is a readable file whose first 16 MiB are not UTF-8 text."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as fh:
            head = fh.read(1 << 24)
        codecs.getincrementaldecoder("utf-8-sig")().decode(head, final=False)
    except UnicodeDecodeError:
        return True
    except OSError:
        return False
    return False
def _undecodable(exc: UnicodeDecodeError, paths: Sequence[Path]) -> str:
    bad = exc.object[exc.start:exc.start + 1] if isinstance(exc.object, bytes) else b""
    what = f"byte 0x{bad[0]:02x}" if bad else "a byte"
    culprit = next((p for p in paths if _not_utf8(p)), None)
    where = f"{culprit}: " if culprit is not None else "an input file "
    return (f"{where}is not UTF-8 text ({what} cannot be decoded); is it a binary file or "
            "the wrong file? evalkit reads text files as UTF-8: pass the intended file, or "
            "convert it to UTF-8")
def not_utf8_at(path: str | Path, exc: UnicodeDecodeError) -> str:
    """``"PATH:LINE: not UTF-8 text (byte 0xe9 in column 5: invalid continuation byte)"``:
    where in ``path`` the bytes ``exc`` was raised on (its ``object``, the file's whole
    bytes) stop being UTF-8, as a line and a column counted in bytes from 1."""
    raw = exc.object if isinstance(exc.object, bytes) else bytes(exc.object)
    line = raw.count(b"\n", 0, exc.start) + 1
    column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
    what = f"byte 0x{raw[exc.start]:02x}" if exc.start < len(raw) else "the last bytes"
    return f"{path}:{line}: not UTF-8 text ({what} in column {column}: {exc.reason})"


def message_of(exc: BaseException, paths: Sequence[Path] = ()) -> str:
    """The text to show for ``exc`` (a KeyError's repr quotes are removed).

    File-system errors are named by their path and say what is wrong in words;
    ``paths`` (the command's path arguments) name the file that failed to decode when a
    :class:`UnicodeDecodeError` does not.
    """
    if isinstance(exc, UnicodeDecodeError):
        return _undecodable(exc, paths)
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        text = exc.args[0]
    else:
        text = str(exc)
    if isinstance(exc, OSError) and exc.filename is not None:
        name = exc.filename
        if isinstance(exc, FileNotFoundError):
            return f"{name}: no such file"
        if exc.errno == errno.ELOOP:
            from evalkit.io.symlink_loops import symlink_loop_message

            return symlink_loop_message(name, "intended", label="")
        if isinstance(exc, IsADirectoryError):
            return f"{name}: is a directory; give the path of a file (for example {name}/NAME)"
        if isinstance(exc, NotADirectoryError):
            return f"{name}: a parent of this path is a file, not a directory"
        if isinstance(exc, PermissionError):
            return (f"{name}: permission denied; check the file's permissions or choose "
                    "another path")
        if exc.strerror:
            return f"{name}: {exc.strerror}"
        if str(name) not in text:
            text = f"{name}: {text}"
    return text or type(exc).__name__


def close_matches(word: str, known: Iterable[str], n: int = 1, cutoff: float = 0.6
                  ) -> list[str]:
    """The at most ``n`` spellings of ``known`` closest to ``word`` (:mod:`difflib`'s
    ratio of at least ``cutoff``), best first, for a did-you-mean; never ``word`` itself,
    which a message must not suggest for the name it refuses."""
    import difflib

    return difflib.get_close_matches(word, [k for k in known if k != word], n=n,
                                     cutoff=cutoff)


def quoted(name: object) -> str:
    """A name (a run, a slice, a collection) in quotes as messages and notes show it: the
    name as a table cell prints it, ``'weird\\tag'`` for the name ``weird\\tag`` (where
    ``repr`` would double the backslash), in double quotes when it holds a ``'`` and no
    ``"``. A name holding a control character or line separator is shown as ``repr``
    shows it (escaped), so that a message never moves the terminal; so is a value that
    is not a text."""
    if not isinstance(name, str) or not name.isprintable():
        return repr(name)
    return f'"{name}"' if "'" in name and '"' not in name else f"'{name}'"


__all__ = ["close_matches", "message_of", "not_utf8_at", "out_of_memory", "quoted",
           "reading"]
