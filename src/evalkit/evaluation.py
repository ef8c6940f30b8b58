"""The target runner: call a target on every golden case, concurrently and resumably.

:func:`evaluate` invokes ``target.invoke(case)`` from at most ``max_concurrency`` worker
threads (:mod:`evalkit.execution`), scores each response in the same thread with the
registered metrics (:func:`evalkit.scoring.score_case`), and returns a
:class:`~evalkit.results.RunResult` of :class:`~evalkit.rows.CaseResult` rows in
golden-set order. Rows are keyed by case id; completion order never matters.

Errors. A case whose call raises has a row with the error and no response or metrics;
the run is then ``"incomplete"``: its aggregates are not computed, and
``RunResult.scores``/``mean`` and every built-in aggregate raise instead of reading an
error as 0. A metric that raises on a case is recorded on that metric
(``row.metric_errors``): the case keeps its response and its other metrics, and the run
stays complete (:mod:`evalkit.coverage`); ``RunResult.mean`` of that metric raises.

The artifact (``artifact=path``, :mod:`evalkit.artifact_writer`) is locked for the whole
run (:mod:`evalkit.runlock`: a second writer is refused at once); the header line is
written first with ``"status": "running"``, each row is appended and flushed as its case
completes, and at the end the file is replaced atomically by the finished artifact (rows
in golden-set order, final header, trailer). Ctrl-C keeps the rows of the calls in
flight that finish within ``grace_s``.

Resume (``resume=True``) reads the artifact, drops a truncated last line, keeps every
row with a response, and calls only the cases without one (missing, or whose call
failed); a kept row whose metric failed is scored again from its stored response,
without calling the target. It refuses, saying what changed, when the recorded config
(target, metrics and their definition versions, aggregates) or the golden set differs.
``max_concurrency`` is not part of the config: it changes speed, not results.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evalkit.artifact import READABLE_VERSIONS, SCHEMA_VERSION
from evalkit.artifact_writer import ArtifactWriter, read_partial, save_finished
from evalkit.cases import GoldenCase
from evalkit.execution import Executor, Interrupts, Job, RunInterrupted, default_grace_s, scored
from evalkit.goldens import GoldenSet, load_goldens
from evalkit.progress import ProgressBar
from evalkit.provenance import metric_provenance, plugin_versions
from evalkit.registry import RegistryError, default_registry
from evalkit.results import ArtifactError, RunResult
from evalkit.rows import CaseResult
from evalkit.runlock import run_lock
from evalkit.scoring import name_list, require_judgments, resolve_metrics
from evalkit.specs import AggregateSpec, MetricSpec
from evalkit.targets import Target

__all__ = ["DEFAULT_MAX_CONCURRENCY", "ResumeError", "RunInterrupted", "as_golden_set",
           "describe_target", "evaluate", "rescore", "resolve_aggregates", "status_line"]

DEFAULT_MAX_CONCURRENCY = 8
GoldensInput = GoldenSet | Iterable[GoldenCase] | str | Path
#: Case ids listed in a header (``error_ids``, ``metric_error_ids``, ``missing_ids``).
HEADER_IDS = 50


class ResumeError(ValueError):
    """A resume refused because the run's config or golden set changed (says what)."""


# ------------------------------------------------------------------ public API
def evaluate(
    target: Target,
    goldens: GoldensInput,
    metrics: Sequence[str] = (),
    aggregates: Sequence[str] = (),
    *,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    artifact: str | Path | None = None,
    resume: bool = False,
    overwrite: bool = False,
    name: str | None = None,
    progress: bool | None = None,
    config: Mapping[str, Any] | None = None,
    fsync_interval_s: float = 1.0,
    grace_s: float | None = None,
) -> RunResult:
    """Run ``target`` on every golden case and score the responses.

    Args:
        target: an object with ``name`` and ``invoke(case) -> TargetResponse``
            (:class:`~evalkit.targets.CallableTarget`, ``HttpTarget``...). It is called
            from several threads at once when ``max_concurrency > 1``.
        goldens: a :class:`GoldenSet`, an iterable of :class:`GoldenCase`, or a golden
            file path (read with :func:`~evalkit.goldens.load_goldens`).
        metrics: per-case metric names (``"recall@10"``, ``"ndcg@10"``, your own).
        aggregates: whole-run aggregate names (``"latency_p95"``, ``"entropy"``...),
            computed when every case has a response (whatever metric failed); values
            land in ``header["aggregates"]``.
        max_concurrency: the most target calls in flight at once (>= 1).
        artifact: a path to write the run artifact to as rows complete. It is locked
            for the whole run (``<artifact>.lock``, removed at the end).
        resume: continue the run in ``artifact`` (starts afresh if it does not exist).
        overwrite: replace an existing ``artifact`` instead of refusing to.
        name: the run name (default: the target's name).
        progress: show a progress bar on stderr; ``None`` shows it on a terminal only.
        config: extra settings to record in ``header["config"]`` and compare on resume
            (``evalkit run`` passes the config file's target and goldens settings).
        fsync_interval_s: the longest time between two ``fsync`` of the artifact
            (0 syncs after every row).
        grace_s: after Ctrl-C, how long the calls in flight may take to finish and be
            written (seconds, >= 0); default: the smaller of the target's bound on one
            attempt (``attempt_bound_s`` or ``timeout_s``) and 10 s.

    Returns:
        A :class:`RunResult` of :class:`CaseResult` rows in golden-set order. Its header
        has ``status`` (``"complete"``/``"incomplete"``), ``errors`` (failed calls),
        ``error_ids``, ``metric_errors`` (``{metric: cases it failed on}``),
        ``metric_error_ids``, ``aggregates`` (``{name: value}``, empty when a call
        failed) and ``aggregate_errors``; a resumed run also has ``resumed`` (how many
        times) and ``resume``, what the last resume did: ``{"kept": rows kept from the
        earlier run, "called": cases called, "retried": how many of those had errored,
        "rescored": kept rows whose failed metrics were scored again}``.

    Raises:
        RegistryError: an unknown metric or aggregate name (before any call is made).
        UnjudgedCasesError: a metric that needs judgments and a case without expected
            ids (before any call is made; lists the cases).
        GoldenError: a golden file breaks a rule.
        ArtifactBusyError: another process is writing ``artifact`` (names its pid).
        FileExistsError: ``artifact`` exists and neither ``resume`` nor ``overwrite``.
        ResumeError: ``resume`` and the config or golden set changed (says what).
        ArtifactError: ``resume`` and the artifact is not a readable target run.
        RunInterrupted: (a ``KeyboardInterrupt``) Ctrl-C, raised once the rows that
            arrived within the grace period are written and the artifact is synced;
            resume continues it.
        Exception: the error of a metric's :class:`~evalkit.scoring.RunAborted` (a
            failure that is not a case's, such as an LLM judge without credentials),
            raised once after the artifact is synced; resume continues the run.
    """
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) \
            or max_concurrency < 1:
        raise ValueError(f"max_concurrency must be a positive integer, got {max_concurrency!r}")
    if not callable(getattr(target, "invoke", None)):
        raise TypeError(
            f"{target!r} is not a target: it has no invoke(case) method; wrap a function in "
            "evalkit.CallableTarget(fn)"
        )
    grace = default_grace_s(target) if grace_s is None else _check_grace(grace_s)
    gset = as_golden_set(goldens)
    specs = resolve_metrics(metrics)
    agg_specs = resolve_aggregates(aggregates)
    require_judgments(specs, list(gset))
    target_name = str(getattr(target, "name", "") or type(target).__name__)
    header = _new_header(
        name or target_name, target, gset, specs, agg_specs, config or {},
    )
    plan = _Plan(target, target_name, gset, specs, agg_specs, header, max_concurrency,
                 grace, progress)
    if artifact is None:
        return plan.run(None, {}, {})
    path = Path(artifact)
    with run_lock(path):
        writer = ArtifactWriter(path, fsync_interval_s)
        previous = read_partial(path) if resume and path.exists() else None
        kept: dict[str, CaseResult] = {}
        redo: dict[str, CaseResult] = {}
        if previous is not None:
            old_header, old_rows = previous
            _check_resumable(path, old_header, header)
            header["created"] = old_header.get("created", header["created"])
            header["resumed"] = int(old_header.get("resumed", 0)) + 1
            answered = {r.case_id: r for r in old_rows
                        if r.response is not None and r.case_id in gset}
            kept = {c: r for c, r in answered.items() if r.ok}
            redo = {c: r for c, r in answered.items() if not r.ok}
            errored = {r.case_id for r in old_rows if r.response is None}
            header["resume"] = {
                "kept": len(kept) + len(redo),
                "called": sum(1 for c in gset if c.id not in answered),
                "retried": sum(1 for c in gset if c.id in errored and c.id not in answered),
                "rescored": len(redo),
            }
            writer.start(header, [r for c in gset if (r := answered.get(c.id)) is not None])
        else:
            if path.exists() and not resume and not overwrite:
                raise FileExistsError(
                    f"{path} already exists; resume it (--resume), overwrite it "
                    "(--overwrite) or choose another output"
                )
            writer.start(header, [])
        return plan.run(writer, kept, redo)


def _check_grace(grace_s: float) -> float:
    if isinstance(grace_s, bool) or not isinstance(grace_s, int | float) \
            or not math.isfinite(grace_s) or grace_s < 0:
        raise ValueError(f"grace_s must be a number of seconds >= 0, got {grace_s!r}")
    return float(grace_s)


class _Plan:
    """One run's settings, and the loop that collects its rows."""

    def __init__(self, target: Target, target_name: str, gset: GoldenSet,
                 specs: Sequence[MetricSpec], agg_specs: Sequence[AggregateSpec],
                 header: dict[str, Any], max_concurrency: int, grace: float,
                 progress: bool | None) -> None:
        self.target, self.target_name, self.gset = target, target_name, gset
        self.specs, self.agg_specs, self.header = specs, agg_specs, header
        self.max_concurrency, self.grace, self.progress = max_concurrency, grace, progress

    def run(self, writer: ArtifactWriter | None, kept: Mapping[str, CaseResult],
            redo: Mapping[str, CaseResult]) -> RunResult:
        import sys

        jobs = [Job(c, redo.get(c.id)) for c in self.gset if c.id not in kept]
        results: dict[str, CaseResult] = dict(kept)
        show = sys.stderr.isatty() if self.progress is None else self.progress
        executor = Executor(self.target, self.target_name, jobs, self.specs,
                            self.max_concurrency)
        stopped: RunInterrupted | None = None
        writing = [False]
        try:
            with Interrupts() as interrupts, ProgressBar(
                    self.header["name"], len(self.gset), len(kept), show) as bar:

                def take(batch: list[CaseResult]) -> None:
                    for row in batch:
                        results[row.case_id] = row
                    if writer is not None:
                        writing[0] = True
                        writer.append_many(batch)
                        writing[0] = False
                    bar.advance(len(batch), sum(1 for r in batch if r.error is not None))

                executor.start()
                try:
                    for batch in executor.batches(interrupts):
                        take(batch)
                except KeyboardInterrupt:  # SIGINT is not ours to handle here
                    if writing[0]:
                        raise  # cut inside a write: stop now; resume drops the cut line
                    interrupts.count += 1
                if interrupts.count:
                    stopped = self._grace(executor, interrupts, take, bar, results)
        except BaseException:
            executor.stop()
            if writer is not None:
                writer.close()
            raise
        if stopped is not None:
            if writer is not None:
                writer.close()
            raise stopped
        rows = [results[c.id] for c in self.gset]
        _finish_header(self.header, rows, self.agg_specs, self.specs)
        run = RunResult(name=self.header["name"], per_query=list(rows), header=self.header)
        if writer is not None:
            writer.close(sync=False)  # the rewrite below is synced before it replaces it
            writer.rewrite(run)
        return run

    def _grace(self, executor: Executor, interrupts: Interrupts,
               take: Callable[[list[CaseResult]], None], bar: ProgressBar,
               results: Mapping[str, CaseResult]) -> RunInterrupted:
        """After the first Ctrl-C: no new case; the calls in flight may finish within the
        grace period, and their rows are written; a second Ctrl-C stops waiting."""
        executor.stop()
        busy = executor.in_flight
        if busy:
            bar.note(f"interrupted: waiting up to {self.grace:g} s for {busy} call(s) in "
                     "flight to finish and be written (Ctrl-C again to stop now)")
        again = False
        try:
            for batch in executor.batches(interrupts, time.monotonic() + self.grace):
                take(batch)
        except KeyboardInterrupt:
            again = True
        except Exception:  # a worker's failure while stopping: Ctrl-C wins
            pass
        again = again or interrupts.count > 1
        return RunInterrupted(len(results), len(self.gset), executor.in_flight, self.grace,
                              again)


def rescore(
    run: RunResult | str | Path,
    metrics: Sequence[str],
    aggregates: Sequence[str] | None = None,
    *,
    goldens: GoldensInput | None = None,
    output: str | Path | None = None,
) -> RunResult:
    """Recompute metrics and aggregates of a target run from its stored responses.

    The target is never called. Rows whose call failed (no stored response) stay errored;
    every other row is scored again, each metric on its own. The input's coverage is
    kept: cases without a row stay missing (``header["missing_cases"]`` and
    ``missing_ids``) and a run with missing cases or failed calls stays ``"incomplete"``,
    however it is rescored.

    Args:
        run: a run artifact path (written by :func:`evaluate`) or a loaded run.
        metrics: the per-case metrics to compute (they replace the stored ones).
        aggregates: the aggregates to compute (default: those the run recorded).
        goldens: the golden set (default: the file recorded in the header). Cases whose
            content changed since the run are listed in ``header["rescored"]``.
        output: where to write the rescored artifact (default: ``run`` itself, replaced
            atomically, when it is a path; nothing is written for a loaded run). The
            file written is locked while it is replaced, as :func:`evaluate` locks it.

    Raises:
        ArtifactError: not a target run, or a row's case is missing from the goldens.
        RegistryError: unknown metric or aggregate name.
        UnjudgedCasesError: a metric that needs judgments and a case without them.
        ArtifactBusyError: a run is writing the file to be replaced.
    """
    source: Path | None = None
    if isinstance(run, str | Path):
        source = Path(run)
        run = RunResult.load(source)
    header = dict(run.header)
    if header.get("kind") != "target":
        raise ArtifactError(
            f"{source or run.name}: not a target run (written by evalkit run/evaluate); "
            "precomputed runs are rescored with `evalkit eval`"
        )
    old_config = dict(header.get("config") or {})
    if aggregates is None:
        aggregates = list(old_config.get("aggregates") or [])
    specs = resolve_metrics(metrics)
    agg_specs = resolve_aggregates(aggregates)
    gset = _rescore_goldens(header, old_config, source, run, goldens)
    old_digests: Mapping[str, str] = (header.get("goldens") or {}).get("case_digests") or {}
    new_digests = gset.case_digests()
    cases: list[GoldenCase] = []
    for old in run.per_query:
        if not isinstance(old, CaseResult):
            raise ArtifactError(f"{source or run.name}: row {old.query_id!r} is not a case row")
        if old.case_id not in gset:
            raise ArtifactError(
                f"case {old.case_id!r} of run {run.name!r} is not in the golden set "
                f"{gset.path or ''}".rstrip()
            )
        cases.append(gset.get(old.case_id))
    require_judgments(specs, cases)
    rows: list[CaseResult] = []
    for old, case in zip(run.per_query, cases, strict=True):
        if old.response is None:
            rows.append(CaseResult(old.case_id, None, {}, old.error, old.latency_ms))
        else:
            rows.append(scored(case, old.response, old.latency_ms, specs))
    present = {r.case_id for r in rows}
    missing = [c.id for c in gset if c.id not in present]
    # a file cut short or still unfinished keeps its rows; one altered after it was
    # finished (its trailer disagrees) cannot vouch for them
    damaged = list(run.integrity.problems) if run.integrity is not None \
        and run.integrity.has_trailer else []
    changed = sorted(c for c in new_digests if c in old_digests
                     and old_digests[c] != new_digests[c])
    previous_metrics = list(old_config.get("metrics") or [])
    header["metrics"] = metric_provenance([s.name for s in specs])
    header["aggregate_definitions"] = metric_provenance([s.name for s in agg_specs])
    header["config"] = {**old_config, "metrics": [s.name for s in specs],
                        "aggregates": [s.name for s in agg_specs]}
    header["goldens"] = {**(header.get("goldens") or {}), **_goldens_record(gset)}
    header["rescored"] = {
        "at": _now(), "previous_metrics": previous_metrics,
        "goldens_changed": changed, "input_status": run.header.get("status"),
        "input_problems": damaged,
    }
    _finish_header(header, rows, agg_specs, specs, missing=missing, damaged=damaged)
    out = RunResult(name=run.name, per_query=list(rows), header=header)
    target_path = Path(output) if output is not None else source
    if target_path is not None:
        with run_lock(target_path):
            save_finished(out, target_path)
    return out


def _rescore_goldens(header: Mapping[str, Any], old_config: Mapping[str, Any],
                     source: Path | None, run: RunResult,
                     goldens: GoldensInput | None) -> GoldenSet:
    if goldens is not None:
        return as_golden_set(goldens)
    recorded = (header.get("goldens") or {}).get("path")
    if not recorded:
        raise ArtifactError(
            f"{source or run.name}: the header records no golden file; pass goldens="
        )
    gpath = Path(recorded)
    if not gpath.is_absolute() and source is not None:
        gpath = source.parent / gpath
    loader = (header.get("goldens") or {}).get("loader") or old_config.get("goldens_loader")
    return load_goldens(gpath, loader)


def as_golden_set(goldens: GoldensInput) -> GoldenSet:
    """A :class:`GoldenSet` from a set, an iterable of cases, or a golden file path."""
    if isinstance(goldens, GoldenSet):
        return goldens
    if isinstance(goldens, str | Path):
        return load_goldens(goldens)
    return GoldenSet(list(goldens))


def resolve_aggregates(names: str | Sequence[str]) -> list[AggregateSpec]:
    """Resolve aggregate names (a list, or a single name), keeping order and dropping
    repeats.

    Raises:
        RegistryError: unknown name, or a per-case metric where an aggregate is needed.
    """
    reg = default_registry()
    out: list[AggregateSpec] = []
    for n in name_list(names):
        spec = reg.resolve(n)
        if not isinstance(spec, AggregateSpec):
            raise RegistryError(
                f"{n!r} is a per-case metric, not a whole-run aggregate; pass it as a metric"
            )
        if spec not in out:
            out.append(spec)
    return out


def status_line(run: RunResult) -> str:
    """One line: ``"complete: 50 cases"``, or ``"INCOMPLETE: ..."`` naming the cases whose
    call failed or that have no row, and the metrics that failed on some case."""
    n = len(run.per_query)
    errors = [r for r in run.per_query if getattr(r, "error", None) is not None]
    missing = list(run.header.get("missing_ids") or [])
    n_missing = int(run.header.get("missing_cases") or len(missing))
    failed = run.metric_failures()
    metric_note = ""
    if failed:
        metric_note = "; metric failures (the other metrics keep their values): " + ", ".join(
            f"{m} on {len(ids)} case(s)" for m, ids in failed.items())
    if not errors and not n_missing and run.header.get("status", "complete") == "complete":
        return f"complete: {n} cases{metric_note}"
    parts = []
    if errors:
        shown = ", ".join(repr(r.query_id) for r in errors[:5])
        parts.append(f"{len(errors)} of {n} cases errored ({shown}"
                     f"{', ...' if len(errors) > 5 else ''})")
    if n_missing:
        shown = ", ".join(repr(i) for i in missing[:5])
        parts.append(f"{n_missing} case(s) have no row ({shown}"
                     f"{', ...' if n_missing > 5 else ''})")
    if not parts:
        parts.append(f"marked {run.header.get('status')!r}")
    return f"INCOMPLETE: {'; '.join(parts)}; not scored{metric_note}"


# ------------------------------------------------------------------ header
def _now() -> str:
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


def _goldens_record(gset: GoldenSet) -> dict[str, Any]:
    return {
        "path": None if gset.path is None else str(Path(gset.path).resolve()),
        "sha256": gset.digest(),
        "n_cases": len(gset),
        "case_digests": gset.case_digests(),
    }


def _new_header(
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
        "goldens": _goldens_record(gset),
        "config": config,
        "status": "running",
        "created": _now(),
        "finished": None,
        "errors": 0,
        "aggregates": {},
    }


def _finish_header(
    header: dict[str, Any], rows: Sequence[CaseResult], agg_specs: Sequence[AggregateSpec],
    specs: Sequence[MetricSpec] = (), *, missing: Sequence[str] = (),
    damaged: Sequence[str] = (),
) -> None:
    """The final header fields: status, the failed calls and metrics, aggregates.

    ``status`` is ``"incomplete"`` when a call failed (no response), a case has no row
    (``missing``, from rescoring a partial run) or the rows come from a damaged file;
    a failed metric leaves it ``"complete"``. Aggregates are computed whenever every row
    has a response.
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
    header["finished"] = _now()
    values: dict[str, float] = {}
    problems: dict[str, str] = {}
    if not errored and not missing:
        for spec in agg_specs:
            try:
                values[spec.name] = float(spec.fn(rows))
            except Exception as exc:
                problems[spec.name] = f"{type(exc).__name__}: {exc}"
    header["aggregates"] = values
    header["aggregate_errors"] = problems


# ------------------------------------------------------------------ resume
def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out or {prefix: {}}
    return {prefix: value}


def _check_resumable(path: Path, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    if old.get("schema_version") not in READABLE_VERSIONS or old.get("kind") != "target":
        raise ArtifactError(
            f"{path}: not a target run artifact written by evalkit run/evaluate; cannot resume"
        )
    changes: list[str] = []
    before, after = _flatten(old.get("config") or {}), _flatten(new["config"])
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key, "<absent>"), after.get(key, "<absent>")
        if a != b:
            changes.append(f"config {key}: {a!r} -> {b!r}")
    old_defs = {**(old.get("metrics") or {}), **(old.get("aggregate_definitions") or {})}
    new_defs = {**new["metrics"], **new["aggregate_definitions"]}
    for metric in sorted(set(old_defs) & set(new_defs)):
        if old_defs[metric] != new_defs[metric]:
            changes.append(f"definition of {metric}: {old_defs[metric]} -> {new_defs[metric]}")
    old_g: Mapping[str, Any] = old.get("goldens") or {}
    new_g: Mapping[str, Any] = new["goldens"]
    if old_g.get("sha256") != new_g["sha256"]:
        a_dig: Mapping[str, str] = old_g.get("case_digests") or {}
        b_dig: Mapping[str, str] = new_g["case_digests"]
        added = [c for c in b_dig if c not in a_dig]
        removed = [c for c in a_dig if c not in b_dig]
        edited = [c for c in b_dig if c in a_dig and a_dig[c] != b_dig[c]]
        parts = [f"{label} {_ids(ids)}" for label, ids in
                 (("added", added), ("removed", removed), ("changed", edited)) if ids]
        changes.append("golden set: " + ("; ".join(parts) or "case order changed"))
    if changes:
        raise ResumeError(
            f"cannot resume {path}: the run changed since it began:\n  - "
            + "\n  - ".join(changes)
            + "\nstart a new run (another output, or --overwrite) instead"
        )


def _ids(ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:5])
    return f"{len(ids)} case(s) ({shown}{', ...' if len(ids) > 5 else ''})"


