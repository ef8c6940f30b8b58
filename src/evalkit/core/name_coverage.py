"""Names that a registered family or measure already resolves, as conflicts.

A metric named ``ndcg@10`` next to another provider's ``ndcg@k`` family would silently
take the name from the family's member (an exact name is found first,
:mod:`evalkit.core.metric_lookup`), and so would ``nDCG@10``, ``P@10`` (through the
family's alias ``P``), trec_eval's ``ndcg_cut_10`` and ``ap(rel=2)`` of a parameterised
measure. The registry treats such a name as a duplicate: :func:`covering_entry` finds the
record a new name already resolves to, :func:`covered_aliases` does the same for each of
the new record's aliases (an alias is a spelling like a name), and :func:`covered_names`
the earlier names and aliases that a new family or measure now resolves (registration in
the other order). Names that differ
only in letter case stay distinct records, as elsewhere in the registry.

The registry calls these functions with itself, holding its lock; this module reads it
through the small :class:`Names` interface.
"""

from __future__ import annotations

import functools
from typing import Protocol

from evalkit.core.metric_lookup import LookupFailure, Table, lookup
from evalkit.core.metric_names import MetricNameError, parse_name, trec_spelling
from evalkit.core.providers import Conflict, Entry, RegistryError
from evalkit.core.specs import AggregateSpec, AnySpec, MetricFamily, MetricSpec


class Names(Table, Protocol):
    """What this module reads of a registry, beyond :class:`~evalkit.core.metric_lookup.Table`."""

    _tables: dict[str, dict[str, Entry]]
    _aliases: dict[str, str]
    _conflicts: dict[tuple[str, str], Conflict]
    _lower: tuple[dict[str, set[str]], dict[str, set[str]]] | None

    def _record_key(self, spec: MetricSpec | AggregateSpec) -> str | None: ...


def resolves_elsewhere(reg: Names, name: str) -> str | None:
    """The key of the record that ``name`` resolves to when no record is named ``name``
    itself and no record has it as an alias: a family (``nDCG@10``, ``P@10``,
    ``ndcg_cut_10``) or a parameterised measure (``ap(rel=2)``); ``None`` when it resolves
    to nothing, to a blocked name, or only as another record's name in other letter case
    (checked elsewhere, or distinct).

    The name (or alias) is set aside while it is looked up, and its cached lookup
    forgotten; the registry's lower-case index skips a spelling set aside, so nothing is
    rebuilt (registering N records stays O(N))."""
    table = reg._tables.get("metric", {})
    own = table.pop(name, None)
    owner = reg._aliases.pop(name, None)
    reg._family_cache.pop(name, None)
    try:
        if reg._canonical(name) is not None:
            return None
        return reg._record_key(lookup(reg, name, explain=False))
    except (LookupFailure, RegistryError):
        return None
    finally:
        if own is not None:
            table[name] = own
        if owner is not None:
            reg._aliases[name] = owner
        reg._family_cache.pop(name, None)


@functools.lru_cache(maxsize=4096)
def _spelled_bases(name: str) -> frozenset[str]:
    """The lower-cased bases a family or a measure would have to have to resolve
    ``name``: that of its cut-off (``x@10``), its parameters (``x(rel=2)``) or
    trec_eval's one cut-off (``x_10``); empty for a plain name (``word_count``), which
    resolves only by name, alias or letter case, so is never covered."""
    if not ("@" in name or "(" in name or name.rstrip(".")[-1:].isdigit()):
        return frozenset()  # the quick answer for most names
    bases: set[str] = set()
    try:
        parsed = parse_name(name)
    except MetricNameError:
        parsed = None
    if parsed is not None and (parsed.cutoff is not None or parsed.params):
        bases.add(parsed.base.lower())
    trec = trec_spelling(name)
    if trec is not None:
        bases.add(trec[0].lower())
    return frozenset(bases)


def _core_member(spec: AnySpec, family: AnySpec) -> bool:
    """``spec`` is made by ``family``'s own core function (a ``prefix@k`` name the family's
    plugin registers for its own sake, which the family may cover)."""
    core = getattr(getattr(spec, "fn", None), "__evalkit_core__", None)
    return isinstance(family, MetricFamily) and family.core is not None \
        and core is family.core


def covering_entry(reg: Names, key: str, spec: AnySpec) -> Entry | None:
    """The record that ``key``, the name of ``spec`` about to be added, already resolves
    to (:func:`resolves_elsewhere`), or ``None``."""
    if isinstance(spec, MetricFamily) or not _spelled_bases(key):
        return None
    other = resolves_elsewhere(reg, key)
    if other is None or other == key:
        return None
    entry = reg._tables["metric"][other]
    return None if _core_member(spec, entry.spec) else entry


def covered_aliases(reg: Names, key: str, spec: AnySpec, skip: set[str]
                    ) -> list[tuple[str, str]]:
    """``(alias, key of the record that resolves it)`` for each alias of ``spec`` (about
    to be added under ``key``) that another record's family or measure already resolves
    (``ndcg@10`` of ``ndcg@k``, ``P@10``, ``ap(rel=2)``): the rule
    :func:`covering_entry` applies to names, applied to every other spelling the record
    answers to. Aliases in ``skip`` (clashes found otherwise) are left out."""
    if isinstance(spec, MetricFamily):
        return []
    out: list[tuple[str, str]] = []
    for alias in getattr(spec, "aliases", ()):
        if alias == key or alias in skip or ("metric", alias) in reg._conflicts \
                or not _spelled_bases(alias):
            continue
        other = resolves_elsewhere(reg, alias)
        if other is not None and other != key and \
                not _core_member(spec, reg._tables["metric"][other].spec):
            out.append((alias, other))
    return out


def covered_names(reg: Names, key: str, entry: Entry) -> list[str]:
    """The names of earlier records that resolve to ``entry``, just added under ``key``,
    now that it is there (a family added after a metric named ``ndcg@10``)."""
    spec = entry.spec
    # only a family or a parameterised measure (under its name or aliases) makes
    # spellings with a cut-off or parameters resolve
    if not (isinstance(spec, MetricFamily) or getattr(spec, "variant", None) is not None):
        return []
    bases = {b.lower() for b in (spec.name, *getattr(spec, "aliases", ()))}
    covered: list[str] = []
    for name, other in list(reg._tables["metric"].items()):
        if name == key or isinstance(other.spec, MetricFamily):
            continue
        if _spelled_bases(name) & bases and resolves_elsewhere(reg, name) == key \
                and not _core_member(other.spec, spec):
            covered.append(name)
    for alias, owner in list(reg._aliases.items()):
        if owner != key and _spelled_bases(alias) & bases and owner in reg._tables["metric"] \
                and resolves_elsewhere(reg, alias) == key \
                and not _core_member(reg._tables["metric"][owner].spec, spec):
            covered.append(alias)
    return covered


def block_if_covered(reg: Names, key: str, entry: Entry, from_plugin: bool) -> bool:
    """Before ``entry`` is added under ``key``: when another record already resolves
    ``key`` (:func:`covering_entry`), block the name, naming both providers, as two
    plugins' duplicates are, and return True (``entry`` is not to be added).

    Raises:
        RegistryError: from a client (``from_plugin`` false), instead of blocking
            (:func:`covered_message`).
    """
    covering = covering_entry(reg, key, entry.spec)
    if covering is None:
        return False
    if not from_plugin:
        raise RegistryError(covered_message(key, covering, entry))
    reg._conflicts[("metric", key)] = Conflict("metric", key, [covering, entry])
    reg._family_cache.clear()
    return True


def block_covered_names(reg: Names, key: str, entry: Entry, from_plugin: bool) -> None:
    """After ``entry`` was added under ``key``: the names of earlier records that now
    resolve to it (:func:`covered_names`) are blocked, naming both providers, as two
    plugins' duplicates are; from a client (``from_plugin`` false), ``entry`` is taken out
    again and refused.

    Raises:
        RegistryError: a client's record would take an earlier record's name
            (:func:`taking_message`).
    """
    table = reg._tables["metric"]
    covered = covered_names(reg, key, entry)
    if covered and not from_plugin:
        name = covered[0]
        other = table[reg._aliases.get(name, name)]
        del table[key]
        reg._aliases = {a: k for a, k in reg._aliases.items() if k != key}
        reg._lower = None
        raise RegistryError(taking_message(key, entry, name, other))
    for name in covered:
        if name in reg._aliases:  # another record's alias: that spelling is blocked
            owner = table[reg._aliases.pop(name)]
            reg._conflicts[("metric", name)] = Conflict("metric", name, [entry, owner])
            continue
        reg._conflicts[("metric", name)] = Conflict("metric", name, [entry, table.pop(name)])
        reg._aliases = {a: k for a, k in reg._aliases.items() if k != name}
    if covered:
        reg._lower = None
        reg._family_cache.clear()


def covered_message(name: str, covering: Entry, new: Entry) -> str:
    """A client's metric ``name`` refused: ``covering`` already resolves it."""
    what = (f"the {covering.spec.name}@k family" if isinstance(covering.spec, MetricFamily)
            else repr(covering.spec.name))
    of = f"of {new.spec.name!r} " if new.spec.name != name else ""
    return (f"metric {name!r} already resolves to {what} provided by {covering.provider}; "
            f"a registration from {new.provider} {of}was refused. Pick another name.")


def taking_message(key: str, new: Entry, name: str, other: Entry) -> str:
    """A client's family or measure ``key`` refused: it would resolve ``name``, which
    ``other`` provides."""
    kind = "metric family" if isinstance(new.spec, MetricFamily) else "metric"
    return (f"{kind} {key!r} from {new.provider} would take the name {name!r} from "
            f"{other.provider}; its registration was refused. Pick another name.")


__all__ = ["Names", "block_covered_names", "block_if_covered", "covered_aliases",
           "covered_message",
           "covered_names", "covering_entry", "resolves_elsewhere", "taking_message"]
