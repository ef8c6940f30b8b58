"""The target runner: call a target on every golden case, concurrently and resumably.

:func:`evaluate` invokes ``target.invoke(case)`` from a thread pool of at most
``max_concurrency`` threads, scores each response in the same worker thread (so metrics
that call a service, such as an LLM judge, share that concurrency) with the
registered metrics (:func:`evalkit.scoring.score_cases`, the path ``run()`` and
``evaluate_run()`` use), and returns a :class:`~evalkit.results.RunResult` of
:class:`~evalkit.rows.CaseResult` rows in golden-set order. Rows are keyed by case id;
completion order never matters.

Errors. A case whose call raises, or whose metric raises, becomes a row with the error
message and no metric values. A run with any errored row has ``header["status"] ==
"incomplete"``: its aggregates are not computed, and ``RunResult.scores``/``mean`` and
every built-in aggregate raise on it instead of reading an error as 0.

The artifact (``artifact=path``), in the JSON Lines format of :mod:`evalkit.results`:

* the header line is written first with ``"status": "running"`` (on resume, the header
  and the kept rows are rewritten atomically: temporary file, fsync, rename);
* each row is appended as its case completes: the rows that completed together are
  written with one write and flushed before the runner waits for the next completion, so
  a killed process (Ctrl-C, a crash, ``kill -9``) loses no row it has received.
  ``os.fsync`` runs at most every ``fsync_interval_s`` seconds (default 1 s) and at the
  end, so an operating-system crash or power loss can lose at most that last interval of
  rows, which resume then runs again;
* at the end the file is rewritten atomically (temporary file, fsync, rename, fsync of
  the folder) with the rows in golden-set order and the final header: ``status``
  (``"complete"`` or ``"incomplete"``), ``errors``, ``aggregates`` and ``finished``. Each
  row is encoded to JSON once, when it is appended; the rewrite reuses those lines.

Resume (``resume=True``) reads the artifact, drops a truncated last line (the one place
a malformed line is tolerated: a plain :meth:`RunResult.load` refuses it), keeps every
successful row, and invokes only the cases without one: the missing ones and the errored
ones. It refuses, saying what changed, when the recorded config (target, metrics and
their definition versions, aggregates) or the golden set differs from the current one.
``max_concurrency`` is not part of the config: it changes speed, not results.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from collections.abc import Generator, Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from evalkit.cases import GoldenCase
from evalkit.goldens import GoldenSet, load_goldens
from evalkit.limits import MAX_ARTIFACT_DEPTH, LimitError, loads_json
from evalkit.outputs import destination, write_output, writing
from evalkit.provenance import metric_provenance, plugin_versions
from evalkit.redaction import error_text, mask, scrub_exception
from evalkit.registry import RegistryError, default_registry
from evalkit.results import SCHEMA_VERSION, ArtifactError, RunResult, artifact_line
from evalkit.rows import (
    DEFAULT_MAX_RAW_BYTES,
    CaseResult,
    CutRaw,
    RawCutError,
    bounded_response,
    case_result_from_json,
)
from evalkit.scoring import MetricError, name_list, resolve_metrics, score_cases
from evalkit.specs import AggregateSpec, MetricSpec
from evalkit.targets import Target, TargetError, TargetResponse

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

DEFAULT_MAX_CONCURRENCY = 8
#: The progress bar's counters are pushed to it at most this often (seconds); it redraws
#: itself at its own rate.
PROGRESS_INTERVAL_S = 0.1
GoldensInput = GoldenSet | Iterable[GoldenCase] | str | Path


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
            computed only when no case errored; values land in ``header["aggregates"]``.
        max_concurrency: the most target calls in flight at once (>= 1).
        artifact: a path to write the run artifact to as rows complete.
        resume: continue the run in ``artifact`` (starts afresh if it does not exist).
        overwrite: replace an existing ``artifact`` instead of refusing to.
        name: the run name (default: the target's name).
        progress: show a progress bar on stderr; ``None`` shows it on a terminal only.
        config: extra settings to record in ``header["config"]`` and compare on resume
            (``evalkit run`` passes the config file's target and goldens settings).
        fsync_interval_s: the longest time between two ``fsync`` of the artifact
            (0 syncs after every row).

    Returns:
        A :class:`RunResult` of :class:`CaseResult` rows in golden-set order. Its header
        has ``status`` (``"complete"``/``"incomplete"``), ``errors`` (count),
        ``error_ids``, ``aggregates`` (``{name: value}``, empty when incomplete) and
        ``aggregate_errors``; a resumed run also has ``resumed`` (how many times) and
        ``resume``, what the last resume did: ``{"kept": rows kept from the earlier run,
        "called": cases called, "retried": how many of those had errored}``.

    Raises:
        RegistryError: an unknown metric or aggregate name (before any call is made).
        GoldenError: a golden file breaks a rule.
        FileExistsError: ``artifact`` exists and neither ``resume`` nor ``overwrite``.
        ResumeError: ``resume`` and the config or golden set changed (says what).
        ArtifactError: ``resume`` and the artifact is not a readable target run.
        KeyboardInterrupt: re-raised after the artifact is synced; resume continues it.
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
    gset = as_golden_set(goldens)
    specs = resolve_metrics(metrics)
    agg_specs = resolve_aggregates(aggregates)
    target_name = str(getattr(target, "name", "") or type(target).__name__)
    header = _new_header(
        name or target_name, target, gset, specs, agg_specs, config or {},
    )
    kept: dict[str, CaseResult] = {}
    writer: _ArtifactWriter | None = None
    if artifact is not None:
        path = Path(artifact)
        writer = _ArtifactWriter(path, fsync_interval_s)
        if resume and writer.stream:
            raise ArtifactError(f"{path}: not a regular file (a device or a pipe), so there "
                                "is no earlier run to resume; drop --resume")
        previous = _read_partial(path) if resume and path.exists() else None
        if previous is not None:
            old_header, old_rows = previous
            _check_resumable(path, old_header, header)
            header["created"] = old_header.get("created", header["created"])
            header["resumed"] = int(old_header.get("resumed", 0)) + 1
            kept = {r.case_id: r for r in old_rows if r.error is None and r.case_id in gset}
            errored = {r.case_id for r in old_rows if r.error is not None}
            header["resume"] = {
                "kept": len(kept), "called": sum(1 for c in gset if c.id not in kept),
                "retried": sum(1 for c in gset if c.id in errored and c.id not in kept),
            }
            writer.start(header, [kept[c.id] for c in gset if c.id in kept])
        else:
            if path.exists() and not writer.stream and not resume and not overwrite:
                raise FileExistsError(
                    f"{path} already exists; resume it (--resume), overwrite it "
                    "(--overwrite) or choose another output"
                )
            writer.start(header, [])
    pending = [c for c in gset if c.id not in kept]
    results = dict(kept)
    show = sys.stderr.isatty() if progress is None else progress
    try:
        with _ProgressBar(header["name"], len(gset), len(kept), show) as bar, \
                closing(_execute(target, target_name, pending, specs, max_concurrency)) as done:
            for batch in done:
                for row in batch:
                    results[row.case_id] = row
                if writer is not None:
                    writer.append_many(batch)
                bar.advance(len(batch), sum(1 for row in batch if row.error is not None))
    except BaseException:
        if writer is not None:
            writer.close(failed=True)
        raise
    rows = [results[c.id] for c in gset]
    _finish_header(header, rows, agg_specs, specs)
    run = RunResult(name=header["name"], per_query=list(rows), header=header)
    if writer is not None:
        writer.close(sync=False)  # the rewrite below is synced before it replaces the file
        writer.rewrite(run)
    return run


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
    rows whose metric failed are scored again.

    Args:
        run: a run artifact path (written by :func:`evaluate`) or a loaded run.
        metrics: the per-case metrics to compute (they replace the stored ones).
        aggregates: the aggregates to compute (default: those the run recorded).
        goldens: the golden set (default: the file recorded in the header). Cases whose
            content changed since the run are listed in ``header["rescored"]``.
        output: where to write the rescored artifact (default: ``run`` itself, replaced
            atomically, when it is a path; nothing is written for a loaded run).

    Raises:
        ArtifactError: not a target run, or a row's case is missing from the goldens.
        RegistryError: unknown metric or aggregate name.
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
    if goldens is None:
        recorded = (header.get("goldens") or {}).get("path")
        if not recorded:
            raise ArtifactError(
                f"{source or run.name}: the header records no golden file; pass goldens="
            )
        gpath = Path(recorded)
        if not gpath.is_absolute() and source is not None:
            gpath = source.parent / gpath
        loader = (header.get("goldens") or {}).get("loader") or old_config.get("goldens_loader")
        gset = load_goldens(gpath, loader)
    else:
        gset = as_golden_set(goldens)
    old_digests: Mapping[str, str] = (header.get("goldens") or {}).get("case_digests") or {}
    new_digests = gset.case_digests()
    rows: list[CaseResult] = []
    for old in run.per_query:
        if not isinstance(old, CaseResult):
            raise ArtifactError(f"{source or run.name}: row {old.query_id!r} is not a case row")
        if old.case_id not in gset:
            raise ArtifactError(
                f"case {old.case_id!r} of run {run.name!r} is not in the golden set "
                f"{gset.path or ''}".rstrip()
            )
        if old.response is None:
            rows.append(CaseResult(old.case_id, None, {}, old.error, old.latency_ms))
            continue
        rows.append(_rescored(gset.get(old.case_id), old.response, old.latency_ms, specs,
                              source or run.name))
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
        "goldens_changed": changed,
    }
    _finish_header(header, rows, agg_specs, specs)
    out = RunResult(name=run.name, per_query=list(rows), header=header)
    target_path = Path(output) if output is not None else source
    if target_path is not None:
        _atomic_save(out, target_path)
    return out


def _rescored(case: GoldenCase, response: TargetResponse, latency: float | None,
              specs: Sequence[MetricSpec], source: object) -> CaseResult:
    """A stored response scored again. When its row did not keep the raw body, metrics
    see a :class:`~evalkit.rows.CutRaw` there, and one that uses it is refused by name."""
    if response.raw_cut is None:
        return _scored(case, response, latency, specs)
    probe = replace(response, raw=CutRaw(case.id, response.raw_cut))
    for spec in specs:
        try:
            score_cases([probe], [case], [spec])
        except (MetricError, RawCutError) as exc:
            cut = exc if isinstance(exc, RawCutError) else exc.__cause__
            if isinstance(cut, RawCutError):
                raise ArtifactError(
                    f"{source}: cannot rescore metric {spec.name!r}: it reads "
                    f"response.raw, but {cut}; run the target again with a larger "
                    "max_raw_bytes (None keeps raw bodies in full)") from None
    row = _scored(case, probe, latency, specs)
    row.response = response
    return row


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
    """One line: ``"complete: 50 cases"`` or ``"INCOMPLETE: 3 of 50 cases errored (...)"``."""
    n = len(run.per_query)
    errors = [r for r in run.per_query if getattr(r, "error", None) is not None]
    if not errors:
        return f"complete: {n} cases"
    ids = ", ".join(repr(r.query_id) for r in errors[:5])
    more = ", ..." if len(errors) > 5 else ""
    return f"INCOMPLETE: {len(errors)} of {n} cases errored ({ids}{more}); not scored"


# ------------------------------------------------------------------ execution
_WORKER_DONE = object()  # what a worker thread queues when it stops


def _execute(
    target: Target, target_name: str, cases: Sequence[GoldenCase],
    specs: Sequence[MetricSpec], max_concurrency: int,
) -> Generator[list[CaseResult], None, None]:
    """Yield the scored rows in batches, in completion order, as calls complete.

    ``min(max_concurrency, len(cases))`` worker threads each take the next case, call and
    score it, and queue the row; this generator yields every row queued since the last
    batch (those that completed together), so that the caller writes them at once.

    A worker whose call raises a :class:`BaseException` that is not an ``Exception`` (an
    LLM judge's spending limit) or an unexpected error (such as the error of a metric's
    :class:`~evalkit.scoring.RunAborted`) stops the run: no worker takes a
    new case, the rows of the cases already running are still yielded, then the first
    such exception is raised. When the caller stops iterating (Ctrl-C), the workers take
    no new case and finish the calls they are in.
    """
    if not cases:
        return
    todo = iter(cases)
    todo_lock = threading.Lock()
    stop = threading.Event()
    done: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def work() -> None:
        try:
            while not stop.is_set():
                with todo_lock:
                    case = next(todo, None)
                if case is None:
                    return
                try:
                    row = _call_and_score(target, target_name, case, specs)
                except BaseException as exc:  # a stop signal, or a bug: the run stops
                    stop.set()
                    done.put(exc)
                    return
                done.put(row)
        finally:
            done.put(_WORKER_DONE)

    workers = [threading.Thread(target=work, name=f"evalkit-target-{i}")
               for i in range(min(max_concurrency, len(cases)))]
    for thread in workers:
        thread.start()
    running = len(workers)
    failure: BaseException | None = None
    try:
        while running:
            try:
                item = done.get(timeout=0.5)  # a bounded wait keeps Ctrl-C prompt
            except queue.Empty:
                continue
            batch: list[CaseResult] = []
            while True:
                if item is _WORKER_DONE:
                    running -= 1
                elif isinstance(item, BaseException):
                    failure = failure or item
                else:
                    batch.append(item)
                try:
                    item = done.get_nowait()
                except queue.Empty:
                    break
            if batch:
                yield batch
        if failure is not None:
            raise failure
    finally:
        stop.set()


def _call_and_score(
    target: Target, target_name: str, case: GoldenCase, specs: Sequence[MetricSpec],
) -> CaseResult:
    """Invoke and score one case in a worker thread, so that metrics that call a service
    (an LLM judge) run with the runner's concurrency."""
    response, error, latency = _call(target, target_name, case)
    if response is None:
        return CaseResult(case.id, None, {}, error, latency)
    row = _scored(case, response, latency, specs)  # metrics see the whole raw body
    row.response = bounded_response(
        response, getattr(target, "max_raw_bytes", DEFAULT_MAX_RAW_BYTES))
    return row


def _call(
    target: Target, target_name: str, case: GoldenCase
) -> tuple[TargetResponse | None, str | None, float]:
    start = time.perf_counter()
    try:
        response = target.invoke(case)
    except Exception as exc:
        elapsed = (time.perf_counter() - start) * 1000.0
        scrub_exception(exc)
        if isinstance(exc, TargetError):
            return None, mask(str(exc)), elapsed
        return None, (
            f"target {target_name!r} failed on case {case.id!r}: {error_text(exc)}"
        ), elapsed
    elapsed = (time.perf_counter() - start) * 1000.0
    if not isinstance(response, TargetResponse):
        return None, (
            f"target {target_name!r} returned {type(response).__name__} for case "
            f"{case.id!r}; invoke() must return a TargetResponse"
        ), elapsed
    latency = response.latency_ms if response.latency_ms > 0 else elapsed
    return response, None, latency


def _scored(
    case: GoldenCase, response: TargetResponse, latency: float | None,
    specs: Sequence[MetricSpec],
) -> CaseResult:
    try:
        values = score_cases([response], [case], specs)[0]
    except MetricError as exc:
        return CaseResult(case.id, response, {}, mask(str(exc)), latency)
    return CaseResult(case.id, response, values, None, latency, _details(case, specs))


def _details(case: GoldenCase, specs: Sequence[MetricSpec]) -> dict[str, Any]:
    """What metrics with a ``details(case_id) -> dict | None`` method (an LLM judge)
    published for ``case``, by metric name."""
    out: dict[str, Any] = {}
    for spec in specs:
        get = getattr(spec.fn, "details", None)
        if callable(get):
            found = get(case.id)
            if found is not None:
                out[spec.name] = found
    return out


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
    specs: Sequence[MetricSpec] = (),
) -> None:
    totals: dict[str, Any] = {}
    for metric in specs:  # a metric with summarize_details (an LLM judge): its usage totals
        summarize = getattr(metric.fn, "summarize_details", None)
        if callable(summarize):
            totals[metric.name] = summarize([r.details.get(metric.name) for r in rows])
    if totals:
        header["details"] = totals
    errored = [r.case_id for r in rows if r.error is not None]
    header["status"] = "incomplete" if errored else "complete"
    header["errors"] = len(errored)
    header["error_ids"] = errored[:50]
    header["finished"] = _now()
    values: dict[str, float] = {}
    problems: dict[str, str] = {}
    if not errored:
        for spec in agg_specs:
            try:
                values[spec.name] = float(spec.fn(rows))
            except Exception as exc:
                problems[spec.name] = f"{type(exc).__name__}: {exc}"
    header["aggregates"] = values
    header["aggregate_errors"] = problems


# ------------------------------------------------------------------ resume
def _read_partial(path: Path) -> tuple[dict[str, Any], list[CaseResult]] | None:
    """The header and rows of an artifact being resumed; ``None`` if it holds no
    complete line yet. An unterminated last line is a write cut short and is dropped."""
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    lines.pop()  # after the last "\n": empty, or a truncated line
    header: dict[str, Any] | None = None
    rows: list[CaseResult] = []
    seen: set[str] = set()
    for lineno, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            obj = loads_json(raw, MAX_ARTIFACT_DEPTH)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ArtifactError(
                f"{path}:{lineno}: not valid JSON ({exc}); only a truncated last line is "
                "tolerated on resume"
            ) from None
        except LimitError as exc:
            raise ArtifactError(f"{path}:{lineno}: {exc}") from None
        if not isinstance(obj, dict):
            raise ArtifactError(f"{path}:{lineno}: expected a JSON object")
        if header is None:
            if obj.get("type") != "header":
                raise ArtifactError(f"{path}:{lineno}: the first line is not a run header")
            header = obj
            continue
        if obj.get("type") != "row" or "id" not in obj:
            raise ArtifactError(f"{path}:{lineno}: expected a row object with an 'id'")
        try:
            row = case_result_from_json(obj)
        except (TypeError, ValueError) as exc:
            raise ArtifactError(f"{path}:{lineno}: malformed row ({exc})") from None
        if row.case_id in seen:
            raise ArtifactError(f"{path}:{lineno}: duplicate row id {row.case_id!r}")
        seen.add(row.case_id)
        rows.append(row)
    if header is None:
        return None
    return header, rows


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out or {prefix: {}}
    return {prefix: value}


def _check_resumable(path: Path, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    if old.get("schema_version") != SCHEMA_VERSION or old.get("kind") != "target":
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


# ------------------------------------------------------------------ artifact file
class _ArtifactWriter:
    """Appends rows, one write and one flush per batch, with an fsync at most every
    ``interval`` s; keeps each row's JSON line for the final :meth:`rewrite`.

    A character device or FIFO (``stream``: ``/dev/null``, a named pipe) cannot be
    rewritten, so nothing is written to it until the end, when the final artifact is
    written to it once (:func:`evalkit.outputs.write_output`)."""

    def __init__(self, path: Path, interval: float) -> None:
        self.path = path
        self.interval = max(0.0, float(interval))
        self._fh: IO[str] | None = None
        self._last_sync = 0.0
        self._lock = threading.Lock()
        self._lines: dict[str, str] = {}
        with writing(path):  # a socket or a block device is refused before any call
            self.stream = destination(path) == "stream"

    def start(self, header: Mapping[str, Any], rows: Sequence[CaseResult]) -> None:
        """Write the header and the kept ``rows``, then open for appending.

        Kept rows (a resume) are rewritten atomically (temporary file, fsync, rename), so
        a crash never loses them; a new run just writes its header line.

        Raises:
            evalkit.outputs.UnwritableError: the artifact cannot be written (names it).
        """
        if self.stream:
            return
        with writing(self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not rows:
                self._fh = self.path.open("w", encoding="utf-8")
                self._fh.write(artifact_line(header))
                self._fh.flush()
                self._last_sync = time.monotonic()  # synced with the rows, by the same clock
                return
        write_output(self.path, [artifact_line(header), *(self._encode(r) for r in rows)])
        with writing(self.path):
            self._fh = self.path.open("a", encoding="utf-8")
        self._last_sync = time.monotonic()

    def _encode(self, row: CaseResult) -> str:
        line = artifact_line(row.to_json())
        self._lines[row.case_id] = line
        return line

    def append(self, row: CaseResult) -> None:
        self.append_many([row])

    def append_many(self, rows: Sequence[CaseResult]) -> None:
        """Append ``rows`` with one write, flush, and fsync if ``interval`` has passed."""
        if self.stream:
            for r in rows:
                self._encode(r)
            return
        if self._fh is None:
            raise RuntimeError("artifact writer is closed")
        with self._lock, writing(self.path):
            self._fh.write("".join(self._encode(r) for r in rows))
            self._fh.flush()
            now = time.monotonic()
            if now - self._last_sync >= self.interval:
                os.fsync(self._fh.fileno())
                self._last_sync = now

    def close(self, *, sync: bool = True, failed: bool = False) -> None:
        """Flush and close; ``sync=False`` skips the fsync (a :meth:`rewrite` follows).
        ``failed``: the run is failing (a full disk...): an error here would hide that
        one, so it is not raised; what was written stays for ``--resume``."""
        with self._lock:
            fh, self._fh = self._fh, None
            if fh is None:
                return
            try:
                with writing(self.path):
                    try:
                        fh.flush()
                        if sync:
                            os.fsync(fh.fileno())
                    finally:
                        fh.close()
            except OSError:
                if not failed:
                    raise

    def rewrite(self, run: RunResult) -> None:
        """Replace the file atomically by ``run``: the header line, then the rows in
        ``run`` order, from the lines kept when they were appended (the same bytes as
        :meth:`RunResult.save`). If that fails (a full disk), the appended file is left
        as it was, so ``--resume`` continues it."""
        header = {"type": "header", "schema_version": SCHEMA_VERSION, "name": run.name}
        header.update({k: v for k, v in run.header.items() if k not in header})
        lines = [artifact_line(header)]
        for row in run.per_query:
            line = self._lines.get(row.query_id)
            lines.append(line if line is not None else artifact_line(row.to_json()))
        write_output(self.path, lines)


def _atomic_save(run: RunResult, path: Path) -> None:
    """Write ``run`` over ``path`` (:meth:`RunResult.save`: a temporary file, fsync,
    rename and folder fsync for a regular file; directly to a device or pipe)."""
    run.save(path)


# ------------------------------------------------------------------ progress
class _ProgressBar:
    """A rich progress bar on stderr (cases done, rate, ETA, errors), or nothing."""

    def __init__(self, name: str, total: int, done: int, enabled: bool) -> None:
        self.enabled = enabled
        self.errors = 0
        self._pending = 0  # cases counted but not yet shown
        self._last_update = 0.0
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        if not enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[errors]}"),
            console=Console(stderr=True),
        )
        self._task = self._progress.add_task(
            name, total=total, completed=done, rate="", errors="",
        )

    def __enter__(self) -> _ProgressBar:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._flush(time.monotonic())
            self._progress.stop()

    def advance(self, done: int = 1, errored: int = 0) -> None:
        """Count ``done`` more cases, ``errored`` of them with an error. The bar is
        updated at most every :data:`PROGRESS_INTERVAL_S` (and on exit)."""
        if self._progress is None or self._task is None:
            return
        self.errors += errored
        self._pending += done
        now = time.monotonic()
        if now - self._last_update >= PROGRESS_INTERVAL_S:
            self._flush(now)

    def _flush(self, now: float) -> None:
        if self._progress is None or self._task is None:
            return
        self._last_update = now
        if self._pending:
            self._progress.advance(self._task, self._pending)
            self._pending = 0
        speed = self._progress.tasks[self._task].speed
        self._progress.update(
            self._task,
            rate=f"{speed:.1f} cases/s" if speed else "",
            errors=f"[red]{self.errors} errored" if self.errors else "",
        )
