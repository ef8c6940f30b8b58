"""Symbolic link loops (``ln -s a b; ln -s b a``) in the paths a user gives.

``os.stat`` fails on such a path with ``ELOOP``, :meth:`pathlib.Path.exists` says it does
not exist and :meth:`pathlib.Path.resolve` raises ``RuntimeError``; every reader of a
user's path says instead, in one line naming the path and what it was given as, that it
is a symbolic link loop (:func:`symlink_loop_message`). Only the standard library is
imported.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path


def symlink_loop_message(path: str | Path, what: str, label: str | None = None) -> str:
    """The one refusal of a path whose symbolic links lead back to themselves (``ln -s a
    b; ln -s b a``): ``"{label} {path}: is a symbolic link loop ..."``, ``label`` the
    option or key that named it (default: ``what``; ``""``: the path alone). Every
    reader of a user's path says this rather than "no such file" or a traceback."""
    label = what if label is None else label
    return (f"{label + ' ' if label else ''}{path}: is a symbolic link loop (following its "
            "links leads back to a link already followed); point the link at the "
            f"{what} file, or pass the file itself")


def is_symlink_loop(path: str | Path) -> bool:
    """Whether resolving ``path`` meets a symbolic link loop (``ELOOP``); never raises."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    except ValueError:  # a NUL in the path
        return False
    return False


def refuse_symlink_loop(path: str | Path | None, what: str, *, label: str | None = None,
                        error: type[Exception]) -> None:
    """Raise ``error`` (the caller's: :class:`~evalkit.io.input_files.InputError`,
    ``ConfigError``) with :func:`symlink_loop_message` when ``path`` is a symbolic link
    loop (nothing when None or when it is not)."""
    if path is not None and is_symlink_loop(path):
        raise error(symlink_loop_message(path, what, label))


def resolve_input(path: str | Path, what: str, *, label: str | None = None,
                  error: type[Exception]) -> Path:
    """``Path(path).resolve()`` (absolute, links followed as far as they exist), the
    ``what`` file named in messages.

    Raises:
        error: a symbolic link loop (:func:`symlink_loop_message`), which
            :meth:`pathlib.Path.resolve` reports as ``RuntimeError`` or ``OSError``
            (``ELOOP``).
    """
    try:
        return Path(path).resolve()
    except RuntimeError:
        raise error(symlink_loop_message(path, what, label)) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(symlink_loop_message(path, what, label)) from None
        raise


__all__ = ["is_symlink_loop", "refuse_symlink_loop", "resolve_input", "symlink_loop_message"]
