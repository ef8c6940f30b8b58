"""How the command line reports a user error: one line on stderr, no traceback, exit 2.

Every command registered in :mod:`evalkit.cli.app` is wrapped with :func:`handle_errors`, so a
command body simply lets library errors propagate. A command that finds a problem of its own
raises :class:`CliError`. Set ``EVALKIT_DEBUG=1`` to get the traceback back.

Exit codes: 0 success; 1 is left to commands whose verdict is "no" (a failed gate);
:data:`USER_ERROR` (2, as for a bad option) for anything the user can fix; 130 on Ctrl-C;
:data:`PIPE_CLOSED` (141, what a shell reports for ``yes | head``) when the reader of the
output went away early (``evalkit ... | head``): the command stops without a message, so
that a gate piped into ``head`` is never read as passed, failed or broken.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO, TypeVar

import typer

from evalkit.error_messages import message_of as message_of

F = TypeVar("F", bound=Callable[..., Any])

USER_ERROR = 2
INTERRUPTED = 130
PIPE_CLOSED = 141  # 128 + SIGPIPE


def quiet_closed_stdout() -> None:
    """After the reader of standard output went away: send whatever is still buffered,
    and anything written later, to the null device, so that neither a later write nor
    the interpreter's last flush reports the broken pipe."""
    try:
        fd = sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real descriptor (a test runner)
        pass


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






def output_console(**kwargs: Any) -> Any:
    """A :class:`rich.console.Console` for a command's output that raises
    :class:`BrokenPipeError` when the reader goes away (rich's own answer is exit 1), so
    that :func:`handle_errors` answers it like every closed pipe (:data:`PIPE_CLOSED`)."""
    from rich.console import Console

    class _OutputConsole(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError("standard output was closed")

    return _OutputConsole(**kwargs)




def report(exc: BaseException, paths: Sequence[Path] = ()) -> None:
    """Print ``exc`` as one user-facing line on stderr (registered secrets masked:
    :mod:`evalkit.redaction`)."""
    from evalkit.redaction import mask

    lines = mask(message_of(exc, paths)).strip().splitlines() or [type(exc).__name__]
    typer.echo(f"error: {lines[0]}", err=True)
    for line in lines[1:]:
        typer.echo(f"       {line}", err=True)


# ------------------------------------------------------------- usage errors (click)
def _option_names(param: Any) -> str:
    """``--queries/-n`` for an option, ``RUN`` for an argument."""
    if getattr(param, "param_type_name", "") == "argument":
        return str(getattr(param, "metavar", None) or str(param.name).upper())
    return "/".join([*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())])


def _choices(param: Any) -> list[str] | None:
    desc = getattr(param, "type_descriptor", None)  # typer >= 0.20
    found = getattr(desc, "choices", None) or getattr(getattr(param, "type", None),
                                                      "choices", None)
    if not found:
        return None
    return [str(getattr(c, "value", c)) for c in found]


#: click's parameter types by name (typer < 0.29 converts values with click's types)
_CLICK_TYPES = {"int": int, "integer": int, "int range": int, "integer range": int,
                "float": float, "float range": float}


def _annotation(param: Any) -> Any:
    desc = getattr(param, "type_descriptor", None)
    if desc is None:  # typer < 0.29: the click type says it
        return _CLICK_TYPES.get(getattr(getattr(param, "type", None), "name", ""))
    ann = getattr(desc, "annotation", None)
    args = getattr(ann, "__args__", None)
    if args and getattr(ann, "__origin__", None) is list:
        return args[0]  # a repeatable option: its items' type
    return ann


def _bounds(param: Any) -> tuple[Any, Any]:
    desc = getattr(param, "type_descriptor", None)
    info = getattr(desc, "parameter_info", None) if desc is not None else getattr(
        param, "type", None)
    return getattr(info, "min", None), getattr(info, "max", None)


def _expected(param: Any) -> str | None:
    """What the parameter accepts, in words (``one of a, b``; ``an integer >= 2``)."""
    choices = _choices(param)
    if choices:
        return "one of " + ", ".join(choices)
    ann = _annotation(param)
    kind = {int: "an integer", float: "a number"}.get(ann)
    if kind is None:
        return None
    low, high = _bounds(param)
    if low is not None and high is not None:
        return f"{kind} from {low:g} to {high:g}"
    if low is not None:
        return f"{kind} >= {low:g}"
    if high is not None:
        return f"{kind} <= {high:g}"
    return kind


def _accepts(param: Any, text: str) -> bool:
    """Whether ``text`` looks acceptable for ``param`` (to find the culprit among the
    values of a repeated option)."""
    choices = _choices(param)
    if choices:
        return text in choices
    ann = _annotation(param)
    if ann not in (int, float):
        return True
    try:
        value = int(text) if ann is int else float(text)
    except ValueError:
        return False
    low, high = _bounds(param)
    return (low is None or value >= low) and (high is None or value <= high)


def _given(param: Any, argv: Sequence[str]) -> str | None:
    """The value the user gave ``param`` on the command line (the first unacceptable one
    when the option is repeated), or None when it cannot be found."""
    opts = [*getattr(param, "opts", ()), *getattr(param, "secondary_opts", ())]
    if getattr(param, "param_type_name", "") != "option" or not opts:
        return None
    values: list[str] = []
    tokens = list(argv)
    for i, tok in enumerate(tokens):
        if tok == "--":
            break
        if tok in opts and i + 1 < len(tokens):
            values.append(tokens[i + 1])
            continue
        for opt in opts:
            if opt.startswith("--") and tok.startswith(opt + "="):
                values.append(tok[len(opt) + 1:])
            elif not opt.startswith("--") and tok.startswith(opt) and len(tok) > len(opt):
                values.append(tok[len(opt):])
    if not values:
        return None
    return next((v for v in values if not _accepts(param, v)), values[-1])


def _sentence(text: str) -> str:
    """A click message as a clause of ours: lower-case start, no final full stop, "Did
    you mean" joined with a semicolon."""
    text = " ".join(text.split()).replace(". Did you mean", "; did you mean")
    text = text.removeprefix("Value error, ")
    text = text[:1].lower() + text[1:]
    return text[:-1] if text.endswith(".") else text


def usage_message(exc: BaseException, argv: Sequence[str] = (), command: str = "evalkit"
                  ) -> str:
    """One line for a click usage error (bad or missing option, unknown command...), naming
    the option, the value given and what is accepted, and where to read more. ``command``
    is the command the user ran (``evalkit power``), for errors click raises without it."""
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", None) or command
    see = f"see `{path} --help`"
    cls = type(exc).__name__
    param = getattr(exc, "param", None)
    hint = getattr(exc, "param_hint", None)
    message = str(getattr(exc, "message", "") or "")
    if cls == "MissingParameter" and param is not None:
        what = "argument" if param.param_type_name == "argument" else "option"
        expected = _expected(param)
        takes = f" ({expected})" if expected and _choices(param) else ""
        return f"{path}: missing {what} {_option_names(param)}{takes} ({see})"
    if cls == "NoSuchOption":
        name = getattr(exc, "option_name", "") or message
        maybe = [m for m in getattr(exc, "possibilities", None) or () if m != "--help"]
        did = f"; did you mean {' or '.join(maybe)}?" if maybe else ""
        return f"{path}: no such option {name}{did} ({see})"
    if cls == "BadOptionUsage" and getattr(exc, "option_name", None):
        return f"{path}: option {exc.option_name} needs a value ({see})"  # type: ignore[attr-defined]
    if param is not None or hint is not None:
        name = _option_names(param) if param is not None else (
            "/".join(hint) if isinstance(hint, list | tuple) else str(hint))
        given = _given(param, argv) if param is not None else None
        expected = _expected(param) if param is not None else None
        shown = f"{name} {given}" if given is not None else name
        if expected:
            return f"{shown}: expected {expected}"
        return f"{shown}: {_sentence(message)} ({see})"
    text = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    return f"{_sentence(text)} ({see})"


@contextlib.contextmanager
def plugin_warnings_as_lines() -> Iterator[None]:
    """Print each :class:`evalkit.plugins.PluginLoadWarning` raised in the block as one
    ``warning: ...`` line on stderr (every time, not once per process); other warnings are
    shown as Python shows them. The warnings are recognised by the module that issues
    them, so this imports nothing."""
    with warnings.catch_warnings():
        warnings.filterwarnings("always", module=_PLUGINS_MODULE.replace(".", r"\.") + "$")
        previous = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], filename: str,
                 lineno: int, file: TextIO | None = None, line: str | None = None) -> None:
            if category.__module__ == _PLUGINS_MODULE:
                typer.echo(f"warning: {message}", err=True)
            else:
                previous(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


_PLUGINS_MODULE = "evalkit.plugins"


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
        except BrokenPipeError:
            quiet_closed_stdout()
            raise typer.Exit(PIPE_CLOSED) from None
        except Exception as exc:
            from evalkit.redaction import scrub_exception

            scrub_exception(exc)  # a traceback shown below must not show a secret either
            if os.environ.get("EVALKIT_DEBUG") or not isinstance(exc, _user_error_types()):
                raise
            report(exc, _path_args([*args, *kwargs.values()]))
            code = exc.exit_code if isinstance(exc, CliError) else USER_ERROR
            sys.stderr.flush()
            raise typer.Exit(code) from None

    return wrapper  # type: ignore[return-value]
