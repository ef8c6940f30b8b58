"""One registry for every extension kind, with provenance and conflict rules.

A record lives in one namespace under one key: ``"metric"``, ``"loader:<kind>"``,
``"target"`` ... (:mod:`evalkit.core.namespaces` lists them).

Rules:

* registering the same function with the same polarity under the same name again is a
  no-op;
* any other second registration from client code raises :class:`RegistryError` naming
  both providers;
* a name or an alias that another record already resolves (``ndcg@10`` of an ``ndcg@k``
  family, ``nDCG@10``, ``P@10``, ``ndcg_cut_10``, ``ap(rel=2)``), or that a family or
  measure registered later resolves, counts as the same name
  (:mod:`evalkit.core.name_coverage`);
* two plugins that provide one name do not stop discovery: the name is *blocked*, and
  resolving it raises :class:`RegistryError` naming both;
* ``register_metric`` and ``register_aggregate`` require a polarity
  (:func:`require_polarity`).

Who provides a name and the conflict messages are :mod:`evalkit.core.providers`; how a
name finds its metric is :mod:`evalkit.core.metric_lookup`; the process-wide registry that
discovery fills is :mod:`evalkit.plugins.default`.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from evalkit.core.loader_suffixes import claim_suffixes, loaders_by_suffix, suffix_conflicts_of
from evalkit.core.metric_aliases import add_aliases, block_spelling, spelling_clashes
from evalkit.core.metric_aliases import family_key as family_key
from evalkit.core.namespaces import namespace_of
from evalkit.core.providers import Conflict as Conflict
from evalkit.core.providers import Entry as Entry
from evalkit.core.providers import Provider as Provider
from evalkit.core.providers import RegistryError as RegistryError
from evalkit.core.providers import (
    client_provider,
    is_kernel,
    plugin_provider,
    same_definition,
)
from evalkit.core.record_checks import record_problem
from evalkit.core.specs import (
    LOADER_KINDS,
    SPEC_TYPES,
    AggregateSpec,
    AnySpec,
    LoaderKind,
    LoaderSpec,
    MetricFamily,
    MetricSpec,
    ValueType,
    loader_for_path,
)
from evalkit.core.spelling_index import (
    LowerIndex,
    build_index,
    extend_index,
    match_case,
)

F = TypeVar("F", bound=Callable[..., Any])

#: ``prefix@k``: a name with one cut-off (``recall@10``), or a family's key (``recall@k``).
FAMILY_RE = re.compile(r"^(?P<prefix>[^@]+)@(?P<k>[^@]+)$")


def name_order(name: str) -> tuple[str, int, str]:
    """Sort key: ``prefix@k`` by prefix, then ``k`` as a number (``@k`` itself first)."""
    prefix, at, k = name.partition("@")
    return (prefix, int(k) if k.isdigit() else -1, k) if at else (prefix, -2, "")


def require_polarity(fn_name: str, name: str, value: object) -> None:
    """Refuse a registration whose ``higher_is_better`` is not ``True`` or ``False``.

    Raises:
        RegistryError: names the function and the metric, and why there is no default.
    """
    if not isinstance(value, bool):
        raise RegistryError(
            f"{fn_name}({name!r}): higher_is_better must be True or False; it decides which "
            "direction a gate treats as a regression, so it has no default"
        )


def _as_tuple(value: Sequence[str]) -> Any:
    """``value`` as a tuple, but a bare string (``aliases="mrr"``) as it is, so that the
    record check refuses it by name (:func:`evalkit.core.record_checks.record_problem`) instead of
    registering each letter."""
    return value if isinstance(value, str) else tuple(value)


def _first_line(description: str, fn: Callable[..., Any]) -> str:
    """``description``, or else the first line of ``fn``'s docstring."""
    return description or (fn.__doc__ or "").strip().split("\n")[0]


class Registry:
    """The table of every registered metric, aggregate, loader, target and reporter.

    Adding a record (:meth:`add`, :meth:`replace`, :meth:`remove`), the decorators that
    add one from a function (:meth:`register_metric`, :meth:`register_aggregate`,
    :meth:`register_loader`) and the lookups (:meth:`resolve`, :meth:`polarity`,
    :meth:`loader`, :meth:`get` ...).
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        # namespace -> key -> Entry. Namespaces: "metric" (metrics, families as
        # "prefix@k", aggregates), "loader:<kind>", "target", "reporter", "executor".
        self._tables: dict[str, dict[str, Entry]] = {}
        self._aliases: dict[str, str] = {}
        self._conflicts: dict[tuple[str, str], Conflict] = {}
        # (namespace, key) -> a kernel's name a plugin's record claimed: the kernel keeps it
        self._refused: dict[tuple[str, str], Conflict] = {}
        # (loader namespace, lower-cased suffix) -> loaders of one kind that claim it
        self._suffix_conflicts: dict[tuple[str, str], Conflict] = {}
        self._family_cache: dict[str, MetricSpec] = {}
        # (namespace, key) -> the record that replace() put another in place of
        self._replaced: dict[tuple[str, str], Entry] = {}
        # the lower-case index (evalkit.core.spelling_index), extended record by record
        # (_index); None: rebuilt by the next lookup (_canonical)
        self._lower: LowerIndex | None = None
        #: filled by :func:`evalkit.plugins.load_plugins`
        self.plugins: list[Any] = []
        self.entry_point_conflicts: list[str] = []
        #: why ``[tool.evalkit]`` has a key nobody declares, when discovery was asked not
        #: to raise (the listing of ``evalkit plugins list`` shows it)
        self.config_problems: list[str] = []
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
        if provider.distribution is None:
            # a module of a plugin's package (its config section's ``apply``) registers
            # for that plugin (the kernel's facades stay client code)
            provider = plugin_provider(provider, [
                p for p in self.plugins if getattr(p, "origin", None) != "kernel"])
        with self._lock:
            before = len(self._conflicts)
            try:
                self._add(spec, provider, ns, key, from_plugin, before)
            finally:
                self._index(ns, key, spec, len(self._conflicts) - before)

    def _add(self, spec: AnySpec, provider: Provider, ns: str, key: str,
             from_plugin: bool, before: int) -> None:
        """:meth:`add` itself, holding the lock (the lower-case index is brought up to
        date after it, and before the names the new record covers are looked up;
        ``before``: how many names were blocked when it began)."""
        table = self._tables.setdefault(ns, {})
        conflict = self._conflicts.get((ns, key))
        if conflict is not None:
            if not any(same_definition(e.spec, spec) for e in conflict.entries):
                conflict.entries.append(Entry(spec, provider))
            if not from_plugin:
                raise RegistryError(conflict.message())
            return
        refused = self._refused.get((ns, key))
        if refused is not None and from_plugin:  # a third claim of a kernel's name
            if not any(same_definition(e.spec, spec) for e in refused.entries):
                refused.entries.append(Entry(spec, provider))
            return
        existing = table.get(key)
        if existing is not None:
            if same_definition(existing.spec, spec):
                return
            if from_plugin and is_kernel(existing.provider) and not is_kernel(provider):
                # the kernel's built-ins cannot be disabled: they keep their names
                self._refused[(ns, key)] = Conflict(
                    ns, key, [existing, Entry(spec, provider)], kernel_keeps=True)
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
        clashes = spelling_clashes(self, ns, key, spec)
        if ns == "metric":
            from evalkit.core.name_coverage import covered_aliases

            # an alias that another record's family or measure resolves (``ndcg@10``
            # of ``ndcg@k``): the same conflict as that spelling used as a name
            covered = covered_aliases(self, key, spec, {s for s, _ in clashes})
            if covered and not from_plugin:
                from evalkit.core.name_coverage import covered_message

                alias, other = covered[0]
                raise RegistryError(covered_message(
                    alias, table[other], Entry(spec, provider)))
            clashes += covered
        kernel = [other for _, other in clashes if is_kernel(table[other].provider)]
        if kernel and from_plugin and not is_kernel(provider):
            # an alias (or name) that a kernel's built-in answers to: the kernel keeps it
            self._refused[(ns, key)] = Conflict(
                ns, key, [table[kernel[0]], Entry(spec, provider)], kernel_keeps=True)
            return
        if ns == "metric" and not any(spelling == key for spelling, _ in clashes):
            from evalkit.core.name_coverage import block_if_covered

            if block_if_covered(self, key, Entry(spec, provider), from_plugin):
                return
        if clashes and not from_plugin:
            spelling, other = clashes[0]
            raise RegistryError(
                f"{ns} name {spelling!r} already names {other!r} (provided by "
                f"{table[other].provider}); a second registration from {provider} "
                "was refused. Pick another name or alias."
            )
        entry = Entry(spec, provider)
        self._family_cache.clear()
        if isinstance(spec, LoaderSpec) and from_plugin:
            claim_suffixes(self._suffix_conflicts, ns, table, entry)
        if any(spelling == key for spelling, _ in clashes):
            # the new name is another record's alias: block that spelling
            block_spelling(self, ns, key, dict(clashes)[key], entry)
            return
        table[key] = entry
        for spelling, other in clashes:
            block_spelling(self, ns, spelling, other, entry)
        add_aliases(self, ns, key, spec, from_plugin)
        if ns == "metric":
            from evalkit.core.name_coverage import block_covered_names

            self._index(ns, key, spec, len(self._conflicts) - before)
            block_covered_names(self, key, entry, from_plugin)

    def _index(self, ns: str, key: str, spec: AnySpec, new_conflicts: int) -> None:
        """Extend the lower-case index (:mod:`evalkit.core.spelling_index`) by what one
        :meth:`add` made: ``key``, the aliases of ``spec`` and the ``new_conflicts`` last
        blocked names."""
        if ns != "metric" or self._lower is None:
            return
        recent = itertools.islice(reversed(self._conflicts), max(new_conflicts, 0))
        extend_index(self._lower, key, spec, [k for cns, k in recent if cns == "metric"])

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

    # ------------------------------------------------------------ registering
    def register_metric(
        self,
        name: str,
        *,
        higher_is_better: bool,
        description: str = "",
        version: str = "1",
        aliases: Sequence[str] = (),
        needs_judgments: bool = False,
        needs_answers: bool = False,
        needs: Sequence[str] = (),
        value_type: ValueType | None = None,
        bounds: tuple[float, float] | None = None,
    ) -> Callable[[F], F]:
        """Decorator: register ``fn(response, case) -> float`` as per-case metric ``name``.

        ``higher_is_better`` is required: it decides which direction a gate treats as a
        regression. ``needs`` names the case fields the metric reads
        (``"relevance"``, ``"answers"``, ``"context:KEY"``: :attr:`MetricSpec.needs`), so
        that a case without one is refused, naming the metric and the cases, before
        anything is scored; ``needs_judgments=True`` is short for ``"relevance"`` and
        ``needs_answers=True`` for ``"answers"``.
        ``value_type`` says what one case's value can be (``"binary"``, ``"discrete"`` or
        ``"continuous"``: :attr:`MetricSpec.value_type`); it chooses the default paired
        test. ``bounds=(lo, hi)`` declares the range of every case's value
        (:attr:`MetricSpec.bounds`), which ``evalkit run --until-decided`` needs.
        Raises :class:`RegistryError` if ``name`` is provided elsewhere, a need is not one
        of those, ``value_type`` is not one of its three, or ``bounds`` is not
        ``(lo, hi)`` with ``lo < hi``.
        """
        require_polarity("register_metric", name, higher_is_better)
        return self._registering(lambda fn: MetricSpec(
            name=name, fn=fn, higher_is_better=higher_is_better,
            description=_first_line(description, fn),
            version=version, aliases=_as_tuple(aliases),
            needs_judgments=bool(needs_judgments), needs_answers=bool(needs_answers),
            needs=_as_tuple(needs),
            value_type=value_type,
            bounds=None if bounds is None else tuple(bounds),  # type: ignore[arg-type]
        ))

    def register_aggregate(
        self,
        name: str,
        *,
        higher_is_better: bool,
        description: str = "",
        version: str = "1",
    ) -> Callable[[F], F]:
        """Decorator: register ``fn(rows) -> float`` as whole-run aggregate ``name``."""
        require_polarity("register_aggregate", name, higher_is_better)
        return self._registering(lambda fn: AggregateSpec(
            name=name, fn=fn, higher_is_better=higher_is_better,
            description=_first_line(description, fn), version=version,
        ))

    def register_loader(
        self,
        name: str,
        *,
        kind: str = "goldens",
        suffixes: Sequence[str] = (),
        description: str = "",
    ) -> Callable[[F], F]:
        """Decorator: register ``fn(path) -> object`` as a loader of ``kind``.

        ``kind`` defaults to ``"goldens"`` (``@register_loader("parquet")`` loads golden sets);
        ``suffixes`` default to ``(f".{name}",)``.
        """
        if kind not in LOADER_KINDS:
            raise RegistryError(f"loader kind {kind!r} is not one of {LOADER_KINDS}")
        loader_kind: LoaderKind = kind
        return self._registering(lambda fn: LoaderSpec(
            name=name, kind=loader_kind,
            fn=fn, suffixes=_as_tuple(suffixes) or (f".{name}",),
            description=_first_line(description, fn),
        ))

    def _registering(self, record: Callable[[Callable[..., Any]], AnySpec]
                     ) -> Callable[[F], F]:
        """A decorator that adds ``record(fn)`` with ``fn``'s client as provider and
        returns ``fn`` unchanged."""

        def deco(fn: F) -> F:
            self.add(record(fn), client_provider(fn))
            return fn

        return deco

    # ---------------------------------------------------------------- lookups
    def _canonical(self, name: str) -> str | None:
        table = self._tables.get("metric", {})
        if name in table or ("metric", name) in self._conflicts:
            return name
        if name in self._aliases:
            return self._aliases[name]
        if self._lower is None:
            self._lower = build_index(
                [*table, *(k for (ns, k) in self._conflicts if ns == "metric")], self._aliases)
        return match_case(self._lower, name,
                          lambda k: k in table or ("metric", k) in self._conflicts,
                          self._aliases)

    def case_twins(self, name: str) -> list[str]:
        """:func:`evalkit.core.metric_lookup.case_twins` among the names and aliases."""
        from evalkit.core.metric_lookup import case_twins

        return case_twins(set(self._tables.get("metric", {})) | set(self._aliases), name)

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
        from evalkit.core.metric_lookup import known_list, unknown_message

        msg = unknown_message(set(self._tables.get("metric", {})) | set(self._aliases), name)
        msg += f" Known: {known_list(self.registered())}."
        not_loaded = self.not_loaded()
        if not_loaded:
            msg += f" {not_loaded}"
        msg += (
            " A metric comes from a plugin (e.g. evalkit-retrieval) or from "
            "register_metric(name, higher_is_better=...) in Python."
        )
        return msg

    def not_loaded(self) -> str:
        """``Not loaded: evalkit-mine (disabled), ... (see `evalkit plugins list`; the
        disabled ones are left out by <selection>).``: the plugins discovery found but did
        not load, one of which may provide a name nobody provides; ``""`` when none."""
        missing = [p for p in self.plugins if getattr(p, "status", "loaded") != "loaded"]
        if not missing:
            return ""
        source = self.selection_source
        why = (f"; the disabled ones are left out by {source}"
               if source and any(p.status == "disabled" for p in missing) else "")
        return "Not loaded: " + ", ".join(
            f"{p.distribution or p.name} ({p.status})" for p in missing
        ) + f" (see `evalkit plugins list`{why})."

    def provider_of(self, name: str) -> Provider:
        """The provider of the metric, family or aggregate that ``name`` resolves to."""
        key = self._record_key(self.resolve(name))
        if key is None:
            raise RegistryError(f"no provider recorded for {name!r}")
        return self._tables["metric"][key].provider

    def _record_key(self, spec: MetricSpec | AggregateSpec) -> str | None:
        """The key of the record that made ``spec`` (a family's member, a variant of a
        parameterised measure, or the record itself)."""
        from evalkit.core.metric_lookup import record_base

        table = self._tables.get("metric", {})
        key = self._canonical(spec.name)
        key = key if key in table else None
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
        return key

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
        """Every blocked name with its providers, every record refused because it claims
        a name of the kernel's built-ins (``kernel_keeps``: the name still works), and
        every file suffix that loaders of one kind claim (``suffix``)."""
        return [*self._conflicts.values(), *self._refused.values(),
                *self._suffix_conflicts.values()]

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
            chosen = loader_for_path(loaders_by_suffix(self._suffix_conflicts, ns, table),
                                     path)
            if chosen is not None:
                return chosen
        known = ", ".join(sorted(table)) or "none"
        what = name if name is not None else f"the suffix of {path}"
        why = "".join(f"; {c.message()}" for c in suffix_conflicts_of(
            self._suffix_conflicts, ns, path))
        raise RegistryError(f"no {kind} loader for {what}; known {kind} loaders: {known}{why}")

    def get(self, namespace: str, name: str) -> AnySpec:
        """A target, reporter or executor (or any record) by namespace and name."""
        if (namespace, name) in self._conflicts:
            raise RegistryError(self._conflicts[(namespace, name)].message())
        table = self._tables.get(namespace, {})
        if name not in table:
            known = ", ".join(sorted(table)) or "none"
            raise RegistryError(f"unknown {namespace} {name!r}; known: {known}")
        return table[name].spec
