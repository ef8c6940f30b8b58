"""A metric's or aggregate's definition as a run header records it (``header["metrics"]``
and ``header["aggregate_definitions"]``: ``{"provider": ..., "version": ...,
"higher_is_better": ...}``, :func:`evalkit.data.provenance.metric_provenance`), compared
and put in words in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.plugins.info import same_definition

#: The key of a recorded definition (``header["metrics"][name]``) holding its polarity.
POLARITY_KEY = "higher_is_better"


def same_recorded_definition(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two recorded definitions of a metric or aggregate are the same
    (:func:`evalkit.plugins.info.same_definition`); the polarity is compared only when
    both record it (a run written before headers recorded it has none)."""
    if POLARITY_KEY in a and POLARITY_KEY in b and a[POLARITY_KEY] != b[POLARITY_KEY]:
        return False
    return same_definition({k: v for k, v in a.items() if k != POLARITY_KEY},
                           {k: v for k, v in b.items() if k != POLARITY_KEY})


def recorded_definition(header: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """What ``header`` records of the metric or aggregate ``name`` (its ``metrics`` or
    ``aggregate_definitions`` entry), or None."""
    for key in ("metrics", "aggregate_definitions"):
        found = header.get(key)
        if isinstance(found, Mapping) and isinstance(found.get(name), Mapping):
            return found[name]  # type: ignore[no-any-return]
    return None


def version_label(version: Any) -> str:
    """A definition version as text: ``v1`` for a version that begins with a digit
    (``1``, ``2.0``), else the version as it is (``judge-b694...``, never
    ``vjudge-b694...``)."""
    text = str(version)
    return f"v{text}" if text[:1].isdigit() else text


def definition_label(entry: Mapping[str, Any]) -> str:
    """``"evalkit-mine definition v1"``: a recorded definition's provider and version."""
    return f"{entry.get('provider')} definition {version_label(entry.get('version'))}"


def definition_text(entry: Mapping[str, Any]) -> str:
    """``"evalkit-mine definition v1, lower is better"``: a recorded definition in words
    (the polarity when it is recorded)."""
    text = definition_label(entry)
    polarity = entry.get(POLARITY_KEY)
    if isinstance(polarity, bool):
        text += f", {'higher' if polarity else 'lower'} is better"
    return text


__all__ = [
    "POLARITY_KEY",
    "definition_label",
    "definition_text",
    "recorded_definition",
    "same_recorded_definition",
    "version_label",
]
