"""A run's artifact file: writing a :class:`~evalkit.data.results.RunResult`'s rows, reading
them back, and telling an artifact from another file.

Artifact format (``schema_version`` 2; :mod:`evalkit.data.artifact`), one JSON object per
line, UTF-8:

* line 1, the header: ``{"type": "header", "schema_version": 2, "name": ...,
  "evalkit_version": ..., "plugins": {distribution: version}, "metrics": {name:
  {"provider": ..., "version": ...}}, "qrels": {"path": ..., "sha256": ...},
  "relevance_level": 1, "missing": "zero" | "skip", "depth": null | int,
  "created": ISO-8601 UTC, "notes": {...}}``;
* then one line per query or case (:mod:`evalkit.data.rows`);
* last, the trailer: ``{"type": "trailer", "rows": n, "sha256": ...}``.

Schema 1 files (no trailer, no ``metric_errors``) are read too.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.data.artifact import (
    ArtifactError,
    Integrity,
    artifact_line,
    finished_lines,
    header_line,
    read_artifact,
    read_artifact_rows,
    sample_of,
    upgrade_schema1_rows,
)
from evalkit.data.rows import (
    non_finite_errors,
    plain_rows_from_json,
    row_from_json,
    without_response_body_json,
)
from evalkit.io.limits import (
    MAX_ARTIFACT_DEPTH,
    check_id,
    check_name,
    ids_pass,
    loads_json,
)


@dataclass(frozen=True)
class RunFile:
    """What :func:`read_run` read: the parts of a :class:`~evalkit.data.results.RunResult`.

    Attributes:
        name: the run's name (the header's, or the file's stem).
        per_query: the rows (with K >= 2 samples, their per-case reductions).
        header: the header line's fields.
        integrity: what reading the file proved.
        samples: every sample row when K >= 2; empty otherwise.
    """

    name: str
    per_query: list[Any]
    header: dict[str, Any]
    integrity: Integrity
    samples: list[Any]


def write_run(path: str | Path, name: str, header: Mapping[str, Any],
              rows: Sequence[Any]) -> Path:
    """Write the artifact of ``rows`` (header line, one line per row, the trailer),
    atomically: see :meth:`evalkit.data.results.RunResult.save`.

    Raises:
        evalkit.io.outputs.UnwritableError: an :class:`OSError` naming ``path``.
    """
    from evalkit.io.outputs import write_output

    p = Path(path)
    write_output(p, finished_lines(header_line(name, dict(header)), list(map(row_line, rows))))
    return p


def row_line(row: Any) -> str:
    """The artifact line of ``row`` as :meth:`~evalkit.data.results.RunResult.save`
    writes it (a non-finite metric value written as that metric's error:
    :func:`finite_metrics`)."""
    return artifact_line(finite_metrics(row.to_json()))


def read_run(path: str | Path) -> RunFile:
    """Read a run artifact: see :meth:`evalkit.data.results.RunResult.load`.

    Raises:
        ArtifactError: missing header, unknown schema, malformed line (file and line
            named), a second row of a case or query (both lines named; in an unfinished
            file only the row of a case whose call or metric failed may be followed by
            another).
    """
    with _collector_paused():
        return _read_run(Path(path))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (if it runs) while the body runs. Reading a run
    allocates a few objects per row and no reference cycle; with the collector running,
    its generations are scanned again and again as they grow (reading 21 artifacts of
    10,000 rows took about twice as long)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def read_run_rows(path: str | Path) -> tuple[RunFile, dict[tuple[str, int | None],
                                                               tuple[int, int]]]:
    """:func:`read_run` of a target run holding one line of the file at a time, its
    rows without their responses' bodies
    (:func:`~evalkit.data.rows.without_response_body_json`), and where the line of
    each row lies in the file, by ``(case id, sample)``: ``(byte offset, length)``, from
    which the whole row is read again. The checks, values (but the bodies) and errors
    are those of :func:`read_run`.

    Raises:
        ArtifactError: as :func:`read_run`.
    """
    p = Path(path)
    with _collector_paused():
        header, lines, integrity, spans = read_artifact_rows(p, without_response_body_json)
        run = _run_file(p, header, lines, integrity)
    where: dict[tuple[str, int | None], tuple[int, int]] = {}
    for (_, obj), span in zip(lines, spans, strict=True):  # the later row of a case wins,
        key = (obj["id"], sample_of(obj))  # as in the rows read
        where.pop(key, None)
        where[key] = span
    return run, where


def _read_run(p: Path) -> RunFile:
    header, lines, integrity = read_artifact(p)
    return _run_file(p, header, lines, integrity)


def _run_file(p: Path, header: dict[str, Any], lines: list[tuple[int, dict[str, Any]]],
              integrity: Integrity) -> RunFile:
    objs = [obj for _, obj in lines]
    rids = [obj["id"] for obj in objs]
    if not set(map(type, rids)) <= {str}:  # an id is text; null, true or 7 is refused
        lineno, obj = next((n, o) for n, o in lines if type(o["id"]) is not str)
        value = json.dumps(obj["id"])[:40]
        number = isinstance(obj["id"], int | float) and not isinstance(obj["id"], bool)
        fix = f'write it in quotes ("{value}")' if number else \
            "the query or case id, in quotes"
        raise ArtifactError(f"{p}:{lineno}: row id {value} is not text; an artifact's ids "
                            f"are JSON strings: {fix}")
    checked = ids_pass(rids)  # else each id is checked with its row, to name its line
    # the usual file, plain rows of distinct ids, at once; else row by row, naming lines
    rows = plain_rows_from_json(objs) if checked and len(set(rids)) == len(rids) else None
    if rows is None:
        rows = _rows_by_line(p, lines, rids, checked, integrity,
                             "case" if header.get("kind") == "target" else "query")
    if integrity.schema_version < 2:
        upgrade_schema1_rows(rows, header)
    at = integrity.header_line  # a header field's problem names the header's line
    name = _bounded(p, at, check_name, str(header.get("name") or p.stem), "run name")
    samples: list[Any] = []
    if any(r.sample is not None for r in rows):
        from evalkit.data.samples import SampleError, split_samples

        try:
            rows, samples = split_samples(rows, header)
        except SampleError as exc:
            raise ArtifactError(f"{p}:{at}: header 'samples': {exc}") from None
    return RunFile(name=name, per_query=rows, header=dict(header), integrity=integrity,
                   samples=samples)


def _rows_by_line(p: Path, lines: list[tuple[int, dict[str, Any]]], rids: list[str],
                  checked: bool, integrity: Integrity, noun: str) -> list[Any]:
    """The rows of ``lines`` (with their line numbers and ids), read one by one; each id
    checked unless ``checked``.

    An unfinished file (schema 2, no trailer) is a log in completion order: a case a
    resume called or scored again (its first row failed) has two rows there, and the
    later one counts; any other second row is refused, naming both lines.

    Raises:
        ArtifactError: a bad id or row, a second row (file and line named).
    """
    unfinished = integrity.schema_version >= 2 and not integrity.has_trailer
    by_key: dict[tuple[str, int | None], Any] = {}
    first_line: dict[tuple[str, int | None], int] = {}
    for (lineno, obj), rid in zip(lines, rids, strict=True):
        if not checked:
            _bounded(p, lineno, check_id, rid, "row id")
        try:
            row = row_from_json(obj)
        except (ValueError, TypeError, AttributeError) as exc:
            raise ArtifactError(f"{p}:{lineno}: row {rid!r}: {exc}") from None
        key = (rid, row.sample)
        if key in by_key and not (unfinished and _failed(by_key[key])):
            what = "" if row.sample is None else f" sample {row.sample}"
            raise ArtifactError(f"{p}:{lineno}: {noun} {rid!r}{what} has a second row "
                                f"(first on line {first_line[key]}); each has one row: "
                                "remove one, or score the run again")
        by_key.pop(key, None)
        by_key[key] = row
        first_line.setdefault(key, lineno)
    return list(by_key.values())


def finite_metrics(obj: dict[str, Any]) -> dict[str, Any]:
    """A row's artifact object with each non-finite metric value (NaN, infinity: only a
    hand-built row has one, scoring refuses them) moved to ``metric_errors``, so that the
    line is standard JSON and every reader sees a failed metric, never a number (a file
    written by hand with such a value is read the same way: :func:`row_from_json`)."""
    metrics = obj.get("metrics") or {}
    bad = non_finite_errors(metrics, "saved")
    if not bad:
        return obj
    out = {**obj, "metrics": {k: v for k, v in metrics.items() if k not in bad}}
    out["metric_errors"] = {**bad, **(obj.get("metric_errors") or {})}
    return out


def _failed(row: Any) -> bool:
    """Whether a resume would call or score ``row``'s case again (its call or a metric
    failed), so that a second row of it may follow in an unfinished file."""
    return getattr(row, "error", None) is not None or bool(getattr(row, "metric_errors", None))


def _bounded(p: Path, lineno: int, check: Callable[[str, str], str], text: str,
             what: str) -> str:
    """``check(text, what)``; what it refuses (a ValueError: a control character, a blank
    name, beyond a limit) as an :class:`ArtifactError` naming the file and line."""
    try:
        return check(text, what)
    except ValueError as exc:
        raise ArtifactError(f"{p}:{lineno}: {exc}") from None


def _first_filled_line(fh: Any) -> str:
    """The first line of the text file ``fh`` that is not blank ("" when none is), as
    :func:`~evalkit.data.artifact.read_artifact` skips blank lines before the header."""
    for line in fh:
        if line.strip():
            return str(line)
    return ""


def is_artifact(path: str | Path) -> bool:
    """Whether the first line of ``path`` that is not blank is an evalkit run header line
    (``False`` for a pipe or device, which is not opened)."""
    if not Path(path).is_file():
        return False
    try:
        with Path(path).open("r", encoding="utf-8-sig", newline="\n") as fh:
            first = _first_filled_line(fh)
    except (OSError, UnicodeDecodeError):
        return False
    try:
        obj = loads_json(first, MAX_ARTIFACT_DEPTH)
    except ValueError:  # not JSON, or nested too deeply to be a header (LimitError)
        return False
    return isinstance(obj, dict) and obj.get("type") == "header"


__all__ = ["RunFile", "is_artifact", "read_run", "write_run"]
