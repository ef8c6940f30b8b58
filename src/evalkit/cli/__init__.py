"""The ``evalkit`` command line (typer). Commands import heavy modules lazily."""

from __future__ import annotations

import contextlib
import gc
import sys


def main() -> None:
    """Run the command line, then leave without the interpreter's final garbage collection.

    Every object alive at exit is moved to the collector's permanent generation
    (:func:`gc.freeze`), so the collections run while the interpreter shuts down skip them:
    that saves about 15 ms on every command, more than the whole evalkit kernel costs
    to start (benchmarks/bench_startup.py). Objects are still released by reference
    counting as modules are torn down; only garbage held in reference cycles is left to
    the operating system. Commands close their files and databases themselves, and the
    output streams are flushed first.
    """
    from evalkit.cli.app import app

    try:
        app()
    finally:
        for stream in (sys.stdout, sys.stderr):
            # a closed pipe (`evalkit ... | head`): nothing more can be written
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        gc.freeze()
