"""Standard output whose write errors say that they are standard output's.

:func:`guard_stdout` (called by :func:`evalkit.cli.main`) puts ``sys.stdout`` on a raw
stream of descriptor 1 whose failed writes raise :class:`StdoutError`, so that however
a command writes (``print``, ``sys.stdout.write``, ``click.echo``, a ``rich`` console),
``evalkit ... > /dev/full`` ends with ``error: cannot write to standard output: No space
left on device`` instead of an error that names no file. A closed pipe still raises
``BrokenPipeError`` (exit 141, :mod:`evalkit.cli.errors`).
"""

from __future__ import annotations

import io
import os
import sys
from typing import Any


class StdoutError(OSError):
    """Writing standard output failed (not a closed pipe); ``strerror`` says why."""

    def __str__(self) -> str:
        return f"cannot write to standard output: {self.strerror or 'unknown error'}"


class _RawStdout(io.RawIOBase):
    def __init__(self, fd: int) -> None:
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: Any) -> int:
        try:
            return os.write(self._fd, data)
        except (BrokenPipeError, BlockingIOError, InterruptedError):
            raise
        except OSError as exc:
            raise StdoutError(exc.errno, exc.strerror) from None

    def close(self) -> None:  # descriptor 1 stays open for the interpreter's own flush
        super().close()


def guard_stdout() -> None:
    """Replace ``sys.stdout`` by the same descriptor, encoding and buffering, whose write
    errors are :class:`StdoutError` and which prints a character its encoding cannot
    write as its backslash escape (nothing is done when standard output has no real
    descriptor, as under a test runner)."""
    current = sys.stdout
    try:
        fd = current.fileno()
        encoding, errors = current.encoding, current.errors
        line = bool(getattr(current, "line_buffering", False))
        current.flush()
    except (AttributeError, OSError, ValueError):
        return
    buffered = io.BufferedWriter(_RawStdout(fd))
    if errors == "strict":  # a character the encoding cannot write (a lone surrogate in
        errors = "backslashreplace"  # UTF-8) is printed as its escape, not an error
    sys.stdout = io.TextIOWrapper(buffered, encoding=encoding, errors=errors,
                                  line_buffering=line, write_through=False)


__all__ = ["StdoutError", "guard_stdout"]
