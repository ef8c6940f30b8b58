"""The ``evalkit`` command line (typer). Commands import heavy modules lazily."""

from __future__ import annotations

import contextlib
import gc
import sys
from typing import Any


def main() -> None:
    """Run the command line, then leave without the interpreter's final garbage collection.

    Every object alive at exit is moved to the collector's permanent generation
    (:func:`gc.freeze`), so the collections run while the interpreter shuts down skip them:
    that saves about 15 ms on every command, more than the whole evalkit kernel costs
    to start (benchmarks/bench_startup.py). Objects are still released by reference
    counting as modules are torn down; only garbage held in reference cycles is left to
    the operating system. Commands close their files and databases themselves, and the
    output streams are flushed first; if the reader of standard output has gone away by
    then, the exit code is 141, as for every closed pipe (:mod:`evalkit.cli.errors`).
    """
    from evalkit.cli.process_env import prepare_process

    prepare_process()  # before numpy is imported
    from evalkit.cli.app import app
    from evalkit.cli.errors import PIPE_CLOSED, quiet_closed_stdout

    closed = False
    try:
        app()
        code: Any = 0
    except SystemExit as exc:
        code = exc.code
    finally:  # also before the traceback of an unexpected error
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            quiet_closed_stdout()
            closed = True
        except (OSError, ValueError):
            pass
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
        gc.freeze()
    sys.exit(PIPE_CLOSED if closed else code)
