"""The header of a target run: what it records when the run starts and when it ends,
the one-line status, and the checks that decide whether a run may be resumed.

Fields (docs/runner.md): ``kind: "target"``, ``target``, ``goldens`` (path, sha256,
``n_cases`` and one digest per case), ``config``, ``metrics`` and
``aggregate_definitions`` (provenance), ``status`` (``running``, ``complete``,
``incomplete``), ``errors``/``error_ids`` (failed calls), ``metric_errors``/
``metric_error_ids`` (failed metrics, by metric), ``missing_cases``/``missing_ids``
(cases without a row, after rescoring a partial run), ``aggregates``,
``aggregate_errors``, ``created``, ``finished``, ``resumed`` and ``resume``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalkit.core.specs import AggregateSpec, MetricSpec
from evalkit.data.artifact import READABLE_VERSIONS, SCHEMA_VERSION
from evalkit.data.goldens import GoldenSet
from evalkit.data.provenance import metric_provenance, plugin_versions
from evalkit.data.results import ArtifactError
from evalkit.data.rows import CaseResult
from evalkit.data.run_origin import header_changes
from evalkit.data.targets import Target
from evalkit.plugins.failures import PLUGIN_FAILURES
from evalkit.stats.numeric import finite_number

#: Case ids listed in a header (``error_ids``, ``metric_error_ids``, ``missing_ids``).
HEADER_IDS = 50


class ResumeError(ValueError):
    """A resume refused because the run's config or golden set changed (says what)."""


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def describe_target(target: Any) -> dict[str, Any]:
    """What identifies a target in a header: its ``describe()`` if it has one, else its
    type, name and (for a CallableTarget) function. Never header values or secrets."""
    describe = getattr(target, "describe", None)
    if callable(describe):
        described = describe()
        if isinstance(described, Mapping):
            return json.loads(json.dumps(dict(described), default=str))  # type: ignore[no-any-return]
    out: dict[str, Any] = {
        "type": f"{type(target).__module__}.{type(target).__qualname__}",
        "name": str(getattr(target, "name", "")),
    }
    fn = getattr(target, "fn", None)
    if fn is not None:
        out["fn"] = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', '?')}"
    return out


def goldens_record(gset: GoldenSet) -> dict[str, Any]:
    from evalkit.plugins.default import scheme_loader

    path = gset.path
    if path is not None and scheme_loader("goldens", path) is None:
        path = str(Path(path).resolve())  # a file; irds:ID (LoaderSpec.scheme) as given
    return {
        "path": path,
        **({"loader": gset.loader} if gset.loader else {}),  # which loader read it
        "sha256": gset.digest(),
        "n_cases": len(gset),
        "case_digests": gset.case_digests(),
        **recorded_case_labels(gset),
    }


def recorded_case_labels(gset: GoldenSet) -> dict[str, Any]:
    """What a run header records of its cases' slices, so ``--tags``/``--clusters`` files
    can be checked against the run without the golden file: ``case_tags`` (``{case id:
    [tag, ...]}``, the cases with a tag) when any case carries a tag, ``case_clusters``
    (``{case id: cluster}``) when any case names a cluster; ``{}`` when neither (the
    header of a run without tags or clusters is unchanged)."""
    out: dict[str, Any] = {}
    tags = {str(c.id): list(c.tags) for c in gset if c.tags}
    if tags:
        out["case_tags"] = tags
    clusters = {str(c.id): c.cluster for c in gset if c.cluster is not None}
    if clusters:
        out["case_clusters"] = clusters
    return out


def new_header(
    name: str, target: Target, gset: GoldenSet, specs: Sequence[MetricSpec],
    agg_specs: Sequence[AggregateSpec], extra: Mapping[str, Any],
) -> dict[str, Any]:
    from evalkit._version import __version__

    config: dict[str, Any] = {
        "target": describe_target(target),
        "metrics": [s.name for s in specs],
        "aggregates": [s.name for s in agg_specs],
    }
    config.update(json.loads(json.dumps(dict(extra), default=str)))
    return {
        "type": "header",
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "kind": "target",
        "evalkit_version": __version__,
        "plugins": plugin_versions(),
        "metrics": metric_provenance([s.name for s in specs]),
        "aggregate_definitions": metric_provenance([s.name for s in agg_specs]),
        "target": config["target"],
        "goldens": goldens_record(gset),
        "config": config,
        "status": "running",
        "created": now(),
        "finished": None,
        "errors": 0,
        "aggregates": {},
    }


def finish_header(
    header: dict[str, Any], rows: Sequence[CaseResult], agg_specs: Sequence[AggregateSpec],
    specs: Sequence[MetricSpec] = (), *, missing: Sequence[str] = (),
    damaged: Sequence[str] = (), aggregate_rows: Sequence[Any] | None = None,
) -> None:
    """The final header fields: status, the failed calls and metrics, aggregates.

    ``status`` is ``"incomplete"`` when a call failed (no response), a case has no row
    (``missing``, from rescoring a partial run) or the rows come from a damaged file;
    a failed metric leaves it ``"complete"``. Aggregates are computed whenever every row
    has a response; one that raises or returns no finite real number (NaN, an infinity,
    a str, a bool, an int beyond the float range:
    :func:`evalkit.stats.numeric.finite_number`) is recorded in ``aggregate_errors`` as
    not computed. ``aggregate_rows``: the rows the aggregates read, when not ``rows``
    (the same rows whole, read back from the artifact, when ``rows`` dropped their
    responses once written).
    """
    totals: dict[str, Any] = {}
    for metric in specs:  # a metric with summarize_details (an LLM judge): its usage totals
        summarize = getattr(metric.fn, "summarize_details", None)
        if callable(summarize):
            totals[metric.name] = summarize([r.details.get(metric.name) for r in rows])
    if totals:
        header["details"] = totals
    errored = [r.case_id for r in rows if r.error is not None]
    failures: dict[str, list[str]] = {}
    for r in rows:
        for m in r.metric_errors:
            failures.setdefault(m, []).append(r.case_id)
    header["status"] = "incomplete" if errored or missing or damaged else "complete"
    header["errors"] = len(errored)
    header["error_ids"] = errored[:HEADER_IDS]
    header["metric_errors"] = {m: len(ids) for m, ids in failures.items()}
    header["metric_error_ids"] = {m: ids[:HEADER_IDS] for m, ids in failures.items()}
    if missing:
        header["missing_cases"] = len(missing)
        header["missing_ids"] = list(missing[:HEADER_IDS])
    else:
        header.pop("missing_cases", None)
        header.pop("missing_ids", None)
    header["finished"] = now()
    values: dict[str, float] = {}
    problems: dict[str, str] = {}
    if not errored and not missing:
        for spec in agg_specs:
            try:
                value = spec.fn(rows if aggregate_rows is None else aggregate_rows)
            except PLUGIN_FAILURES as exc:
                problems[spec.name] = f"{type(exc).__name__}: {exc}"
                continue
            try:  # the conformance suite's rule: a real number, finite
                values[spec.name] = finite_number(value, f"aggregate {spec.name!r}")
            except ValueError as exc:
                problems[spec.name] = str(exc)
    header["aggregates"] = values
    header["aggregate_errors"] = problems


# ------------------------------------------------------------------ resume
def check_resumable(path: Path, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """Refuse to resume the run in ``path`` (header ``old``) as the run whose new header
    is ``new`` when its config, a metric's definition or its golden set changed
    (:func:`evalkit.data.run_origin.header_changes`).

    Raises:
        ArtifactError: ``old`` is not a target run's header.
        ResumeError: something changed (every change listed).
    """
    if old.get("schema_version") not in READABLE_VERSIONS or old.get("kind") != "target":
        raise ArtifactError(
            f"{path}: not a target run artifact written by evalkit run/evaluate; cannot resume"
        )
    changes = header_changes(old, new)
    from evalkit.data.samples import recorded_reduce

    reduced = [recorded_reduce(h) for h in (old, new)]
    if reduced[0] != reduced[1]:  # the stored per-case values are reduced as it says
        changes.append(f"reduce: {reduced[0]!r} -> {reduced[1]!r}")
    if changes:
        raise ResumeError(
            f"cannot resume {path}: the run changed since it began:\n  - "
            + "\n  - ".join(changes)
            + "\nstart a new run (another output, or --overwrite) instead"
        )
