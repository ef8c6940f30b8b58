"""Runs named by a path: a run artifact as saved, or a TREC run file scored against qrels.

:func:`load_or_evaluate` is what ``evalkit eval``, ``evalkit compare`` and
:func:`evalkit.compare` do with a path: read the artifact, or score the TREC run with
the registered run evaluator (:func:`evalkit.execute.run_evaluator.evaluate_run`);
:func:`check_artifact` refuses settings that contradict how an artifact was scored (it is
never re-scored); :func:`notes_of` reads what the scoring noted about unjudged and missing
queries. Refusals are :class:`~evalkit.io.input_files.InputError` (a ValueError) naming
the file.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from evalkit.data.coverage import notes_of as notes_of
from evalkit.io.input_files import (
    InputError,
    no_query_message,
    no_rows_message,
    require_artifact_rows,
    require_file,
    sniff,
)
from evalkit.io.input_messages import not_a_run_message, not_artifact_message, not_qrels_message
from evalkit.io.setting_names import Setting

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.data.judgments import LoadedQrels
    from evalkit.data.results import RunResult


class Missing(StrEnum):
    """What a judged query absent from a TREC run counts as (``--missing``)."""

    zero = "zero"
    skip = "skip"
    refuse = "refuse"


#: A qrels argument: a TREC qrels path, judgments ``{qid: {doc: label}}`` (or ``{qid:
#: set of relevant ids}``), or a ``qid, docno, label`` DataFrame, as
#: :func:`evalkit.evaluate_run` takes them.
QrelsArg: TypeAlias = (
    "str | os.PathLike[str] | Mapping[str, Mapping[str, int] | Collection[str]] | pd.DataFrame")


def is_artifact(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts with an evalkit run header line."""
    from evalkit.data.results import is_artifact as _is_artifact

    return _is_artifact(Path(path))


def _as_path(qrels: QrelsArg | None) -> Path | None:
    from evalkit.io.dataframes import is_dataframe

    if qrels is None or isinstance(qrels, Mapping) or is_dataframe(qrels):
        return None
    return Path(qrels)


def load_or_evaluate(
    path: str | os.PathLike[str],
    *,
    qrels: QrelsArg | None,
    metrics: Sequence[str],
    relevance_level: int,
    missing: str,
    depth: int | None,
    name: str | None = None,
    loaded: dict[Path, LoadedQrels] | None = None,
    judged_only: bool = False,
) -> RunResult:
    """A run artifact as saved, or a TREC run file scored against ``qrels``
    (``judged_only``: trec_eval ``-J``, :func:`evalkit.evaluate_run`).

    ``loaded`` keeps qrels files once read (``{path: qrels}``) for a caller that needs
    them again (``--format trec``); qrels found there are not read a second time.

    Raises:
        InputError: the path is missing or a directory, holds no rows (an artifact), is
            not a run (the message says what it looks like and what to pass), or needs
            ``qrels`` that were not given; the qrels file looks like something else.
        ValueError, RegistryError: from :func:`evalkit.evaluate_run`.
    """
    from evalkit.data.results import RunResult
    from evalkit.execute.run_evaluator import evaluate_run, load_qrels_input
    from evalkit.execute.scoring import require_metrics, resolve_metrics
    from evalkit.plugins.default import scheme_loader

    p = Path(path)
    require_file(p, "run")
    if is_artifact(p):
        result = RunResult.load(p)
        require_rows(result, p)
        if name:
            result.name = name
        return result
    found = sniff(p)
    if qrels is None or found.kind not in ("run", "text"):
        raise InputError(not_a_run_message(p, found, qrels_given=qrels is not None))
    from evalkit.io.dataframes import is_dataframe

    judgments: QrelsArg | LoadedQrels
    if isinstance(qrels, Mapping) or is_dataframe(qrels):
        judgments = qrels
    else:
        qrels_path = Path(qrels)
        if scheme_loader("qrels", qrels) is None:  # a file, not irds:ID
            require_file(qrels_path, "qrels")
            wrong = not_qrels_message(qrels_path, sniff(qrels_path))
            if wrong:
                raise InputError(wrong)
        require_metrics(metrics)  # a bad name is told before the qrels are read, as
        resolve_metrics(metrics)  # evaluate_run tells it
        judgments = ((loaded or {}).get(qrels_path)
                     or load_qrels_input(qrels_path, list(metrics)))
        if loaded is not None:
            loaded[qrels_path] = judgments
    import warnings

    from evalkit.execute.run_evaluator import NoJudgedQueryWarning

    with warnings.catch_warnings():  # the commands say it in their own words
        warnings.simplefilter("ignore", NoJudgedQueryWarning)
        result = evaluate_run(
            p, judgments, list(metrics), relevance_level=relevance_level,
            missing=missing,  # type: ignore[arg-type]
            depth=depth, name=name, judged_only=judged_only,
        )
    if not result.per_query:
        from evalkit.data.query_ids import near_ids_warning

        near = notes_of(result)["near_ids"]
        raise InputError(no_query_message(p, near_ids_warning(near) if near else None))
    return result


def require_rows(result: RunResult, path: str | os.PathLike[str]) -> None:
    """Refuse a run artifact that holds a header and no row.

    Raises:
        InputError: naming ``path``.
    """
    if not result.per_query:
        raise InputError(no_rows_message(Path(path)))


def qrels_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a qrels file, as run headers record it (of the judgments, for
    ``SCHEME:ID`` qrels: :func:`evalkit.execute.run_evaluator.load_qrels_input`)."""
    from evalkit.execute.run_evaluator import load_qrels_input
    from evalkit.plugins.default import scheme_loader

    if scheme_loader("qrels", path) is not None:
        return load_qrels_input(str(path)).sha256
    with Path(path).open("rb") as fh:  # hashed in chunks: no copy of the file in memory
        return hashlib.file_digest(fh, "sha256").hexdigest()


def check_artifact(
    result: RunResult,
    path: str | os.PathLike[str],
    *,
    qrels: QrelsArg | None,
    relevance_level: int | None,
    missing: str | None,
    depth: int | None,
    alone: bool = False,
) -> None:
    """Refuse options that contradict how an artifact was evaluated (it is not re-scored):
    other qrels (by hash; judgments given as a mapping are not checked), or another
    relevance level, missing-query policy or depth than its header records; with
    ``alone`` (the artifact is the only input, as in ``evalkit eval``) any of them for a
    target run, which its golden set scored. ``None`` asks for nothing.

    Raises:
        InputError: naming ``path`` and each contradiction.
    """
    header = result.header
    problems: list[tuple[str | Setting, ...]] = []
    stored = (header.get("qrels") or {}).get("sha256")
    qrels_path = _as_path(qrels)
    if alone and header.get("kind") == "target":  # its golden set scored it: nothing to set
        given = [f"--{k.replace('_', '-')}" for k, v in (
            ("qrels", qrels), ("relevance_level", relevance_level), ("missing", missing),
            ("depth", depth)) if v is not None]
        if given:
            raise InputError(
                f"{path} is a target run, scored against its golden set when it ran: "
                f"{', '.join(given)} would not change it; leave "
                f"{'it' if len(given) == 1 else 'them'} out (`evalkit rescore` scores it "
                "again with other metrics)")
    if qrels_path is not None and stored:
        from evalkit.plugins.default import scheme_loader

        if scheme_loader("qrels", qrels_path) is None:
            require_file(qrels_path, "qrels")
        if qrels_sha256(qrels_path) != stored:
            problems.append((f"it was scored against other qrels (sha256 {stored[:12]})",))
    wanted = {"relevance_level": relevance_level, "missing": missing, "depth": depth}
    for key, value in wanted.items():
        if value is not None and key in header and header[key] != value:
            problems.append(("it was scored with ", Setting(key, header[key]),
                             f", not {value!r}"))
    if problems:
        joined = [part for i, p in enumerate(problems) for part in (("; ",) if i else ()) + p]
        raise InputError(
            f"{path}: ", *joined, ". An artifact keeps the values it was saved with; "
            "evaluate the TREC run file again to change them")


def refuse_altered(result: RunResult, role: str = "run", *, allow: bool = False) -> None:
    """Refuse a run artifact edited or damaged after it was written (its trailer's row
    count or sha256 does not match; :attr:`evalkit.data.artifact.Integrity.altered`), as
    ``evalkit gate``, ``compare`` and ``baseline promote`` do, unless ``allow``
    (``--allow-incomplete``).

    Raises:
        InputError: one line: the role, name and file, the problem and how to save the
            file again.
    """
    integrity = result.integrity
    problem = integrity.altered if integrity is not None else None
    if integrity is not None and problem is not None and not allow:
        raise InputError(f"{role} {result.name!r} ({integrity.path}) is incomplete: "
                         f"{problem}. Pass ", Setting("allow_incomplete", True),
                         " to read it anyway")


def require_artifact(path: Path, what: str, fix: str | None = None, *,
                     rows: bool = True) -> None:
    """Refuse ``path`` (the command's ``what``: "run", "baseline") unless it is a run
    artifact file (with at least one row when ``rows``); the message says what the file
    looks like and ``fix`` (default: how to make an artifact from a TREC run).

    Raises:
        InputError: missing, a directory, not an artifact, or an artifact of no row.
    """
    require_file(path, what)
    if not is_artifact(path):
        raise InputError(not_artifact_message(path, what, fix))
    if rows:
        require_artifact_rows(path, what)


__all__ = [
    "Missing",
    "QrelsArg",
    "check_artifact",
    "is_artifact",
    "load_or_evaluate",
    "notes_of",
    "qrels_sha256",
    "require_artifact",
    "require_rows",
]
