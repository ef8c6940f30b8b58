"""How the command line reports a user error: one line on stderr, no traceback, exit 2.

Every command registered in :mod:`evalkit.cli.app` is wrapped with :func:`handle_errors`, so a
command body simply lets library errors propagate. A command that finds a problem of its own
raises :class:`CliError`. Set ``EVALKIT_DEBUG=1`` to get the traceback back.

Exit codes: 0 success; 1 is left to commands whose verdict is "no" (a failed gate);
:data:`USER_ERROR` (2, as for a bad option) for anything the user can fix; 130 on Ctrl-C.
"""

from __future__ import annotations

import codecs
import functools
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])

USER_ERROR = 2
INTERRUPTED = 130


class CliError(Exception):
    """A problem the user can fix; its message is printed as is."""

    def __init__(self, message: str, exit_code: int = USER_ERROR) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _user_error_types() -> tuple[type[BaseException], ...]:
    # Imported here, not at module import: the registry module is light, but keeping the
    # CLI's import graph explicit makes `evalkit --help` cheap to audit.
    from evalkit.registry import RegistryError

    # ArtifactError, MetricError, UnicodeDecodeError and json errors are ValueErrors;
    # KeyError covers a metric a run lacks; OSError a missing, unreadable or unwritable
    # file or a directory where a file belongs (message_of names the path);
    # ImportError a missing optional plugin (evalkit names what to install).
    return (CliError, RegistryError, ValueError, KeyError, OSError, ImportError)


def _path_args(values: Iterable[Any]) -> list[Path]:
    """The paths among a command's arguments (lists of paths included), in order."""
    out: list[Path] = []
    for value in values:
        items = value if isinstance(value, list | tuple) else [value]
        out.extend(v for v in items if isinstance(v, Path))
    return out


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
    if isinstance(exc, BrokenPipeError):
        return "standard output was closed before everything was written (broken pipe)"
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


def report(exc: BaseException, paths: Sequence[Path] = ()) -> None:
    """Print ``exc`` as one user-facing line on stderr."""
    lines = message_of(exc, paths).strip().splitlines() or [type(exc).__name__]
    typer.echo(f"error: {lines[0]}", err=True)
    for line in lines[1:]:
        typer.echo(f"       {line}", err=True)


def handle_errors(fn: F) -> F:
    """Wrap a command so user errors print one clear message and exit non-zero."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(INTERRUPTED) from None
        except Exception as exc:
            if os.environ.get("EVALKIT_DEBUG") or not isinstance(exc, _user_error_types()):
                raise
            report(exc, _path_args([*args, *kwargs.values()]))
            code = exc.exit_code if isinstance(exc, CliError) else USER_ERROR
            sys.stderr.flush()
            raise typer.Exit(code) from None

    return wrapper  # type: ignore[return-value]
