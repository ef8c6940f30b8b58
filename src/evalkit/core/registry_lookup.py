"""The registry's lookups: what a name resolves to, who provides it, its polarity, and the
loaders, targets, reporters and executors by name.

A mixin of :class:`~evalkit.core.registry.Registry`, which owns the tables these read
(and the rules that fill them); how a metric name is parsed and matched is
:mod:`evalkit.core.metric_lookup`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from evalkit.core.providers import Conflict, Entry, Provider, RegistryError
from evalkit.core.registry_keys import FAMILY_RE, family_key, name_order
from evalkit.core.specs import (
    AggregateSpec,
    AnySpec,
    LoaderSpec,
    MetricFamily,
    MetricSpec,
    loader_for_path,
)


class RegistryLookups:
    """Reading the registry's tables (a mixin: the tables are the Registry's)."""

    _lock: threading.RLock
    # namespace -> key -> Entry
    _tables: dict[str, dict[str, Entry]]
    _aliases: dict[str, str]
    _conflicts: dict[tuple[str, str], Conflict]
    _family_cache: dict[str, MetricSpec]
    # lower-cased keys and aliases -> canonical keys; rebuilt after any change
    _lower: tuple[dict[str, set[str]], dict[str, set[str]]] | None
    plugins: list[Any]

    def _canonical(self, name: str) -> str | None:
        table = self._tables.get("metric", {})
        if name in table or ("metric", name) in self._conflicts:
            return name
        if name in self._aliases:
            return self._aliases[name]
        if self._lower is None:
            keys: dict[str, set[str]] = {}
            aliases: dict[str, set[str]] = {}
            for key in list(table) + [k for (ns, k) in self._conflicts if ns == "metric"]:
                keys.setdefault(key.lower(), set()).add(key)
            for alias, key in self._aliases.items():
                aliases.setdefault(alias.lower(), set()).add(key)
            self._lower = (keys, aliases)
        low = name.lower()
        found = set(self._lower[0].get(low, ())) or set(self._lower[1].get(low, ()))
        if len(found) > 1:
            raise RegistryError(
                f"{name!r} matches {', '.join(repr(k) for k in sorted(found))}, which differ "
                "only in case; use the exact spelling"
            )
        return found.pop() if found else None

    def _raise_if_blocked(self, key: str) -> None:
        conflict = self._conflicts.get(("metric", key))
        if conflict is not None:
            raise RegistryError(conflict.message())

    def _metric_record(self, key: str) -> AnySpec:
        return self._tables["metric"][key].spec

    def resolve(self, name: str) -> MetricSpec | AggregateSpec:
        """The metric or aggregate a spec string names (``"recall@10"``, ``"nDCG@10"``,
        ``"P(rel=2)@5"``, ``"ndcg_cut_10"``); see :mod:`evalkit.core.metric_lookup`.

        Exact names and aliases come first (case-insensitively when nothing matches
        exactly), then ir_measures' ``Base(params)@k``, then trec_eval's ``base_k``.

        Raises:
            RegistryError: unknown name, blocked name, a bad ``@k`` cut-off or parameter.
        """
        from evalkit.core.metric_lookup import LookupFailure, lookup

        with self._lock:
            try:
                return lookup(self, name)
            except LookupFailure as exc:
                raise RegistryError(str(exc)) from None

    def _unknown_message(self, name: str) -> str:
        from evalkit.core.metric_lookup import unknown_message

        msg = unknown_message(set(self._tables.get("metric", {})) | set(self._aliases), name)
        msg += f" Known: {', '.join(self.registered()) or 'none'}."
        missing = [p for p in self.plugins if getattr(p, "status", "loaded") != "loaded"]
        if missing:
            source = getattr(self, "selection_source", "")
            why = (f"; the disabled ones are left out by {source}"
                   if source and any(p.status == "disabled" for p in missing) else "")
            msg += " Not loaded: " + ", ".join(
                f"{p.distribution or p.name} ({p.status})" for p in missing
            ) + f" (see `evalkit plugins list`{why})."
        msg += (
            " A metric comes from a plugin (e.g. evalkit-retrieval) or from "
            "register_metric(name, higher_is_better=...) in Python."
        )
        return msg

    def provider_of(self, name: str) -> Provider:
        """The provider of the metric, family or aggregate that ``name`` resolves to."""
        from evalkit.core.metric_lookup import record_base

        spec = self.resolve(name)
        key = self._canonical(spec.name)
        if key is None and isinstance(spec, MetricSpec) and spec.family:
            key = self._canonical(family_key(spec.family))
        if key is None:
            base = record_base(spec.name)
            if base is not None:
                key = self._canonical(base) if "@" not in spec.name else \
                    self._canonical(family_key(base))
        if key is None:
            m = FAMILY_RE.match(spec.name)
            key = self._canonical(family_key(m["prefix"])) if m else None
        if key is None:
            raise RegistryError(f"no provider recorded for {name!r}")
        return self._tables["metric"][key].provider

    def polarity(self, name: str) -> bool:
        """``higher_is_better`` of a metric or aggregate.

        Raises:
            RegistryError: the name is unknown, blocked, or was added through the legacy
                ``METRICS[name] = fn`` table, which declares no polarity.
        """
        spec = self.resolve(name)
        if spec.higher_is_better is None:
            raise RegistryError(
                f"metric {name!r} has no declared polarity (it was added with "
                f"METRICS[...] = fn). Declare one with register_metric({name!r}, "
                "higher_is_better=True or False) or register_retrieval_metric(..., "
                "higher_is_better=...)"
            )
        return bool(spec.higher_is_better)

    def registered(self) -> list[str]:
        """Every metric, family (``prefix@k``) and aggregate name, sorted with cut-offs in
        numeric order (``p@5`` before ``p@10``)."""
        with self._lock:
            names = set(self._tables.get("metric", {}))
        return sorted(names, key=name_order)

    def entries(self, namespace: str | None = None) -> Iterator[tuple[str, str, Entry]]:
        """``(namespace, key, entry)`` for every live registration (as they were when the
        iteration began: the lock is not held while the caller's loop runs)."""
        with self._lock:
            found = [(ns, key, entry) for ns, table in sorted(self._tables.items())
                     if namespace is None or ns == namespace
                     for key, entry in sorted(table.items())]
        yield from found

    def conflicts(self) -> list[Conflict]:
        """Every blocked name with its providers."""
        return list(self._conflicts.values())

    def family(self, prefix: str) -> MetricFamily:
        """The ``prefix@k`` family (aliases accepted)."""
        key = self._canonical(family_key(prefix))
        if key is None:
            raise RegistryError(f"no metric family {prefix!r}@k is registered")
        self._raise_if_blocked(key)
        spec = self._tables["metric"][key].spec
        assert isinstance(spec, MetricFamily)
        return spec

    def loader(
        self, kind: str, name: str | None = None, path: str | None = None
    ) -> LoaderSpec:
        """The loader of ``kind`` by name, or else by the suffix of ``path``.

        Raises:
            RegistryError: no loader matches (the message lists the known ones).
        """
        ns = f"loader:{kind}"
        table = self._tables.get(ns, {})
        if name is not None:
            if (ns, name) in self._conflicts:
                raise RegistryError(self._conflicts[(ns, name)].message())
            if name in table:
                spec = table[name].spec
                assert isinstance(spec, LoaderSpec)
                return spec
        elif path is not None:
            chosen = loader_for_path({key: entry.spec for key, entry in table.items()
                                      if isinstance(entry.spec, LoaderSpec)}, path)
            if chosen is not None:
                return chosen
        known = ", ".join(sorted(table)) or "none"
        what = name if name is not None else f"the suffix of {path}"
        raise RegistryError(f"no {kind} loader for {what}; known {kind} loaders: {known}")

    def get(self, namespace: str, name: str) -> AnySpec:
        """A target, reporter or executor (or any record) by namespace and name."""
        if (namespace, name) in self._conflicts:
            raise RegistryError(self._conflicts[(namespace, name)].message())
        table = self._tables.get(namespace, {})
        if name not in table:
            known = ", ".join(sorted(table)) or "none"
            raise RegistryError(f"unknown {namespace} {name!r}; known: {known}")
        return table[name].spec
