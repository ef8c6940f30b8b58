"""Adapters from ``(retrieved, relevant, k) -> float`` core functions to per-case metrics."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from evalkit.core.providers import Provider, client_provider
from evalkit.core.registry import Registry
from evalkit.core.specs import MetricFamily, MetricSpec
from evalkit.plugins.default import default_registry

if TYPE_CHECKING:
    from evalkit.data.cases import GoldenCase
    from evalkit.data.targets import TargetResponse

CoreFn = Callable[[list[str], set[str], int], float]


def adapt_core(core: CoreFn, k: int) -> Callable[[TargetResponse, GoldenCase], float]:
    """``(response, case) -> core(list(response.ranked_ids), set(case.relevant), k)``."""

    def metric(response: TargetResponse, case: GoldenCase) -> float:
        return float(core(list(response.ranked_ids), set(case.relevant), k))

    metric.__evalkit_core__ = core  # type: ignore[attr-defined]
    metric.__name__ = f"{getattr(core, '__name__', 'metric')}_at_{k}"
    metric.__qualname__ = metric.__name__
    return metric


def core_family(
    name: str, core: CoreFn, higher_is_better: bool | None, description: str = ""
) -> MetricFamily:
    """A ``name@k`` family built from a core function."""

    def factory(k: int) -> MetricSpec:
        return MetricSpec(
            name=f"{name}@{k}", fn=adapt_core(core, k), higher_is_better=higher_is_better,
            description=description, family=name, needs=("relevance",),
        )

    return MetricFamily(
        name=name, factory=factory, higher_is_better=higher_is_better,
        description=description, core=core,
    )


def register_retrieval_metric(
    name: str,
    fn: CoreFn,
    k: int,
    *,
    higher_is_better: bool,
    registry: Registry | None = None,
) -> MetricSpec:
    """Register ``f"{name}@{k}"`` from a core ``(retrieved, relevant, k) -> float`` function.

    Example: ``register_retrieval_metric("recall", recall_at_k, 50, higher_is_better=True)``
    registers ``recall@50``. Registering the same core function and k again is a no-op.

    Raises:
        RegistryError: the name is provided by something else.
    """
    from evalkit.core.registry import require_polarity

    require_polarity("register_retrieval_metric", f"{name}@{k}", higher_is_better)
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    reg = registry or default_registry()
    spec = MetricSpec(
        name=f"{name}@{k}", fn=_cached_adapter(fn, k), higher_is_better=higher_is_better,
        description=f"{getattr(fn, '__name__', name)} at k={k}", needs=("relevance",),
    )
    provider: Provider = client_provider(fn)
    reg.add(spec, provider)
    return spec


_ADAPTERS: dict[tuple[CoreFn, int], Callable[[TargetResponse, GoldenCase], float]] = {}


def _cached_adapter(fn: CoreFn, k: int) -> Callable[[TargetResponse, GoldenCase], float]:
    # The same (fn, k) always yields the same adapter object, so re-registration is a no-op.
    key = (fn, k)
    if key not in _ADAPTERS:
        _ADAPTERS[key] = adapt_core(fn, k)
    return _ADAPTERS[key]
