"""The default registry: the process-wide one, filled by plugin discovery on first use.

Whatever first needs it (scoring a run, resolving a name, ``evalkit.registered()`` right
after ``import evalkit``) triggers discovery through :func:`default_registry`; the
:class:`~evalkit.core.registry.Registry` itself never imports a plugin. The module-level
client API (:func:`register_metric`, :func:`polarity`, :func:`registered`...) works on it,
and :func:`use_registry` swaps in another for the length of a ``with`` block.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from evalkit.core.pyproject_config import plugin_selection
from evalkit.core.registry import Registry, RegistryError
from evalkit.core.specs import AggregateSpec, LoaderSpec, MetricSpec, ValueType
from evalkit.plugins.filling import discovery_of_new_thread, importing_now, registry_being_filled
from evalkit.plugins.loading import load_plugins

F = TypeVar("F", bound=Callable[..., Any])

_config_override: str | None = None


def set_config(config: str | os.PathLike[str] | None) -> None:
    """Use ``config``'s ``[tool.evalkit]`` for the default registry (the CLI's ``--config``).

    The default registry is rediscovered on its next use; ``None`` returns to the upward
    search from the working directory.
    """
    global _config_override
    _config_override = None if config is None else os.fspath(config)
    set_default_registry(None)


def _discovered(registry: Registry) -> Registry:
    load_plugins(registry, selection=plugin_selection(_config_override))
    return registry


_default: Registry | None = None
# guards reads and writes of `_default`; never held while plugins are imported
_default_lock = threading.Lock()
# one discovery of the default registry at a time (held while plugins are imported)
_discovery_lock = threading.Lock()
#: The longest another thread waits for a discovery of the default registry in progress
#: (seconds): far longer than any plugin's import, short of for ever.
DISCOVERY_WAIT_S = 300.0


def default_registry() -> Registry:
    """The process-wide registry, with installed plugins discovered on first use.

    While plugin discovery fills a registry in this thread (a plugin registering with
    ``evalkit.register_metric(...)`` when it is imported, or from a hook), or in a thread
    started while it does (a plugin's worker thread), the registry being filled
    (:func:`evalkit.plugins.filling.registry_being_filled`,
    :func:`~evalkit.plugins.filling.discovery_of_new_thread`).

    Raises:
        RegistryError: another thread has been discovering the plugins for
            :data:`DISCOVERY_WAIT_S` seconds; the message names the plugin it is importing.
    """
    global _default
    filling = registry_being_filled() or discovery_of_new_thread()
    if filling is not None:
        return filling
    current = _default
    if current is not None:
        return current
    # A bounded wait while another thread discovers the plugins (that discovery imports
    # them; the thread discovering never waits here, nor a thread it started meanwhile).
    if not _discovery_lock.acquire(timeout=DISCOVERY_WAIT_S):
        modules = importing_now()
        raise RegistryError(
            f"plugins are still being discovered in another thread after "
            f"{DISCOVERY_WAIT_S:g} s" + (f" (importing {modules[-1]!r})" if modules else "")
            + "; a plugin whose import waits for another thread that uses evalkit's "
            "registry can never finish: register from the importing thread, or start the "
            "thread after the import")
    try:
        with _default_lock:
            current = _default
        if current is not None:
            return current
        built = _discovered(Registry())
        with _default_lock:
            if _default is None:  # set_default_registry() may have run meanwhile
                _default = built
            return _default
    finally:
        _discovery_lock.release()


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
        registry = _discovered(Registry()) if plugins else Registry()
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
    aliases: Sequence[str] = (), needs_judgments: bool = False, needs_answers: bool = False,
    needs: Sequence[str] = (),
    value_type: ValueType | None = None,
    bounds: tuple[float, float] | None = None,
) -> Callable[[F], F]:
    """Register a per-case metric ``fn(response, case) -> float`` in the default registry.

    See :meth:`Registry.register_metric` (``needs``: the case fields it reads;
    ``bounds=(lo, hi)``: the range of every case's value, which ``evalkit run
    --until-decided`` needs; refused, ``RegistryError``, unless two finite numbers
    with ``lo < hi``).
    """
    return default_registry().register_metric(
        name, higher_is_better=higher_is_better, description=description, version=version,
        aliases=aliases, needs_judgments=needs_judgments, needs_answers=needs_answers,
        needs=needs,
        value_type=value_type,
        bounds=bounds,
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


def scheme_loader(kind: str, source: object) -> LoaderSpec | None:
    """The loader of ``kind`` whose :attr:`~evalkit.core.specs.LoaderSpec.scheme` names
    ``source`` (``irds:vaswani``) in the default registry, or None when ``source`` is a
    file path (or no path at all)."""
    text = os.fspath(source) if isinstance(source, str | os.PathLike) else ""
    found = (entry.spec for _, _, entry in default_registry().entries(f"loader:{kind}"))
    return next((spec for spec in found if isinstance(spec, LoaderSpec) and spec.scheme
                 and str(text).startswith(f"{spec.scheme}:")), None)
