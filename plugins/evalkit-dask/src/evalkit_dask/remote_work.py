"""What a remote worker does with a work item, and how the driver finishes its row.

The worker calls the target and scores the item with the metrics it can import
(:func:`worker_metrics` resolves them by name in the worker's own registry, and keeps
only those with the driver's provider: the same plugin distribution and version). The driver
scores the rest from the returned response (:func:`finish_row`): the metrics a worker
cannot import, and those that must stay on the driver (:func:`split_metrics`: an LLM
judge, whose grade cache and spending limits are per process). A row whose metrics are
not all scored on the worker comes back with its whole raw body, which the driver bounds
after scoring (``max_raw_bytes``), so a row is the one the local pool would write.

Everything here is plain functions of picklable values, so a task can ship them.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from evalkit.core.specs import MetricSpec
from evalkit.data.rows import DEFAULT_MAX_RAW_BYTES, CaseResult, bounded_response
from evalkit.execute.executor import Job, RowThenStop, details, run_job
from evalkit.execute.samples import scoring_sample
from evalkit.execute.scoring import score_case_until_stop
from evalkit.io.redaction import mask

if TYPE_CHECKING:
    from evalkit.data.targets import Target


def on_driver_only(spec: MetricSpec) -> bool:
    """A metric that publishes ``details`` (an LLM judge): its cache and budget are per
    process, so it is scored on the driver unless the executor is told otherwise."""
    return callable(getattr(spec.fn, "details", None))


def _provider(name: str) -> str | None:
    """Who provides metric ``name`` here (``"evalkit-retrieval 0.3.0 (module)"``), or
    ``None`` for a metric of the client's own code (or none at all)."""
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    try:
        provider = default_registry().provider_of(name)
    except (RegistryError, ValueError):
        return None
    return None if provider.is_client else str(provider)


def split_metrics(specs: Sequence[MetricSpec], *, judge_on_workers: bool = False
                  ) -> tuple[dict[str, str], list[MetricSpec]]:
    """``({name: provider} the workers may score, [specs the driver scores])``: a metric
    from an installed plugin goes to the workers (which find it through the same entry
    point); one registered by the client's code, and a judge, stay here."""
    remote: dict[str, str] = {}
    driver: list[MetricSpec] = []
    for spec in specs:
        provider = _provider(spec.name)
        if provider is not None and (judge_on_workers or not on_driver_only(spec)):
            remote[spec.name] = provider
        else:
            driver.append(spec)
    return remote, driver


def worker_metrics(wanted: Mapping[str, str]) -> list[MetricSpec]:
    """The specs of ``wanted`` that resolve in this process to the same provider (the
    same distribution and version); the others are left to the driver."""
    from evalkit.core.registry import RegistryError
    from evalkit.execute.scoring import resolve_metrics

    out: list[MetricSpec] = []
    for name, provider in wanted.items():
        try:
            (spec,) = resolve_metrics([name])
        except (RegistryError, ValueError):
            continue
        if _provider(name) == provider:
            out.append(spec)
    return out


def build_target(recipe: Any) -> Target:
    """A target from a :class:`~evalkit.execute.executor_api.TargetRecipe` (``factory``
    resolved as the eval config does: an import string or a registered target name), or
    from cloudpickle bytes."""
    if isinstance(recipe, bytes):
        import cloudpickle

        target: Target = cloudpickle.loads(recipe)
        return target
    from pathlib import Path

    from evalkit.execute.evalconfig import EvalConfig

    folder = Path(recipe.folder) if recipe.folder else Path.cwd()
    if recipe.folder and recipe.folder not in sys.path:
        sys.path.insert(0, recipe.folder)
    cfg = EvalConfig(path=folder / "evalkit.yaml", source="executor target",
                     goldens=folder, goldens_loader=None, target_factory=recipe.factory,
                     target_kwargs=dict(recipe.kwargs), metrics=(), aggregates=(),
                     output=folder)
    built: Target = cfg.build_target()
    return built


class _WholeRaw:
    """``target`` with ``max_raw_bytes = None``: :func:`~evalkit.execute.executor.run_job`
    then keeps the raw body whole, for the driver to score and bound."""

    max_raw_bytes = None

    def __init__(self, target: Target) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)

    def invoke(self, case: Any) -> Any:
        return self._target.invoke(case)


def run_item(target: Target, target_name: str, job: Job, specs: Sequence[MetricSpec],
             complete: bool) -> CaseResult:
    """The row of one item on a worker: the local pool's
    :func:`~evalkit.execute.executor.run_job` (called, or its stored response reused, and
    scored with ``specs``). ``complete``: ``specs`` are all the run's metrics, so the raw
    body is bounded here; otherwise it is left whole for :func:`finish_row`."""
    return run_job(target if complete else _WholeRaw(target), target_name, job, specs)


def finish_row(row: CaseResult, job: Job, specs: Sequence[MetricSpec],
               max_raw_bytes: int = DEFAULT_MAX_RAW_BYTES) -> CaseResult:
    """``row`` with every metric of ``specs`` the worker did not score scored here, the
    metrics in the run's order, and the raw body bounded. A metric that stops the run (a
    spending limit, a :class:`~evalkit.execute.scoring.RunAborted`) raises
    :class:`~evalkit.execute.executor.RowThenStop` holding the row, as the local pool
    does."""
    if row.response is None:
        return row
    missing = [s for s in specs if s.name not in row.metrics and s.name not in row.metric_errors]
    if not missing:  # the worker scored everything, and bounded the raw body itself
        return row
    with scoring_sample(getattr(job, "sample", None)):  # as the local pool scores it
        got, failed, stop = score_case_until_stop(row.response, job.case, missing)
    values = {**row.metrics, **got}
    errors = {**row.metric_errors, **{m: mask(e) for m, e in failed.items()}}
    more = {**row.details, **details(job.case, missing)}
    order = [s.name for s in specs]
    done = replace(
        row, response=bounded_response(row.response, max_raw_bytes),
        metrics={n: values[n] for n in order if n in values},
        metric_errors={n: errors[n] for n in order if n in errors},
        details={n: more[n] for n in order if n in more},
    )
    if stop is not None:  # the row is written, then the run stops (as the local pool)
        raise RowThenStop(done, stop)
    return done
