"""Case tags: the slices a case belongs to, from a golden set or a ``qid<TAB>tag`` file.

A golden case carries its tags in ``tags`` (:attr:`evalkit.data.cases.GoldenCase.tags`);
TREC runs have no golden set, so their tags come from a tags file: one ``query id<TAB>tag``
per line, a query with several tags on several lines (:func:`load_tags`). Both give
``{case id: (tag, ...)}``, which :func:`slices_of` turns into ``{tag: (case id, ...)}``:
what ``evalkit compare --by tag`` compares slice by slice and what a gate check's
``scope: {tags: [...]}`` covers. :func:`tags_from_runs` reads the tags of the golden sets
run artifacts record (when the file is still there and unchanged).

A tags file never silently replaces the golden set's own tags: when the runs record a
golden set whose cases carry tags, the file must give every case of that set the same
tags (:func:`agreed_tags`), or it is refused; the same rule holds for a clusters file and
the golden cases' ``cluster`` (:func:`evalkit.data.case_clusters.agreed_clusters`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from typing import Any, TypeVar

from evalkit.io.limits import shown

#: ``{case id: its tags in order}``.
CaseTags = dict[str, tuple[str, ...]]


class TagsError(ValueError):
    """A tags file that cannot be read, or tags that cannot be found; the message names
    the file and line and says what to fix."""


def load_tags(path: str | PathLike[str]) -> CaseTags:
    """``{query id: (tag, ...)}`` from a tags file.

    The file is UTF-8 text, one ``query id<TAB>tag`` per line; a query with several tags
    takes several lines. Blank lines and lines starting with ``#`` are skipped. Ids and
    tags follow the rules of golden ids (:func:`evalkit.io.limits.check_id`: printable,
    no white space around them); a tag may not hold ``;``.

    Raises:
        TagsError: a missing file, a directory, not UTF-8, a line without exactly one tab,
            an empty or malformed id or tag, the same tag given twice to a query, or no
            tag at all (file and line named).
    """
    from evalkit.data.id_value_files import id_value_lines

    out: dict[str, list[str]] = {}
    first: dict[tuple[str, str], int] = {}
    for where, lineno, qid, tag in id_value_lines(
            path, "tags", "tag", TagsError,
            hint="; write one tag per line, a query with several tags on several lines"):
        if ";" in tag:
            raise TagsError(f"{where}: tag {shown(tag)} holds ';', which separates tags in a "
                            "golden CSV cell; write it without")
        if (qid, tag) in first:
            raise TagsError(f"{where}: query {shown(qid)} is given tag {shown(tag)} twice "
                            f"(first on line {first[(qid, tag)]})")
        first[(qid, tag)] = lineno
        out.setdefault(qid, []).append(tag)
    if not out:
        raise TagsError(f"{path}: no tag; the file should hold 'query id<TAB>tag' lines")
    return {q: tuple(t) for q, t in out.items()}


def goldens_tags(cases: Iterable[Any]) -> CaseTags:
    """``{case id: tags}`` of every case of a golden set (a case without tags maps to
    ``()``, so the set's cases are all known)."""
    return {str(c.id): tuple(c.tags) for c in cases}


def as_case_tags(tags: Mapping[str, Sequence[str] | str] | str | PathLike[str]
                 ) -> CaseTags:
    """``tags`` as ``{case id: (tag, ...)}``: a mapping (a single text is one tag), or a
    tags file's path (:func:`load_tags`).

    Raises:
        TagsError: a file that cannot be read; a tag that is not text.
    """
    if isinstance(tags, str | PathLike):
        return load_tags(tags)
    out: CaseTags = {}
    for case, given in tags.items():
        values = (given,) if isinstance(given, str) else tuple(given)
        bad = [t for t in values if not isinstance(t, str) or not t.strip()]
        if bad:
            raise TagsError(f"case {shown(case)}: tags must be non-empty texts, got "
                            f"{shown(bad[0])}")
        out[str(case)] = tuple(dict.fromkeys(values))
    return out


def tags_from_runs(headers: Sequence[Mapping[str, Any]]) -> CaseTags | None:
    """The tags of the golden sets the runs' headers record (``goldens``: path, loader,
    sha256), each read once, merged per case; None when no header records a golden set.

    Raises:
        TagsError: a recorded golden set is gone, cannot be read, or changed since the
            run was made (its tags might not be the run's).
    """
    from evalkit.data.goldens import recorded_golden_sets

    sets = recorded_golden_sets(headers, "tags",
                                "pass the tags with --tags FILE (query id<TAB>tag lines)",
                                TagsError)
    out: dict[str, list[str]] = {}
    for _, gset in sets:
        for case, tags in goldens_tags(gset).items():
            have = out.setdefault(case, [])
            have.extend(t for t in tags if t not in have)
    return None if not sets else {q: tuple(t) for q, t in out.items()}


def disagreement(what: str, option: str, differ: Sequence[tuple[str, str, str]],
                 total: int) -> str:
    """The message refusing a ``what`` file (``"tags"``) given with ``option``
    (``"--tags"``) that disagrees with the golden set the runs were made from on the
    cases ``differ`` (``(case, the file's value, the golden set's value)``) of ``total``
    cases."""
    examples = "; ".join(f"case {shown(c)}: {mine} in the file, {theirs} in the golden set"
                         for c, mine, theirs in differ[:3])
    more = " ..." if len(differ) > 3 else ""
    return (f"{option}: the {what} file disagrees with the golden set the runs were made "
            f"from on {len(differ)} of its {total} cases ({examples}{more}); without "
            f"{option} the golden set's own {what} are used: drop {option}, or make the "
            "file agree with the golden set")


_Tags = TypeVar("_Tags", bound=Mapping[str, Sequence[str]])


def agreed_tags(given: _Tags, headers: Sequence[Mapping[str, Any]],
                option: str = "--tags") -> _Tags:
    """``given`` (tags from a file or a mapping), checked against the tags of the golden
    sets the runs' ``headers`` record (:func:`tags_from_runs`): when those cases carry
    any tag, every case of the set must have the same tags in ``given`` (a case
    ``given`` lacks has none), so a stale or partial file cannot shrink or move a
    slice. Runs without a readable golden set, or a golden set without tags: ``given``
    is used as it is.

    Raises:
        TagsError: ``given`` disagrees with the golden set (counted, first cases named).
    """
    try:
        recorded = tags_from_runs(headers)
    except TagsError:  # the golden set is gone or changed: the file is what is known
        return given
    if recorded is None or not any(recorded.values()):
        return given
    differ = [(case, "[" + ", ".join(given.get(case, ())) + "]",
               "[" + ", ".join(tags) + "]")
              for case, tags in recorded.items()
              if set(given.get(case, ())) != set(tags)]
    if differ:
        raise TagsError(disagreement("tags", option, differ, len(recorded)))
    return given


def slices_of(tags: Mapping[str, Sequence[str]],
              only: Sequence[str] | None = None) -> dict[str, tuple[str, ...]]:
    """``{tag: case ids}`` of ``tags`` (``{case id: tags}``), tags in order of first
    appearance, ids in the order of ``tags`` (restricted to ``only`` when given)."""
    keep = None if only is None else set(only)
    out: dict[str, list[str]] = {}
    for case, names in tags.items():
        if keep is not None and case not in keep:
            continue
        for tag in names:
            out.setdefault(tag, []).append(case)
    return {t: tuple(ids) for t, ids in out.items()}


__all__ = ["CaseTags", "TagsError", "agreed_tags", "as_case_tags", "disagreement",
           "goldens_tags", "load_tags", "slices_of", "tags_from_runs"]
