"""The ``evalkit`` command line (typer): thin commands over the library.

Holds the application and its table of commands (:mod:`.app`, :mod:`.group`), one module
per command (``*_cmd``: parse the options, call one library function, hand the result to a
reporter or print its lines), how a user error becomes one line and an exit code
(:mod:`.errors`, :mod:`.usage`), and :func:`main`, the console script. No statistics,
pairing, validation or formatting lives here: a command's checks and output are the
library's.

May import: io, stats, core, plugins, data, execute, report, comparison, gate, file_schemas.
A command module imports typer at module level and the library inside its function, so
``evalkit --help`` imports no command module, no numpy and no plugin.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from typing import Any


def _unexpected(exc: BaseException) -> int:
    """Print the traceback of an exception no command turned into an ``error:`` line (a
    bug, or any error with ``EVALKIT_DEBUG=1``), registered secrets masked, and return
    the exit code: the error's own (``CliError.exit_code``) or 2, never 1, which means a
    "no" verdict (a failed gate, an incomplete run)."""
    import traceback

    from evalkit.cli.errors import USER_ERROR
    from evalkit.io.redaction import mask, scrub_exception

    scrub_exception(exc)
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(mask("".join(traceback.format_exception(exc))))
    code = getattr(exc, "exit_code", USER_ERROR)
    return code if isinstance(code, int) and code > 1 else USER_ERROR


def main() -> None:
    """Run the command line, then leave without the interpreter's final garbage collection.

    Every object alive at exit is moved to the collector's permanent generation
    (:func:`gc.freeze`), so the collections run while the interpreter shuts down skip them:
    that saves about 15 ms on every command, more than the whole evalkit kernel costs
    to start (benchmarks/bench_startup.py). Objects are still released by reference
    counting as modules are torn down; only garbage held in reference cycles is left to
    the operating system. Commands close their files and databases themselves, and the
    output streams are flushed first; if the reader of standard output has gone away by
    then, the exit code is 141, as for every closed pipe (:mod:`evalkit.cli.errors`). An
    exception no command reported (a bug) prints its traceback and exits 2, never 1.
    """
    from evalkit.cli.process_env import command_ends_process, prepare_process

    prepare_process()  # before numpy is imported
    command_ends_process()
    from evalkit.cli.stdout import guard_stdout

    guard_stdout()  # a failed write says it was standard output's
    from evalkit.cli.app import app
    from evalkit.cli.errors import (
        PIPE_CLOSED,
        USER_ERROR,
        quiet_closed_stdout,
        report_stdout_failure,
        stdout_failure,
    )

    closed = False
    code: Any = 0
    try:
        app()
    except SystemExit as exc:
        code = exc.code
    except OSError as exc:  # outside a command (typer printing --help or usage)
        failed = stdout_failure(exc)
        if failed is None:
            code = _unexpected(exc)
        else:
            report_stdout_failure(failed)
            code = USER_ERROR
    except Exception as exc:
        code = _unexpected(exc)
    finally:  # also before the traceback of an unexpected error
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            quiet_closed_stdout()
            closed = True
        except OSError as exc:  # the last bytes could not be written: say so, fail
            if stdout_failure(exc) is not None:
                report_stdout_failure(exc)
                code = code or USER_ERROR
        except ValueError:
            pass
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
        gc.freeze()
    sys.exit(PIPE_CLOSED if closed else code)
