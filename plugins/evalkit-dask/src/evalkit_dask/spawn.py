"""Why the run's own LocalCluster failed to start, in words: a script without an
``if __name__ == "__main__":`` guard, or worker processes too slow to start.

The LocalCluster's workers are new processes (multiprocessing's *spawn*), and each
re-imports the driver's ``__main__`` script to start. A script that calls
``evaluate(..., executor="dask")`` at its top level runs the evaluation again in every
worker (its artifact is locked by the driver, so the worker fails and Dask reports only
``RuntimeError: Nanny failed to start``). :func:`local_cluster_start` turns that failure
into one error naming the cause; :func:`unguarded_script` tells whether the call comes
from the top level of a script outside such a guard.

On a slow or busy machine a worker process may take longer to start (import Python,
evalkit and Dask) than the Nanny allows it, which is the executor's ``death_timeout_s``:
that failure names the timeout to raise instead (:func:`timed_out`), and the guard is
suggested only to a script.
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


def timed_out(exc: BaseException) -> bool:
    """Whether a timeout is in the chain of ``exc`` (its causes and contexts): Dask's
    Nanny gave a worker process ``death_timeout`` to start, and it did not."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, TimeoutError) or "timed out" in str(current):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _runs_a_script() -> bool:
    """Whether ``__main__`` is a Python file (a script), not ``evalkit`` or ``-c``."""
    file = getattr(sys.modules.get("__main__"), "__file__", None)
    return isinstance(file, str) and file.endswith(".py")


class ClusterStartError(OSError):
    """The run's own LocalCluster did not start (an ``OSError``: processes of this
    machine could not be started, so ``evalkit run`` reports it in one line)."""


@contextlib.contextmanager
def local_cluster_start(death_timeout_s: float) -> Iterator[None]:
    """Around the start of a LocalCluster whose workers have ``death_timeout_s`` seconds
    to start: its failure is re-raised as a :class:`ClusterStartError` that names the
    likely cause.

    Raises:
        ClusterStartError: ``dask executor: the LocalCluster did not start (...)``,
            followed by :data:`GUARD_FIX` when :func:`unguarded_script` finds the call
            outside a guard; else, when the workers timed out (:func:`timed_out`), by the
            timeout to raise; else by what is known (the guard is suggested only when
            ``__main__`` is a script).
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
        elif timed_out(exc):
            why = (f"its worker processes did not start within death_timeout_s "
                   f"({death_timeout_s:g} s), so this machine is slow or busy: raise the "
                   "dask executor's death_timeout_s (in the eval config, executor: {name: "
                   "dask, options: {death_timeout_s: 60}}), or start fewer workers "
                   "(n_workers)")
        elif _runs_a_script():
            why = f"if the script runs the evaluation at its top level: {GUARD_FIX}"
        else:
            why = "its worker processes could not be started on this machine"
        raise ClusterStartError(f"dask executor: the LocalCluster did not start "
                                f"({type(exc).__name__}: {exc}); {why}") from exc


__all__ = ["GUARD_FIX", "ClusterStartError", "local_cluster_start", "timed_out",
           "unguarded_script"]
