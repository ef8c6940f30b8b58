"""Rankings: a run whose rankings are in order (:class:`RankedRun`, what a ``run`` loader
returns), and rankings whose ids are kept elsewhere and become ``str`` only when read.

A loader may hold a run's document ids in arrays (the TREC reader of evalkit-retrieval
does, for runs of millions of lines) and hand out one :class:`RankedIds` view per query
instead of a list: the kernel keeps such a view as it is (on a
:class:`~evalkit.data.results.QueryResult`, in
:func:`evalkit.execute.scoring.score_rankings`), so no Python string is made for an id
nobody reads.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload


class RankedIds(Sequence[str]):
    """A ranking whose ids are kept elsewhere (a loader's arrays) and become ``str`` only
    when read: the ids of a million-line run need not all exist as Python strings.

    Read-only; slicing gives another ranking of the same kind (no copy), and it compares
    equal to any sequence (a list, a tuple) of the same ids. Subclasses implement
    :meth:`__len__`, :meth:`__iter__` and :meth:`_item` / :meth:`_slice`.
    """

    __slots__ = ()

    def _item(self, index: int) -> str:
        raise NotImplementedError

    def _slice(self, start: int, stop: int) -> RankedIds:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        n = len(self)
        if isinstance(index, slice):
            start, stop, step = index.indices(n)
            if step != 1:
                return list(self)[index]
            return self._slice(start, max(start, stop))
        i = index + n if index < 0 else index
        if not 0 <= i < n:
            raise IndexError("ranking index out of range")
        return self._item(i)

    def __iter__(self) -> Iterator[str]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        ids = list(self[:5])
        more = f", ... ({len(self)} ids)" if len(self) > 5 else ""
        return f"{type(self).__name__}({ids!r}{more})"


@dataclass
class RankedRun:
    """A run whose per-query rankings are already in trec_eval's order.

    Attributes:
        name: the run tag (column 6 of the last line of a TREC run, as trec_eval reports
            it as ``runid``) or a caller-given name.
        rankings: ``{query id: [doc id, ...]}``, best first. A query may map to ``[]``
            (it was listed with no documents). A loader may give each query a
            :class:`RankedIds` view instead of a list.
        path: the source file, when loaded from one.
        sha256: hex SHA-256 of the source file's bytes (as stored, so of the compressed
            bytes for ``.gz``), when loaded from one.
        meta: loader details (line counts, parse path, ...).
    """

    name: str
    rankings: Mapping[str, Sequence[str]]
    path: str | None = None
    sha256: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
