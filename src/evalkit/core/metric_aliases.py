"""The other spellings of a metric's name: its aliases, and the clashes of a new name or
alias with the names and aliases already registered.

The registry calls these functions with itself, holding its lock: a spelling that another
record already answers to is blocked (two plugins) or refused (client code), as
:mod:`evalkit.core.registry` describes.
"""

from __future__ import annotations

from typing import Any

from evalkit.core.providers import Conflict, Entry, RegistryError
from evalkit.core.specs import AnySpec, MetricFamily


def family_key(prefix: str) -> str:
    """The key of the ``prefix`` family in the ``"metric"`` namespace: ``prefix@k``."""
    return f"{prefix}@k"


def _spellings(spec: AnySpec) -> list[str]:
    aliases: tuple[str, ...] = getattr(spec, "aliases", ())
    if isinstance(spec, MetricFamily):
        return [family_key(a) for a in aliases]
    return list(aliases)


def spelling_clashes(reg: Any, ns: str, key: str, spec: AnySpec) -> list[tuple[str, str]]:
    """``(spelling, other key)`` where the new name or an alias of ``spec`` already names a
    different record of ``reg`` (as its name or as an alias)."""
    if ns != "metric":
        return []
    table = reg._tables.get(ns, {})
    out: list[tuple[str, str]] = []
    other = reg._aliases.get(key)
    if other is not None and other != key and other in table:
        out.append((key, other))
    for spelling in _spellings(spec):
        if spelling == key or (ns, spelling) in reg._conflicts:
            continue
        if spelling in table:
            out.append((spelling, spelling))
        elif reg._aliases.get(spelling, key) != key and reg._aliases[spelling] in table:
            out.append((spelling, reg._aliases[spelling]))
    return out


def block_spelling(reg: Any, ns: str, spelling: str, other_key: str, entry: Entry) -> None:
    """Two providers claim ``spelling`` (a name or an alias): block it, naming both."""
    table = reg._tables.setdefault(ns, {})
    other = table.get(other_key)
    entries = [other, entry] if other is not None else [entry]
    reg._conflicts[(ns, spelling)] = Conflict(ns, spelling, entries)
    reg._aliases.pop(spelling, None)
    if spelling == other_key:
        del table[spelling]


def add_aliases(reg: Any, ns: str, key: str, spec: AnySpec, from_plugin: bool) -> None:
    """Make each alias of ``spec`` (registered under ``key``) name it.

    Raises:
        RegistryError: from client code (not ``from_plugin``), an alias that names
            another record already (a plugin's is ignored).
    """
    if ns != "metric":
        return
    aliases: tuple[str, ...] = getattr(spec, "aliases", ())
    for alias in aliases:
        akey = family_key(alias) if isinstance(spec, MetricFamily) else alias
        if akey == key or (ns, akey) in reg._conflicts:  # blocked: stays blocked
            continue
        current = reg._aliases.get(akey)
        if current is not None and current != key:
            msg = f"alias {alias!r} of {key!r} already names {current!r}; alias ignored"
            if not from_plugin:
                raise RegistryError(msg)
            continue
        reg._aliases[akey] = key


__all__ = ["add_aliases", "block_spelling", "family_key", "spelling_clashes"]
