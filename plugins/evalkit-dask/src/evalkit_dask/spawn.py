"""Why the run's own LocalCluster failed to start, in words: most often a script without
an ``if __name__ == "__main__":`` guard.

The LocalCluster's workers are new processes (multiprocessing's *spawn*), and each
re-imports the driver's ``__main__`` script to start. A script that calls
``evaluate(..., executor="dask")`` at its top level runs the evaluation again in every
worker (its artifact is locked by the driver, so the worker fails and Dask reports only
``RuntimeError: Nanny failed to start``). :func:`local_cluster_start` turns that failure
into one error naming the cause; :func:`unguarded_script` tells whether the call comes
from the top level of a script outside such a guard.
"""

from __future__ import annotations

import ast
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

#: What to do about it, in every message of this module.
GUARD_FIX = ("the dask executor starts worker processes that re-import your script: put "
             "the run under if __name__ == '__main__':")


def _guard_lines(source: str) -> list[tuple[int, int]]:
    """``(first, last)`` line of each top-level ``if __name__ == "__main__":`` body."""
    spans = []
    for node in ast.parse(source).body:
        if not isinstance(node, ast.If):
            continue
        test = node.test
        if isinstance(test, ast.Compare) and len(test.comparators) == 1 and any(
                isinstance(a, ast.Name) and a.id == "__name__" for a in (test.left,
                                                                        test.comparators[0])
        ) and any(isinstance(a, ast.Constant) and a.value == "__main__"
                  for a in (test.left, test.comparators[0])):
            spans.append((node.lineno, node.end_lineno or node.lineno))
    return spans


def unguarded_script() -> str | None:
    """The path of the driver's ``__main__`` script when this is called from its top
    level outside an ``if __name__ == "__main__":`` block (or the script is read from
    stdin); ``None`` otherwise (a guarded call, a function of another module, the CLI,
    an interactive session)."""
    main = sys.modules.get("__main__")
    file = getattr(main, "__file__", None)
    if main is None:
        return None
    if not isinstance(file, str):
        return None
    if file == "<stdin>":  # python - < script.py: the workers cannot read it again
        return file
    frame = sys._getframe()
    while frame is not None:
        if frame.f_globals is vars(main) and frame.f_code.co_name == "<module>":
            break
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return None  # not called from the script's top level
    try:
        spans = _guard_lines(Path(file).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
    line = frame.f_lineno
    return None if any(first <= line <= last for first, last in spans) else file


class ClusterStartError(OSError):
    """The run's own LocalCluster did not start (an ``OSError``: processes of this
    machine could not be started, so ``evalkit run`` reports it in one line)."""


@contextlib.contextmanager
def local_cluster_start() -> Iterator[None]:
    """Around the start of a LocalCluster: its failure is re-raised as a
    :class:`ClusterStartError` that names the likely cause.

    Raises:
        ClusterStartError: ``dask executor: the LocalCluster did not start (...)``, followed
            by :data:`GUARD_FIX` when :func:`unguarded_script` finds the call outside a
            guard, else by a hint naming that cause among others.
    """
    try:
        yield
    except Exception as exc:
        script = unguarded_script()
        if script == "<stdin>":
            why = (f"the script is read from stdin, which the workers cannot read again; "
                   f"save it to a file: {GUARD_FIX}")
        elif script is not None:
            why = f"{script} runs the evaluation at its top level; {GUARD_FIX}"
        else:
            why = f"if this runs from a script: {GUARD_FIX}"
        raise ClusterStartError(f"dask executor: the LocalCluster did not start "
                           f"({type(exc).__name__}: {exc}); {why}") from exc


__all__ = ["GUARD_FIX", "ClusterStartError", "local_cluster_start", "unguarded_script"]
