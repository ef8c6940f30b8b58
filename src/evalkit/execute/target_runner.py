"""The target runner: call a target on every golden case, concurrently and resumably.

:func:`evaluate` invokes ``target.invoke(case)`` from at most ``max_concurrency`` worker
threads (:mod:`evalkit.execute.executor`), scores each response in the same thread with the
registered metrics (:func:`evalkit.execute.scoring.score_case`), and returns a
:class:`~evalkit.data.results.RunResult` of :class:`~evalkit.data.rows.CaseResult` rows in
golden-set order. Rows are keyed by case id; completion order never matters.

Errors. A case whose call raises has a row with the error and no response or metrics;
the run is then ``"incomplete"``: its aggregates are not computed, and
``RunResult.scores``/``mean`` and every built-in aggregate raise instead of reading an
error as 0. A metric that raises on a case is recorded on that metric
(``row.metric_errors``): the case keeps its response and its other metrics, and the run
stays complete (:mod:`evalkit.data.coverage`); ``RunResult.mean`` of that metric raises.

The artifact (``artifact=path``, :mod:`evalkit.execute.artifact_writer`) is locked for the whole
run (:mod:`evalkit.io.runlock`: a second writer is refused at once); once the executor
is open (nothing that can fail before the first call has touched the file: an earlier
artifact under ``overwrite``/``resume`` stays as it was until then) the header line is
written with ``"status": "running"``, each row is appended and flushed as its case
completes, and at the end the file is replaced atomically by the finished artifact (rows
in golden-set order, final header, trailer). Ctrl-C keeps the rows of the calls in
flight that finish within ``grace_s``.

Rescoring a saved run without calling the target is :mod:`evalkit.execute.rescore`.

Resume (``resume=True``) reads the artifact, drops a truncated last line, keeps every
row with a response, and calls only the cases without one (missing, or whose call
failed); a kept row whose metric failed is scored again from its stored response,
without calling the target. It refuses, saying what changed, when the recorded config
(target, metrics and their definition versions, aggregates) or the golden set differs.
``max_concurrency`` is not part of the config: it changes speed, not results.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from evalkit.core.specs import AggregateSpec, MetricSpec
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet, load_goldens
from evalkit.data.labels import HumanLabels
from evalkit.data.results import ArtifactError, RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import AsyncTarget, Target
from evalkit.execute.artifact_writer import ArtifactWriter, WrittenRows, read_partial
from evalkit.execute.case_needs import require_case_fields
from evalkit.execute.dispatch_window import DispatchWindow
from evalkit.execute.executor import Interrupts, Job, RunInterrupted, default_grace_s
from evalkit.execute.executor_api import (
    ExecutorChoice,
    RunningExecutor,
    Work,
    as_choice,
    close_executor,
    executor_report,
)
from evalkit.execute.executor_choice import ChosenExecutor, choose_executor
from evalkit.execute.pacing import Pacing
from evalkit.execute.progress import ProgressBar
from evalkit.execute.run_header import (
    ResumeError,
    check_resumable,
    describe_target,
    finish_header,
    new_header,
)
from evalkit.execute.samples import (
    RowKey,
    finish_rows,
    ordered,
    record_samples,
    resume_rows,
    row_key,
    sample_numbers,
)
from evalkit.execute.scoring import (
    resolve_aggregates,
    resolve_metrics,
)
from evalkit.execute.sequential_run import SequentialMonitor, UntilDecided
from evalkit.io.limits import MAX_GRACE_S, check_name
from evalkit.io.runlock import run_lock
from evalkit.io.setting_names import Setting
from evalkit.stats.numeric import finite_real

__all__ = ["DEFAULT_MAX_CONCURRENCY", "ResumeError", "RunInterrupted", "as_golden_set",
           "describe_target", "evaluate", "resolve_aggregates"]

DEFAULT_MAX_CONCURRENCY = 8
GoldensInput = GoldenSet | Iterable[GoldenCase] | str | Path


# ------------------------------------------------------------------ public API
def evaluate(
    target: Target | AsyncTarget,
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
    epochs: int = 1,
    reduce: str = "mean",
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    executor: str | ExecutorChoice | None = None,
    ppi: bool = False,
    labels: HumanLabels | str | Path | None = None,
    until_decided: UntilDecided | None = None,
    keep_responses: bool = True,
) -> RunResult:
    """Run ``target`` on every golden case and score the responses.

    ``name`` (default: the target's name) may not be blank (``ValueError``).

    Args:
        target: an object with ``name`` and ``invoke(case) -> TargetResponse``
            (:class:`~evalkit.data.targets.CallableTarget`, ``HttpTarget``...). It is called
            from several threads at once when ``max_concurrency > 1``.
        goldens: a :class:`GoldenSet`, an iterable of :class:`GoldenCase`, or a golden
            file path (read with :func:`~evalkit.data.goldens.load_goldens`).
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
            written (seconds, 0 to :data:`~evalkit.io.limits.MAX_GRACE_S`, one hour);
            default: the smaller of the target's bound on one attempt
            (``attempt_bound_s`` or ``timeout_s``) and 10 s.
        epochs: K, how many times each case is answered (>= 1). With K >= 2 every
            sample is its own row keyed by (case id, sample 0..K-1), scored by every
            metric, and resumable (:mod:`evalkit.execute.samples`).
        reduce: how a case's K samples become its row in ``per_query``: ``"mean"``,
            ``"max"``, ``"min"``, ``"all"`` or ``"all:T"`` (every sample >= T; T
            defaults to 0.5) (:mod:`evalkit.data.samples`).
        requests_per_minute: the most calls started per minute, shared by every worker
            (``None``: no limit; else at least 1/60, one call an hour); see
            :mod:`evalkit.execute.pacing`.
        tokens_per_minute: the most tokens per minute, from the usage responses report
            (``meta["tokens"]``, ``meta["tokens_in"] + meta["tokens_out"]`` or
            ``meta["usage"]``: :func:`~evalkit.execute.pacing.reported_tokens`), applied
            after the fact (``None``: no limit; else at least 60, one token a second).
            When no response reports its tokens the limit cannot act, and
            ``header["notes"]["tokens_per_minute"]`` says so.
        executor: where the calls are made: ``"local"`` (the default, threads of this
            process), ``"dask"`` (the evalkit-dask plugin) or an
            :class:`~evalkit.execute.executor_api.ExecutorChoice` with options and how
            workers build the target (docs/scaling.md). The artifact, its lock, resume
            and the in-flight bound stay here whatever it is.
        until_decided: stop once a comparison with a baseline is decided
            (:class:`~evalkit.execute.sequential_run.UntilDecided`: baseline, metric,
            margin, seed): the cases are called in a random order fixed by the seed and
            the run stops taking new ones when the anytime-valid confidence sequence of
            the mean difference over the longest completed prefix of that order
            excludes 0 or lies inside the margin. ``header["sequential"]`` records why
            and where it stopped (:mod:`evalkit.execute.sequential_run`); the artifact
            is complete for the cases it holds.
        keep_responses: ``False`` (what ``evalkit run`` passes): once a row is written
            to ``artifact`` (a regular file), its response's large parts are dropped
            from memory (``raw``; ``ranked_ids`` and ``text`` are cut to their first id
            and character: :func:`without_response_body`), so the run holds memory
            for the calls in flight and each case's small fields (metric values,
            latency, errors, details, ``meta``), not for every response; the
            aggregates read the rows back from the artifact, one at a time, and give
            the same values. The returned rows then have those fields cut (the
            artifact has them whole: ``RunResult.load``). ``True`` (the default), or no
            artifact, or a device or pipe: every row keeps its whole response.

    Calls in flight adapt to rate limits (:mod:`evalkit.execute.pacing`): a call that
    met a 429/529 halves the limit, successes raise it again, never above
    ``max_concurrency``. An async target (an ``ainvoke`` coroutine method) runs on one
    event loop (:mod:`evalkit.execute.async_executor`) with the same rules.

    Returns:
        A :class:`RunResult` of :class:`CaseResult` rows in golden-set order, each
        with its whole response unless ``keep_responses=False`` (with
        K >= 2: the reduced rows, and every sample row in ``RunResult.samples``; the
        header's ``errors`` and ``aggregates`` are over the sample rows). Its header
        has ``status`` (``"complete"``/``"incomplete"``), ``errors`` (failed calls),
        ``error_ids``, ``metric_errors`` (``{metric: cases it failed on}``),
        ``metric_error_ids``, ``aggregates`` (``{name: value}``, empty when a call
        failed) and ``aggregate_errors``; a resumed run also has ``resumed`` (how many
        times) and ``resume``, what the last resume did: ``{"kept": rows kept from the
        earlier run, "called": cases called, "retried": how many of those had errored,
        "rescored": kept rows whose failed metrics were scored again}``.

    Raises:
        ValueError: ``name`` blank or too long; ``max_concurrency``, ``grace_s``,
            ``fsync_interval_s``,
            ``requests_per_minute`` or ``tokens_per_minute`` out of its range (the
            message names it).
        SampleError: (a ``ValueError``) ``epochs`` or ``reduce`` is not valid.
        SequentialError: (a ``ValueError``) ``until_decided`` cannot run: a metric
            without a declared range, a baseline without every case's value (names
            them), a bad margin.
        RegistryError: an unknown metric or aggregate name (before any call is made).
        MissingCaseFieldsError: a case lacks a field a metric needs (``MetricSpec.needs``:
            :class:`~evalkit.execute.case_needs.UnjudgedCasesError` for expected ids,
            ``UnansweredCasesError`` for reference answers), before any call is made;
            names the metrics and the cases.
        UnsendableError: the executor cannot send the target or a metric to its
            workers (before anything is written; names it).
        GoldenError: a golden file breaks a rule.
        ArtifactBusyError: another process is writing ``artifact`` (names its pid).
        FileExistsError: ``artifact`` exists and neither ``resume`` nor ``overwrite``.
        ResumeError: ``resume`` and the config or golden set changed (says what).
        ArtifactError: ``resume`` and the artifact is not a readable target run.
        RunInterrupted: (a ``KeyboardInterrupt``) Ctrl-C, raised once the rows that
            arrived within the grace period are written and the artifact is synced;
            resume continues it.
        Exception: the error of a metric's :class:`~evalkit.execute.scoring.RunAborted` (a
            failure that is not a case's, such as an LLM judge without credentials),
            raised once after the artifact is synced; resume continues the run.
    """
    _check_settings(target, max_concurrency, name, fsync_interval_s)
    grace = default_grace_s(target) if grace_s is None else _check_grace(grace_s)
    pacing = Pacing(max_concurrency, requests_per_minute, tokens_per_minute)
    gset = as_golden_set(goldens)
    specs = resolve_metrics(metrics)
    agg_specs = resolve_aggregates(aggregates)
    require_case_fields(specs, list(gset))
    monitor = None
    if until_decided is not None:
        from evalkit.execute.sequential_run import sequential_monitor

        monitor = sequential_monitor(until_decided, gset, specs, epochs, reduce)
        config = {**(config or {}), "until_decided": monitor.config()}
    target_name = str(getattr(target, "name", "") or type(target).__name__)
    header = new_header(
        name or target_name, target, gset, specs, agg_specs,  # type: ignore[arg-type]
        config or {},
    )
    record_samples(header, epochs, reduce)
    choice = as_choice(executor)
    chosen = choose_executor(choice, Work(target, target_name, (), specs, max_concurrency,
                                          choice.target))
    plan = _Plan(target, target_name, gset, specs, agg_specs, header, max_concurrency,
                 grace, progress, chosen)
    plan.epochs, plan.reduce = epochs, reduce
    plan.pacing = pacing
    plan.ppi_labels = _ppi_labels(ppi, labels, gset)
    plan.monitor = monitor
    plan.keep_responses = keep_responses
    if artifact is None:
        return plan.run(None, {}, {})
    path = Path(artifact)
    writer = ArtifactWriter(path, fsync_interval_s)
    # a device or a pipe is written once, at the end: there is no file to replace or lock
    with nullcontext(path) if writer.stream else run_lock(path):
        kept, redo, first = _earlier_rows(path, writer, header, gset, epochs, resume=resume,
                                          overwrite=overwrite, light=not keep_responses)
        # the artifact is (re)written only once the executor is open: a scheduler that
        # does not answer, workers that cannot build the target... leave it as it was
        return plan.run(writer, kept, redo, lambda: writer.start(header, first))


def _check_settings(target: object, max_concurrency: int, name: str | None,
                    fsync_interval_s: float) -> None:
    """Refuse, before anything runs, what :func:`evaluate` cannot take (its ``Raises``)."""
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) \
            or max_concurrency < 1:
        raise ValueError(f"max_concurrency must be a positive integer, got {max_concurrency!r}")
    if name is not None:
        check_name(name)  # not blank, as the eval config's name
    from evalkit.execute.async_executor import is_async_target

    if not callable(getattr(target, "invoke", None)) and not is_async_target(target):
        raise TypeError(
            f"{target!r} is not a target: it has no invoke(case) method; wrap a function in "
            "evalkit.CallableTarget(fn)"
        )
    if isinstance(fsync_interval_s, bool) or not isinstance(fsync_interval_s, int | float) \
            or math.isnan(fsync_interval_s) or fsync_interval_s < 0:
        raise ValueError("fsync_interval_s must be a number of seconds >= 0 (0 syncs after "
                         f"every row), got {fsync_interval_s!r}")


def _earlier_rows(path: Path, writer: ArtifactWriter, header: dict[str, Any],
                  gset: GoldenSet, epochs: int, *, resume: bool, overwrite: bool,
                  light: bool = False
                  ) -> tuple[dict[RowKey, CaseResult], dict[RowKey, CaseResult],
                             Sequence[CaseResult]]:
    """``(kept, redo, first)``: the rows of the run in ``path`` that are kept, those whose
    case is called again or scored again, and the rows the artifact starts with; none
    unless ``resume``. A resumed run's ``header`` records it.

    ``light`` (``keep_responses=False``): the file is read one row at a time, the kept
    rows hold no response body (:func:`without_response_body`'s cut), and ``first``
    reads each row whole from the earlier file as the new one is written
    (:class:`~evalkit.execute.artifact_writer.WrittenRows`); the rows scored again
    (``redo``, those whose metric failed) are read whole.

    Raises:
        ArtifactError: ``resume`` on a device or a pipe, or an unreadable artifact.
        ResumeError: the config or golden set changed since the run in ``path``.
        FileExistsError: ``path`` exists and neither ``resume`` nor ``overwrite``.
    """
    if resume and writer.stream:
        raise ArtifactError(f"{path}: not a regular file (a device or a pipe), so there "
                            "is no earlier run to resume; drop --resume")
    previous = read_partial(path, light=light) if resume and path.exists() else None
    if previous is None:
        if path.exists() and not writer.stream and not resume and not overwrite:
            raise FileExistsError(
                f"{path} already exists; resume it (--resume), overwrite it "
                "(--overwrite) or choose another output"
            )
        return {}, {}, []
    old_header, old_rows, spans = previous
    check_resumable(path, old_header, header)
    header["created"] = old_header.get("created", header["created"])
    header["resumed"] = int(old_header.get("resumed", 0)) + 1
    kept, redo, header["resume"] = resume_rows(gset, epochs, old_rows)
    header["resume"]["planned"] = header["resume"]["called"]
    first = ordered(gset, epochs, {**kept, **redo})
    if not light:
        return kept, redo, first
    redo = dict(zip(redo, WrittenRows(path, [spans[k] for k in redo]), strict=True))
    return kept, redo, WrittenRows(path, [spans[row_key(r)] for r in first])


def _ppi_labels(ppi: bool, labels: HumanLabels | str | Path | None, gset: GoldenSet
                ) -> HumanLabels | None:
    """The labels ``evaluate(..., ppi=True)`` records PPI means from, read before any
    call (checked against the golden set's ids); None without ``ppi``.

    Raises:
        LabelError: ``labels`` without ``ppi``, an unreadable labels file, a label of a
            case the golden set lacks, or no labels at all.
    """
    from evalkit.data.labels import LabelError, labels_from_goldens, read_labels

    if not ppi:
        if labels is not None:
            raise LabelError("labels are read for PPI means only: add ", Setting("ppi", True))
        return None
    found = labels if isinstance(labels, HumanLabels) else (
        read_labels(labels) if labels is not None else labels_from_goldens(gset))
    if not found.labels:
        raise LabelError(f"{gset.path or 'the golden set'}: ", Setting("ppi", True),
                         " but no case has labels; pass ", Setting("labels"), " or add "
                         "labels: {metric: value} to the labelled golden cases")
    found.check_ids(gset.ids(), "the golden set")
    return found


def _check_grace(grace_s: float) -> float:
    if (seconds := finite_real(grace_s)) is None or not 0 <= seconds <= MAX_GRACE_S:
        raise ValueError(f"grace_s must be a number of seconds from 0 to {MAX_GRACE_S:g} "
                         f"(one hour), got {grace_s!r}")
    return float(grace_s)


class _Plan:
    """One run's settings, and the loop that collects its rows."""

    def __init__(self, target: Target | AsyncTarget, target_name: str, gset: GoldenSet,
                 specs: Sequence[MetricSpec], agg_specs: Sequence[AggregateSpec],
                 header: dict[str, Any], max_concurrency: int, grace: float,
                 progress: bool | None, chosen: ChosenExecutor) -> None:
        self.target, self.target_name, self.gset = target, target_name, gset
        self.specs, self.agg_specs, self.header = specs, agg_specs, header
        self.max_concurrency, self.grace, self.progress = max_concurrency, grace, progress
        self.chosen = chosen
        self.pacing: Pacing | None = None
        self.ppi_labels: HumanLabels | None = None
        self.monitor: SequentialMonitor | None = None
        self.keep_responses = True

    epochs, reduce = 1, "mean"

    def run(self, writer: ArtifactWriter | None, kept: Mapping[RowKey, CaseResult],
            redo: Mapping[RowKey, CaseResult],
            begin: Callable[[], None] | None = None) -> RunResult:
        """Open the executor, then ``begin()`` (write the artifact's first lines), then
        collect every row; nothing is written before the executor is open."""
        monitor = self.monitor
        cases = list(self.gset) if monitor is None else self._in_order(monitor)
        jobs = [Job(c, redo.get((c.id, s)), s) for c in cases
                for s in sample_numbers(self.epochs) if (c.id, s) not in kept]
        results: dict[RowKey, CaseResult] = dict(kept)
        total = len(self.gset) * self.epochs
        show = sys.stderr.isatty() if self.progress is None else self.progress
        stopped: RunInterrupted | None = None
        writing = [False]
        executor: RunningExecutor | None = None
        window = None if monitor is None else _Window(self.max_concurrency, jobs)
        drop = writer is not None and not writer.stream and not self.keep_responses
        try:
            executor = self.chosen.open(Work(self.target, self.target_name, jobs, self.specs,
                                             self.max_concurrency, self.chosen.choice.target,
                                             self.pacing, window))
            if begin is not None:
                begin()
            with Interrupts() as interrupts, ProgressBar(
                    self.header["name"], total, len(kept), show) as bar:

                def take(batch: list[CaseResult]) -> None:
                    for row in batch:
                        results[row_key(row)] = row
                    if writer is not None:
                        writing[0] = True
                        writer.append_many(batch)
                        writing[0] = False
                    if drop:  # written: the artifact holds the large parts now
                        for row in batch:
                            results[row_key(row)] = without_response_body(row)
                    bar.advance(len(batch), sum(1 for r in batch if r.error is not None))
                    self._monitor(results, running, window)

                running = executor
                self._monitor(results, running, window)  # a resumed run may be decided
                executor.start()
                try:
                    for batch in executor.batches(interrupts):
                        take(batch)
                except KeyboardInterrupt:  # SIGINT is not ours to handle here
                    if writing[0]:
                        raise  # cut inside a write: stop now; resume drops the cut line
                    interrupts.count += 1
                if interrupts.count:
                    stopped = self._grace(executor, interrupts, take, bar, results, total)
        except BaseException as exc:
            if monitor is not None:  # what the sequence said when the run was stopped
                exc.sequential = monitor.record({})  # type: ignore[attr-defined]
            if executor is not None:
                executor.stop()
                if isinstance(exc, Exception):  # a failed write or a stopping worker
                    executor.join(self.grace)
                close_executor(executor)
            if writer is not None:
                writer.close(failed=True)
            raise
        self.header["executor"] = {"name": self.chosen.choice.name,
                                   **executor_report(executor)}
        close_executor(executor)
        if stopped is not None:
            if writer is not None:
                writer.close()
            raise stopped
        record = self.header.get("resume")
        if isinstance(record, dict):  # what was done, not what was planned (a sequential
            # run stops before calling every case)
            record["called"] = sum(1 for k in results if k not in kept and k not in redo)
            record["rescored"] = sum(1 for k in results if k in redo)
            if record.pop("planned", record["called"]) != record["called"]:
                record.pop("retried", None)  # which of them had errored is not known
        rows, samples = finish_rows(self.gset, self.epochs, self.reduce, results)
        scored = samples or rows
        finish_header(self.header, scored, self.agg_specs, self.specs,
                      aggregate_rows=writer.written_rows(scored)
                      if drop and writer is not None and writer.holds(scored) else None)
        if monitor is not None:
            monitor.record(self.header, called=len(rows))
        note = None if self.pacing is None else self.pacing.token_limit_note()
        if note is not None:  # the limit could not act: say so, not silently nothing
            self.header.setdefault("notes", {})["tokens_per_minute"] = note
        run = RunResult(name=self.header["name"], per_query=rows, header=self.header,
                        samples=samples)
        if self.ppi_labels is not None:
            from evalkit.data.ppi_labels import ppi_means

            run.header["ppi"] = ppi_means(run, self.ppi_labels)
        if writer is not None:
            writer.close(sync=False)  # the rewrite below is synced before it replaces it
            writer.rewrite(run)
        return run

    def _in_order(self, monitor: SequentialMonitor) -> list[GoldenCase]:
        """The golden cases in the monitor's random order."""
        by_id = {c.id: c for c in self.gset}
        return [by_id[cid] for cid in monitor.case_order()]

    def _monitor(self, results: Mapping[RowKey, CaseResult], executor: RunningExecutor,
                 window: _Window | None) -> None:
        """Update the sequence with the rows so far; once it is decided, no new case
        starts (the calls in flight finish and are written); until then the ``window``
        lets cases start up to ``max_concurrency`` past the settled ones, and every case
        once a failed one holds the prefix (the rule can no longer decide)."""
        monitor = self.monitor
        if monitor is None or monitor.decided:
            return
        if monitor.update(results) != "undecided":
            executor.stop()
        elif window is not None:
            if monitor.blocked is not None:
                window.release()
            else:
                window.settle(results)

    def _grace(self, executor: RunningExecutor, interrupts: Interrupts,
               take: Callable[[list[CaseResult]], None], bar: ProgressBar,
               results: Mapping[RowKey, CaseResult], total: int) -> RunInterrupted:
        """After the first Ctrl-C: no new case; the calls in flight may finish within the
        grace period, and their rows are written; a second Ctrl-C stops waiting."""
        executor.stop()
        busy = executor.in_flight
        if busy:
            bar.note(f"interrupted: waiting up to {self.grace:g} s for {busy} call(s) in "
                     "flight to finish and be written (Ctrl-C again to stop now)")
        again = False
        try:
            for batch in executor.batches(interrupts, time.monotonic() + self.grace,
                                          until=2):
                take(batch)
        except KeyboardInterrupt:
            again = True
        except Exception:  # a worker's failure while stopping: Ctrl-C wins
            pass
        again = again or interrupts.count > 1
        return RunInterrupted(len(results), total, executor.in_flight, self.grace, again,
                              self.epochs)


class _Window(DispatchWindow):
    """The :class:`DispatchWindow` of a run's ``jobs``, advanced past the leading jobs
    whose rows the runner has taken."""

    def __init__(self, size: int, jobs: Sequence[Job]) -> None:
        super().__init__(size)
        self._keys = [(job.case.id, job.sample) for job in jobs]
        self._settled = 0

    def settle(self, results: Mapping[RowKey, CaseResult]) -> None:
        """Advance past the leading jobs with a row in ``results``."""
        while self._settled < len(self._keys) and self._keys[self._settled] in results:
            self._settled += 1
        self.advance(self._settled)


def without_response_body(row: CaseResult) -> CaseResult:
    """``row`` with its response's ``raw`` and ``raw_cut`` dropped, ``ranked_ids`` cut to
    its first id and ``text`` to its first character (whether the case answered anything
    stays known: :func:`evalkit.data.coverage.empty_answers`); a new row, ``row`` is not
    changed; every other field is kept."""
    resp = row.response
    if resp is None:
        return row
    return replace(row, response=replace(resp, ranked_ids=tuple(resp.ranked_ids[:1]),
                                         text=resp.text[:1] if resp.text else resp.text,
                                         raw=None, raw_cut=None))


def as_golden_set(goldens: GoldensInput) -> GoldenSet:
    """A :class:`GoldenSet` from a set, an iterable of cases, or a golden file path."""
    if isinstance(goldens, GoldenSet):
        return goldens
    if isinstance(goldens, str | Path):
        return load_goldens(goldens)
    return GoldenSet(list(goldens))


