"""The target runner's artifact while it runs: append rows as they arrive, finish it
atomically, and read back an unfinished one to resume it.

While the run goes on, the file holds the header (``"status": "running"``) and one line
per finished case in completion order, and no trailer. The rows that completed together
are written with one write and flushed before the runner waits again, so a killed
process loses no row it received; ``os.fsync`` runs at most every ``interval`` seconds
and at the end. At the end the file is replaced (temporary file, fsync, rename, fsync of
the folder) by the finished artifact: final header, rows in golden-set order, trailer,
the bytes :meth:`evalkit.data.results.RunResult.save` writes. Registered secrets are masked
in every line (:func:`evalkit.data.artifact.artifact_line`).

The writer keeps where each row's line lies in the file (byte offset and length), not the
line: the final rewrite copies the lines from the file one at a time, and
:meth:`ArtifactWriter.written_rows` reads rows back from it, so a run's memory does not
grow with its responses (a device or a pipe, which cannot be read back, keeps the lines).

A character device or FIFO (``/dev/null``, a named pipe) cannot be rewritten, so nothing
is written to it until the end, when the finished artifact is written to it once
(:func:`evalkit.io.outputs.write_output`); resuming one is refused.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from evalkit.data.artifact import ArtifactError, artifact_line, header_line, streamed_lines
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult, case_result_from_json
from evalkit.io.limits import MAX_ARTIFACT_DEPTH, LimitError, loads_json
from evalkit.io.outputs import destination, write_output, writing


class ArtifactWriter:
    """Appends rows, one write and one flush per batch, with an fsync at most every
    ``interval`` s; keeps where each row's JSON line lies in the file (a stream: the
    line) for the final :meth:`rewrite`."""

    def __init__(self, path: Path, interval: float) -> None:
        self.path = path
        self.interval = max(0.0, float(interval))
        self._fh: IO[str] | None = None
        self._last_sync = 0.0
        # held for one write (and its fsync): unbounded only for a pipe, whose write waits
        # for its reader, at the reader's pace
        self._lock = threading.Lock()
        # by (case id, sample): a row's (byte offset, byte length) in the file; a
        # stream's lines themselves
        self._spans: dict[tuple[str, int | None], tuple[int, int]] = {}
        self._lines: dict[tuple[str, int | None], str] = {}
        self._end = 0  # the file's length in bytes
        with writing(path):  # a socket or a block device is refused before any call
            self.stream = destination(path) == "stream"

    def start(self, header: Mapping[str, Any], rows: Sequence[CaseResult]) -> None:
        """Write the header and the kept ``rows``, then open for appending.

        Kept rows (a resume) are rewritten atomically (temporary file, fsync, rename), so
        a crash never loses them; they are iterated once, as they are written (a
        :class:`WrittenRows` reads each from the earlier file then). A new run just
        writes its header line.

        Raises:
            evalkit.io.outputs.UnwritableError: the artifact cannot be written (names it).
        """
        if self.stream:
            return
        head = artifact_line(header)
        self._end = len(head.encode("utf-8"))
        if rows:  # each row encoded as it is written (``rows`` may read them one by one)
            write_output(self.path, itertools.chain([head], map(self._encode, rows)))
        with writing(self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("a" if rows else "w", encoding="utf-8")
            if not rows:
                self._fh.write(head)
                self._fh.flush()
        self._last_sync = time.monotonic()  # synced with the rows, by the same clock

    def _encode(self, row: CaseResult) -> str:
        line = artifact_line(row.to_json())
        if self.stream:
            self._lines[(row.case_id, row.sample)] = line
        else:
            size = len(line.encode("utf-8"))
            self._spans[(row.case_id, row.sample)] = (self._end, size)
            self._end += size
        return line

    def append_many(self, rows: Sequence[CaseResult]) -> None:
        """Append ``rows`` with one write, flush, and fsync if ``interval`` has passed."""
        if self.stream:
            for r in rows:
                self._encode(r)
            return
        if self._fh is None:
            raise RuntimeError("artifact writer is closed")
        with self._lock, writing(self.path):
            self._fh.write("".join(self._encode(r) for r in rows))
            self._fh.flush()
            now = time.monotonic()
            if now - self._last_sync >= self.interval:
                os.fsync(self._fh.fileno())
                self._last_sync = now

    def close(self, *, sync: bool = True, failed: bool = False) -> None:
        """Flush and close; ``sync=False`` skips the fsync (a :meth:`rewrite` follows).
        ``failed``: the run is failing (a full disk...): an error here would hide that
        one, so it is not raised; what was written stays for ``--resume``."""
        with self._lock:
            fh, self._fh = self._fh, None
            if fh is None:
                return
            try:
                with writing(self.path):
                    try:
                        fh.flush()
                        if sync:
                            os.fsync(fh.fileno())
                    finally:
                        fh.close()
            except OSError:
                if not failed:
                    raise

    def rewrite(self, run: RunResult) -> None:
        """Replace the file atomically by the finished artifact of ``run``: header, rows
        in ``run`` order from the lines kept when they were appended, trailer (the bytes
        of :meth:`RunResult.save`; temporary file, fsync, rename, folder fsync). If that
        fails (a full disk), the appended file is left as it was, so ``--resume``
        continues it."""
        write_output(self.path, streamed_lines(header_line(run.name, run.header),
                                               self._row_lines(run.samples or run.per_query)))

    def _row_lines(self, rows: Sequence[CaseResult]) -> Iterator[str]:
        """The lines of ``rows``: as written (read from the file one at a time), or
        encoded now for a row that was not."""
        with _Reader(self.path) as read:
            for row in rows:
                key = (row.query_id, row.sample)
                span = self._spans.get(key)
                line = read(span).decode("utf-8") if span is not None else self._lines.get(key)
                yield line if line is not None else artifact_line(row.to_json())

    def holds(self, rows: Iterable[CaseResult]) -> bool:
        """Whether every row of ``rows`` (by case id and sample) was written to the file,
        so that :meth:`written_rows` can read it back (never for a stream)."""
        return not self.stream and all((r.query_id, r.sample) in self._spans for r in rows)

    def written_rows(self, rows: Sequence[CaseResult]) -> Sequence[CaseResult]:
        """The rows of ``rows`` as written to the file, read back (each time one is
        asked for, never all at once): what ``rows`` are when their large fields were
        dropped after writing (:meth:`holds` them all).

        Raises:
            KeyError: a row that was not written.
        """
        return WrittenRows(self.path, [self._spans[(r.query_id, r.sample)] for r in rows])


def span_lines(path: Path, spans: Iterable[tuple[int, int]]) -> Iterator[str]:
    """The lines of ``path`` at ``spans`` (byte offset and length), read one at a time
    through one handle, decoded as UTF-8."""
    with _Reader(path) as read:
        for span in spans:
            yield read(span).decode("utf-8")


class _Reader:
    """Reads byte spans of a file through one handle, opened on first use."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[bytes] | None = None

    def __enter__(self) -> Callable[[tuple[int, int]], bytes]:
        return self.read

    def read(self, span: tuple[int, int]) -> bytes:
        if self._fh is None:
            with writing(self.path):
                self._fh = self.path.open("rb")
        self._fh.seek(span[0])
        return self._fh.read(span[1])

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class WrittenRows(Sequence[CaseResult]):
    """Rows read back from an artifact being written, one at a time, from their byte
    spans ``(offset, length)``: a sequence whose items are parsed when asked for and not
    kept (an aggregate iterating it holds one row at a time)."""

    def __init__(self, path: Path, spans: Sequence[tuple[int, int]]) -> None:
        self._path, self._spans = path, list(spans)

    def __len__(self) -> int:
        return len(self._spans)

    def _row(self, read: Callable[[tuple[int, int]], bytes], span: tuple[int, int]
             ) -> CaseResult:
        return case_result_from_json(loads_json(read(span), MAX_ARTIFACT_DEPTH))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return WrittenRows(self._path, self._spans[index])
        with _Reader(self._path) as read:
            return self._row(read, self._spans[index])

    def __iter__(self) -> Iterator[CaseResult]:
        with _Reader(self._path) as read:
            for span in self._spans:
                yield self._row(read, span)


def read_partial(path: Path, *, light: bool = False
                 ) -> tuple[dict[str, Any], list[CaseResult],
                            dict[tuple[str, int | None], tuple[int, int]]] | None:
    """The header and rows of an artifact being resumed, and where each row's line lies
    in the file by ``(case id, sample)`` (byte offset and length, newline included);
    ``None`` if it holds no complete line yet. Read one line at a time
    (:func:`evalkit.io.text_lines.bounded_lines`); ``light``: the rows without their
    responses' bodies (:func:`~evalkit.data.rows.without_response_body_json`), read
    whole again from their lines when needed (:class:`WrittenRows`).

    An unterminated last line is a write cut short and is dropped; a trailer line (a
    finished run resumed to retry its failures) is skipped. When a case has two rows (a
    resume re-scored it and was itself stopped), the later row wins: until the file is
    finished it is a log of rows in completion order.

    Raises:
        ArtifactError: a malformed line anywhere else, a line that is not a row, or
            one longer than :data:`evalkit.io.text_lines.MAX_ARTIFACT_LINE_BYTES`.
    """
    from evalkit.data.artifact import refuse_long_lines
    from evalkit.data.rows import without_response_body_json
    from evalkit.io.text_lines import MAX_ARTIFACT_LINE_BYTES, bounded_lines

    header: dict[str, Any] | None = None
    rows: dict[tuple[str, int | None], CaseResult] = {}  # by (case id, sample)
    spans: dict[tuple[str, int | None], tuple[int, int]] = {}
    with path.open("rb") as fh:
        start = refuse_long_lines(path, fh)
        for lineno, offset, raw in bounded_lines(fh, MAX_ARTIFACT_LINE_BYTES, start):
            if not raw.endswith(b"\n"):
                break  # after the last "\n": a truncated line
            if not raw.strip():
                continue
            try:
                obj = loads_json(raw[:-1], MAX_ARTIFACT_DEPTH)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise ArtifactError(
                    f"{path}:{lineno}: not valid JSON ({exc}); only a truncated last line "
                    "is tolerated on resume"
                ) from None
            except LimitError as exc:
                raise ArtifactError(f"{path}:{lineno}: {exc}") from None
            if not isinstance(obj, dict):
                raise ArtifactError(f"{path}:{lineno}: expected a JSON object")
            if header is None:
                if obj.get("type") != "header":
                    raise ArtifactError(f"{path}:{lineno}: the first line is not a run "
                                        "header")
                header = obj
                continue
            if obj.get("type") == "trailer":
                continue
            if obj.get("type") != "row" or "id" not in obj:
                raise ArtifactError(f"{path}:{lineno}: expected a row object with an 'id'")
            try:
                row = case_result_from_json(without_response_body_json(obj) if light
                                            else obj)
            except (TypeError, ValueError) as exc:
                raise ArtifactError(f"{path}:{lineno}: malformed row ({exc})") from None
            key = (row.case_id, row.sample)
            rows.pop(key, None)
            rows[key] = row
            spans.pop(key, None)
            spans[key] = (offset, len(raw))
    if header is None:
        return None
    return header, list(rows.values()), spans
