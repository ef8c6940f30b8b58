"""Loaders of one kind that claim one file suffix, none with an ``accepts`` that tells
their files apart: a conflict over that suffix.

A path picks its loader by suffix (:func:`evalkit.core.specs.loader_for_path`); two
loaders that both take ``.jsonl`` and cannot tell their files apart would leave the
choice to the order of their names. A plugin's loader that claims a suffix of the
kernel's built-in loader of its kind leaves the suffix to the kernel's; two plugins'
leave it to neither. Either loader still reads a file when it is named. The registry
keeps the conflicts in a dict ``{(namespace, lower-cased suffix): Conflict}`` and lists
them with its other conflicts.
"""

from __future__ import annotations

from dataclasses import replace

from evalkit.core.providers import Conflict, Entry, is_kernel
from evalkit.core.specs import LoaderSpec

#: ``{(loader namespace, lower-cased suffix): Conflict}``
SuffixConflicts = dict[tuple[str, str], Conflict]


def claim_suffixes(conflicts: SuffixConflicts, ns: str, table: dict[str, Entry],
                   entry: Entry) -> None:
    """A plugin's loader ``entry``, about to join ``table`` (the loaders of namespace
    ``ns``), claims each of its suffixes: one that a loader of ``table`` already claims,
    neither with an ``accepts``, becomes (or joins) a conflict in ``conflicts``, which the
    kernel's built-in wins when it is among them."""
    spec = entry.spec
    assert isinstance(spec, LoaderSpec)
    if spec.accepts is not None:
        return
    for suffix in sorted({s.lower() for s in spec.suffixes}):
        conflict = conflicts.get((ns, suffix))
        if conflict is not None:
            conflict.entries.append(entry)
            continue
        others = [e for e in table.values() if isinstance(e.spec, LoaderSpec)
                  and e.spec.accepts is None and suffix in {s.lower() for s in e.spec.suffixes}]
        if others:
            conflicts[(ns, suffix)] = Conflict(
                ns, suffix, [*others, entry], suffix=True,
                kernel_keeps=any(is_kernel(e.provider) for e in others)
                and not is_kernel(entry.provider))


def loaders_by_suffix(conflicts: SuffixConflicts, ns: str,
                      table: dict[str, Entry]) -> dict[str, LoaderSpec]:
    """``{name: loader}`` of ``table`` as a path chooses among them: each without the
    suffixes a conflict takes from it."""
    out = {key: entry.spec for key, entry in table.items() if isinstance(entry.spec, LoaderSpec)}
    for (cns, suffix), conflict in conflicts.items():
        if cns != ns:
            continue
        for lost in conflict.losers():
            spec = out.get(lost.spec.name)
            if spec is lost.spec:
                out[spec.name] = replace(spec, suffixes=tuple(
                    s for s in spec.suffixes if s.lower() != suffix))
    return out


def suffix_conflicts_of(conflicts: SuffixConflicts, ns: str, path: str | None
                        ) -> list[Conflict]:
    """The conflicts over a suffix that ``path`` ends with, among the loaders of ``ns``."""
    if path is None:
        return []
    lowered = str(path).lower()
    return [c for (cns, suffix), c in conflicts.items()
            if cns == ns and lowered.endswith(suffix)]


__all__ = ["SuffixConflicts", "claim_suffixes", "loaders_by_suffix", "suffix_conflicts_of"]
