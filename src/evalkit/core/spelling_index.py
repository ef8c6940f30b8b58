"""The registry's lower-case index of metric spellings.

When a spec string matches no metric name or alias exactly, the registry looks it up
case-insensitively (``nDCG@10`` finds ``ndcg@k``'s member). The index maps each
lower-cased key to the keys spelt so (live records and blocked names) and each lower-cased
alias to the aliases spelt so. It is built once from the registry's tables
(:func:`build_index`) and then extended record by record (:func:`extend_index`), so that
registering N metrics costs O(N); a spelling removed since stays in the index and is
skipped when read (:func:`match_case`). The registry drops the index (sets it to ``None``)
whenever a record is replaced or removed, and the next lookup rebuilds it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from evalkit.core.metric_aliases import family_key
from evalkit.core.providers import RegistryError
from evalkit.core.specs import AnySpec, MetricFamily

#: ``(lower-cased key -> keys, lower-cased alias -> aliases)``
LowerIndex = tuple[dict[str, set[str]], dict[str, set[str]]]


def build_index(keys: Iterable[str], aliases: Iterable[str]) -> LowerIndex:
    """The index of ``keys`` (names of records and blocked names) and ``aliases``."""
    by_key: dict[str, set[str]] = {}
    by_alias: dict[str, set[str]] = {}
    for key in keys:
        by_key.setdefault(key.lower(), set()).add(key)
    for alias in aliases:
        by_alias.setdefault(alias.lower(), set()).add(alias)
    return by_key, by_alias


def extend_index(index: LowerIndex, key: str, spec: AnySpec, blocked: Iterable[str]) -> None:
    """Add what one registration made: ``key``, the aliases of ``spec`` (a family's as
    ``prefix@k``) and the metric names it ``blocked``."""
    keys, aliases = index
    keys.setdefault(key.lower(), set()).add(key)
    for alias in getattr(spec, "aliases", ()):
        akey = family_key(alias) if isinstance(spec, MetricFamily) else alias
        aliases.setdefault(akey.lower(), set()).add(akey)
    for bkey in blocked:
        keys.setdefault(bkey.lower(), set()).add(bkey)


def match_case(index: LowerIndex, name: str, is_key: Callable[[str], bool],
               aliases: Mapping[str, str]) -> str | None:
    """The one key that ``name`` spells up to letter case, among the keys still live
    (``is_key``) and the keys of the aliases still registered (``aliases``: alias ->
    key); ``None`` when none.

    Raises:
        RegistryError: ``name`` matches two keys that differ only in case.
    """
    low = name.lower()
    found = {k for k in index[0].get(low, ()) if is_key(k)} or \
        {aliases[a] for a in index[1].get(low, ()) if a in aliases}
    if len(found) > 1:
        raise RegistryError(
            f"{name!r} matches {', '.join(repr(k) for k in sorted(found))}, which differ "
            "only in case; use the exact spelling"
        )
    return found.pop() if found else None
