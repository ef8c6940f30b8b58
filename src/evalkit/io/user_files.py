"""Reading a file the user named: a regular file, within a size cap, or a one-line refusal.

Every declarative input that evalkit reads whole (golden sets in every format, BEIR
folders, checks files, eval configs, ``pyproject.toml`` given with ``--config``, a
``json_schema`` schema, a judge's price table) goes through :func:`read_input`, so that a
named pipe, ``/dev/zero``, ``/dev/stdin``, a terminal, a directory or a file of many
gigabytes is refused at once instead of blocking for ever or filling memory. The file is
opened non-blocking (opening a FIFO that no one writes to returns at once), the open file
is checked with ``fstat`` (so a file swapped between the check and the read is still
checked), then read at most ``max_bytes + 1`` bytes. Runs, qrels and artifacts, read more
than once, are checked by :func:`evalkit.io.input_files.require_file` with the same
wording ("is a pipe or device"). Only the standard library is imported.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from evalkit.io.error_messages import reading
from evalkit.io.input_files import InputError, directory_message
from evalkit.io.limits import NotRegularError, open_regular
from evalkit.io.symlink_loops import symlink_loop_message

#: the largest golden set read (bytes): far above any hand-written set
MAX_GOLDEN_BYTES = 1 << 30
#: the largest checks file, eval config or pyproject.toml read (bytes)
MAX_CONFIG_BYTES = 16 << 20


def regular_file_problem(path: str | Path, what: str) -> str | None:
    """Why ``path`` cannot be read as the ``what`` file (``"golden"``, ``"checks"``), or
    None when it is a regular file or does not exist yet (never opens nor blocks)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return symlink_loop_message(path, what)
        return f"{path}: cannot read the {what} file ({exc.strerror or exc})"
    if stat.S_ISDIR(mode):
        return directory_message(path, what)
    if not stat.S_ISREG(mode):
        return (f"{path}: is a pipe or device, not a regular file; save the {what} data "
                "to a file and pass its path")
    return None




def open_input(path: str | Path, what: str, error: type[Exception] = InputError) -> BinaryIO:
    """``path`` opened as by :func:`open_regular`, the ``what`` file named in messages.

    Raises:
        error: no such file, a directory, or a pipe or device, each in one line saying
            what to pass instead.
    """
    try:
        return open_regular(path)
    except FileNotFoundError:
        raise error(f"{path}: no such {what} file") from None
    except IsADirectoryError:
        raise error(directory_message(path, what)) from None
    except NotRegularError:
        raise error(f"{path}: is a pipe or device, not a regular file; save the {what} "
                    "data to a file and pass its path") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(symlink_loop_message(path, what)) from None
        raise


def read_input(path: str | Path, what: str, *, max_bytes: int = MAX_CONFIG_BYTES,
               error: type[Exception] = InputError) -> bytes:
    """The bytes of the regular file ``path``, the ``what`` file named in messages.

    Args:
        path: the file. ``-`` is refused (a caller that reads standard input checks for
            ``-`` first).
        what: the kind of file, for messages: ``"golden"`` gives "no such golden file".
        max_bytes: the most bytes read; a larger file is refused.
        error: the exception class raised (the caller's own, e.g. ``GoldenError``).

    Raises:
        error: ``-``; missing; a directory; a pipe, socket or device; unreadable; larger
            than ``max_bytes``. One line naming the file and what to pass instead.
    """
    if str(path) == "-":
        raise error(f"-: standard input is not read as the {what} file; save the data to "
                    "a file and pass its path")
    try:
        with open_input(path, what, error) as fh, reading(path, what):
            if os.fstat(fh.fileno()).st_size > max_bytes:
                raise error(_too_large(path, what, max_bytes))
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} file ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise error(_too_large(path, what, max_bytes))
    return data


def gunzipped(raw: bytes, where: str, what: str, *, max_bytes: int,
              error: type[Exception] = InputError) -> bytes:
    """``raw`` decompressed when it is gzip data (its first bytes say so), at most
    ``max_bytes`` of it (a gzip bomb is refused after ``max_bytes + 1`` bytes), else
    ``raw`` unchanged. ``where`` begins the messages (``"topics q.gz"``).

    Raises:
        error: damaged or cut-short gzip data, naming the byte
            (:func:`evalkit.io.gzip_data.inflate`), or more than ``max_bytes`` once
            decompressed.
    """
    from evalkit.io.gzip_data import DamagedGzipError, inflate, is_gzip

    if not is_gzip(raw):
        return raw
    try:
        out = inflate(raw, max_bytes)
    except DamagedGzipError as exc:
        raise error(f"{where}: {exc}; copy or download the file again") from None
    if len(out) > max_bytes:
        raise error(f"{where}: decompresses to more than {max_bytes >> 20} MiB, the most "
                    f"evalkit reads of a {what} file")
    return out


def _too_large(path: str | Path, what: str, max_bytes: int) -> str:
    return (f"{path}: larger than {max_bytes / (1 << 20):g} MiB, the most evalkit reads "
            f"of a {what} file; is this the right file?")


__all__ = ["MAX_CONFIG_BYTES", "MAX_GOLDEN_BYTES", "NotRegularError", "gunzipped",
           "open_input", "open_regular",
           "read_input", "regular_file_problem"]
