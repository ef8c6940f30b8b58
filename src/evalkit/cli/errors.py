"""How the command line reports a user error: one line on stderr, no traceback, exit 2.

Every command registered in :mod:`evalkit.cli.app` is wrapped with :func:`handle_errors`, so a
command body simply lets library errors propagate (a
:class:`~evalkit.execute.scoring.RunAborted` too: its error is the line printed; a
:class:`~evalkit.plugins.failures.PluginCallError` names the plugin whose code failed). A
command that finds a problem of its own raises :class:`CliError`. Set ``EVALKIT_DEBUG=1``
to get the traceback back; any other exception (a bug) prints its traceback, and
:func:`evalkit.cli.main` exits 2 for it, never 1.

Exit codes: 0 success; 1 is left to commands whose verdict is "no" (a failed gate, an
incomplete run); :data:`USER_ERROR` (2, as for a bad option) for anything the user can
fix; 3 when a spending limit (an LLM judge's) stopped ``evalkit run``;
:data:`METRIC_ERRORS` (4) when ``evalkit run`` or ``evalkit rescore`` finished a complete
run on which a metric failed or an aggregate was not computed
(:func:`evalkit.cli.output.finish_run`), and ``evalkit pairwise`` when a verdict could
not be had; 130 on Ctrl-C;
running out of memory is one ``error:`` line naming the file being read (exit 2);
:data:`PIPE_CLOSED` (141, what a shell reports for ``yes | head``) when the reader of the
output went away early (``evalkit ... | head``): the command stops without a message, so
that a gate piped into ``head`` is never read as passed, failed or broken.
docs/runner.md tabulates ``evalkit run``'s.

With ``--json`` among the arguments, every non-zero exit without a document of the
command's own prints :func:`status_document` on standard output
(:func:`json_document_on_exit`, around the whole invocation: usage errors included).
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

from evalkit.io.error_messages import message_of as message_of

F = TypeVar("F", bound=Callable[..., Any])

INCOMPLETE = 1
USER_ERROR = 2
STOPPED = 3
METRIC_ERRORS = 4
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


def stdout_failure(exc: BaseException) -> OSError | None:
    """``exc`` when it is the error of writing standard output (a full disk behind
    ``> file``, ``> /dev/full``, an I/O error: :class:`evalkit.cli.stdout.StdoutError`),
    else ``None``."""
    from evalkit.cli.stdout import StdoutError

    return exc if isinstance(exc, StdoutError) else None


def report_stdout_failure(exc: OSError) -> None:
    """Say, on stderr, that standard output could not be written and why, then send
    standard output to the null device so that the interpreter's last flush is quiet."""
    why = exc.strerror or str(exc)
    quiet_closed_stdout()
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"error: cannot write to standard output: {why}\n")
        sys.stderr.flush()


class CliError(Exception):
    """A problem the user can fix; its message is printed as is."""

    def __init__(self, message: str, exit_code: int = USER_ERROR) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def _user_error_types() -> tuple[type[BaseException], ...]:
    # Imported here, not at module import: the registry module is light, but keeping the
    # CLI's import graph explicit makes `evalkit --help` cheap to audit.
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.failures import PluginCallError

    # PluginCallError: a plugin's code failed where evalkit called it (it names the
    # plugin); ArtifactError, MetricError, UnicodeDecodeError and json errors are ValueErrors;
    # KeyError covers a metric a run lacks; OSError a missing, unreadable or unwritable
    # file or a directory where a file belongs (message_of names the path);
    # ImportError a missing optional plugin (evalkit names what to install).
    return (CliError, RegistryError, PluginCallError, ValueError, KeyError, OSError,
            ImportError)


def _path_args(values: Iterable[Any]) -> list[Path]:
    """The paths among a command's arguments (lists of paths included), in order."""
    out: list[Path] = []
    for value in values:
        items = value if isinstance(value, list | tuple) else [value]
        out.extend(v for v in items if isinstance(v, Path))
    return out


def _current_context() -> Any:
    """The click context of the running command (typer's click), or ``None``."""
    import importlib

    # the click that typer runs (typer ships its own copy): its context stack
    click = typer.BadParameter.__module__.rsplit(".", 1)[0]
    return importlib.import_module(f"{click}.globals").get_current_context(silent=True)


def command_options() -> dict[str, tuple[str, str | None]]:
    """The options of the running command by Python name: ``{"missing": ("--missing",
    None), "progress": ("--progress", "--no-progress")}`` (empty outside a command)."""
    ctx = _current_context()
    out: dict[str, tuple[str, str | None]] = {}
    for param in ctx.command.params if ctx is not None else ():
        if getattr(param, "param_type_name", "") == "option" and param.name:
            longs = [o for o in param.opts if o.startswith("--")] or list(param.opts)
            negative = next((o for o in param.secondary_opts if o.startswith("--")), None)
            out[param.name] = (longs[0], negative)
    return out


def report(exc: BaseException, paths: Sequence[Path] = ()) -> None:
    """Print ``exc`` as one user-facing line on stderr (registered secrets masked:
    :mod:`evalkit.io.redaction`; control characters and bidi overrides written visibly:
    :func:`evalkit.report.escaping.terminal_text`); the settings a
    :class:`~evalkit.io.setting_names.SettingError` names are spelled as the running
    command's options (``--missing zero``, not ``missing='zero'``)."""
    from evalkit.io.redaction import mask
    from evalkit.io.setting_names import SettingError
    from evalkit.report.escaping import terminal_text

    text = exc.spelled(command_options()) if isinstance(exc, SettingError) \
        else message_of(exc, paths)
    lines = mask(text).strip().splitlines() or [type(exc).__name__]
    typer.echo(f"error: {terminal_text(lines[0])}", err=True)
    for line in lines[1:]:
        typer.echo(f"       {terminal_text(line)}", err=True)


@contextlib.contextmanager
def plugin_warnings_as_lines() -> Iterator[None]:
    """Print each :class:`evalkit.plugins.PluginLoadWarning` raised in the block as one
    ``warning: ...`` line on stderr (every time, not once per process), and each
    :class:`evalkit.io.user_warnings.UserNotice` (a plugin's subclass too) as one such
    line; other warnings are shown as Python shows them. The warnings are recognised by
    the module that defines their class, so this imports nothing."""
    with warnings.catch_warnings():
        warnings.filterwarnings("always", module=_PLUGINS_MODULE.replace(".", r"\.") + "$")
        previous = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], filename: str,
                 lineno: int, file: TextIO | None = None, line: str | None = None) -> None:
            if category.__module__ == _PLUGINS_MODULE or any(
                    c.__module__ == _NOTICES_MODULE for c in category.__mro__):
                typer.echo(f"warning: {message}", err=True)
            else:
                previous(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


_PLUGINS_MODULE = "evalkit.plugins.loading"
_NOTICES_MODULE = "evalkit.io.user_warnings"


#: The ``status`` of the document a ``--json`` command prints when it exits with this
#: code without a document of its own (:func:`json_document_on_exit`).
EXIT_STATUS = {INCOMPLETE: "incomplete", USER_ERROR: "error", STOPPED: "stopped",
               METRIC_ERRORS: "metric_errors", INTERRUPTED: "interrupted"}
#: The lines of standard error kept for that document's ``messages``.
KEPT_MESSAGES = 20


class _Tail:
    """Standard error as it is, keeping its last :data:`KEPT_MESSAGES` lines."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._text = ""

    def write(self, text: str) -> int:
        self._text = (self._text + text)[-65536:]
        return self._stream.write(text)

    def lines(self) -> list[str]:
        return [line.strip() for line in self._text.replace("\r", "\n").splitlines()
                if line.strip()][-KEPT_MESSAGES:]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def status_document(exit_code: int, messages: list[str]) -> str:
    """The JSON document of a ``--json`` command that exits with ``exit_code`` without
    one of its own: ``{"status": "stopped", "exit_code": 3, "messages": [...]}``, the
    messages being the last lines it printed on standard error (secrets masked)."""
    import json

    from evalkit.io.redaction import mask

    return json.dumps({"status": EXIT_STATUS.get(exit_code, "error"),
                       "exit_code": exit_code,
                       "messages": [mask(m) for m in messages]}, indent=2)


class _JsonExit:
    """What the running command said about its ``--json`` document (read by
    :func:`json_document_on_exit`): ``requested`` is the value of its ``--json`` option
    once the command runs (``None`` before: the arguments decide); ``withheld`` when
    Ctrl-C came while its outputs were written (its line names those not written)."""

    requested: bool | None = None
    withheld = False


def _json_option_value() -> bool:
    """Whether the running command's ``--json`` option (whatever its Python name) is
    on; ``False`` for a command without one."""
    ctx = _current_context()
    for param in ctx.command.params if ctx is not None else ():
        if "--json" in getattr(param, "opts", ()) and param.name:
            return bool(ctx.params.get(param.name))
    return False


def json_asked(argv: Sequence[str]) -> bool:
    """Whether ``--json`` is among the arguments ``argv`` (before a ``--``)."""
    args = list(argv)
    return "--json" in (args[:args.index("--")] if "--" in args else args)


def _exit_code(code: object) -> int:
    """The process exit code of ``SystemExit(code)``."""
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


@contextlib.contextmanager
def json_document_on_exit(argv: Sequence[str]) -> Iterator[None]:
    """Around a whole ``evalkit`` invocation (:class:`evalkit.cli.group.EvalkitGroup`):
    when ``--json`` is among ``argv`` and the invocation exits non-zero without having
    written a document on standard output (:func:`evalkit.io.interrupts.stdout_documents`),
    print :func:`status_document` for its exit code, whatever ended it: an error of the
    command, a usage error (an unknown or missing option, a bad value), Ctrl-C, a
    spending limit, a bug. Once the command runs, its own ``--json`` option decides
    (``--note --json`` is a note, not a request). Not after Ctrl-C while the outputs were
    being written (its line names the outputs not written), nor when the reader of
    standard output went away (141).
    """
    _JsonExit.requested, _JsonExit.withheld = None, False
    if not json_asked(argv):
        yield
        return
    from evalkit.io.interrupts import stdout_documents, write_whole

    before = stdout_documents()
    tail = _Tail(sys.stderr)
    code = 0
    why: list[str] = []
    try:
        with contextlib.redirect_stderr(tail):
            yield
    except SystemExit as exc:
        code = _exit_code(exc.code)
        raise
    except KeyboardInterrupt:
        code = INTERRUPTED
        why = ["interrupted"]
        raise
    except BaseException as exc:  # a bug: its traceback follows
        from evalkit.io.redaction import error_text

        code = USER_ERROR
        why = [error_text(exc)]
        raise
    finally:
        if code not in (0, PIPE_CLOSED) and _JsonExit.requested is not False \
                and not _JsonExit.withheld and stdout_documents() == before:
            with contextlib.suppress(OSError, ValueError, KeyboardInterrupt):
                write_whole(sys.stdout, status_document(code, tail.lines() or why))


def handle_errors(fn: F, *, kernel: bool = False) -> F:
    """Wrap a command so user errors print one clear message and exit non-zero.

    For a ``kernel`` command (evalkit's own) a ``SystemExit`` that reaches the wrapper
    can only come from plugin or target code it called (the kernel's commands end with
    ``typer.Exit``), which never chooses the command's exit status: one ``error:`` line
    and exit 2. A plugin's own command may end itself with ``sys.exit()``.

    It also records, for :func:`json_document_on_exit`, whether the command runs with
    ``--json`` and whether Ctrl-C came while its outputs were written.
    """
    guarded = _guarded(fn, kernel=kernel)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _JsonExit.requested = _json_option_value()
        try:
            return guarded(*args, **kwargs)
        except typer.Exit as exc:
            from evalkit.io.interrupts import OutputsInterrupted

            # Ctrl-C while the outputs were written: its line says which were not
            _JsonExit.withheld = isinstance(exc.__context__, OutputsInterrupted)
            raise

    return wrapper  # type: ignore[return-value]


def _guarded(fn: F, *, kernel: bool) -> F:
    """:func:`handle_errors` without its ``--json`` document."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except SystemExit as exc:
            if not kernel:
                raise
            from evalkit.io.redaction import error_text

            if os.environ.get("EVALKIT_DEBUG"):
                import traceback

                traceback.print_exc()

            typer.echo(f"error: code evalkit called (a plugin's, a target's) raised "
                       f"{error_text(exc)} while the command ran, so the command did not "
                       "finish; this is a bug of that code, not of your files or options "
                       "(EVALKIT_DEBUG=1 shows the traceback)", err=True)
            sys.stderr.flush()
            raise typer.Exit(USER_ERROR) from None
        except KeyboardInterrupt as exc:
            from evalkit.io.interrupts import OutputsInterrupted

            # which outputs were written before the interrupt, and which were not
            typer.echo(str(exc) if isinstance(exc, OutputsInterrupted) else "interrupted",
                       err=True)
            raise typer.Exit(INTERRUPTED) from None
        except BrokenPipeError:
            quiet_closed_stdout()
            raise typer.Exit(PIPE_CLOSED) from None
        except MemoryError as exc:
            if os.environ.get("EVALKIT_DEBUG"):
                raise
            from evalkit.io.error_messages import out_of_memory

            paths = _path_args([*args, *kwargs.values()])
            typer.echo(f"error: {out_of_memory(exc, paths)}", err=True)
            raise typer.Exit(USER_ERROR) from None
        except Exception as exc:
            failed = stdout_failure(exc)
            if failed is not None:
                report_stdout_failure(failed)
                raise typer.Exit(USER_ERROR) from None
            from evalkit.io.redaction import scrub_exception

            scrub_exception(exc)  # a traceback shown below must not show a secret either
            if os.environ.get("EVALKIT_DEBUG") or not isinstance(exc, _user_error_types()):
                raise
            report(exc, _path_args([*args, *kwargs.values()]))
            code = exc.exit_code if isinstance(exc, CliError) else USER_ERROR
            sys.stderr.flush()
            raise typer.Exit(code) from None
        except BaseException as exc:
            error = _aborted(exc)
            if error is None or os.environ.get("EVALKIT_DEBUG"):
                raise
            from evalkit.io.redaction import scrub_exception

            report(scrub_exception(error), _path_args([*args, *kwargs.values()]))
            sys.stderr.flush()
            raise typer.Exit(USER_ERROR) from None

    return wrapper  # type: ignore[return-value]


def _aborted(exc: BaseException) -> Exception | None:
    """The error a :class:`~evalkit.execute.scoring.RunAborted` carries (a judge without
    credentials or whose URL names an unset variable, raised outside the scoring of a
    run: ``evalkit pairwise``, a dry run), else ``None``. The scoring module is imported
    only if it already is (then ``exc`` may be one)."""
    scoring = sys.modules.get("evalkit.execute.scoring")
    aborted = getattr(scoring, "RunAborted", None)
    if aborted is None or not isinstance(exc, aborted):
        return None
    error = getattr(exc, "error", None)
    return error if isinstance(error, Exception) else None
