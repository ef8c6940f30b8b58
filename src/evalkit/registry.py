"""One registry for every extension kind, with provenance and conflict rules.

Namespaces:

* per-case metrics, metric families (``name@k``) and whole-run aggregates share one;
* loaders have one namespace per kind (goldens, run, qrels, queries, corpus);
* targets and reporters have one each.

Rules:

* registering the same function with the same polarity under the same name again is a
  no-op;
* any other second registration from client code raises :class:`RegistryError` naming
  both providers;
* two plugins that provide one name do not stop discovery: the name is *blocked*, and
  resolving it raises :class:`RegistryError` naming both.
"""

from __future__ import annotations

import inspect
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from evalkit.specs import (
    LOADER_KINDS,
    SPEC_TYPES,
    AggregateSpec,
    AnySpec,
    LoaderKind,
    LoaderSpec,
    MetricFamily,
    MetricSpec,
    ReporterSpec,
    TargetSpec,
    record_problem,
)

F = TypeVar("F", bound=Callable[..., Any])

_FAMILY_RE = re.compile(r"^(?P<prefix>[^@]+)@(?P<k>[^@]+)$")


class RegistryError(LookupError):
    """A registration or lookup the registry refuses (unknown, blocked or duplicate name)."""


class Provider(NamedTuple):
    """Where a registered record came from.

    ``distribution`` and ``version`` are set for plugins found through entry points (and
    for the kernel's built-ins); client code is identified by its ``module``.
    """

    module: str
    distribution: str | None = None
    version: str | None = None
    plugin: str | None = None

    @property
    def is_client(self) -> bool:
        return self.distribution is None

    def __str__(self) -> str:
        if self.distribution:
            return f"{self.distribution} {self.version or '?'} ({self.module})"
        return f"module {self.module}"


class Entry(NamedTuple):
    """A registered record and its provider."""

    spec: AnySpec
    provider: Provider


class Conflict(NamedTuple):
    """Two or more providers of one name; the name is blocked."""

    namespace: str
    name: str
    entries: list[Entry]

    def message(self) -> str:
        kinds = [_kind_of(e.spec) for e in self.entries]
        if len({e.provider for e in self.entries}) == 1:
            return (f"{self.entries[0].provider} registers {kinds[0]} name {self.name!r} "
                    "more than once; give each record its own name (the name is blocked "
                    "until then; see `evalkit plugins list`)")
        if len(set(kinds)) == 1:
            what = f"{kinds[0]} name {self.name!r} is provided by " + " and ".join(
                str(e.provider) for e in self.entries)
        else:  # say what each one provides (a metric here, an aggregate there)
            what = f"name {self.name!r} is provided by " + " and ".join(
                f"{e.provider} (as {'an' if kind[0] in 'aeiou' else 'a'} {kind})"
                for e, kind in zip(self.entries, kinds, strict=True))
        others = [e for e in self.entries if e.provider.module != _KERNEL_BUILTINS]
        if len(others) == len(self.entries):
            if any(e.provider.is_client for e in self.entries):  # a project's own module
                record = kinds[0] if len(set(kinds)) == 1 else "record"
                fix = f"renames its {record}, or is disabled or uninstalled"
            else:
                fix = "is disabled or uninstalled"
            return (f"{what}; it is blocked until one of them {fix} "
                    "(see `evalkit plugins list`)")
        # the kernel's built-ins cannot be disabled: the other provider must rename its record
        who = " and ".join(f"{e.provider} must rename its {_kind_of(e.spec)}" for e in others)
        return (f"{what}; the kernel's built-ins cannot be disabled, so {who} (the name is "
                "blocked until then; see `evalkit plugins list`)")


def _as_tuple(value: Sequence[str]) -> Any:
    """``value`` as a tuple, but a bare string (``aliases="mrr"``) as it is, so that the
    record check refuses it by name (:func:`evalkit.specs.record_problem`) instead of
    registering each letter."""
    return value if isinstance(value, str) else tuple(value)


def _accepts(spec: LoaderSpec, path: str) -> bool:
    """``spec.accepts(path)``; an error counts as accepting (the loader reports it)."""
    assert spec.accepts is not None
    try:
        return bool(spec.accepts(Path(path)))
    except Exception:
        return True


def _name_order(name: str) -> tuple[str, int, str]:
    """Sort key: ``prefix@k`` by prefix, then ``k`` as a number (``@k`` itself first)."""
    prefix, at, k = name.partition("@")
    return (prefix, int(k) if k.isdigit() else -1, k) if at else (prefix, -2, "")


#: The module of the kernel's built-in plugin, which cannot be disabled.
_KERNEL_BUILTINS = "evalkit.builtins"


def _kind_of(spec: AnySpec) -> str:
    """What a record is, in words: ``aggregate``, ``metric``, ``metric family``..."""
    if isinstance(spec, AggregateSpec):
        return "aggregate"
    if isinstance(spec, MetricFamily):
        return "metric family"
    if isinstance(spec, MetricSpec):
        return "count" if spec.kind == "count" else "metric"
    if isinstance(spec, LoaderSpec):
        return f"{spec.kind} loader"
    return "target" if isinstance(spec, TargetSpec) else "reporter"


def _client_provider(obj: object) -> Provider:
    module = getattr(obj, "__module__", None)
    if not module:
        frame = inspect.currentframe()
        module = "<unknown>"
        if frame is not None and frame.f_back is not None and frame.f_back.f_back is not None:
            module = str(frame.f_back.f_back.f_globals.get("__name__", "<unknown>"))
    return Provider(module=str(module))


def _family_key(prefix: str) -> str:
    return f"{prefix}@k"


def _same(a: AnySpec, b: AnySpec) -> bool:
    """Whether two records describe the same definition (a re-registration no-op)."""
    if type(a) is not type(b) or a.name != b.name:
        return False
    if isinstance(a, MetricSpec) and isinstance(b, MetricSpec):
        return a.fn is b.fn and a.higher_is_better == b.higher_is_better and a.kind == b.kind
    if isinstance(a, MetricFamily) and isinstance(b, MetricFamily):
        same_fn = a.factory is b.factory or (a.core is not None and a.core is b.core)
        return same_fn and a.higher_is_better == b.higher_is_better
    if isinstance(a, AggregateSpec) and isinstance(b, AggregateSpec):
        return a.fn is b.fn and a.higher_is_better == b.higher_is_better
    if isinstance(a, LoaderSpec) and isinstance(b, LoaderSpec):
        return a.fn is b.fn and a.kind == b.kind
    if isinstance(a, TargetSpec) and isinstance(b, TargetSpec):
        return a.factory is b.factory
    if isinstance(a, ReporterSpec) and isinstance(b, ReporterSpec):
        return a.render is b.render
    return False


class Registry:
    """The table of every registered metric, aggregate, loader, target and reporter."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        # namespace -> key -> Entry. Namespaces: "metric" (metrics, families as
        # "prefix@k", aggregates), "loader:<kind>", "target", "reporter".
        self._tables: dict[str, dict[str, Entry]] = {}
        self._aliases: dict[str, str] = {}
        self._conflicts: dict[tuple[str, str], Conflict] = {}
        self._family_cache: dict[str, MetricSpec] = {}
        # lower-cased keys and aliases -> canonical keys; rebuilt after any change
        self._lower: tuple[dict[str, set[str]], dict[str, set[str]]] | None = None
        #: filled by :func:`evalkit.plugins.load_plugins`
        self.plugins: list[Any] = []
        self.entry_point_conflicts: list[str] = []

    # ------------------------------------------------------------------ adding
    @staticmethod
    def _namespace(spec: AnySpec) -> tuple[str, str]:
        if isinstance(spec, MetricFamily):
            return "metric", _family_key(spec.name)
        if isinstance(spec, MetricSpec | AggregateSpec):
            return "metric", spec.name
        if isinstance(spec, LoaderSpec):
            if spec.kind not in LOADER_KINDS:
                raise RegistryError(
                    f"loader {spec.name!r} has kind {spec.kind!r}; use one of {LOADER_KINDS}"
                )
            return f"loader:{spec.kind}", spec.name
        if isinstance(spec, TargetSpec):
            return "target", spec.name
        if isinstance(spec, ReporterSpec):
            return "reporter", spec.name
        raise RegistryError(f"cannot register {spec!r}: not an evalkit.specs record")

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
        ns, key = self._namespace(spec)
        with self._lock:
            self._lower = None
            table = self._tables.setdefault(ns, {})
            conflict = self._conflicts.get((ns, key))
            if conflict is not None:
                if not any(_same(e.spec, spec) for e in conflict.entries):
                    conflict.entries.append(Entry(spec, provider))
                if not from_plugin:
                    raise RegistryError(conflict.message())
                return
            existing = table.get(key)
            if existing is not None:
                if _same(existing.spec, spec):
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
        m = _FAMILY_RE.match(key)
        if m is None or isinstance(spec, MetricFamily):
            return
        fkey = self._canonical(_family_key(m["prefix"]))
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
            return [_family_key(a) for a in aliases]
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
            akey = _family_key(alias) if isinstance(spec, MetricFamily) else alias
            if akey == key:
                continue
            current = self._aliases.get(akey)
            if current is not None and current != key:
                msg = f"alias {alias!r} of {key!r} already names {current!r}; alias ignored"
                if not from_plugin:
                    raise RegistryError(msg)
                continue
            self._aliases[akey] = key

    def remove(self, namespace: str, name: str) -> None:
        """Remove a registration (used by tests and by ``METRICS`` deletion)."""
        with self._lock:
            self._tables.get(namespace, {}).pop(name, None)
            self._aliases = {a: k for a, k in self._aliases.items() if k != name}
            self._family_cache.clear()
            self._lower = None

    # ---------------------------------------------------------------- decorators
    def register_metric(
        self,
        name: str,
        *,
        higher_is_better: bool,
        description: str = "",
        version: str = "1",
        aliases: Sequence[str] = (),
        needs_judgments: bool = False,
    ) -> Callable[[F], F]:
        """Decorator: register ``fn(response, case) -> float`` as per-case metric ``name``.

        ``higher_is_better`` is required: it decides which direction a gate treats as a
        regression. ``needs_judgments=True`` says the metric reads the case's relevance
        judgments, so a golden case without expected ids is refused before a run starts.
        Raises :class:`RegistryError` if ``name`` is provided elsewhere.
        """
        _require_polarity("register_metric", name, higher_is_better)

        def deco(fn: F) -> F:
            spec = MetricSpec(
                name=name, fn=fn, higher_is_better=higher_is_better,
                description=description or (fn.__doc__ or "").strip().split("\n")[0],
                version=version, aliases=_as_tuple(aliases),
                needs_judgments=bool(needs_judgments),
            )
            self.add(spec, _client_provider(fn))
            return fn

        return deco

    def register_aggregate(
        self,
        name: str,
        *,
        higher_is_better: bool,
        description: str = "",
        version: str = "1",
    ) -> Callable[[F], F]:
        """Decorator: register ``fn(rows) -> float`` as whole-run aggregate ``name``."""
        _require_polarity("register_aggregate", name, higher_is_better)

        def deco(fn: F) -> F:
            spec = AggregateSpec(
                name=name, fn=fn, higher_is_better=higher_is_better,
                description=description or (fn.__doc__ or "").strip().split("\n")[0],
                version=version,
            )
            self.add(spec, _client_provider(fn))
            return fn

        return deco

    def register_loader(
        self,
        name: str,
        *,
        kind: str = "goldens",
        suffixes: Sequence[str] = (),
        description: str = "",
    ) -> Callable[[F], F]:
        """Decorator: register ``fn(path) -> object`` as a loader of ``kind``.

        ``kind`` defaults to ``"goldens"`` (the seed's ``@register_loader("parquet")``);
        ``suffixes`` default to ``(f".{name}",)``.
        """
        if kind not in LOADER_KINDS:
            raise RegistryError(f"loader kind {kind!r} is not one of {LOADER_KINDS}")
        loader_kind: LoaderKind = kind

        def deco(fn: F) -> F:
            spec = LoaderSpec(
                name=name, kind=loader_kind,
                fn=fn, suffixes=_as_tuple(suffixes) or (f".{name}",),
                description=description or (fn.__doc__ or "").strip().split("\n")[0],
            )
            self.add(spec, _client_provider(fn))
            return fn

        return deco

    # ------------------------------------------------------------------ lookup
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
        ``"P(rel=2)@5"``, ``"ndcg_cut_10"``); see :mod:`evalkit.metric_lookup`.

        Exact names and aliases come first (case-insensitively when nothing matches
        exactly), then ir_measures' ``Base(params)@k``, then trec_eval's ``base_k``.

        Raises:
            RegistryError: unknown name, blocked name, a bad ``@k`` cut-off or parameter.
        """
        from evalkit.metric_lookup import LookupFailure, lookup

        with self._lock:
            try:
                return lookup(self, name)
            except LookupFailure as exc:
                raise RegistryError(str(exc)) from None

    def _unknown_message(self, name: str) -> str:
        from evalkit.metric_lookup import unknown_message

        msg = unknown_message(set(self._tables.get("metric", {})) | set(self._aliases), name)
        msg += f" Known: {', '.join(self.registered()) or 'none'}."
        missing = [p for p in self.plugins if getattr(p, "status", "loaded") != "loaded"]
        if missing:
            msg += " Not loaded: " + ", ".join(
                f"{p.distribution or p.name} ({p.status})" for p in missing
            ) + " (see `evalkit plugins list`)."
        msg += (
            " A metric comes from a plugin (e.g. evalkit-retrieval) or from "
            "register_metric(name, higher_is_better=...) in Python."
        )
        return msg

    def provider_of(self, name: str) -> Provider:
        """The provider of the metric, family or aggregate that ``name`` resolves to."""
        from evalkit.metric_lookup import record_base

        spec = self.resolve(name)
        key = self._canonical(spec.name)
        if key is None and isinstance(spec, MetricSpec) and spec.family:
            key = self._canonical(_family_key(spec.family))
        if key is None:
            base = record_base(spec.name)
            if base is not None:
                key = self._canonical(base) if "@" not in spec.name else \
                    self._canonical(_family_key(base))
        if key is None:
            m = _FAMILY_RE.match(spec.name)
            key = self._canonical(_family_key(m["prefix"])) if m else None
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
        return sorted(names, key=_name_order)

    def entries(self, namespace: str | None = None) -> Iterator[tuple[str, str, Entry]]:
        """``(namespace, key, entry)`` for every live registration."""
        with self._lock:
            for ns, table in sorted(self._tables.items()):
                if namespace is None or ns == namespace:
                    for key, entry in sorted(table.items()):
                        yield ns, key, entry

    def conflicts(self) -> list[Conflict]:
        """Every blocked name with its providers."""
        return list(self._conflicts.values())

    def family(self, prefix: str) -> MetricFamily:
        """The ``prefix@k`` family (aliases accepted)."""
        key = self._canonical(_family_key(prefix))
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
            lowered = str(path).lower()
            # the longest matching suffix first; on a tie, a loader that looks at the
            # content before one that takes any file
            matches: list[tuple[int, bool, str, LoaderSpec]] = []
            for key, entry in table.items():
                spec = entry.spec
                assert isinstance(spec, LoaderSpec)
                longest = max((len(s) for s in spec.suffixes if lowered.endswith(s.lower())),
                              default=0)
                if longest:
                    matches.append((-longest, spec.accepts is None, key, spec))
            for *_, spec in sorted(matches, key=lambda m: m[:3]):
                if spec.accepts is None or _accepts(spec, path):
                    return spec
            if len(table) == 1:
                only = next(iter(table.values())).spec
                assert isinstance(only, LoaderSpec)
                return only
        known = ", ".join(sorted(table)) or "none"
        what = name if name is not None else f"the suffix of {path}"
        raise RegistryError(f"no {kind} loader for {what}; known {kind} loaders: {known}")

    def get(self, namespace: str, name: str) -> AnySpec:
        """A target or reporter (or any record) by namespace and name."""
        if (namespace, name) in self._conflicts:
            raise RegistryError(self._conflicts[(namespace, name)].message())
        table = self._tables.get(namespace, {})
        if name not in table:
            known = ", ".join(sorted(table)) or "none"
            raise RegistryError(f"unknown {namespace} {name!r}; known: {known}")
        return table[name].spec


def _require_polarity(fn_name: str, name: str, value: object) -> None:
    if not isinstance(value, bool):
        raise RegistryError(
            f"{fn_name}({name!r}): higher_is_better must be True or False; it decides which "
            "direction a gate treats as a regression, so it has no default"
        )


# ------------------------------------------------------------ the default registry
_default: Registry | None = None
_default_lock = threading.Lock()


def default_registry() -> Registry:
    """The process-wide registry, with installed plugins discovered on first use."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                from evalkit.plugins import load_plugins

                reg = Registry()
                load_plugins(reg)
                _default = reg
    return _default


def set_default_registry(registry: Registry | None) -> None:
    """Replace the process-wide registry (``None`` rediscovers on next use)."""
    global _default
    with _default_lock:
        _default = registry


@contextmanager
def use_registry(registry: Registry | None = None, *, plugins: bool = True) -> Iterator[Registry]:
    """Use a fresh (or the given) registry for the duration of a ``with`` block.

    With ``plugins=True`` a fresh registry discovers the installed plugins first.
    """
    global _default
    if registry is None:
        registry = Registry()
        if plugins:
            from evalkit.plugins import load_plugins

            load_plugins(registry)
    with _default_lock:
        previous = _default
        _default = registry
    try:
        yield registry
    finally:
        with _default_lock:
            _default = previous


# ------------------------------------------------------- module-level client API
def register_metric(
    name: str, *, higher_is_better: bool, description: str = "", version: str = "1",
    aliases: Sequence[str] = (), needs_judgments: bool = False,
) -> Callable[[F], F]:
    """Register a per-case metric ``fn(response, case) -> float`` in the default registry.

    See :meth:`Registry.register_metric`.
    """
    return default_registry().register_metric(
        name, higher_is_better=higher_is_better, description=description, version=version,
        aliases=aliases, needs_judgments=needs_judgments,
    )


def register_aggregate(
    name: str, *, higher_is_better: bool, description: str = "", version: str = "1"
) -> Callable[[F], F]:
    """Register a whole-run aggregate ``fn(rows) -> float`` in the default registry."""
    return default_registry().register_aggregate(
        name, higher_is_better=higher_is_better, description=description, version=version
    )


def register_loader(
    name: str, *, kind: str = "goldens", suffixes: Sequence[str] = (), description: str = ""
) -> Callable[[F], F]:
    """Register a loader ``fn(path) -> object`` of ``kind`` in the default registry."""
    return default_registry().register_loader(
        name, kind=kind, suffixes=suffixes, description=description
    )


def polarity(name: str) -> bool:
    """``higher_is_better`` of a registered metric or aggregate; raises if unknown."""
    return default_registry().polarity(name)


def registered() -> list[str]:
    """The live list of metric, family and aggregate names."""
    return default_registry().registered()


def resolve(name: str) -> MetricSpec | AggregateSpec:
    """The metric or aggregate ``name`` resolves to in the default registry."""
    return default_registry().resolve(name)
