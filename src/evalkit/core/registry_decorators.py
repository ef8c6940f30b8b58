"""The per-kind registration decorators of the registry: ``register_metric``,
``register_aggregate`` and ``register_loader``, and the polarity rule they enforce.

Each decorator builds the kind's record (:mod:`evalkit.core.specs`) from the function and
its arguments and adds it with the client as provider
(:func:`evalkit.core.providers.client_provider`); the rules of adding are the
:class:`~evalkit.core.registry.Registry`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from evalkit.core.providers import Provider, RegistryError, client_provider
from evalkit.core.specs import (
    LOADER_KINDS,
    AggregateSpec,
    AnySpec,
    LoaderKind,
    LoaderSpec,
    MetricSpec,
    ValueType,
)

F = TypeVar("F", bound=Callable[..., Any])


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
    record check refuses it by name (:func:`evalkit.core.specs.record_problem`) instead of
    registering each letter."""
    return value if isinstance(value, str) else tuple(value)


def _first_line(description: str, fn: Callable[..., Any]) -> str:
    """``description``, or else the first line of ``fn``'s docstring."""
    return description or (fn.__doc__ or "").strip().split("\n")[0]


class RegistrationDecorators:
    """The decorators of :class:`~evalkit.core.registry.Registry` (a mixin: ``add`` is
    the registry's)."""

    def add(self, spec: AnySpec, provider: Provider, *, from_plugin: bool = False) -> None:
        """Register ``spec`` (:meth:`evalkit.core.registry.Registry.add`)."""
        raise NotImplementedError  # pragma: no cover - the Registry's

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
        test.
        Raises :class:`RegistryError` if ``name`` is provided elsewhere, a need is not one
        of those, or ``value_type`` is not one of its three.
        """
        require_polarity("register_metric", name, higher_is_better)
        return self._registering(lambda fn: MetricSpec(
            name=name, fn=fn, higher_is_better=higher_is_better,
            description=_first_line(description, fn),
            version=version, aliases=_as_tuple(aliases),
            needs_judgments=bool(needs_judgments), needs_answers=bool(needs_answers),
            needs=_as_tuple(needs),
            value_type=value_type,
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
