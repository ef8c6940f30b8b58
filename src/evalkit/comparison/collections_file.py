"""The collections file of ``evalkit compare --collections FILE``: YAML (or JSON, which
YAML reads) listing each collection's baseline, candidate and qrels::

    collections:
      - name: trec-covid
        baseline: runs/bm25.trec-covid.txt       # a TREC run file or a run artifact
        candidate: runs/splade.trec-covid.txt
        qrels: qrels/trec-covid.txt               # needed for TREC run files
        relevance_level: 2                         # optional: this collection's -l
      - name: nfcorpus
        baseline: runs/bm25.nfcorpus.jsonl       # artifacts carry their scores
        candidate: runs/splade.nfcorpus.jsonl

A collection may set its own scoring settings, ``relevance_level`` (trec_eval ``-l``),
``depth`` (``-M``) and ``missing`` (``zero``, ``skip`` or ``refuse``); a key given replaces
the command line's option for that collection (:data:`SCORING_KEYS`). Relative paths are
relative to the file's folder. The file is read within bounds (at
most 16 MiB, :mod:`evalkit.io.bounded_yaml`) and validated by the pydantic models below;
a problem is one line naming the file and line (``suite.yaml:7: collection 2
('nfcorpus'): key 'candidate' is missing``).
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from evalkit.comparison.records import ComparisonError
from evalkit.io.limits import MAX_NAME_CHARS, check_name, shown
from evalkit.io.model_errors import (
    MISSING,
    Problem,
    did_you_mean,
    first_error,
    is_rule,
    located,
    rule,
    rule_message,
    value_at,
)

_Text = Annotated[str, Field(min_length=1, pattern=r"\S")]


class CollectionsFileError(ComparisonError):
    """A collections file that cannot be used; the message names the file and line."""


class CollectionEntry(BaseModel):
    """One collection: its name and its runs' paths."""

    model_config = ConfigDict(strict=True, extra="forbid", title="collection")

    name: Annotated[_Text, Field(max_length=MAX_NAME_CHARS)] = Field(
        description="The collection's name, unique in the file.")
    baseline: _Text = Field(description="The baseline: a TREC run file or a run artifact.")
    candidate: _Text = Field(description="The candidate: a TREC run file or a run "
                             "artifact.")
    qrels: _Text | None = Field(None, description="The collection's TREC qrels (needed "
                                "to score TREC run files).")
    relevance_level: Annotated[int, Field(ge=1)] | None = Field(
        None, description="This collection's relevance level (trec_eval -l): the lowest "
        "label counted as relevant. Default: the command line's -l.")
    depth: Annotated[int, Field(ge=1)] | None = Field(
        None, description="This collection's depth limit (trec_eval -M). Default: the "
        "command line's -M.")
    missing: Literal["zero", "skip", "refuse"] | None = Field(
        None, description="A judged query absent from this collection's run: zero, skip "
        "or refuse. Default: the command line's --missing.")

    def scoring(self) -> dict[str, Any]:
        """The scoring settings this collection gives (:data:`SCORING_KEYS`), by name."""
        return {k: getattr(self, k) for k in SCORING_KEYS if getattr(self, k) is not None}

    @field_validator("name")
    @classmethod
    def _printable(cls, name: str) -> str:
        try:
            return check_name(name, "collection name")
        except ValueError as exc:  # LimitError too
            raise rule(str(exc)) from None


#: the keys of a collection
ENTRY_KEYS: tuple[str, ...] = tuple(CollectionEntry.model_fields)
#: the keys of a collection that score its TREC run files, as the options of ``evalkit
#: compare`` do (``-l``, ``-M``, ``--missing``); also :func:`evalkit.meta_compare`'s
#: ``scoring`` keys
SCORING_KEYS: tuple[str, ...] = ("relevance_level", "depth", "missing")


class CollectionsFile(BaseModel):
    """A collections file: ``collections``, a list of at least one collection, names
    unique."""

    model_config = ConfigDict(strict=True, extra="forbid", title="evalkit collections file")

    collections: Annotated[list[CollectionEntry], Field(min_length=1)] = Field(
        description="The collections, in report order.")

    @field_validator("collections")
    @classmethod
    def _unique_names(cls, entries: list[CollectionEntry]) -> list[CollectionEntry]:
        first: dict[str, int] = {}
        for i, e in enumerate(entries):
            if e.name in first:
                raise rule(f"collection {i + 1}: the name {shown(e.name)} is used twice (also "
                           f"collection {first[e.name] + 1}); give each its own name",
                           index=i, first=first[e.name])
            first[e.name] = i
        return entries


def _rank(err: ErrorDetails) -> tuple[int, ...]:
    return {"extra_forbidden": 0, "missing": 1}.get(err["type"], 2), len(err["loc"])


def _problem(err: ErrorDetails, data: Any) -> Problem:
    loc = tuple(err["loc"])
    ctx = err.get("ctx") or {}
    if is_rule(err) and "first" not in ctx:
        return Problem(loc, f"collection {int(loc[1]) + 1}: {rule_message(err)}")
    if is_rule(err):
        return Problem(("collections", int(ctx["index"]), "name"), rule_message(err),
                       related=("collections", int(ctx["first"]), "name"))
    kind, value = err["type"], value_at(data, loc)
    if len(loc) < 3 or not isinstance(loc[1], int):  # the top level, or the list itself
        if kind == "extra_forbidden":
            hint = did_you_mean(str(loc[-1]), ["collections"])
            return Problem(loc, f"unknown key {shown(loc[-1])}{hint}; the file holds one key, "
                           "'collections'")
        if kind == "too_short":
            return Problem(loc, "'collections' is empty; list at least one collection")
        return Problem(loc, "'collections' must be a list of collections, each with name, "
                       "baseline, candidate and (for TREC run files) qrels")
    i, key = int(loc[1]), str(loc[2])
    name = value_at(data, ("collections", i, "name"))
    label = f"collection {i + 1}" + (f" ({shown(name)})" if isinstance(name, str) else "")
    if kind == "model_type" or kind == "dict_type":
        return Problem(loc[:2], f"{label}: must be a mapping with name, baseline, "
                       f"candidate and qrels, got {shown(value)}")
    if kind == "extra_forbidden":
        return Problem(loc, f"{label}: unknown key {shown(key)}"
                       f"{did_you_mean(key, ENTRY_KEYS)}; known keys: {', '.join(ENTRY_KEYS)}")
    if kind == "missing" or value is MISSING:
        return Problem(loc[:2], f"{label}: key {shown(key)} is missing")
    if key == "name" and kind == "string_too_long":
        return Problem(loc, f"{label}: the name is longer than {MAX_NAME_CHARS} characters")
    if key in ("relevance_level", "depth"):
        return Problem(loc, f"{label}: key {key!r} must be a whole number of at least 1 "
                       f"({'trec_eval -l' if key == 'relevance_level' else 'trec_eval -M'}), "
                       f"got {value!r}")
    if key == "missing":
        return Problem(loc, f"{label}: key 'missing' must be one of zero, skip, refuse, "
                       f"got {value!r}")
    what = "a name" if key == "name" else "a path"
    return Problem(loc, f"{label}: key {shown(key)} must be a non-empty text ({what}), "
                   f"got {shown(value)}")


def validate_collections(data: Any) -> list[CollectionEntry]:
    """The collections of a parsed file, in file order.

    Raises:
        Problem: the first problem, its location in ``data`` and its message.
    """
    if data is None:
        raise Problem(None, "empty file; list the collections under 'collections'")
    if not isinstance(data, dict):
        raise Problem((), "expected a mapping with one key, 'collections'")
    try:
        return CollectionsFile.model_validate(data).collections
    except ValidationError as exc:
        raise _problem(first_error(exc, _rank), data) from None


CollectionPaths = dict[str, tuple[Path, Path] | tuple[Path, Path, Path]]


def load_collections(path: str | PathLike[str]) -> CollectionPaths:
    """Read a collections file as the mapping :func:`evalkit.meta_compare` takes:
    ``{name: (baseline, candidate)}`` or ``{name: (baseline, candidate, qrels)}``, paths
    resolved against the file's folder, in file order. The collections' own scoring
    settings are :func:`load_collections_file`'s.

    Raises:
        CollectionsFileError: as :func:`load_collections_file`.
    """
    return load_collections_file(path)[0]


def _parse(file: Path) -> tuple[list[CollectionEntry], Any]:
    """The file's collections and its marked document (lines by location).

    Raises:
        CollectionsFileError: as :func:`load_collections_file`.
    """
    import yaml

    from evalkit.io.bounded_yaml import load_marked
    from evalkit.io.input_messages import swapped_input_message
    from evalkit.io.limits import LimitError
    from evalkit.io.user_files import read_input

    try:
        data = read_input(file, "collections", error=CollectionsFileError)
        other = swapped_input_message(file, "collections", "--collections")
        if other is not None:
            raise CollectionsFileError(other)
        doc = load_marked(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise CollectionsFileError(
            f"{file}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
            f"{exc.start}); a collections file is YAML or JSON text") from None
    except LimitError as exc:
        raise CollectionsFileError(f"{file}{'' if exc.line is None else f':{exc.line}'}: "
                                   f"{exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = "" if mark is None else f":{mark.line + 1}"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CollectionsFileError(f"{file}{where}: not valid YAML ({problem})") from None
    try:
        entries = validate_collections(doc.data)
    except Problem as exc:
        raise CollectionsFileError(located(str(file), exc, doc.line)) from None
    return entries, doc


def load_collections_file(path: str | PathLike[str]
                          ) -> tuple[CollectionPaths, dict[str, dict[str, Any]]]:
    """Read a collections file as :func:`evalkit.meta_compare`'s ``collections`` and
    ``scoring`` arguments: ``({name: (baseline, candidate[, qrels])}, {name: {key:
    value}})``, the second holding each collection's scoring settings
    (:data:`SCORING_KEYS`) that the file gives (a collection without any is absent).

    Raises:
        CollectionsFileError: the file is missing, a directory, a pipe or device, larger
            than 16 MiB, not UTF-8, not YAML, beyond the YAML bounds, empty; a collection
            without name, baseline or candidate, with an unknown key or a value that is
            not a text, a scoring setting out of range, or a name used twice. One line:
            the file, the line, the problem.
    """
    file = Path(path)
    entries, _ = _parse(file)
    from evalkit.plugins.default import scheme_loader

    base = file.parent
    out: CollectionPaths = {}
    scoring: dict[str, dict[str, Any]] = {}
    for e in entries:
        if e.scoring():
            scoring[e.name] = e.scoring()
        runs = (base / e.baseline, base / e.candidate)
        qrels = None if e.qrels is None else (  # irds:ID (LoaderSpec.scheme) as given
            Path(e.qrels) if scheme_loader("qrels", e.qrels) else base / e.qrels)
        out[e.name] = runs if qrels is None else (*runs, qrels)
    return out, scoring


def collection_lines(path: str | PathLike[str]) -> dict[str, int]:
    """The line of each collection of a collections file, by name (for messages that name
    a collection after the file was read, such as :class:`~evalkit.comparison.meta_compute.
    SameEvidenceError`).

    Raises:
        CollectionsFileError: as :func:`load_collections_file`.
    """
    entries, doc = _parse(Path(path))
    lines = {e.name: doc.line(("collections", i)) for i, e in enumerate(entries)}
    return {name: line for name, line in lines.items() if line is not None}


__all__ = ["ENTRY_KEYS", "SCORING_KEYS", "CollectionEntry", "CollectionPaths",
           "CollectionsFile", "CollectionsFileError", "collection_lines", "load_collections",
           "load_collections_file", "validate_collections"]
