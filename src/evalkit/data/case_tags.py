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


def tags_from_runs(headers: Sequence[Mapping[str, Any]],
                   fix: str = "pass the tags with --tags FILE (query id<TAB>tag lines)"
                   ) -> CaseTags | None:
    """The tags the runs' cases had when the runs were made, merged per case: a header's
    ``goldens.case_tags`` (``{case id: [tag, ...]}``, recorded when the golden set carried
    tags; its other cases, ``goldens.case_digests``, have none), else the tags of the
    golden set it records (``goldens``: path, loader, sha256), read once. None when no
    header records a golden set.

    Raises:
        TagsError: a header without ``case_tags`` records a golden set that is gone,
            cannot be read, or changed since the run was made (its tags might not be the
            run's; ``fix`` says how to proceed); a recorded ``case_tags`` that is not a
            mapping of case id to a list of texts.
    """
    from evalkit.data.goldens import recorded_golden_sets

    out: dict[str, list[str]] = {}

    def merge(case: str, tags: Iterable[str]) -> None:
        have = out.setdefault(case, [])
        have.extend(t for t in tags if t not in have)

    found = False
    unrecorded: list[Mapping[str, Any]] = []
    for header in headers:
        record = header.get("goldens")
        given = record.get("case_tags") if isinstance(record, Mapping) else None
        if given is None:
            unrecorded.append(header)
            continue
        if not isinstance(given, Mapping) or not all(
                isinstance(t, list) and all(isinstance(x, str) for x in t)
                for t in given.values()):
            raise TagsError(f"the run header's goldens.case_tags is not a mapping of case "
                            f"id to a list of tags; {fix}")
        found = True
        assert isinstance(record, Mapping)
        for case in record.get("case_digests") or {}:
            merge(str(case), ())
        for case, tags in given.items():
            merge(str(case), tags)
    sets = recorded_golden_sets(unrecorded, "tags", fix, TagsError)
    for _, gset in sets:
        for case, tags in goldens_tags(gset).items():
            merge(case, tags)
    return None if not (sets or found) else {q: tuple(t) for q, t in out.items()}


def unchecked_fix(what: str, option: str) -> str:
    """How to proceed when a ``what`` file given with ``option`` cannot be checked: the
    runs do not record their cases' ``what`` and their golden set is gone or changed."""
    return (f"run the target again (a new run records its cases' {what}, so a {what} "
            f"file is checked without the golden set), then pass {option} again: these "
            f"runs record no {what}, and an unchecked {what} file could silently move or "
            f"shrink a slice")


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
    slice. The runs' recorded tags are used when their headers hold them, so the golden
    file need not be there. Runs made from no golden set (TREC runs), or from one
    without tags: ``given`` is used as it is.

    Raises:
        TagsError: ``given`` disagrees with the golden set (counted, first cases named);
            a header records no tags and its golden set is gone, unreadable or changed,
            so ``given`` cannot be checked (the message says how to proceed).
    """
    try:
        recorded = tags_from_runs(headers, unchecked_fix("tags", option))
    except TagsError as exc:  # nothing recorded, the golden set gone or changed
        raise TagsError(f"{option}: {exc}") from None
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
           "goldens_tags", "load_tags", "slices_of", "tags_from_runs", "unchecked_fix"]
