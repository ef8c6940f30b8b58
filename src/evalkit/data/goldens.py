"""Golden sets: hand-written cases read from jsonl, yaml or csv, failing loudly.

A golden file holds one record per case (``id``, ``query``, ``expected``, ``relevant``,
``relevance``, ``answers``, ``tags``; every other field is kept in :attr:`GoldenCase.context`). The
fields, what is refused (with the file and line) and how CSV cells are read are in
docs/runner.md (Golden sets). The rules on a record are the pydantic model
:class:`evalkit.data.goldens_models.GoldenRow`; this module reads JSON Lines and CSV
(YAML: :mod:`evalkit.data.goldens_yaml`), refuses what only a format can get wrong (a
CSV row of the wrong width) and checks the set (zero cases, a repeated id).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from evalkit.data.cases import GoldenCase
from evalkit.io.error_messages import not_utf8_at
from evalkit.io.limits import LimitError, json_problem, loads_json, shown
from evalkit.io.text_lines import MAX_JSONL_LINE_BYTES, csv_lines, is_blank, text_lines
from evalkit.plugins.default import default_registry, scheme_loader


class GoldenError(ValueError):
    """A golden file or record that cannot be used; the message names the file and line."""


class GoldenSet:
    """An ordered set of :class:`GoldenCase` with unique text ids.

    Iterating yields the cases in file order; ``len()`` is the number of cases.

    Raises:
        GoldenError: on construction, when there are no cases or an id repeats.
    """

    def __init__(self, cases: Iterable[GoldenCase], path: str | Path | None = None) -> None:
        self.path: str | None = None if path is None else str(path)
        #: how the labelled cases were chosen, ``(selection, seed)``, when the file
        #: declares it (a YAML file's ``labels_selection``), else None
        self.labels_selection: tuple[str, int | None] | None = None
        #: the name of the ``goldens`` loader that read the file (:func:`load_goldens`
        #: sets it; a run header records it), else None
        self.loader: str | None = None
        self._cases: list[GoldenCase] = []
        self._index: dict[str, GoldenCase] = {}
        self._digests: dict[str, str] | None = None
        where = self.path or "golden set"
        for case in cases:
            if not isinstance(case, GoldenCase):
                raise GoldenError(f"{where}: {shown(case)} is not a GoldenCase")
            if not isinstance(case.id, str) or case.id == "":
                raise GoldenError(f"{where}: case id {shown(case.id)} must be non-empty text")
            if case.id in self._index:
                raise GoldenError(f"{where}: duplicate case id {shown(case.id)}")
            self._index[case.id] = case
            self._cases.append(case)
        if not self._cases:
            raise GoldenError(
                f"{where}: zero cases; a golden set must hold at least one case"
            )

    def ids(self) -> list[str]:
        """The case ids in file order."""
        return [c.id for c in self._cases]

    def get(self, case_id: str) -> GoldenCase:
        """The case with id ``case_id`` (compared as text).

        Raises:
            KeyError: no such case (the message names the set and the id).
        """
        try:
            return self._index[str(case_id)]
        except KeyError:
            raise KeyError(
                f"{self.path or 'golden set'} has no case {shown(str(case_id))}"
            ) from None

    def __iter__(self) -> Iterator[GoldenCase]:
        return iter(self._cases)

    def __len__(self) -> int:
        return len(self._cases)

    def __contains__(self, case_id: object) -> bool:
        return str(case_id) in self._index

    def __repr__(self) -> str:
        return f"GoldenSet({len(self)} cases, path={shown(self.path)})"

    def case_digests(self) -> dict[str, str]:
        """``{case id: 16 hex digits}``: a digest of each case's content (for resume)."""
        if self._digests is None:
            self._digests = {c.id: case_digest(c) for c in self._cases}
        return dict(self._digests)

    def digest(self) -> str:
        """sha256 (hex) of every case's content, in order (:func:`goldens_digest` of its
        :meth:`case_digests`)."""
        return goldens_digest(self.case_digests().values())


def goldens_digest(case_digests: Iterable[str]) -> str:
    """The sha256 (hex) of a golden set whose cases have ``case_digests``, in order: the
    ``goldens.sha256`` a run header records beside its ``goldens.case_digests``."""
    h = hashlib.sha256()
    for d in case_digests:
        h.update(d.encode())
        h.update(b"\n")
    return h.hexdigest()


def case_digest(case: GoldenCase) -> str:
    """16 hex digits identifying a case's id, query, expectations and context."""
    doc: dict[str, Any] = {
        "id": case.id,
        "query": case.query,
        "expected": case.expected,
        "relevance": dict(sorted(case.relevance.items())),
        "relevant": sorted(case.relevant),
        "context": case.context,
    }
    if case.answers:  # only when given: the digests of cases without answers stay as they were
        doc["answers"] = list(case.answers)
    if case.tags:  # likewise
        doc["tags"] = list(case.tags)
    if case.cluster is not None:  # likewise
        doc["cluster"] = case.cluster
    text = json.dumps(doc, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# ----------------------------------------------------------------------- records
def case_from_record(record: Mapping[str, Any], where: str) -> GoldenCase:
    """Build a :class:`GoldenCase` from one record, applying the rules of this module
    (the model :class:`evalkit.data.goldens_models.GoldenRow`).

    ``where`` (``"cases.jsonl:3"``) prefixes every error. Custom loaders may call this.
    Without ``relevance``, every id of ``relevant`` (else of a list ``expected``) is
    relevant with label 1; without ``relevant``, the ids labelled 1 or more are.

    Raises:
        GoldenError: a missing or non-text id, a missing query, or a malformed
            ``expected``/``relevant``/``relevance``.
    """
    from evalkit.data.goldens_models import validate_row
    from evalkit.io.model_errors import Problem

    if not isinstance(record, Mapping):
        raise GoldenError(f"{where}: a case must be a mapping, got {type(record).__name__}")
    try:
        row = validate_row(record)
    except Problem as exc:
        raise GoldenError(f"{where}: {exc.message}") from None
    expected = row.expected
    relevance = row.relevance
    if relevance is None:
        ids = row.relevant if row.relevant is not None else (
            expected if isinstance(expected, list) else []
        )
        relevance = {d: 1 for d in ids}
    relevant = row.relevant if row.relevant is not None else [
        d for d, g in relevance.items() if g >= 1
    ]
    return GoldenCase(
        id=row.id, query=row.query or "", expected=expected, relevance=relevance,
        relevant=frozenset(relevant), context=row.context(),
        answers=() if row.answers is None else row.answers,
        tags=() if row.tags is None else row.tags,
        labels={} if row.labels is None else {k: float(v) for k, v in row.labels.items()},
        cluster=row.cluster,
    )


# ----------------------------------------------------------------------- readers
def read_text(path: Path, what: str = "golden",
              error: type[ValueError] = GoldenError, *, max_line: int | None = None) -> str:
    """The text of a golden (or other ``what``) file (UTF-8, a byte order mark dropped).

    Args:
        max_line: the longest line accepted (bytes), checked before the file is decoded
            (:func:`evalkit.io.text_lines.long_line`); None for no such bound.

    Raises:
        error: missing, a directory, a pipe or device, larger than
            :data:`evalkit.io.user_files.MAX_GOLDEN_BYTES`, a line longer than
            ``max_line``, not UTF-8, or holding a NUL byte (file and line named);
            :class:`GoldenError` unless told.
    """
    from evalkit.io.text_lines import long_line
    from evalkit.io.user_files import MAX_GOLDEN_BYTES, read_input

    data = read_input(path, what, max_bytes=MAX_GOLDEN_BYTES, error=error)
    found = None if max_line is None else long_line(data, max_line)
    if found is not None and max_line is not None:
        raise error(_long_line(f"{path}:{found[0]}", found[1], max_line, what))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{not_utf8_at(path, exc)}; save it as UTF-8 (from Latin-1: "
                    "iconv -f latin1 -t utf-8)") from None
    nul = text.find("\x00")
    if nul >= 0:  # JSON and YAML refuse it too; a CSV reader would keep it in a cell
        raise error(
            f"{path}:{text.count(chr(10), 0, nul) + 1}: the line contains a NUL byte; the "
            "file may be binary or UTF-16: save it as UTF-8 text")
    return text


def _long_line(where: str, length: int, max_line: int, what: str) -> str:
    return (f"{where}: the line is {length:,} bytes long, more than the {max_line >> 20} "
            f"MiB evalkit reads of one line of a {what} file; one record per line: is this "
            "the right file?")


def json_objects(text: str, p: Path, error: type[ValueError] = GoldenError
                 ) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each non-blank line of JSON Lines ``text``: lines end
    at ``\\n`` (or ``\\r\\n``) alone (:func:`evalkit.io.text_lines.text_lines`), so a raw
    U+2028, U+2029 or U+0085 inside a string, legal in JSON, stays in it; a line of ASCII
    white space alone is blank; a byte order mark that starts a line is dropped (JSON
    Lines files joined with ``cat``, each with its own).

    Raises:
        error: invalid JSON, a bound of :mod:`evalkit.io.limits` exceeded, a line longer
            than :data:`evalkit.io.text_lines.MAX_JSONL_LINE_BYTES`, or a line that is not
            an object (file and line named).
    """
    for lineno, line in text_lines(text):
        line = line.removeprefix("\ufeff")  # files joined with cat: each one's BOM
        if is_blank(line):
            continue
        where = f"{p}:{lineno}"
        if len(line) > MAX_JSONL_LINE_BYTES:  # characters: at most its bytes
            raise error(_long_line(where, len(line.encode()), MAX_JSONL_LINE_BYTES,
                                   "JSON Lines"))
        try:
            obj = loads_json(line, unique_keys=True)
        except json.JSONDecodeError as exc:
            raise error(f"{where}: not valid JSON ({json_problem(exc)})") from None
        except LimitError as exc:
            raise error(f"{where}: {exc}") from None
        if not isinstance(obj, dict):
            raise error(f"{where}: expected a JSON object, got {type(obj).__name__}")
        yield lineno, obj


def refuse_other_input(path: Path) -> None:
    """Refuse a file of another kind given as a golden set (a checks file, a labels file,
    a run: :func:`evalkit.io.input_messages.swapped_input_message`), naming what it is and
    where it goes.

    Raises:
        GoldenError: ``path`` is recognisably another evalkit input.
    """
    from evalkit.io.input_messages import swapped_input_message

    other = swapped_input_message(path, "goldens", "goldens: in evalkit.yaml")
    if other is not None:
        raise GoldenError(other)


def load_jsonl(path: str | Path) -> GoldenSet:
    """Read a JSON Lines golden file: one JSON object per non-blank line.

    Raises:
        GoldenError: invalid JSON, a non-object line, a rule of this module broken, or
            zero cases (file and line named).
    """
    p = Path(path)
    text = read_text(p, max_line=MAX_JSONL_LINE_BYTES)
    refuse_other_input(p)
    cases: list[GoldenCase] = []
    lines_of: dict[str, int] = {}
    for lineno, obj in json_objects(text, p):
        case = case_from_record(obj, f"{p}:{lineno}")
        check_unique(case.id, lineno, lines_of, p)
        cases.append(case)
    return GoldenSet(cases, path=p)


def load_csv(path: str | Path) -> GoldenSet:
    """Read a CSV golden file with a header row (``id`` and ``query`` columns required).

    The cells are those :func:`csv.reader` reads from the file opened with ``newline=""``
    (``strict=True``): a quoted cell keeps its line breaks (``\\n``, ``\\r\\n``, ``\\r``)
    exactly, and U+2028, U+2029, U+0085, form feeds and the like are ordinary characters
    of a cell. A message names the line a row starts on.

    Raises:
        GoldenError: a missing/duplicate/empty column name, a row with more or fewer cells
            than the header, malformed CSV (an unclosed quote named by the line its row
            starts on), a rule of this module broken, or zero cases.
    """
    p = Path(path)
    text = read_text(p)
    refuse_other_input(p)
    reader = csv.reader(csv_lines(text), strict=True)
    header: list[str] | None = None
    cases: list[GoldenCase] = []
    lines_of: dict[str, int] = {}
    lineno = 1  # the line the next row starts on
    try:
        for cells in reader:
            start, lineno = lineno, reader.line_num + 1
            if not cells or (all(not c.strip() for c in cells) and len(cells) <= 1):
                continue
            if header is None:
                header = _csv_header(cells, p, start)
                continue
            where = f"{p}:{start}"
            if len(cells) != len(header):
                more = "more" if len(cells) > len(header) else "fewer"
                raise GoldenError(
                    f"{where}: {len(cells)} cells but the header has {len(header)} columns "
                    f"({more} cells than columns)"
                )
            record = _csv_record(dict(zip(header, cells, strict=True)), where)
            case = case_from_record(record, where)
            check_unique(case.id, start, lines_of, p)
            cases.append(case)
    except csv.Error as exc:
        end = reader.line_num
        span = f" (the row runs to line {end})" if end > lineno else ""
        raise GoldenError(f"{p}:{lineno}: malformed CSV ({exc}){span}") from None
    if header is None:
        raise GoldenError(f"{p}: empty file; zero cases")
    return GoldenSet(cases, path=p)


def _csv_header(cells: list[str], p: Path, lineno: int) -> list[str]:
    from evalkit.io.limits import MAX_CSV_COLUMNS, first_repeated

    if len(cells) > MAX_CSV_COLUMNS:
        raise GoldenError(f"{p}:{lineno}: the header has {len(cells):,} columns; a golden "
                          f"set has at most {MAX_CSV_COLUMNS:,} (is this the right file?)")
    names = [c.strip() for c in cells]
    for i, n in enumerate(names, start=1):
        if not n:
            raise GoldenError(f"{p}:{lineno}: column {i} of the header has no name")
    dup = first_repeated(names)
    if dup is not None:
        raise GoldenError(f"{p}:{lineno}: column {shown(dup)} appears twice in the header")
    for required in ("id", "query"):
        if required not in names:
            raise GoldenError(f"{p}:{lineno}: the header has no {shown(required)} column")
    return names


def _csv_record(row: dict[str, str], where: str) -> dict[str, Any]:
    out: dict[str, Any] = dict(row)
    exp = row.get("expected")
    if exp is not None:
        out["expected"] = None if exp == "" else (
            _json_cell(exp, where, "expected", list) if exp.lstrip().startswith("[") else exp
        )
    rel = row.get("relevant")
    if rel is not None:
        out["relevant"] = (
            None if not rel.strip() else
            _json_cell(rel, where, "relevant", list) if rel.lstrip().startswith("[")
            else rel.split()
        )
    answers = row.get("answers")
    if answers is not None:
        out["answers"] = None if answers == "" else (
            _json_cell(answers, where, "answers", list) if answers.lstrip().startswith("[")
            else answers
        )
    tags = row.get("tags")
    if tags is not None:  # tags separated by ';', each stripped; an empty cell: none
        out["tags"] = [t.strip() for t in tags.split(";")] if tags.strip() else None
    labels = _csv_labels(row, where)
    for column in [c for c in out if c.startswith(LABEL_COLUMN)]:
        del out[column]
    if labels:
        out["labels"] = labels
    cluster = row.get("cluster")
    if cluster is not None and not cluster.strip():  # an empty cell: no cluster
        out["cluster"] = None
    grades = row.get("relevance")
    if grades is not None:
        out["relevance"] = None if not grades.strip() else _json_cell(
            grades, where, "relevance", dict
        )
    return out


#: a CSV column ``label:<metric>`` holds the case's human label of ``<metric>``
LABEL_COLUMN = "label:"


def _csv_labels(row: dict[str, str], where: str) -> dict[str, float]:
    """``{metric: number}`` from the ``label:<metric>`` cells (an empty cell: no label)."""
    out: dict[str, float] = {}
    for column, cell in row.items():
        if not column.startswith(LABEL_COLUMN) or not cell.strip():
            continue
        metric = column[len(LABEL_COLUMN):].strip()
        if not metric:
            raise GoldenError(f"{where}: column {shown(column)} names no metric; write "
                              "label:<metric> (label:correctness)")
        try:
            value = float(cell)
        except ValueError:
            raise GoldenError(f"{where}: column {shown(column)}: {shown(cell)} is not a number; a "
                              "label is a number, or an empty cell for no label") from None
        if not math.isfinite(value):
            raise GoldenError(f"{where}: column {shown(column)}: {shown(cell)} is not a finite "
                              "number")
        out[metric] = value
    return out


def _json_cell(text: str, where: str, column: str, kind: type) -> Any:
    try:
        value = loads_json(text, unique_keys=True)
    except json.JSONDecodeError as exc:
        raise GoldenError(f"{where}: column {shown(column)} is not valid JSON "
                          f"({json_problem(exc)})") from None
    except LimitError as exc:
        raise GoldenError(f"{where}: column {shown(column)}: {exc}") from None
    if not isinstance(value, kind):
        raise GoldenError(f"{where}: column {shown(column)} must be a JSON {kind.__name__}")
    return value


def check_unique(case_id: str, lineno: int, lines_of: dict[str, int], p: Path) -> None:
    """Record ``case_id`` as read on ``lineno``.

    Raises:
        GoldenError: ``case_id`` was read before (both lines named).
    """
    if case_id in lines_of:
        raise GoldenError(
            f"{p}:{lineno}: duplicate case id {shown(case_id)} (first on line {lines_of[case_id]})"
        )
    lines_of[case_id] = lineno


# ----------------------------------------------------------------------- entry point
def load_goldens(path: str | Path, loader: str | None = None, **options: Any) -> GoldenSet:
    """Load a golden set with a registered ``goldens`` loader.

    Args:
        path: the golden file.
        loader: a loader name (``"jsonl"``, ``"yaml"``, ``"csv"`` or one added with
            ``register_loader``); by default the loader whose suffix ends ``path``.
        options: passed to the loader function.

    Returns:
        A :class:`GoldenSet`. A custom loader may return a GoldenSet, or an iterable of
        :class:`GoldenCase` or of mappings (checked with :func:`case_from_record`).

    Raises:
        RegistryError: no loader of that name or suffix.
        GoldenError: the file breaks a rule (file and line named) or has zero cases,
            ``path`` is ``-`` (standard input is refused), or a folder that no loader
            reads.
    """
    if str(path) == "-":
        raise GoldenError("goldens -: standard input is not read here (a golden file's "
                          "suffix picks its loader, and the run header records its hash); "
                          "save it to a file and pass its path")
    from evalkit.core.registry import RegistryError

    try:
        spec = default_registry().loader("goldens", name=loader, path=str(path))
    except RegistryError:  # a folder no loader takes is not a loader's matter
        from evalkit.io.input_files import refuse_directory

        refuse_directory(path, "golden", label="goldens", error=GoldenError)
        raise
    result = spec.fn(Path(path), **options)
    if isinstance(result, GoldenSet):
        result.loader = spec.name
        return result
    if isinstance(result, Iterable) and not isinstance(result, str | bytes | Mapping):
        cases = []
        for i, item in enumerate(result, start=1):
            if isinstance(item, GoldenCase):
                cases.append(item)
            else:
                cases.append(case_from_record(item, f"{path} (record {i})"))
        gset = GoldenSet(cases, path=path)
        gset.loader = spec.name
        return gset
    raise GoldenError(
        f"goldens loader {shown(spec.name)} returned {type(result).__name__} for {path}; "
        "it must return a GoldenSet or an iterable of cases"
    )


def recorded_golden_sets(headers: Sequence[Mapping[str, Any]], what: str, fix: str,
                         error: type[ValueError]) -> list[tuple[str, GoldenSet]]:
    """``[(path, golden set)]`` of the golden sets the runs' headers record (``goldens``:
    path, loader, sha256), each read once, in the order first recorded; empty when no
    header records one. ``what`` (``"tags"``, ``"clusters"``) and ``fix`` (how to give
    them otherwise) word the errors.

    Raises:
        error: a recorded set is gone, cannot be read, or changed since the run was made
            (its ``what`` might not be the run's).
    """
    out: list[tuple[str, GoldenSet]] = []
    for header in headers:
        record = header.get("goldens") or {}
        path = record.get("path") if isinstance(record, Mapping) else None
        if not path or any(path == seen for seen, _ in out):
            continue
        if not Path(path).is_file() and scheme_loader(
                "goldens", path) is None:
            raise error(f"the golden set {path} the runs were made from is not there, so "
                        f"its {what} are unknown; restore it, or {fix}")
        try:
            gset = load_goldens(path, loader=record.get("loader"))
        except (OSError, ValueError, LookupError) as exc:
            raise error(f"the golden set {path} could not be read ({exc}); {fix}") from None
        if record.get("sha256") and gset.digest() != record["sha256"]:
            raise error(f"the golden set {path} changed since the runs were made, so its "
                        f"{what} may not be theirs; {fix}")
        out.append((path, gset))
    return out

