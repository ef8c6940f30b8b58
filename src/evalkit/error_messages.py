"""An exception as one message a person can act on.

:func:`message_of` is what the command line prints after ``error:``: a file-system error
names its path and says what is wrong in words (``out/: is a directory; give the path of
a file``), a text file that is not UTF-8 is named with the byte at fault, a KeyError's
quotes are dropped. Only the standard library is imported.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from pathlib import Path


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


__all__ = ["message_of"]
