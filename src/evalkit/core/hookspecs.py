"""The hook specifications every evalkit plugin implements.

A plugin is a module or object with functions decorated by :data:`hookimpl` whose names
are among the hookspecs below. Each hook takes no arguments and returns a list of records
from :mod:`evalkit.core.specs` (any iterable of them is read: a tuple, a generator).
Returning a bare record, a record of the wrong type, or a hook name not listed here, is
refused when the plugin is loaded (``check_pending``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from evalkit.core.specs import (
        AggregateSpec,
        CommandSpec,
        ConfigSectionSpec,
        ExecutorSpec,
        LoaderSpec,
        MeasureSyntaxSpec,
        MetricFamily,
        MetricSpec,
        ReporterSpec,
        RunEvaluatorSpec,
        RunFormatSpec,
        TargetSpec,
    )

PROJECT = "evalkit"
hookspec = pluggy.HookspecMarker(PROJECT)
#: The decorator of a plugin's hook implementations (``@hookimpl``).
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def evalkit_register_metrics() -> list[MetricSpec | MetricFamily]:  # type: ignore[empty-body]
    """Return the per-case metrics this plugin provides.

    Returns:
        A list of :class:`~evalkit.core.specs.MetricSpec` (one name, ``fn(response, case) ->
        float``) and :class:`~evalkit.core.specs.MetricFamily` (a parametric ``name@k`` family).
        Every record declares ``higher_is_better``.

    Errors:
        A name that another plugin also provides is blocked: discovery continues, and
        using the name raises :class:`~evalkit.core.registry.RegistryError` naming both
        providers. Metrics and aggregates share one namespace.
    """


@hookspec
def evalkit_register_aggregates() -> list[AggregateSpec]:  # type: ignore[empty-body]
    """Return the whole-run aggregates this plugin provides.

    Returns:
        A list of :class:`~evalkit.core.specs.AggregateSpec`: ``fn(rows) -> float`` over the
        run's ``CaseResult`` rows, with a declared ``higher_is_better``. In a run with
        repeated samples (``epochs`` K >= 2) the rows are every sample row, K x n of
        them (latency and cost are per call); group them by ``row.query_id`` to count
        cases.

    Errors:
        As for metrics: a name shared with another provider (metric or aggregate) is
        blocked and reported.
    """


@hookspec
def evalkit_register_loaders() -> list[LoaderSpec]:  # type: ignore[empty-body]
    """Return the file loaders this plugin provides.

    Returns:
        A list of :class:`~evalkit.core.specs.LoaderSpec`, each with a ``kind`` among
        goldens, run, qrels, queries, corpus. Each kind is its own namespace.
        ``fn(path, **options)`` must raise with the file and line on malformed input
        and on an empty file.
    """


@hookspec
def evalkit_register_targets() -> list[TargetSpec]:  # type: ignore[empty-body]
    """Return the target factories this plugin provides.

    Returns:
        A list of :class:`~evalkit.core.specs.TargetSpec`: ``factory(**kwargs)`` builds an
        object with ``name`` and ``invoke(case) -> TargetResponse``.

    Errors:
        A target name another plugin also provides is blocked and reported by
        ``evalkit plugins list``; ``invoke`` must raise ``TargetError`` (naming the
        target and the case) on any failure, never return an empty response.
    """


@hookspec
def evalkit_register_reporters() -> list[ReporterSpec]:  # type: ignore[empty-body]
    """Return the reporters this plugin provides.

    Returns:
        A list of :class:`~evalkit.core.specs.ReporterSpec`: ``render(report) -> str`` turns a
        gate report or a comparison into text (console, JSON, Markdown, JUnit XML, LaTeX, ...).

    Errors:
        A reporter name another plugin also provides is blocked and reported;
        ``render`` should raise ``ValueError`` for a report it cannot render rather
        than write partial output.
    """


@hookspec
def evalkit_register_executors() -> list[ExecutorSpec]:  # type: ignore[empty-body]
    """Return the executors this plugin provides: where a run's target calls are made.

    Returns:
        A list of :class:`~evalkit.core.specs.ExecutorSpec`: ``factory(**options)`` builds
        an object whose ``open(work)`` returns the running executor of one run (the
        protocol, and the driver-side loop a remote executor plugs into:
        :mod:`evalkit.execute.executor_api`). The kernel provides ``local`` (threads).

    Errors:
        An executor name another plugin also provides is blocked and reported by
        ``evalkit plugins list``; choosing it raises ``RegistryError`` naming both. The
        kernel's ``local`` cannot be replaced. ``open`` must refuse, before any call, a
        target or metric it cannot send (``evalkit.execute.executor_api.UnsendableError``
        naming it).
    """


@hookspec
def evalkit_register_measure_syntaxes() -> list[MeasureSyntaxSpec]:  # type: ignore[empty-body]
    """Return the ways of writing measures on the command line this plugin reads.

    Returns:
        A list of :class:`~evalkit.core.specs.MeasureSyntaxSpec`: ``expand(pieces)`` turns
        the ``-m`` values (split at commas) into a
        :class:`~evalkit.core.metric_names.MeasureRequest`, or returns ``None`` when no
        piece is written in its syntax (``evalkit-retrieval`` reads trec_eval's
        ``P.5,10``, ``ndcg_cut.10``, ``official``).

    Errors:
        A syntax name another plugin also provides is blocked and reported by
        ``evalkit plugins list``; values that two syntaxes both claim are refused, naming
        both; ``expand`` raises ``ValueError`` naming a piece it refuses.
    """


@hookspec
def evalkit_register_run_formats() -> list[RunFormatSpec]:  # type: ignore[empty-body]
    """Return the outputs of ``evalkit eval --format NAME`` this plugin provides.

    Returns:
        A list of :class:`~evalkit.core.specs.RunFormatSpec`: ``render(scored) -> str``
        prints a scored run (:class:`~evalkit.report.run_formats.ScoredRun`) for
        ``--format NAME`` (``evalkit-retrieval``'s ``trec`` prints trec_eval's layout).

    Errors:
        ``table`` and ``json`` are the command's own and cannot be taken; a format name
        another plugin also provides is blocked and reported; ``render`` raises
        ``ValueError`` (one line) for a run it cannot print.
    """


@hookspec
def evalkit_register_run_evaluators() -> list[RunEvaluatorSpec]:  # type: ignore[empty-body]
    """Return the engine that scores ranked runs against qrels, when this plugin has one.

    Returns:
        A list of :class:`~evalkit.core.specs.RunEvaluatorSpec`: ``evaluate(run, qrels,
        metrics, ...)`` scores a run (a file, a mapping, a DataFrame) against qrels into a
        :class:`~evalkit.data.results.RunResult`, and ``load_qrels(qrels)`` reads qrels.
        :func:`evalkit.evaluate_run`, :func:`evalkit.compare` and ``evalkit compare`` and
        ``power`` on run files reach it through the registry (``evalkit-retrieval``
        provides ``trec``).

    Errors:
        Two evaluators are a conflict: scoring a run then raises ``RegistryError``
        naming both; with none loaded, scoring a run says which plugin provides one and
        how to enable or install it.
    """


@hookspec
def evalkit_register_commands() -> list[CommandSpec]:  # type: ignore[empty-body]
    """Return the ``evalkit`` subcommands this plugin adds.

    Returns:
        A list of :class:`~evalkit.core.specs.CommandSpec`: the command's name, its
        one-line help and ``load``, the import string of what runs it. ``evalkit --help``
        lists the commands with their help without importing ``load`` (the list is kept
        between runs: docs/plugins.md); ``load`` is imported when the command runs.
        ``evalkit plugins list`` shows them.

    Errors:
        A name of the kernel's commands is the kernel's: the plugin's command is
        refused, and ``evalkit plugins list`` shows the conflict naming both providers.
        A name two plugins give their commands is blocked: neither runs, and the message
        (of ``evalkit NAME`` and ``evalkit plugins list``) names both. A disabled
        plugin's commands do not exist.
    """


@hookspec
def evalkit_register_config_sections() -> list[ConfigSectionSpec]:  # type: ignore[empty-body]
    """Return the sections of the eval config this plugin declares and validates.

    Returns:
        A list of :class:`~evalkit.core.specs.ConfigSectionSpec`: a key of
        ``evalkit.yaml`` (a table ``[tool.evalkit.NAME]`` of ``pyproject.toml``) and the
        pydantic model of its value. Reading the eval config validates the section with
        the model (an error names the file, line and key); ``evalkit run`` then hands the
        validated section to ``apply`` before the run; ``evalkit schema config``
        includes the model's JSON Schema.

    Errors:
        A key no loaded plugin declares is still refused, with a did-you-mean. A name
        of the eval config's own keys fails the plugin; a name another plugin also
        declares is blocked, and a config that uses it is refused naming both.
    """
