"""The registry plugin discovery is filling, and what a plugin registers while it is imported.

A plugin may register through the default registry's API (``evalkit.register_metric(...)``
at the top of a ``local_plugins`` module, the first example of docs/judge.md) instead of,
or besides, returning records from its hooks. While
:func:`~evalkit.plugins.loading.load_plugins` fills a registry, the default registry's API
called in the same thread works on the registry being filled
(:func:`registry_being_filled`), so such a registration lands in the registry being built,
and nothing waits for the discovery it is part of. A thread started while a discovery is
in progress (a plugin that starts a worker thread when it is imported, and waits for it)
is answered the same way (:func:`discovery_of_new_thread`): waiting for the discovery
from there would wait for ever on the import that started it.

A module is imported once per process, but a process may discover plugins more than once
(:func:`~evalkit.plugins.default.use_registry`, :func:`~evalkit.plugins.default.set_config`,
the listing of ``evalkit plugins list``): :func:`import_plugin` remembers what a module
registered while it was imported, and adds it again to every later registry that loads the
module, so each discovered registry holds the plugin's names.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from evalkit.core.registry import Entry, Registry
from evalkit.core.specs import MetricFamily

T = TypeVar("T")

_this_thread = threading.local()


@dataclass
class _Discovery:
    registry: Registry
    owner: int  # the thread filling it
    threads: frozenset[int]  # the threads alive when it began
    importing: list[str] = field(default_factory=list)  # modules being imported


_discoveries: list[_Discovery] = []
_discoveries_lock = threading.Lock()  # held for a list read or write only
# module name -> what it registered through the default registry's API while imported
_registered_on_import: dict[str, list[Entry]] = {}
_registered_on_import_lock = threading.Lock()  # held for a dict read or write only


def registry_being_filled() -> Registry | None:
    """The registry plugin discovery is filling in this thread, or ``None`` outside discovery."""
    stack: list[Registry] = getattr(_this_thread, "stack", [])
    return stack[-1] if stack else None


@contextmanager
def filling(registry: Registry) -> Iterator[None]:
    """Make ``registry`` the one :func:`registry_being_filled` answers in this thread, for
    the ``with`` block (blocks nest: the innermost registry wins)."""
    stack: list[Registry] = _this_thread.__dict__.setdefault("stack", [])
    stack.append(registry)
    record = _Discovery(registry, threading.get_ident(),
                        frozenset(t.ident for t in threading.enumerate() if t.ident))
    with _discoveries_lock:
        _discoveries.append(record)
    try:
        yield
    finally:
        stack.pop()
        with _discoveries_lock:
            _discoveries.remove(record)


def discovery_of_new_thread() -> Registry | None:
    """The registry a discovery in another thread is filling when this thread was started
    after it began (most likely by a plugin being imported), else ``None``. Such a thread
    works on that registry, as the discovering thread itself does: waiting for the
    discovery to end could wait for the very import that waits for this thread."""
    me = threading.get_ident()
    with _discoveries_lock:
        for d in reversed(_discoveries):
            if d.owner != me and me not in d.threads:
                return d.registry
    return None


def importing_now() -> list[str]:
    """The plugin modules discoveries in progress are importing, outermost first."""
    with _discoveries_lock:
        return [m for d in _discoveries for m in d.importing]


def _note_import(registry: Registry, module: str | None) -> None:
    """Record (``module``) or forget (``None``) what this thread's discovery of
    ``registry`` imports."""
    me = threading.get_ident()
    with _discoveries_lock:
        for d in _discoveries:
            if d.owner == me and d.registry is registry:
                if module is None:
                    if d.importing:
                        d.importing.pop()
                else:
                    d.importing.append(module)
                return


def import_plugin(registry: Registry, module: str, load: Callable[[], T]) -> tuple[T, list[str]]:
    """Import a plugin with ``load()`` while ``registry`` is being filled.

    Args:
        registry: the registry being filled (see :func:`filling`).
        module: the name of the module ``load`` imports.
        load: imports the plugin and returns its object (a module, or an entry point's
            target).

    Returns:
        The plugin object, and the names registered while it was imported: into
        ``registry`` by this import, or remembered from the module's first import and
        added to ``registry`` now (a ``name@k`` family as ``name@k``).

    Raises:
        Exception: whatever ``load()`` raises, after the records registered before the
            failure are removed from ``registry`` again;
            :class:`~evalkit.core.registry.RegistryError` when a remembered record cannot
            be added (another provider has its name).
    """
    if module in sys.modules:
        plugin = load()
        with _registered_on_import_lock:
            added = list(_registered_on_import.get(module, ()))
        for entry in added:
            registry.add(entry.spec, entry.provider)
        return plugin, _names(added)
    before = {id(entry) for _, _, entry in registry.entries()}
    _note_import(registry, module)
    try:
        plugin = load()
    except BaseException:  # the import failed: none of its records stays
        for ns, key, _ in _added_since(registry, before):
            registry.remove(ns, key)
        raise
    finally:
        _note_import(registry, None)
    added = [entry for _, _, entry in _added_since(registry, before)]
    with _registered_on_import_lock:
        _registered_on_import[module] = added
    return plugin, _names(added)


def _added_since(registry: Registry, before: set[int]) -> list[tuple[str, str, Entry]]:
    return [(ns, key, entry) for ns, key, entry in registry.entries() if id(entry) not in before]


def _names(entries: list[Entry]) -> list[str]:
    return [f"{e.spec.name}@k" if isinstance(e.spec, MetricFamily) else e.spec.name
            for e in entries]
