"""The run artifact's file format: schema versions, the trailer, and reading it back.

A run artifact is UTF-8 JSON Lines: a header line, one line per row, and (schema 2) a
**trailer** line that closes the file::

    {"type": "header", "schema_version": 2, "name": ..., ...}
    {"type": "row", "id": "q1", ...}
    ...
    {"type": "trailer", "rows": 93, "sha256": "<hex>"}

``rows`` is the number of row lines and ``sha256`` the digest of every byte before the
trailer line (the header and row lines, newlines included), so a reader detects a file
cut anywhere, exactly at a line boundary included (the trailer is gone, or the count and
digest disagree), and a file edited after it was written. Every writer that produces a
finished file writes it (:meth:`evalkit.data.results.RunResult.save`, the runner's final
rewrite, ``rescore``, ``baseline promote``); a file without one is still being written,
or was cut short. The runner appends rows to a file that has none yet while it runs.

Schema 1 files (no trailer) are read as before; what they cannot prove is listed in
:attr:`Integrity.notes`. See docs/artifacts.md.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from evalkit.io.error_messages import reading
from evalkit.io.limits import MAX_ARTIFACT_DEPTH, LimitError, json_problem, loads_json, shown
from evalkit.io.redaction import mask

#: The schema this evalkit writes.
SCHEMA_VERSION = 2
#: The schemas it reads.
READABLE_VERSIONS = (1, 2)

_BOM = b"\xef\xbb\xbf"


class ArtifactError(ValueError):
    """A run artifact that cannot be read; the message names the file and line."""


@dataclass(frozen=True)
class Integrity:
    """What reading an artifact file proved about its completeness.

    Attributes:
        path: the file read.
        schema_version: the header's schema version.
        rows_read: row lines read.
        trailer_rows: the row count the trailer records (``None``: no trailer).
        digest_ok: whether the trailer's sha256 matches the bytes before it (``None``
            without a trailer).
        cut_line: the line number of an unterminated, unreadable last line that was
            dropped (a write cut short; only tolerated in a schema 2 file without a
            trailer, which is incomplete anyway).
        header_line: the line number of the header (1, unless blank lines come first),
            which a message about a header field names.
    """

    path: str
    schema_version: int
    rows_read: int
    trailer_rows: int | None = None
    digest_ok: bool | None = None
    cut_line: int | None = None
    problems: tuple[str, ...] = field(default=())
    header_line: int = 1

    @property
    def has_trailer(self) -> bool:
        return self.trailer_rows is not None

    @property
    def ok(self) -> bool:
        """Whether nothing shows the file to be cut short or altered."""
        return not self.problems

    @property
    def altered(self) -> str | None:
        """The problem of a finished file edited or damaged after it was written (its
        trailer's row count or sha256 does not match), with the advice to write it again;
        ``None`` otherwise (a file cut short or still being written is not altered)."""
        if not self.has_trailer or not self.problems:
            return None
        return self.problems[0]

    @property
    def notes(self) -> tuple[str, ...]:
        """What the file cannot prove (schema 1 has no trailer)."""
        if self.schema_version < 2:
            return (f"{self.path} is a schema 1 artifact (no trailer): a cut at a line "
                    "boundary is detected only through the counts its header records; "
                    "save it again (RunResult.save, evalkit baseline promote) to add one",)
        return ()


def _problems(path: str, version: int, rows: int, trailer: int | None,
              digest_ok: bool | None, cut: int | None) -> tuple[str, ...]:
    if version < 2:
        return ()
    out: list[str] = []
    if trailer is None:
        out.append(
            f"{path} ends without its trailer line after {rows} row(s): the file was cut "
            "short, or its run is still being written or was stopped before it finished"
            + (f" (line {cut} is cut mid-line and was dropped)" if cut is not None else ""))
    elif trailer != rows:
        out.append(f"{path}: the trailer records {trailer} row(s) but the file holds {rows}: "
                   f"rows were lost or added after it was written. {_REWRITE}")
    elif digest_ok is False:
        out.append(f"{path}: the content differs from what was written (the trailer's "
                   f"sha256 does not match): the file was edited or damaged. {_REWRITE}")
    return tuple(out)


#: What to do about an artifact whose trailer does not match its rows.
_REWRITE = ("Write it again from its source (evalkit eval RUN --qrels QRELS --save FILE "
            "--overwrite, evalkit run --overwrite, or a copy you trust). Saving the edited "
            "file again (RunResult.save) would not repair it: it writes a new trailer over "
            "whatever the file now holds, vouching for the edit as if the run had made it")


def trailer_line(body: bytes, n_rows: int) -> str:
    """The trailer line (with its newline) for ``body``, the bytes of the header and row
    lines before it."""
    return _trailer(hashlib.sha256(body).hexdigest(), n_rows)


def _trailer(digest: str, n_rows: int) -> str:
    return json.dumps({"type": "trailer", "rows": n_rows, "sha256": digest}) + "\n"


def artifact_line(obj: Mapping[str, Any]) -> str:
    """One artifact line: ``obj`` as standard JSON, registered secrets masked
    (:func:`evalkit.io.redaction.mask`), and a newline.

    Raises:
        ValueError: ``obj`` holds a NaN or an infinity (JSON has no token for them; the
            values a run computes are checked where they are made, so this is a hand-built
            row or header), the message naming where (``aggregates.cost``).
    """
    try:
        return mask(json.dumps(obj, allow_nan=False)) + "\n"
    except ValueError:
        where = _non_finite_at(obj) or "a value"
        raise ValueError(f"cannot write an artifact line holding a non-finite number at "
                         f"{where}: JSON has no token for NaN or an infinity; store a "
                         "finite value, or record the failure instead") from None


def _non_finite_at(value: Any, at: str = "") -> str | None:
    """The dotted path of the first NaN or infinity in ``value`` (dicts, lists), or None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (at or "the value")
    items: Any = (value.items() if isinstance(value, Mapping) else
                  enumerate(value) if isinstance(value, list | tuple) else ())
    for key, item in items:
        found = _non_finite_at(item, f"{at}.{key}" if at else str(key))
        if found is not None:
            return found
    return None


def header_line(name: str, header: Mapping[str, Any]) -> str:
    """The header line: ``type``, ``schema_version`` (always this evalkit's) and ``name``
    first, then the other header fields in their order."""
    out: dict[str, Any] = {"type": "header", "schema_version": SCHEMA_VERSION, "name": name}
    out.update({k: v for k, v in header.items() if k not in out})
    return artifact_line(out)


def finished_lines(head: str, row_lines: Sequence[str]) -> list[str]:
    """A finished artifact's lines: the header line, the row lines (each ending in a
    newline) and the trailer over their UTF-8 bytes. The one encoding every writer of a
    finished file uses (:func:`evalkit.io.outputs.write_output` writes them)."""
    return list(streamed_lines(head, row_lines))


def streamed_lines(head: str, row_lines: Iterable[str]) -> Iterator[str]:
    """The lines of :func:`finished_lines`, yielded one at a time as ``row_lines`` yields
    them (the trailer's hash is updated line by line), so the rows need not all be in
    memory at once."""
    digest = hashlib.sha256(head.encode("utf-8"))
    yield head
    n_rows = 0
    for line in row_lines:
        digest.update(line.encode("utf-8"))
        n_rows += 1
        yield line
    yield _trailer(digest.hexdigest(), n_rows)


def metric_errors_of(obj: Mapping[str, Any]) -> dict[str, str]:
    """A row's ``metric_errors`` (``{metric: message}``). Raises ValueError."""
    errors = obj.get("metric_errors")
    if not errors:  # the usual row: no key at all
        return {}
    if not isinstance(errors, dict) or not all(isinstance(v, str) for v in errors.values()):
        raise ValueError("'metric_errors' must be an object of metric name to message")
    return {str(k): v for k, v in errors.items()}


def sample_of(obj: Mapping[str, Any]) -> int | None:
    """A row's ``sample`` number, or ``None`` when absent. Raises ValueError."""
    sample = obj.get("sample")
    if sample is None:
        return None
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
        raise ValueError(f"'sample' is {shown(sample)}, not a sample number (an integer >= 0)")
    return sample


def upgrade_schema1_rows(rows: list[Any], header: Mapping[str, Any]) -> None:
    """Schema 1 target rows recorded a metric failure as the row's ``error`` beside a
    response; schema 2 records it per metric. Such an error moves to ``metric_errors``
    for every metric the run computed (schema 1 does not say which one failed)."""
    names = [str(m) for m in (header.get("config") or {}).get("metrics") or []]
    for r in rows:
        if getattr(r, "response", None) is None or r.error is None:
            continue
        failed = {m: r.error for m in names if m not in r.metrics}
        if failed:  # without the metric names the row stays errored as schema 1 wrote it
            r.metric_errors, r.error = failed, None


def _open(p: Path) -> Any:
    from evalkit.io.user_files import open_input

    return open_input(p, "run artifact", ArtifactError)  # a FIFO is refused, not waited on


def _parse(p: Path, raw: bytes, lineno: int) -> Any:
    """One line's JSON value. Raises ArtifactError (not UTF-8, not JSON, or nested deeper
    than :data:`evalkit.io.limits.MAX_ARTIFACT_DEPTH`)."""
    try:
        return loads_json(raw.decode("utf-8"), MAX_ARTIFACT_DEPTH)
    except UnicodeDecodeError as exc:
        raise ArtifactError(
            f"{p}: not UTF-8 text (line {lineno}, byte 0x{raw[exc.start]:02x}: {exc.reason}); "
            "a run artifact is JSON Lines in UTF-8. Is this the right file?"
        ) from None
    except json.JSONDecodeError as exc:
        if lineno == 1 and len(raw.split()) >= 4 and raw[:1] not in (b"{", b"["):
            raise ArtifactError(
                f"{p}:1: not a run artifact: the first line holds whitespace-separated "
                "fields, as a TREC run or qrels file does. A run artifact is the JSON Lines "
                "file `evalkit run` writes (or `evalkit eval --save` for a TREC run)"
            ) from None
        hint = ""
        if b"\r" in raw.rstrip(b"\r\n"):  # lines that end with a carriage return alone
            hint = ("; its lines end with a carriage return alone (classic Mac OS line "
                    "endings), so the file reads as one line: convert them to newlines")
        raise ArtifactError(f"{p}:{lineno}: not valid JSON ({json_problem(exc)}){hint}"
                            ) from None
    except LimitError as exc:
        raise ArtifactError(f"{p}:{lineno}: {exc}") from None


def read_artifact(path: str | Path) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]],
                                             Integrity]:
    """The header, the row objects with their line numbers, and what the file proves.

    An unterminated last line that cannot be read (a write cut short) is dropped when the
    file is schema 2 and has no trailer, which makes it incomplete anyway
    (:attr:`Integrity.cut_line`); anywhere else a malformed line is refused.

    Raises:
        ArtifactError: no such file, not UTF-8, empty, no header first, a schema this
            evalkit does not read, a malformed line (file and line named), a line longer
            than :data:`evalkit.io.text_lines.MAX_ARTIFACT_LINE_BYTES`, a line that is
            not a row, or anything after the trailer.
    """
    p = Path(path)
    with _open(p) as fh, reading(p, "run artifact"):
        data = fh.read()
        if data.startswith(_BOM):
            data = data[len(_BOM):]
        refuse_long_line(p, data)
        read = _read_whole(p, data)
        header, rows, trailer, digest, cut = read if read is not None else _read_lines(p, data)
    return _integrity(p, header, rows, trailer, digest, cut,
                      lambda: first_line_number(data))


def read_artifact_rows(path: str | Path, light: Callable[[dict[str, Any]], dict[str, Any]]
                       ) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]],
                                  Integrity, list[tuple[int, int]]]:
    """:func:`read_artifact` holding one line of the file at a time: the header, each
    row object passed through ``light`` (which drops what the caller need not keep, such
    as a response's body) with its line number, what the file proves, and where each
    row's line lies in the file (byte offset and length, newline included), in the order
    of the rows, so that the whole row can be read again from there.

    The file is read twice, line by line (:func:`evalkit.io.text_lines.bounded_lines`):
    first for a line longer than :data:`evalkit.io.text_lines.MAX_ARTIFACT_LINE_BYTES`,
    then for the rows; the values, the integrity and the errors are those of
    :func:`read_artifact`.

    Raises:
        ArtifactError: as :func:`read_artifact`.
    """
    from evalkit.io.text_lines import MAX_ARTIFACT_LINE_BYTES, bounded_lines

    p = Path(path)
    spans: list[tuple[int, int]] = []
    at: list[int] = []
    with _open(p) as fh, reading(p, "run artifact"):
        start = refuse_long_lines(p, fh)
        header, rows, trailer, digest, cut = _read_from(
            p, bounded_lines(fh, MAX_ARTIFACT_LINE_BYTES, start), light, spans, at)
    header, rows, info = _integrity(p, header, rows, trailer, digest, cut, lambda: at[0])
    return header, rows, info, spans


def _integrity(p: Path, header: dict[str, Any] | None,
               rows: list[tuple[int, dict[str, Any]]], trailer: dict[str, Any] | None,
               digest: str, cut: tuple[int, ArtifactError] | None,
               header_at: Callable[[], int]
               ) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]], Integrity]:
    """``(header, rows, what the file proves)`` of a file read by :func:`_read_from`
    (``header_at()``: the header's line number).

    Raises:
        ArtifactError: no header, an unreadable last line of a schema 1 file, a
            trailer's row count that is not a count.
    """
    if header is None:
        raise ArtifactError(f"{p}: empty file; not an evalkit run artifact")
    version = int(header["schema_version"])
    if cut is not None and version < 2:  # schema 1 has no trailer to show it unfinished
        raise cut[1]
    trailer_rows: int | None = None
    digest_ok: bool | None = None
    if trailer is not None:
        count = trailer.get("rows")
        if isinstance(count, bool) or not isinstance(count, int):
            raise ArtifactError(f"{p}: the trailer's 'rows' is {shown(count)}, not a count")
        trailer_rows = count
        digest_ok = trailer.get("sha256") == digest
    cut_line = None if cut is None else cut[0]
    return header, rows, Integrity(
        str(p), version, len(rows), trailer_rows, digest_ok, cut_line,
        _problems(str(p), version, len(rows), trailer_rows, digest_ok, cut_line),
        header_line=header_at())


def refuse_long_line(p: Path, data: bytes) -> None:
    """Refuse ``data`` when a line is longer than
    :data:`evalkit.io.text_lines.MAX_ARTIFACT_LINE_BYTES`, before it is decoded (a
    400 MB row would take gigabytes)."""
    from evalkit.io.text_lines import MAX_ARTIFACT_LINE_BYTES, long_line

    found = long_line(data, MAX_ARTIFACT_LINE_BYTES)
    if found is not None:
        raise ArtifactError(_long_line_message(p, *found))


def refuse_long_lines(p: Path, fh: IO[bytes]) -> int:
    """:func:`refuse_long_line` of the binary file ``fh`` (at its start), read one line
    at a time (:func:`evalkit.io.text_lines.bounded_lines`); leaves ``fh`` after its
    UTF-8 byte order mark, if any, and returns that position (0 or 3)."""
    from evalkit.io.text_lines import MAX_ARTIFACT_LINE_BYTES, LongLineError, bounded_lines

    start = len(_BOM) if fh.read(len(_BOM)) == _BOM else 0
    fh.seek(start)
    try:
        for _ in bounded_lines(fh, MAX_ARTIFACT_LINE_BYTES, start):
            pass
    except LongLineError as exc:
        raise ArtifactError(_long_line_message(p, exc.lineno, exc.length)) from None
    fh.seek(start)
    return start


def _long_line_message(p: Path, lineno: int, length: int) -> str:
    from evalkit.io.text_lines import MAX_ARTIFACT_LINE_BYTES

    return (f"{p}:{lineno}: the line is {length:,} bytes long, more than the "
            f"{MAX_ARTIFACT_LINE_BYTES >> 20} MiB evalkit reads of one line of a run "
            "artifact (a row holds one response); the file was altered or is not an "
            "artifact")


def first_line_number(data: bytes) -> int:
    """The 1-based number of the first line of ``data`` that is not blank (white space
    alone): where the artifact readers find the header."""
    blank = len(data) - len(data.lstrip(_ASCII_SPACE.encode()))
    return data.count(b"\n", 0, blank) + 1


_Read = tuple[dict[str, Any] | None, list[tuple[int, dict[str, Any]]], dict[str, Any] | None,
              str, tuple[int, ArtifactError] | None]
_JSON_SPACE = " \t\n\r"  # what JSON skips around a value
_ASCII_SPACE = " \t\n\r\x0b\x0c"  # bytes.isspace: a blank line of the line reader


def _read_whole(p: Path, data: bytes) -> _Read | None:
    """:func:`_read_lines`' result for a well-formed file, decoded at once: the whole file
    as UTF-8 and each line's JSON value by :func:`_decode_lines`, the digest over the bytes
    before the trailer in one call. ``None`` for anything else (not UTF-8, a line that is
    not one JSON object, deeply nested, not a row, content after the trailer, an
    unterminated last line, a bad header): :func:`_read_lines` then reads the file line
    by line and names the problem."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if lines[-1]:
        return None  # an unterminated last line: maybe a write cut short
    # the opening brackets of each line, at most the nesting limit (else checked line by
    # line): the file's brackets and newlines alone, split into lines
    if max(map(len, data.translate(None, _NOT_OPENING).split(b"\n"))) > MAX_ARTIFACT_DEPTH:
        return None
    decoded = _decode_lines(lines, data)
    if decoded is None:
        return None
    numbered, objs = decoded
    if not objs or not all(type(o) is dict for o in objs) or objs[0].get("type") != "header":
        return None
    trailer: dict[str, Any] | None = None
    if objs[-1].get("type") == "trailer" and len(objs) > 1:
        trailer = objs.pop()
        numbered.pop()
    body = objs[1:]
    if not all(o.get("type") == "row" and "id" in o for o in body):
        return None  # a second header or trailer, or a line that is not a row
    try:
        header = _check_header(p, numbered[0], objs[0])
    except ArtifactError:
        return None
    digest = ""  # only a trailer records one
    if trailer is not None:  # the bytes before the trailer's line: the last line not blank
        kept = data.rstrip(_ASCII_SPACE.encode())
        digest = hashlib.sha256(data[:kept.rfind(b"\n") + 1]).hexdigest()
    rows = list(zip(numbered[1:], body, strict=True))
    return header, rows, trailer, digest, None


#: ``orjson.loads``: a dependency; an environment installed before it was one reads
#: every line with json's scanner
_orjson_loads: Callable[[str], Any] | None
try:
    from orjson import loads as _orjson_loads
except ImportError:  # pragma: no cover
    _orjson_loads = None

#: Every byte but ``{``, ``[`` and the newline (what :func:`_read_whole` counts per line).
_NOT_OPENING = bytes(b for b in range(256) if b not in b"{[\n")
#: Each digit as ``0``, the point as itself, any other byte as a space: a run of 19
#: digits that follows no point (:func:`_may_be_long_integer`) stands out.
_DIGITS = bytes(48 if 48 <= b <= 57 else 46 if b == 46 else 32 for b in range(256))
_LONG_RUN = b"0" * 19


def _may_be_long_integer(data: bytes) -> bool:
    """Whether ``data`` holds 19 digits in a row that are not a number's fraction (an
    integer literal of that many digits may lie beyond the 64-bit range, where orjson
    gives a float and ``json`` the exact integer; in a string they do no harm)."""
    digits = data.translate(_DIGITS)
    return digits.startswith(_LONG_RUN) or b" " + _LONG_RUN in digits


def _decode_lines(lines: list[str], data: bytes) -> tuple[list[int], list[Any]] | None:
    """The numbers and JSON values of the lines (``lines``: the file split at newlines,
    the last one empty) that are not blank, each line one value, as ``json.loads`` of
    the line gives it; ``None`` when a line holds anything else.

    Every line is first decoded by orjson (about three times faster than ``json``'s
    scanner); it refuses what ``json`` reads but a run artifact never holds (a blank
    line, NaN and Infinity, a number beyond the float range, a lone surrogate escape),
    and the file is then read by ``json``'s scanner, line by line. orjson is used only
    when the file holds no run of 19 digits that may be an integer literal (outside a
    number's fraction), which orjson would read as a float beyond the 64-bit range."""
    if _orjson_loads is not None and not _may_be_long_integer(data):
        try:
            return list(range(1, len(lines))), list(map(_orjson_loads, lines[:-1]))
        except ValueError:  # orjson.JSONDecodeError: anything it does not read
            pass
    numbered = [i for i, line in enumerate(lines, start=1) if line.strip(_ASCII_SPACE)]
    if not numbered:
        return None
    scan = _SCANNER
    objs: list[Any] = []
    try:
        for i in numbered:
            line = lines[i - 1]
            start = len(line) - len(line.lstrip(_JSON_SPACE))
            obj, end = scan(line, start)
            if end != len(line) and line[end:].strip(_JSON_SPACE):
                return None
            objs.append(obj)
    except (StopIteration, ValueError, RecursionError):
        return None
    return numbered, objs


#: ``(value, end)`` of the JSON value starting at an index of a string (what
#: ``json.loads`` calls once it has skipped the white space); StopIteration or
#: ``json.JSONDecodeError`` when there is none.
_SCANNER: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _read_lines(p: Path, data: bytes) -> _Read:
    """The header, the rows with their line numbers, the trailer, the sha256 (hex) of the
    bytes before the trailer and the unterminated last line dropped (its number and
    error), reading ``data`` line by line.

    Raises:
        ArtifactError: as :func:`read_artifact`, naming the first bad line.
    """
    return _read_from(p, ((n, 0, raw) for n, raw in enumerate(io.BytesIO(data), start=1)))


def _read_from(p: Path, lines: Iterable[tuple[int, int, bytes]],
               light: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
               spans: list[tuple[int, int]] | None = None, at: list[int] | None = None
               ) -> _Read:
    """:func:`_read_lines` of ``lines`` (``(line number, byte offset, line)``, each line
    with its newline): each row object passed through ``light`` when given, each row's
    ``(offset, length)`` appended to ``spans`` and the header's line number to ``at``
    when given.

    Raises:
        ArtifactError: as :func:`read_artifact`, naming the first bad line.
    """
    header: dict[str, Any] | None = None
    rows: list[tuple[int, dict[str, Any]]] = []
    digest = hashlib.sha256()
    trailer: dict[str, Any] | None = None
    cut: tuple[int, ArtifactError] | None = None
    for lineno, offset, raw in lines:
        if trailer is not None:
            if raw and not raw.isspace():
                raise ArtifactError(f"{p}:{lineno}: content after the trailer line; "
                                    "an artifact ends with its trailer")
            continue
        if not raw or raw.isspace():
            digest.update(raw)
            continue
        try:
            obj = _parse(p, raw, lineno)
        except ArtifactError as exc:
            if raw.endswith(b"\n") or header is None:
                raise
            cut = (lineno, exc)  # the unterminated last line
            continue
        if not isinstance(obj, dict):
            raise ArtifactError(f"{p}:{lineno}: expected a JSON object")
        if header is None:
            header = _check_header(p, lineno, obj)
            digest.update(raw)
            if at is not None:
                at.append(lineno)
            continue
        if obj.get("type") == "trailer":
            trailer = obj
            continue
        if obj.get("type") != "row" or "id" not in obj:
            raise ArtifactError(f"{p}:{lineno}: expected a row object with an 'id'")
        digest.update(raw)
        rows.append((lineno, obj if light is None else light(obj)))
        if spans is not None:
            spans.append((offset, len(raw)))
    return header, rows, trailer, digest.hexdigest(), cut


def _check_header(p: Path, lineno: int, obj: Mapping[str, Any]) -> dict[str, Any]:
    if obj.get("type") != "header":
        raise ArtifactError(
            f"{p}:{lineno}: first line is not an evalkit run header; is this a TREC run "
            "file? Pass it with --qrels so it is evaluated"
        )
    version = obj.get("schema_version")
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        raise ArtifactError(
            f"{p}:{lineno}: schema_version {shown(version)} is not supported (this evalkit reads "
            f"{' and '.join(str(v) for v in READABLE_VERSIONS)})"
        )
    from evalkit.data.run_origin import goldens_shape_problem

    problem = goldens_shape_problem(obj.get("goldens"))
    if problem is not None:  # which cases the run should hold would be unknown
        raise ArtifactError(
            f"{p}:{lineno}: the header's {problem}: the header was edited or damaged, so "
            "the cases the run should hold are unknown; write the run again (evalkit run "
            "--overwrite)")
    return dict(obj)
