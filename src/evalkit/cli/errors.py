"""How the command line reports a user error: one line on stderr, no traceback, exit 2.

Every command registered in :mod:`evalkit.cli.app` is wrapped with :func:`handle_errors`, so a
command body simply lets library errors propagate. A command that finds a problem of its own
raises :class:`CliError`. Set ``EVALKIT_DEBUG=1`` to get the traceback back.

Exit codes: 0 success; 1 is left to commands whose verdict is "no" (a failed gate);
:data:`USER_ERROR` (2, as for a bad option) for anything the user can fix; 130 on Ctrl-C.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
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
    # KeyError covers a metric a run lacks; OSError a missing or unreadable file;
    # ImportError a missing optional plugin (evalkit names what to install).
    return (CliError, RegistryError, ValueError, KeyError, OSError, ImportError)


def message_of(exc: BaseException) -> str:
    """The text to show for ``exc`` (a KeyError's repr quotes are removed)."""
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        text = exc.args[0]
    else:
        text = str(exc)
    if isinstance(exc, OSError) and exc.filename is not None and str(exc.filename) not in text:
        text = f"{exc.filename}: {text}"
    if isinstance(exc, FileNotFoundError) and exc.filename is not None:
        text = f"{exc.filename}: no such file"
    return text or type(exc).__name__


def report(exc: BaseException) -> None:
    """Print ``exc`` as one user-facing line on stderr."""
    lines = message_of(exc).strip().splitlines() or [type(exc).__name__]
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
            report(exc)
            code = exc.exit_code if isinstance(exc, CliError) else USER_ERROR
            sys.stderr.flush()
            raise typer.Exit(code) from None

    return wrapper  # type: ignore[return-value]
