"""The conformance suite: one check per record a plugin registers, each a callable that
raises ``AssertionError`` on failure.

Metrics must return finite numbers, the same number twice, and survive an empty response;
each is tried on the sample cases that have every field its record needs
(``MetricSpec.needs``: ``"relevance"``, ``"answers"``, ``"context:KEY"``), since every
scoring path refuses the others before scoring; a metric that needs a field no sample case
has fails ``needs-met``. Families must build
members at several cut-offs; aggregates must refuse an empty run (or return a number) and
be deterministic; loaders must refuse an empty file clearly; targets must be callable;
reporters must render sample gate and comparison reports as text
(:mod:`.extension_checks`); executors must run a few items and hand back every row once
(:mod:`.executors`);
a command's ``load`` must import, and a config section's model must be a pydantic model
with a JSON Schema (:mod:`.extension_checks`).
:func:`conformance_checks` lists them,
:func:`check_conformance` runs them and :func:`assert_conforms` fails on the first problem.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.core.metric_lookup import member_problem
from evalkit.core.registry import Provider, Registry
from evalkit.core.specs import (
    AggregateSpec,
    AnySpec,
    CommandSpec,
    ConfigSectionSpec,
    ExecutorSpec,
    LoaderSpec,
    MetricFamily,
    MetricSpec,
    ReporterSpec,
    TargetSpec,
)
from evalkit.data.targets import TargetResponse
from evalkit.execute.case_needs import lacks
from evalkit.plugins.failures import PLUGIN_FAILURES
from evalkit.plugins.hooks import PluginError, collect_records
from evalkit.plugins.loading import register_plugin_object
from evalkit.stats.declared_values import declared_range, value_problem
from evalkit.stats.numeric import finite_number, value_text

if TYPE_CHECKING:
    pass

from evalkit.testing.executors import executor_runs
from evalkit.testing.extension_checks import (
    command_loads,
    reporter_renders,
    section_model_works,
)
from evalkit.testing.registry import load_beside_installed, module_of
from evalkit.testing.samples import Pair, sample_pairs, sample_rows


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
    # the rule a run applies to every returned value (evalkit.execute.scoring,
    # evalkit.execute.run_header): a real number, never a str or a bool, and finite
    try:
        return finite_number(value, what)
    except ValueError as exc:
        raise AssertionError(str(exc)) from None


def _polarity_check(kind: str, spec: MetricSpec | MetricFamily | AggregateSpec) -> None:
    if not isinstance(spec.higher_is_better, bool):
        raise AssertionError(
            f"{kind} {spec.name!r} declares no polarity (higher_is_better="
            f"{spec.higher_is_better!r}); set it to True or False"
        )


def _metric_checks(spec: MetricSpec, pairs: Sequence[Pair], kind: str) -> list[ConformanceCheck]:
    label = f"{kind} {spec.name!r}"
    # a case without a field the metric needs is refused before scoring: never tried
    every = pairs
    pairs = [(resp, case) for resp, case in pairs
             if not any(lacks(case, need) for need in spec.needs)]

    def needs_met() -> None:
        if every and not pairs:
            raise AssertionError(
                f"{label} needs {', '.join(spec.needs)}, which no sample case has, so "
                "nothing could be checked; pass pairs= with cases that have them")

    def finite() -> None:
        for resp, case in pairs:
            _finite(spec.fn(resp, case), f"{label} on case {case.id!r}")

    def declared_values() -> None:
        for resp, case in pairs:
            value = _finite(spec.fn(resp, case), f"{label} on case {case.id!r}")
            problem = value_problem(spec, value)
            if problem is not None:
                raise AssertionError(f"{label} returned {value!r} on case {case.id!r}: "
                                     f"{problem}; fix the metric, or its declaration")

    def deterministic() -> None:
        for resp, case in pairs:
            a, b = spec.fn(resp, case), spec.fn(resp, case)
            if not (a == b or (a != a and b != b)):
                raise AssertionError(f"{label} on case {case.id!r} gave {value_text(a)} "
                                     f"then {value_text(b)}")

    def empty_response() -> None:
        for empty in (TargetResponse(), TargetResponse(ranked_ids=(), text="")):
            for _, case in pairs:
                try:
                    value = spec.fn(empty, case)
                except PLUGIN_FAILURES as exc:
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
    if declared_range(spec) is not None:
        checks.append(ConformanceCheck(f"metric:{spec.name}:declared-values", declared_values))
    if spec.needs:
        checks.append(ConformanceCheck(f"metric:{spec.name}:needs-met", needs_met))
    if spec.prepare is not None and spec.batch is not None:
        prepare, batch = spec.prepare, spec.batch

        def batch_agrees() -> None:
            responses = [r for r, _ in pairs]
            cases = [c for _, c in pairs]
            values = list(batch(prepare(responses, cases)))
            expected = [spec.fn(r, c) for r, c in pairs]
            if len(values) != len(expected) or any(
                not math.isclose(_finite(v, f"{label}'s batch"), _finite(e, label),
                                 rel_tol=1e-9, abs_tol=1e-12)
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
            problem = member_problem(family, k, family.factory(k))
            if problem is not None:
                raise AssertionError(problem)

        checks.append(ConformanceCheck(f"family:{family.name}@{k}:name", named))
        try:
            spec = family.factory(k)
        except PLUGIN_FAILURES as exc:
            def broken(exc: BaseException = exc, k: int = k) -> None:
                raise AssertionError(f"family {family.name!r}: factory({k}) raised {exc!r}")

            checks.append(ConformanceCheck(f"family:{family.name}@{k}:factory", broken))
            continue
        if isinstance(spec, MetricSpec):
            checks += [c for c in _metric_checks(spec, pairs, "metric")
                       if not c.id.endswith(":polarity")]
    return checks


def _aggregate_checks(spec: AggregateSpec, rows: Sequence[Any]) -> list[ConformanceCheck]:
    label = f"aggregate {spec.name!r}"
    polarity = ConformanceCheck(f"aggregate:{spec.name}:polarity",
                                lambda: _polarity_check("aggregate", spec))
    if spec.of_metric is not None:  # an aggregate of a metric: checked as its factory
        of_metric = spec.of_metric

        def bare_name_raises() -> None:
            try:
                value = spec.fn(rows)
            except PLUGIN_FAILURES:
                return
            raise AssertionError(f"{label} without a metric returned {value_text(value)}; it must "
                                 f"raise, naming the {spec.name}(METRIC) spelling")

        def makes_an_aggregate() -> None:
            made = of_metric("m")
            if not callable(made):
                raise AssertionError(f"{label}: of_metric('m') returned {made!r}, not a "
                                     "callable of the run's rows")

        return [polarity,
                ConformanceCheck(f"aggregate:{spec.name}:bare-name-raises", bare_name_raises),
                ConformanceCheck(f"aggregate:{spec.name}:of-metric", makes_an_aggregate)]

    def empty_run() -> None:
        try:
            value = spec.fn([])
        except PLUGIN_FAILURES:
            return
        raise AssertionError(f"{label} returned {value_text(value)} on an empty run; it must raise")

    def finite() -> None:
        _finite(spec.fn(rows), label)

    def deterministic() -> None:
        a, b = spec.fn(rows), spec.fn(rows)
        if a != b:
            raise AssertionError(f"{label} gave {value_text(a)} then {value_text(b)} on "
                                 "the same rows")

    return [
        polarity,
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
            except PLUGIN_FAILURES as exc:
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
    a finite float on every sample pair, inside its declared ``bounds`` and 0 or 1 when
    it declares ``value_type="binary"`` (``declared-values``, for a metric that declares
    either: the rule a run applies,
    :func:`evalkit.stats.declared_values.value_problem`), the same value twice, a finite
    float on an empty response, and agreement of ``batch`` with ``fn`` when given; the
    pairs are those whose case has every field the record ``needs`` (``needs-met`` fails
    when none has).
    Aggregates: a declared polarity, an error on an empty run, a finite and repeatable
    value on sample rows. Loaders: an error naming the file on an empty file of each
    suffix. Targets:
    callables. Reporters: ``reporter:<name>:renders``, text for sample gate and
    comparison reports (a recording reporter: a callable ``record``). Executors: a
    callable factory, and ``executor:<name>:runs``
    (:func:`evalkit.testing.executors.executor_runs`: every row of a small run once, equal
    to the local pool's; skipped by ``exclude``, for executors that need a cluster).
    Commands: ``command:<name>:loads``, the ``load`` string imports what a command runs.
    Config sections: ``config-section:<name>:model``, a pydantic model with a JSON Schema.
    The first check, ``plugin:loads``, registers the plugin in a fresh registry beside
    the kernel's built-ins and the plugins ``evalkit plugins list --check`` loads
    (:func:`evalkit.testing.registry.load_beside_installed`): its hooks run cleanly and
    it provides no name that another provides or resolves, with the message a
    conflict has there.

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
        provider = Provider(module=module_of(plugin))
        try:
            load_beside_installed(registry, plugin)
            info = register_plugin_object(registry, plugin, provider, from_plugin=False)
        except PLUGIN_FAILURES as exc:
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
            checks.append(ConformanceCheck(
                f"reporter:{rec.name}:renders",
                lambda rec=rec: reporter_renders(rec)))  # type: ignore[misc]
        elif isinstance(rec, CommandSpec):
            checks.append(ConformanceCheck(f"command:{rec.name}:loads",
                                           lambda rec=rec: command_loads(rec)))  # type: ignore[misc]
        elif isinstance(rec, ConfigSectionSpec):
            checks.append(ConformanceCheck(
                f"config-section:{rec.name}:model",
                lambda rec=rec: section_model_works(rec)))  # type: ignore[misc]
        elif isinstance(rec, ExecutorSpec):
            checks.append(_callable_check("executor", rec.name, rec.factory))
            if not skip:
                checks.append(ConformanceCheck(
                    f"executor:{rec.name}:runs",
                    lambda rec=rec: executor_runs(rec)))  # type: ignore[misc]
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
        except PLUGIN_FAILURES as exc:
            failures.append(f"{check.id}: raised {type(exc).__name__}: {exc}")
    return failures


def assert_conforms(plugin: object, **options: Any) -> None:
    """Raise ``AssertionError`` listing every failed conformance check of ``plugin``."""
    failures = check_conformance(plugin, **options)
    if failures:
        raise AssertionError(
            f"{len(failures)} conformance check(s) failed:\n" + "\n".join(failures)
        )
