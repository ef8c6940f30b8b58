"""Helpers for testing evalkit plugins: a throwaway registry and a conformance suite.

Register a plugin for the duration of one test (the process-wide registry is restored
afterwards, so nothing leaks into other tests)::

    from evalkit.testing import registered_plugin

    def test_my_metric():
        with registered_plugin(my_package.plugin) as registry:
            assert registry.polarity("my_metric") is True

Run the conformance suite from a plugin's own tests, one pytest test per check::

    import pytest
    from evalkit.testing import conformance_checks

    @pytest.mark.parametrize("check", conformance_checks(my_package.plugin), ids=str)
    def test_conformance(check):
        check()

pytest users may also import the :func:`evalkit_registry` fixture into a ``conftest.py``
(``from evalkit.testing import evalkit_registry``): a fresh registry holding the kernel
built-ins, made the default for one test. pytest is imported only when that fixture is.
"""

from __future__ import annotations

import math
import numbers
import tempfile
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.core.pyproject_config import PluginSelection
from evalkit.core.registry import Provider, Registry
from evalkit.core.specs import (
    AggregateSpec,
    AnySpec,
    LoaderSpec,
    MetricFamily,
    MetricSpec,
    ReporterSpec,
    TargetSpec,
)
from evalkit.data.cases import GoldenCase
from evalkit.data.targets import TargetResponse
from evalkit.plugins.default import use_registry
from evalkit.plugins.hooks import PluginError, collect_records
from evalkit.plugins.loading import load_builtins, load_plugins, register_plugin_object

if TYPE_CHECKING:
    from evalkit.data.rows import CaseResult

__all__ = [
    "ConformanceCheck",
    "PluginLoadError",
    "assert_conforms",
    "check_conformance",
    "conformance_checks",
    "registered_plugin",
    "sample_pairs",
    "sample_rows",
]

Pair = tuple[TargetResponse, GoldenCase]


class PluginLoadError(AssertionError):
    """The plugin under test could not be registered (the message says why)."""


def _module_of(plugin: object) -> str:
    name = getattr(plugin, "__name__", None)
    if isinstance(name, str) and hasattr(plugin, "__file__"):
        return name
    return type(plugin).__module__


@contextmanager
def registered_plugin(
    plugin: object,
    *,
    name: str | None = None,
    distribution: str | None = None,
    version: str | None = None,
    installed: bool = False,
) -> Iterator[Registry]:
    """Register ``plugin`` in a fresh registry that is the default one inside the block.

    Args:
        plugin: a module or object with ``@hookimpl`` functions.
        name, distribution, version: the provenance to record (default: the module).
        installed: also load every installed plugin first (default: only the kernel
            built-ins), to test how the plugin coexists with them.

    Yields:
        The registry; on exit the previous default registry is restored.

    Raises:
        PluginLoadError: the plugin fails to load, or one of its names is already provided
            (the message names both providers).
    """
    registry = Registry()
    if installed:
        load_plugins(registry, selection=PluginSelection.everything())
    else:
        load_builtins(registry)
    provider = Provider(module=_module_of(plugin), distribution=distribution, version=version,
                        plugin=name)
    try:
        info = register_plugin_object(registry, plugin, provider, name=name, from_plugin=False)
    except Exception as exc:
        raise PluginLoadError(f"{provider}: {exc}") from exc
    if info.status != "loaded":
        raise PluginLoadError(f"{provider}: {info.error}")
    with use_registry(registry):
        yield registry


def _make_fixture() -> Any:
    import pytest

    @pytest.fixture
    def evalkit_registry() -> Iterator[Registry]:
        """A fresh registry with the kernel built-ins, the default one for this test."""
        registry = Registry()
        load_builtins(registry)
        with use_registry(registry):
            yield registry

    return evalkit_registry


def __getattr__(name: str) -> Any:
    if name == "evalkit_registry":
        fixture = _make_fixture()
        globals()[name] = fixture
        return fixture
    raise AttributeError(f"module 'evalkit.testing' has no attribute {name!r}")


# ------------------------------------------------------------------ sample inputs
def sample_pairs() -> list[Pair]:
    """A few ``(response, case)`` pairs covering retrieval and text metrics.

    Graded judgments with a zero and a negative label, a case with no relevant document,
    an expected list of ids, text answers and responses with latency and cost metadata.
    """
    c1 = GoldenCase(
        id="q1", query="Which element has atomic number 1?",
        expected="Hydrogen has atomic number 1.",
        relevance={"d1": 2, "d2": 1, "d3": 0, "d4": -1}, relevant=frozenset({"d1", "d2"}),
    )
    c2 = GoldenCase(id="q2", query="Who proved the conjecture?", expected="Nobody yet.",
                    relevance={"d7": 0}, relevant=frozenset())
    c3 = GoldenCase(id="q3", query="Which documents mention neutrons?",
                    expected=["d9", "d1"], relevance={"d9": 1, "d1": 1},
                    relevant=frozenset({"d9", "d1"}))
    return [
        (TargetResponse(ranked_ids=("d3", "d1", "d5", "d2", "d4"), text="Hydrogen.",
                        latency_ms=12.5, meta={"cost_usd": 0.001, "tokens": 20}), c1),
        (TargetResponse(ranked_ids=("d7", "d8"), text="I do not know.", latency_ms=30.0,
                        meta={"cost_usd": 0.002, "tokens": 35}), c2),
        (TargetResponse(ranked_ids=("d1", "d9"), text="d1 and d9", latency_ms=7.0), c3),
    ]


def sample_rows(pairs: Sequence[Pair] | None = None) -> list[CaseResult]:
    """``CaseResult`` rows built from ``pairs`` (default :func:`sample_pairs`)."""
    from evalkit.data.rows import CaseResult

    return [
        CaseResult(case_id=case.id, response=resp, metrics={"score": float(i) / 2},
                   latency_ms=resp.latency_ms)
        for i, (resp, case) in enumerate(pairs or sample_pairs())
    ]


# ---------------------------------------------------------------- conformance
@dataclass(frozen=True)
class ConformanceCheck:
    """One check of the conformance suite: call it; it raises ``AssertionError`` on failure.

    ``id`` reads ``"<kind>:<name>:<property>"`` (``"metric:ndcg@10:finite"``).
    """

    id: str
    fn: Callable[[], None]

    def __call__(self) -> None:
        self.fn()

    def __str__(self) -> str:
        return self.id


def _finite(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise AssertionError(f"{what} returned {value!r} ({type(value).__name__}); "
                             "expected a float")
    v = float(value)
    if not math.isfinite(v):
        raise AssertionError(f"{what} returned {v}; expected a finite float")
    return v


def _polarity_check(kind: str, spec: MetricSpec | MetricFamily | AggregateSpec) -> None:
    if not isinstance(spec.higher_is_better, bool):
        raise AssertionError(
            f"{kind} {spec.name!r} declares no polarity (higher_is_better="
            f"{spec.higher_is_better!r}); set it to True or False"
        )


def _metric_checks(spec: MetricSpec, pairs: Sequence[Pair], kind: str) -> list[ConformanceCheck]:
    label = f"{kind} {spec.name!r}"

    def finite() -> None:
        for resp, case in pairs:
            _finite(spec.fn(resp, case), f"{label} on case {case.id!r}")

    def deterministic() -> None:
        for resp, case in pairs:
            a, b = spec.fn(resp, case), spec.fn(resp, case)
            if not (a == b or (a != a and b != b)):
                raise AssertionError(f"{label} on case {case.id!r} gave {a!r} then {b!r}")

    def empty_response() -> None:
        for empty in (TargetResponse(), TargetResponse(ranked_ids=(), text="")):
            for _, case in pairs:
                try:
                    value = spec.fn(empty, case)
                except Exception as exc:
                    raise AssertionError(
                        f"{label} raised {type(exc).__name__}: {exc} on an empty response "
                        f"(case {case.id!r}); score it instead (usually 0)"
                    ) from exc
                _finite(value, f"{label} on an empty response (case {case.id!r})")

    checks = [
        ConformanceCheck(f"metric:{spec.name}:polarity", lambda: _polarity_check(kind, spec)),
        ConformanceCheck(f"metric:{spec.name}:finite", finite),
        ConformanceCheck(f"metric:{spec.name}:deterministic", deterministic),
        ConformanceCheck(f"metric:{spec.name}:empty-response", empty_response),
    ]
    if spec.prepare is not None and spec.batch is not None:
        prepare, batch = spec.prepare, spec.batch

        def batch_agrees() -> None:
            responses = [r for r, _ in pairs]
            cases = [c for _, c in pairs]
            values = list(batch(prepare(responses, cases)))
            expected = [spec.fn(r, c) for r, c in pairs]
            if len(values) != len(expected) or any(
                not math.isclose(float(v), float(e), rel_tol=1e-9, abs_tol=1e-12)
                for v, e in zip(values, expected, strict=False)
            ):
                raise AssertionError(f"{label}: batch gives {values}, fn gives {expected}")

        checks.append(ConformanceCheck(f"metric:{spec.name}:batch-agrees", batch_agrees))
    return checks


def _family_checks(
    family: MetricFamily, pairs: Sequence[Pair], ks: Sequence[int]
) -> list[ConformanceCheck]:
    checks = [ConformanceCheck(f"family:{family.name}@k:polarity",
                               lambda: _polarity_check("metric family", family))]
    for k in ks:
        def named(k: int = k) -> None:
            spec = family.factory(k)
            expected = f"{family.name}@{k}"
            if not isinstance(spec, MetricSpec) or spec.name != expected:
                raise AssertionError(
                    f"family {family.name!r}: factory({k}) returned "
                    f"{getattr(spec, 'name', spec)!r}; expected a MetricSpec named {expected!r}"
                )
            if spec.higher_is_better != family.higher_is_better:
                raise AssertionError(f"{expected}: polarity differs from its family's")

        checks.append(ConformanceCheck(f"family:{family.name}@{k}:name", named))
        try:
            spec = family.factory(k)
        except Exception as exc:
            def broken(exc: Exception = exc, k: int = k) -> None:
                raise AssertionError(f"family {family.name!r}: factory({k}) raised {exc!r}")

            checks.append(ConformanceCheck(f"family:{family.name}@{k}:factory", broken))
            continue
        if isinstance(spec, MetricSpec):
            checks += [c for c in _metric_checks(spec, pairs, "metric")
                       if not c.id.endswith(":polarity")]
    return checks


def _aggregate_checks(spec: AggregateSpec, rows: Sequence[Any]) -> list[ConformanceCheck]:
    label = f"aggregate {spec.name!r}"

    def empty_run() -> None:
        try:
            value = spec.fn([])
        except Exception:
            return
        raise AssertionError(f"{label} returned {value!r} on an empty run; it must raise")

    def finite() -> None:
        _finite(spec.fn(rows), label)

    def deterministic() -> None:
        a, b = spec.fn(rows), spec.fn(rows)
        if a != b:
            raise AssertionError(f"{label} gave {a!r} then {b!r} on the same rows")

    return [
        ConformanceCheck(f"aggregate:{spec.name}:polarity",
                         lambda: _polarity_check("aggregate", spec)),
        ConformanceCheck(f"aggregate:{spec.name}:empty-run-raises", empty_run),
        ConformanceCheck(f"aggregate:{spec.name}:finite", finite),
        ConformanceCheck(f"aggregate:{spec.name}:deterministic", deterministic),
    ]


def _loader_checks(spec: LoaderSpec) -> list[ConformanceCheck]:
    def empty_file(suffix: str) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"empty{suffix}"
            path.write_bytes(b"")
            try:
                result = spec.fn(path)
            except Exception as exc:
                if path.name not in str(exc):
                    raise AssertionError(
                        f"{spec.kind} loader {spec.name!r} raised on an empty file, but its "
                        f"message does not name the file: {exc}"
                    ) from exc
                return
        raise AssertionError(
            f"{spec.kind} loader {spec.name!r} returned {type(result).__name__} for an empty "
            f"{suffix} file; it must raise, naming the file"
        )

    suffixes = list(dict.fromkeys(spec.suffixes)) or [".txt"]
    return [
        ConformanceCheck(f"loader:{spec.kind}:{spec.name}:empty-file{s}",
                         lambda s=s: empty_file(s))  # type: ignore[misc]
        for s in suffixes
    ]


def _callable_check(kind: str, name: str, fn: object) -> ConformanceCheck:
    def check() -> None:
        if not callable(fn):
            raise AssertionError(f"{kind} {name!r}: {fn!r} is not callable")

    return ConformanceCheck(f"{kind}:{name}:callable", check)


def conformance_checks(
    plugin: object,
    *,
    pairs: Sequence[Pair] | None = None,
    rows: Sequence[Any] | None = None,
    ks: Sequence[int] = (1, 3, 10),
    exclude: Collection[str] = (),
) -> list[ConformanceCheck]:
    """The conformance checks for every record ``plugin``'s hooks return.

    Metrics (and each ``name@k`` of a family, for ``k`` in ``ks``): a declared polarity,
    a finite float on every sample pair, the same value twice, a finite float on an empty
    response, and agreement of ``batch`` with ``fn`` when given. Aggregates: a declared
    polarity, an error on an empty run, a finite and repeatable value on sample rows.
    Loaders: an error naming the file on an empty file of each suffix. Targets and
    reporters: callables. The first check, ``plugin:loads``, registers the plugin in a
    fresh registry (its hooks run cleanly and it provides no name twice).

    Args:
        plugin: a module or object with ``@hookimpl`` functions.
        pairs: ``(response, case)`` samples (default :func:`sample_pairs`); pass your own
            when your metrics need fields the defaults lack.
        rows: rows for aggregates (default :func:`sample_rows` of ``pairs``).
        ks: the cut-offs at which families are instantiated.
        exclude: names whose value checks are skipped (their polarity is still checked),
            for metrics that need a service to compute.

    Returns:
        A list of :class:`ConformanceCheck`; never raises for a broken plugin (the
        ``plugin:loads`` check fails instead).
    """
    def loads() -> None:
        registry = Registry()
        provider = Provider(module=_module_of(plugin))
        try:
            info = register_plugin_object(registry, plugin, provider, from_plugin=False)
        except Exception as exc:
            raise AssertionError(f"{provider}: {exc}") from exc
        if info.status != "loaded":
            raise AssertionError(f"{provider}: {info.error}")

    checks = [ConformanceCheck("plugin:loads", loads)]
    try:
        collected = collect_records(plugin)
    except PluginError:
        return checks
    samples = list(pairs) if pairs is not None else sample_pairs()
    run_rows = list(rows) if rows is not None else None
    records: list[AnySpec] = [r for recs in collected.values() for r in recs]
    for rec in records:
        skip = rec.name in exclude
        if isinstance(rec, MetricFamily):
            if skip:
                checks.append(ConformanceCheck(
                    f"family:{rec.name}@k:polarity",
                    lambda rec=rec: _polarity_check("metric family", rec)))  # type: ignore[misc]
            else:
                checks += _family_checks(rec, samples, ks)
        elif isinstance(rec, MetricSpec):
            found = _metric_checks(rec, samples, "count" if rec.kind == "count" else "metric")
            checks += found[:1] if skip else found
        elif isinstance(rec, AggregateSpec):
            if run_rows is None:
                run_rows = sample_rows(samples)
            found = _aggregate_checks(rec, run_rows)
            checks += found[:1] if skip else found
        elif isinstance(rec, LoaderSpec):
            checks += [] if skip else _loader_checks(rec)
        elif isinstance(rec, TargetSpec):
            checks.append(_callable_check("target", rec.name, rec.factory))
        elif isinstance(rec, ReporterSpec):
            checks.append(_callable_check("reporter", rec.name, rec.render))
    return checks


def check_conformance(plugin: object, **options: Any) -> list[str]:
    """Run every conformance check; return one message per failure (empty: conforming).

    ``options`` are those of :func:`conformance_checks`.
    """
    failures: list[str] = []
    for check in conformance_checks(plugin, **options):
        try:
            check()
        except AssertionError as exc:
            failures.append(f"{check.id}: {exc}")
        except Exception as exc:
            failures.append(f"{check.id}: raised {type(exc).__name__}: {exc}")
    return failures


def assert_conforms(plugin: object, **options: Any) -> None:
    """Raise ``AssertionError`` listing every failed conformance check of ``plugin``."""
    failures = check_conformance(plugin, **options)
    if failures:
        raise AssertionError(
            f"{len(failures)} conformance check(s) failed:\n" + "\n".join(failures)
        )
