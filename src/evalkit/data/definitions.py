"""A metric's or aggregate's definition as a run header records it (``header["metrics"]``
and ``header["aggregate_definitions"]``: ``{"provider": ..., "version": ...,
"higher_is_better": ..., "value_type": ..., "bounds": ...}``,
:func:`evalkit.data.provenance.metric_provenance`), compared
and put in words in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.plugins.info import same_definition

#: The key of a recorded definition (``header["metrics"][name]``) holding its polarity.
POLARITY_KEY = "higher_is_better"
#: The keys holding what a per-case metric declares of its values: its value type
#: (``"binary"``, ``"discrete"``, ``"continuous"`` or None: undeclared) and its bounds
#: (``[lo, hi]`` or None); a run written before headers recorded them has neither key.
VALUE_TYPE_KEY = "value_type"
BOUNDS_KEY = "bounds"
#: Keys compared only when both definitions record them.
_LATER_KEYS = (POLARITY_KEY, VALUE_TYPE_KEY, BOUNDS_KEY)


def same_recorded_definition(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two recorded definitions of a metric or aggregate are the same
    (:func:`evalkit.plugins.info.same_definition`); the polarity, the value type and the
    bounds are compared only when both record them (a run written before headers
    recorded them has none)."""
    if any(k in a and k in b and _norm(a[k]) != _norm(b[k]) for k in _LATER_KEYS):
        return False
    return same_definition({k: v for k, v in a.items() if k not in _LATER_KEYS},
                           {k: v for k, v in b.items() if k not in _LATER_KEYS})


def _norm(value: Any) -> Any:
    """Bounds as a tuple of floats whether read from JSON (a list) or from a record."""
    if isinstance(value, list | tuple):
        return tuple(float(v) for v in value)
    return value


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


def values_text(entry: Mapping[str, Any]) -> str:
    """``"value type binary, bounds [0, 1]"``: what a recorded definition declares of a
    case's values (``"no value type, no bounds"`` when it declares neither)."""
    bounds = entry.get(BOUNDS_KEY)
    shown = (f"bounds [{float(bounds[0]):g}, {float(bounds[1]):g}]"
             if isinstance(bounds, list | tuple) and len(bounds) == 2 else "no bounds")
    kind = entry.get(VALUE_TYPE_KEY)
    return f"{'value type ' + str(kind) if kind else 'no value type'}, {shown}"


__all__ = ["BOUNDS_KEY", "POLARITY_KEY", "VALUE_TYPE_KEY", "definition_label",
           "definition_text", "recorded_definition", "same_recorded_definition",
           "values_text", "version_label"]
