"""One registry for every extension kind, with provenance and conflict rules.

Namespaces (:mod:`evalkit.core.registry_keys`):

* per-case metrics, metric families (``name@k``) and whole-run aggregates share one;
* loaders have one namespace per kind (goldens, run, qrels, queries, corpus);
* targets, reporters and executors have one each.

Rules:

* registering the same function with the same polarity under the same name again is a
  no-op;
* any other second registration from client code raises :class:`RegistryError` naming
  both providers;
* two plugins that provide one name do not stop discovery: the name is *blocked*, and
  resolving it raises :class:`RegistryError` naming both.

This module holds the :class:`Registry`'s tables and its rules for adding a record
(duplicates, aliases, family shadows, case-insensitive spellings); its lookups are
:mod:`evalkit.core.registry_lookup`, its ``register_*`` decorators and the polarity rule
:mod:`evalkit.core.registry_decorators`. Who provides a name and the conflict messages
are :mod:`evalkit.core.providers`; how a name finds its metric is
:mod:`evalkit.core.metric_lookup`; the process-wide registry that discovery fills is
:mod:`evalkit.plugins.default`.
"""

from __future__ import annotations

import threading
from typing import Any

from evalkit.core.providers import Conflict as Conflict
from evalkit.core.providers import Entry as Entry
from evalkit.core.providers import Provider as Provider
from evalkit.core.providers import RegistryError as RegistryError
from evalkit.core.providers import same_definition
from evalkit.core.registry_decorators import RegistrationDecorators
from evalkit.core.registry_decorators import require_polarity as require_polarity
from evalkit.core.registry_keys import FAMILY_RE, family_key, namespace_of
from evalkit.core.registry_lookup import RegistryLookups
from evalkit.core.specs import (
    SPEC_TYPES,
    AggregateSpec,
    AnySpec,
    MetricFamily,
    MetricSpec,
    record_problem,
)


class Registry(RegistrationDecorators, RegistryLookups):
    """The table of every registered metric, aggregate, loader, target and reporter.

    Adding (:meth:`add`, :meth:`replace`, :meth:`remove`) is here; the decorators
    (``register_metric`` ...) and the lookups (``resolve``, ``polarity``, ``loader`` ...)
    are inherited from :class:`~evalkit.core.registry_decorators.RegistrationDecorators`
    and :class:`~evalkit.core.registry_lookup.RegistryLookups`.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        # namespace -> key -> Entry. Namespaces: "metric" (metrics, families as
        # "prefix@k", aggregates), "loader:<kind>", "target", "reporter", "executor".
        self._tables: dict[str, dict[str, Entry]] = {}
        self._aliases: dict[str, str] = {}
        self._conflicts: dict[tuple[str, str], Conflict] = {}
        self._family_cache: dict[str, MetricSpec] = {}
        # (namespace, key) -> the record that replace() put another in place of
        self._replaced: dict[tuple[str, str], Entry] = {}
        # lower-cased keys and aliases -> canonical keys; rebuilt after any change
        self._lower: tuple[dict[str, set[str]], dict[str, set[str]]] | None = None
        #: filled by :func:`evalkit.plugins.load_plugins`
        self.plugins: list[Any] = []
        self.entry_point_conflicts: list[str] = []
        #: where the plugin selection came from (``"pyproject.toml [tool.evalkit]
        #: plugins"``, ``"EVALKIT_PLUGINS='...'"``), set by ``load_plugins``
        self.selection_source = ""

    # ------------------------------------------------------------------ adding
    def add(self, spec: AnySpec, provider: Provider, *, from_plugin: bool = False) -> None:
        """Register ``spec`` from ``provider``.

        Raises:
            RegistryError: a client registration of a name someone else provides, or a
                record without a declared polarity where one is required.
        """
        # records from a plugin were checked with the rest of its records (collect_records)
        problem = record_problem(spec) if isinstance(spec, SPEC_TYPES) and not from_plugin \
            else None
        if problem is not None:
            raise RegistryError(problem)
        if isinstance(spec, AggregateSpec) and not isinstance(spec.higher_is_better, bool):
            raise RegistryError(f"aggregate {spec.name!r}: higher_is_better must be True or False")
        if not spec.name or spec.name != spec.name.strip():
            raise RegistryError(f"invalid name {spec.name!r}")
        ns, key = namespace_of(spec)
        with self._lock:
            self._lower = None
            table = self._tables.setdefault(ns, {})
            conflict = self._conflicts.get((ns, key))
            if conflict is not None:
                if not any(same_definition(e.spec, spec) for e in conflict.entries):
                    conflict.entries.append(Entry(spec, provider))
                if not from_plugin:
                    raise RegistryError(conflict.message())
                return
            existing = table.get(key)
            if existing is not None:
                if same_definition(existing.spec, spec):
                    return
                if from_plugin:
                    del table[key]
                    self._conflicts[(ns, key)] = Conflict(
                        ns, key, [existing, Entry(spec, provider)]
                    )
                    return
                raise RegistryError(
                    f"{ns} name {key!r} is already provided by {existing.provider}; "
                    f"a second registration from {provider} was refused. Pick another name."
                )
            if ns == "metric" and not from_plugin:
                self._refuse_family_shadow(key, spec, provider)
            clashes = self._spelling_clashes(ns, key, spec)
            if clashes and not from_plugin:
                spelling, other = clashes[0]
                raise RegistryError(
                    f"{ns} name {spelling!r} already names {other!r} (provided by "
                    f"{table[other].provider}); a second registration from {provider} "
                    "was refused. Pick another name or alias."
                )
            entry = Entry(spec, provider)
            self._family_cache.clear()
            self._lower = None
            if any(spelling == key for spelling, _ in clashes):
                # the new name is another record's alias: block that spelling
                self._block_spelling(ns, key, dict(clashes)[key], entry)
                return
            table[key] = entry
            for spelling, other in clashes:
                self._block_spelling(ns, spelling, other, entry)
            self._add_aliases(ns, key, spec, provider, from_plugin)

    def _refuse_family_shadow(self, key: str, spec: AnySpec, provider: Provider) -> None:
        """A client's exact ``prefix@k`` name may not hide another provider's family,
        unless it is that family's own core function at that ``k``."""
        m = FAMILY_RE.match(key)
        if m is None or isinstance(spec, MetricFamily):
            return
        fkey = self._canonical(family_key(m["prefix"]))
        entry = self._tables.get("metric", {}).get(fkey or "")
        if entry is None or not isinstance(entry.spec, MetricFamily):
            return
        core = getattr(getattr(spec, "fn", None), "__evalkit_core__", None)
        if entry.spec.core is not None and core is entry.spec.core:
            return
        raise RegistryError(
            f"metric {key!r} would hide the {entry.spec.name}@k family provided by "
            f"{entry.provider}; a registration from {provider} was refused. Pick another name."
        )

    def _spellings(self, ns: str, key: str, spec: AnySpec) -> list[str]:
        aliases: tuple[str, ...] = getattr(spec, "aliases", ())
        if isinstance(spec, MetricFamily):
            return [family_key(a) for a in aliases]
        return list(aliases)

    def _spelling_clashes(self, ns: str, key: str, spec: AnySpec) -> list[tuple[str, str]]:
        """``(spelling, other key)`` where the new name or an alias of ``spec`` already
        names a different record (as its name or as an alias)."""
        if ns != "metric":
            return []
        table = self._tables.get(ns, {})
        out: list[tuple[str, str]] = []
        other = self._aliases.get(key)
        if other is not None and other != key and other in table:
            out.append((key, other))
        for spelling in self._spellings(ns, key, spec):
            if spelling == key or (ns, spelling) in self._conflicts:
                continue
            if spelling in table:
                out.append((spelling, spelling))
            elif self._aliases.get(spelling, key) != key and self._aliases[spelling] in table:
                out.append((spelling, self._aliases[spelling]))
        return out

    def _block_spelling(self, ns: str, spelling: str, other_key: str, entry: Entry) -> None:
        """Two providers claim ``spelling`` (a name or an alias): block it, naming both."""
        table = self._tables.setdefault(ns, {})
        other = table.get(other_key)
        entries = [other, entry] if other is not None else [entry]
        self._conflicts[(ns, spelling)] = Conflict(ns, spelling, entries)
        self._aliases.pop(spelling, None)
        if spelling == other_key:
            del table[spelling]

    def _add_aliases(
        self, ns: str, key: str, spec: AnySpec, provider: Provider, from_plugin: bool
    ) -> None:
        if ns != "metric":
            return
        aliases: tuple[str, ...] = getattr(spec, "aliases", ())
        for alias in aliases:
            akey = family_key(alias) if isinstance(spec, MetricFamily) else alias
            if akey == key:
                continue
            current = self._aliases.get(akey)
            if current is not None and current != key:
                msg = f"alias {alias!r} of {key!r} already names {current!r}; alias ignored"
                if not from_plugin:
                    raise RegistryError(msg)
                continue
            self._aliases[akey] = key

    def replace(self, spec: AnySpec, provider: Provider) -> Entry | None:
        """Put ``spec`` in the place of its name's record, keeping the aliases that name
        it; return the record replaced (``None``: none, and ``spec`` is added), which a
        later :meth:`remove` of the name restores (``METRICS[name] = fn`` is a dict's
        assignment). Raises :class:`RegistryError` when two plugins block the name."""
        ns, key = namespace_of(spec)
        with self._lock:
            if (ns, key) in self._conflicts:
                raise RegistryError(self._conflicts[(ns, key)].message())
            old = self._tables.setdefault(ns, {}).get(key)
            if old is None:
                self.add(spec, provider)
                return None
            self._replaced.setdefault((ns, key), old)
            self._put(ns, key, Entry(spec, provider))
            return old

    def _put(self, ns: str, key: str, entry: Entry) -> None:
        self._tables.setdefault(ns, {})[key] = entry
        self._family_cache.clear()
        self._lower = None

    def remove(self, namespace: str, name: str) -> None:
        """Remove a registration (used by tests and by ``METRICS`` deletion), or give a
        record that :meth:`replace` put in place of another its place back."""
        with self._lock:
            restored = self._replaced.pop((namespace, name), None)
            if restored is not None:
                return self._put(namespace, name, restored)
            self._tables.get(namespace, {}).pop(name, None)
            self._aliases = {a: k for a, k in self._aliases.items() if k != name}
            self._family_cache.clear()
            self._lower = None
