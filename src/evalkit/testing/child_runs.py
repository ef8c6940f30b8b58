"""Driving ``evalkit run`` as a real child process in a test: start it, wait for what it
writes, and read the rows of its artifact while it runs or after it was interrupted.

For tests of what a run does under Ctrl-C, SIGTERM or SIGKILL (and of resuming it), of
the kernel and of a plugin's target or executor alike::

    artifact = write_project(tmp_path, TARGET_MODULE, target_kwargs={"delay": 0.5})
    proc = spawn_run(tmp_path)
    wait_until(lambda: len(written_rows(artifact)) >= 4, proc, "no rows written")
    proc.send_signal(signal.SIGINT)

Nothing here imports pytest: a failed wait raises ``AssertionError``, which pytest
reports as a test failure.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

#: ``evalkit`` as a command of this interpreter (what the ``evalkit`` script runs).
EVALKIT_COMMAND: tuple[str, ...] = (sys.executable, "-c", "from evalkit.cli import main; main()")

T = TypeVar("T")


def write_project(folder: Path, target_source: str, *, module: str = "child_target",
                  target_kwargs: Mapping[str, Any] | None = None, cases: int = 20,
                  max_concurrency: int = 4, metrics: Sequence[str] = ("recall@1",)) -> Path:
    """Write a project ``evalkit run`` can run in ``folder``, and return the path of the
    artifact it will write (``runs/run.jsonl``).

    Args:
        folder: where ``goldens.jsonl``, ``<module>.py`` and ``evalkit.yaml`` are written.
        target_source: the text of a module whose ``make(**target_kwargs)`` returns the
            target (the config's ``factory: '<module>:make'``).
        module: the target module's name.
        target_kwargs: the factory's keyword arguments (JSON values).
        cases: how many golden cases: ids ``c00``, ``c01``, ... (two digits below 100),
            query ``"q"``, each expecting its own id.
        max_concurrency: the run's calls in flight.
        metrics: the run's metrics.
    """
    width = max(2, len(str(cases - 1)))
    (folder / "goldens.jsonl").write_text("".join(
        json.dumps({"id": f"c{i:0{width}d}", "query": "q", "expected": [f"c{i:0{width}d}"]})
        + "\n" for i in range(cases)))
    (folder / f"{module}.py").write_text(target_source)
    target = {"factory": f"{module}:make", "kwargs": dict(target_kwargs or {})}
    (folder / "evalkit.yaml").write_text(
        "goldens: goldens.jsonl\n"
        f"target: {json.dumps(target)}\n"  # JSON is YAML
        f"metrics: {json.dumps(list(metrics))}\noutput: runs/run.jsonl\n"
        f"max_concurrency: {max_concurrency}\n")
    return folder / "runs" / "run.jsonl"


def spawn_run(folder: Path, *args: str) -> subprocess.Popen[str]:
    """Start ``evalkit run --no-progress *args`` in ``folder`` (its ``evalkit.yaml``),
    with stdout and stderr piped as text."""
    return subprocess.Popen([*EVALKIT_COMMAND, "run", "--no-progress", *args], cwd=folder,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def written_rows(artifact: Path) -> list[dict[str, Any]]:
    """The row lines (decoded JSON objects) of a run artifact as written so far: the
    header, the trailer and a last line still being written are left out; an artifact
    not created yet has none."""
    if not artifact.exists():
        return []
    lines = artifact.read_bytes().split(b"\n")[:-1]  # the last one may be unfinished
    return [o for o in (json.loads(x) for x in lines[1:] if x.strip()) if o["type"] == "row"]


def started_ids(folder: Path, log: str = "started.log") -> list[str]:
    """The case ids a test target appended to ``folder / log`` when each of its calls
    started, one a line, in order (empty when none has started)."""
    path = folder / log
    return path.read_text().split() if path.exists() else []


def wait_until(condition: Callable[[], object], proc: subprocess.Popen[Any], what: str,
               limit: float = 20) -> None:
    """Poll ``condition()`` every 5 ms until it is true.

    Raises:
        AssertionError: ``proc`` ended first, or ``limit`` seconds passed; ``proc`` is
            killed and the message holds ``what`` and its output ``(stdout, stderr)``.
    """
    deadline = time.monotonic() + limit
    while not condition():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"{what}: {proc.communicate()}")
        time.sleep(0.005)


def returns_within(fn: Callable[[], T], limit: float) -> tuple[float, T | BaseException]:
    """Call ``fn()`` in a daemon thread and wait for it at most ``limit`` seconds, a
    guard against a hang (never a measurement: a test asserts that a bounded call ends,
    and makes the unbounded one take far longer than ``limit``).

    Returns:
        ``(seconds it took, what fn returned or the exception it raised)``.

    Raises:
        AssertionError: ``fn`` was still running after ``limit`` seconds.
    """
    done: list[T | BaseException] = []

    def call() -> None:
        try:
            done.append(fn())
        except BaseException as exc:  # handed to the caller
            done.append(exc)

    start = time.monotonic()
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(limit)
    if not done:
        raise AssertionError(f"still running after {limit:g} s")
    return time.monotonic() - start, done[0]


__all__ = ["EVALKIT_COMMAND", "returns_within", "spawn_run", "started_ids", "wait_until",
           "write_project", "written_rows"]
