"""What the default registry says of a stored metric name: its canonical form, polarity,
value type, count-ness.

Thin answers over the default registry that never raise for a name the registry does
not know (the callers refuse unknown names themselves, naming the run that lacks them).
"""

from __future__ import annotations

#: Per-query counts trec_eval prints before the measures (summed in the ``all`` block);
#: reported, never compared or gated.
COUNT_NAMES: tuple[str, ...] = ("num_ret", "num_rel", "num_rel_ret")


def canonical_metric(name: str) -> str:
    """The name rows store for ``name`` (aliases resolved: ``"AP"`` -> ``"ap"``); ``name``
    itself when the registry does not know it."""
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    try:
        return default_registry().resolve(name).name
    except RegistryError:
        return name


def higher_is_better(metric: str) -> bool:
    """A metric's declared polarity; higher is better when it is unknown or undeclared."""
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    try:
        return default_registry().polarity(metric)
    except RegistryError:
        return True


def value_type(metric: str) -> str | None:
    """What one case's value of ``metric`` can be, as the registered metric declares it
    (``"binary"``, ``"discrete"``, ``"continuous"``: ``MetricSpec.value_type``); None when
    the metric is unknown or declares nothing. The default paired test is chosen from it."""
    from evalkit.core.registry import RegistryError
    from evalkit.core.specs import MetricSpec
    from evalkit.plugins.default import default_registry

    try:
        spec = default_registry().resolve(metric)
    except RegistryError:
        return None
    return spec.value_type if isinstance(spec, MetricSpec) else None


def declared_bounds(metric: str) -> tuple[float, float] | None:
    """The range ``(lo, hi)`` every case's value of ``metric`` lies in, as the registered
    metric declares it (``MetricSpec.bounds``; ``(0, 1)`` for a metric declared
    ``"binary"``); None when the metric is unknown or declares neither."""
    from evalkit.core.registry import RegistryError
    from evalkit.core.specs import MetricSpec
    from evalkit.plugins.default import default_registry

    try:
        spec = default_registry().resolve(metric)
    except RegistryError:
        return None
    if not isinstance(spec, MetricSpec):
        return None
    from evalkit.stats.declared_values import declared_range

    return declared_range(spec)


def is_count(name: str) -> bool:
    """Whether ``name`` is a per-query count (num_ret, num_rel, num_rel_ret, or a metric
    registered with kind ``"count"``)."""
    from evalkit.core.registry import RegistryError
    from evalkit.core.specs import MetricSpec
    from evalkit.plugins.default import default_registry

    if name in COUNT_NAMES:
        return True
    try:
        spec = default_registry().resolve(name)
    except RegistryError:
        return False
    return isinstance(spec, MetricSpec) and spec.kind == "count"


__all__ = ["COUNT_NAMES", "canonical_metric", "declared_bounds", "higher_is_better",
           "is_count", "value_type"]
