"""The progress bar on stderr of the target runner (cases done, rate, elapsed, ETA,
errors) and of ``evalkit pairwise`` (verdicts)."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

#: The progress bar's counters are pushed to it at most this often (seconds); it redraws
#: itself at its own rate.
PROGRESS_INTERVAL_S = 0.1


class ProgressBar:
    """A rich progress bar on stderr (cases done, rate, ETA, errors), or nothing."""

    def __init__(self, name: str, total: int, done: int, enabled: bool, *,
                 unit: str = "cases") -> None:
        self.enabled, self.unit = enabled, unit
        self.errors = 0
        self._pending = 0  # cases counted but not yet shown
        self._last_update = 0.0
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[errors]}"),
            console=Console(stderr=True),
        )
        self._task = self._progress.add_task(
            name, total=total, completed=done, rate="", errors="",
        )

    def __enter__(self) -> ProgressBar:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._flush(time.monotonic())
            self._progress.stop()

    def advance(self, done: int = 1, errored: int = 0) -> None:
        """Count ``done`` more cases, ``errored`` of them with an error. The bar is
        updated at most every :data:`PROGRESS_INTERVAL_S` (and on exit)."""
        if self._progress is None or self._task is None:
            return
        self.errors += errored
        self._pending += done
        now = time.monotonic()
        if now - self._last_update >= PROGRESS_INTERVAL_S:
            self._flush(now)

    def count(self, done: int, total: int) -> None:
        """Show ``done`` of ``total`` (a caller that counts for itself: ``evalkit
        pairwise``'s verdicts); updated at most every :data:`PROGRESS_INTERVAL_S`, and
        when ``done`` reaches ``total``."""
        if self._progress is None or self._task is None:
            return
        now = time.monotonic()
        if done < total and now - self._last_update < PROGRESS_INTERVAL_S:
            return
        self._last_update = now
        self._progress.update(self._task, total=total, completed=done)

    def note(self, text: str) -> None:
        """Print one line on stderr (above the bar when it is shown)."""
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def _flush(self, now: float) -> None:
        if self._progress is None or self._task is None:
            return
        self._last_update = now
        if self._pending:
            self._progress.advance(self._task, self._pending)
            self._pending = 0
        speed = self._progress.tasks[self._task].speed
        self._progress.update(
            self._task,
            rate=f"{speed:.1f} {self.unit}/s" if speed else "",
            errors=f"[red]{self.errors} errored" if self.errors else "",
        )
