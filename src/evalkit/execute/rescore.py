"""Rescoring: a saved target run's metrics and aggregates computed again from its stored
responses, without calling the target.

Every sample of a run with repeated samples is scored again (keeping its number) and
the cases reduced again as the header's ``samples.reduce`` says. Rows whose call failed
stay errored, cases without a row stay missing, and a run with
either stays ``"incomplete"`` however it is rescored; cases whose golden content changed
since the run are listed in the header (``rescored.goldens_changed``).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from evalkit.core.registry import RegistryError
from evalkit.core.specs import AggregateSpec, MetricSpec
from evalkit.data.artifact import (
    SCHEMA_VERSION,
    header_line,
    streamed_lines,
    upgrade_schema1_rows,
)
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet, load_goldens
from evalkit.data.provenance import metric_provenance, unregistered_metric
from evalkit.data.result_files import row_line
from evalkit.data.results import ArtifactError, RunResult
from evalkit.data.rows import CaseResult, CutRaw, RawCutError
from evalkit.data.samples import reduce_samples
from evalkit.data.targets import TargetResponse
from evalkit.execute.artifact_writer import WrittenRows, span_lines
from evalkit.execute.calls import call_all
from evalkit.execute.case_needs import require_case_fields
from evalkit.execute.executor import MAX_DEFAULT_GRACE_S, RowThenStop, scored
from evalkit.execute.run_header import (
    finish_header,
    goldens_record,
    now,
)
from evalkit.execute.samples import RowKey, row_key, scoring_sample
from evalkit.execute.scoring import (
    MetricError,
    name_list,
    resolve_aggregates,
    resolve_metrics,
    score_cases,
)
from evalkit.execute.target_runner import GoldensInput, as_golden_set, without_response_body
from evalkit.io.outputs import destination, write_output, writing
from evalkit.io.runlock import run_lock
from evalkit.io.setting_names import Setting, SettingError


class GoldensNotRecorded(ArtifactError, SettingError):
    """A run whose header records no golden file, rescored without ``goldens``."""


def rescore(
    run: RunResult | str | Path,
    metrics: Sequence[str],
    aggregates: Sequence[str] | None = None,
    *,
    goldens: GoldensInput | None = None,
    output: str | Path | None = None,
    write: bool = True,
    progress: Callable[[int, int], None] | None = None,
    note: Callable[[str], None] | None = None,
    keep_responses: bool = True,
) -> RunResult:
    """Recompute metrics and aggregates of a target run from its stored responses.

    The target is never called. Rows whose call failed (no stored response) stay errored;
    every other row is scored again, each metric on its own. The input's coverage is
    kept: cases without a row stay missing (``header["missing_cases"]`` and
    ``missing_ids``) and a run with missing cases or failed calls stays ``"incomplete"``,
    however it is rescored.

    Args:
        run: a run artifact path (written by :func:`evaluate`) or a loaded run.
        metrics: the per-case metrics to compute again. The run's other metrics keep
            their stored values, errors and details on every row (a judge's paid grades
            are never dropped), unresolved: a metric no longer registered is kept as
            recorded. A name the run did not record is added.
        aggregates: the aggregates to compute (default: those the run recorded).
        goldens: the golden set (default: the file recorded in the header). Cases whose
            content changed since the run are listed in ``header["rescored"]``.
        output: where to write the rescored artifact (default: ``run`` itself, replaced
            atomically, when it is a path; nothing is written for a loaded run). The
            file written is locked while it is replaced, as :func:`evaluate` locks it.
        write: ``False``: write nothing (``evalkit rescore --dry-run``).
        progress: called with ``(rows done, rows in all)`` after each row (``evalkit
            rescore``'s progress bar).
        note: called with the line printed after a first Ctrl-C or SIGTERM.
        keep_responses: ``False`` (what ``evalkit rescore`` passes): the returned rows
            have their responses' large parts cut, as :func:`evaluate` cuts them
            (:func:`~evalkit.execute.target_runner.without_response_body`; the artifact
            has them whole). ``True`` (the default): every returned row keeps its whole
            response.

    Memory: an artifact named by path is read one row at a time
    (:func:`~evalkit.data.result_files.read_run_rows`: the rows without their
    responses' bodies and where each line lies), each stored row is read again whole
    when it is scored, its new line written to a temporary file beside the output,
    and the aggregates read the new rows back from that file one at a time
    (:class:`~evalkit.execute.artifact_writer.WrittenRows`, as ``evaluate`` does); the
    artifact is then written from it through another temporary file renamed over the
    output, so until that rename the file replaced stays as it was (a crash, Ctrl-C or a
    metric stopping the rescoring leaves it intact). The bytes written are those of
    :meth:`RunResult.save` of the rescored run.

    Raises:
        ArtifactError: not a target run, or a row's case is missing from the goldens;
            ``GoldensNotRecorded``, also a ``SettingError``: no ``goldens`` given and
            none recorded.
        RegistryError: unknown metric or aggregate name.
        MissingCaseFieldsError: a case lacks a field a metric needs (``MetricSpec.needs``;
            :mod:`evalkit.execute.case_needs`), before anything is written.
        ArtifactBusyError: a run is writing the file to be replaced.
        CallsInterrupted: (a ``KeyboardInterrupt``) Ctrl-C or SIGTERM: the rows are
            scored one at a time in a daemon thread
            (:func:`evalkit.execute.calls.call_all`); the first one scores no new row and
            waits up to 10 s for the one in flight, a second one stops at once. Nothing
            is written (a judge's grades received are in its cache).
        SpendingLimitReached: a paid metric's spending limit
            (:mod:`evalkit.execute.spending`: ``--max-calls``, ``--max-cost``) stopped the
            rescoring; nothing is written (a judge keeps the grades it received in its
            cache, so rescoring again does not pay for them twice).
        Exception: the error of a metric's
            :class:`~evalkit.execute.scoring.RunAborted` (a judge whose credentials the
            API refused); nothing is written.
    """
    run, source, where = _target_run(run)
    label = source or run.name
    old_config = dict(run.header.get("config") or {})
    if aggregates is None:
        aggregates = list(old_config.get("aggregates") or [])
    try:
        specs = resolve_metrics(metrics)
    except RegistryError as exc:  # who scored a metric the run records, when it is known
        raise RegistryError(_unregistered(metrics, run) or str(exc)) from None
    named = {s.name for s in specs}
    recorded = _recorded_metrics(run)
    kept = [m for m in recorded if m not in named]
    order = [*recorded, *(s.name for s in specs if s.name not in recorded)]
    agg_specs = resolve_aggregates(aggregates)
    gset = _rescore_goldens(run, source, goldens)
    old_rows = run.samples or run.per_query  # every sample of a run with repeated samples
    cases = _cases_of(old_rows, gset, run.name, label)
    require_case_fields(specs, cases)
    stored: Iterable[CaseResult] = old_rows if where is None or source is None else \
        _stored_rows(source, [where[row_key(r)] for r in old_rows], run.header)
    target_path = Path(output) if output is not None else source
    writes = target_path is not None and write
    with _scratch(target_path if writes else None) as (scratch, fh):
        rows: list[CaseResult] = []
        spans: list[tuple[int, int]] = []  # each new row's line in the scratch file
        olds = iter(stored)

        def score(i: int) -> CaseResult:
            # called for i = 0, 1, ... in turn (one call at a time): the stored rows are
            # read in order, and each new row's line is written before the next is scored
            old, case = next(olds), cases[i]
            if old.response is None:
                row = CaseResult(old.case_id, None, {}, old.error, old.latency_ms)
            else:
                with scoring_sample(old.sample):
                    try:
                        row = _keep(old, _rescored(case, old.response, old.latency_ms,
                                                   specs, label), kept, order)
                    except RowThenStop as exc:  # nothing is written: the input stays as is
                        raise exc.stop from exc.stop.__cause__
            row.sample = old.sample
            line = row_line(row).encode("utf-8", "backslashreplace")
            spans.append((fh.tell(), len(line)))
            with writing(target_path or scratch):  # a full disk names the file written
                fh.write(line)
            return row if keep_responses else without_response_body(row)

        def take(i: int, row: CaseResult) -> None:
            rows.append(row)
            if progress is not None:
                progress(len(rows), len(old_rows))

        # one row at a time, in a daemon thread: Ctrl-C and SIGTERM stop it as they stop
        # evalkit pairwise's verdicts (a judge's request that never ends cannot hold it);
        # the rows kept are those take() collected (call_all's own list is dropped)
        call_all(score, len(old_rows), max_concurrency=1, grace_s=MAX_DEFAULT_GRACE_S,
                 take=take, note=note)
        with writing(target_path or scratch):
            fh.flush()
        header = _rescored_header(run, gset, rows, specs, agg_specs, kept, order,
                                  aggregate_rows=WrittenRows(scratch, spans))
        per_query, samples = (reduce_samples(rows, (header.get("samples") or {}).get(
            "reduce")), rows) if run.samples else (rows, [])
        out = RunResult(name=run.name, per_query=per_query, header=header, samples=samples)
        if writes and target_path is not None:
            with nullcontext(target_path) if destination(target_path) == "stream" \
                    else run_lock(target_path):
                write_output(target_path, streamed_lines(header_line(out.name, header),
                                                         span_lines(scratch, spans)))
    return out


def _stored_rows(source: Path, spans: Sequence[tuple[int, int]], header: Mapping[str, Any]
                 ) -> Iterator[CaseResult]:
    """The whole rows of ``source`` whose lines lie at ``spans``, read one at a time (a
    schema 1 row upgraded as :meth:`RunResult.load` upgrades it)."""
    old_schema = int(header.get("schema_version") or SCHEMA_VERSION) < 2
    for row in WrittenRows(source, spans):
        if old_schema:
            upgrade_schema1_rows([row], header)
        yield row


@contextmanager
def _scratch(beside: Path | None) -> Iterator[tuple[Path, IO[bytes]]]:
    """A temporary file for the rescored rows' lines (its path and a handle open for
    writing), in the folder of ``beside`` when it is a regular file to be written (else
    the system's temporary folder); removed at the end, whatever happens."""
    folder = None
    if beside is not None and destination(beside) != "stream":
        folder = Path(os.path.realpath(beside)).parent
        folder.mkdir(parents=True, exist_ok=True)
    name = beside.name if beside is not None else "rescore"
    named = beside or Path(tempfile.gettempdir())  # what a write error names
    with writing(named):
        fd, made = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".rescore.tmp")
    scratch = Path(made)
    try:
        fh = os.fdopen(fd, "w+b")
    except BaseException:
        os.close(fd)
        scratch.unlink(missing_ok=True)
        raise
    try:
        yield scratch, fh
        with writing(named):  # lines still buffered are written (a full disk says so)
            fh.flush()
    finally:
        # closed and removed whatever happens: a close that fails (its buffered lines
        # find the disk full) must neither hide the error raised nor keep the file
        with suppress(OSError):
            fh.close()
        with suppress(OSError):
            scratch.unlink(missing_ok=True)


def _recorded_metrics(run: RunResult) -> list[str]:
    """The per-case metrics the run recorded, in its order (the config's list, else the
    header's provenance)."""
    config = run.header.get("config") or {}
    names = list(config.get("metrics") or run.header.get("metrics") or [])
    return [str(n) for n in names]


def _keep(old: CaseResult, new: CaseResult, kept: Sequence[str], order: Sequence[str]
          ) -> CaseResult:
    """``new`` (the named metrics scored again) with the ``kept`` metrics' values,
    errors and details of ``old``, as stored, each mapping in ``order``."""
    for name in kept:
        if name in old.metrics:
            new.metrics[name] = old.metrics[name]
        if name in old.metric_errors:
            new.metric_errors[name] = old.metric_errors[name]
        if name in old.details:
            new.details[name] = old.details[name]
    rank = {name: i for i, name in enumerate(order)}
    for mapping in (new.metrics, new.metric_errors, new.details):
        ordered = sorted(mapping.items(), key=lambda kv: rank.get(kv[0], len(rank)))
        mapping.clear()
        mapping.update(ordered)
    return new


def _unregistered(metrics: Sequence[str], run: RunResult) -> str | None:
    """For the first of ``metrics`` not registered now that ``run``'s header records:
    who scored it and why it is missing now
    (:func:`evalkit.data.provenance.unregistered_metric`)."""
    for name in name_list(metrics):
        try:
            resolve_metrics([name])
        except RegistryError:
            return unregistered_metric(name, [run.header or {}])
    return None


def _target_run(run: RunResult | str | Path
                ) -> tuple[RunResult, Path | None, Mapping[RowKey, tuple[int, int]] | None]:
    """``(run, path it was read from, where each row's line lies in it)``: a run read
    from a path holds its rows without their responses' bodies
    (:func:`~evalkit.data.result_files.read_run_rows`).

    Raises:
        ArtifactError: not a target run.
    """
    source = None
    where = None
    if isinstance(run, str | Path):
        from evalkit.data.provenance import restore_recorded
        from evalkit.data.result_files import read_run_rows

        source = Path(run)
        read, where = read_run_rows(source)
        restore_recorded(read.header)  # as RunResult.load: metrics the run defined
        run = RunResult(name=read.name, per_query=read.per_query, header=read.header,
                        integrity=read.integrity, samples=read.samples)
    if run.header.get("kind") != "target":
        raise ArtifactError(
            f"{source or run.name}: not a target run (written by evalkit run/evaluate); "
            "precomputed runs are rescored with `evalkit eval`"
        )
    return run, source, where


def _cases_of(rows: Sequence[Any], gset: GoldenSet, name: str, label: object
              ) -> list[GoldenCase]:
    """The golden case of every row, in order.

    Raises:
        ArtifactError: a row that is not a case row, or whose case the set lacks.
    """
    cases: list[GoldenCase] = []
    for old in rows:
        if not isinstance(old, CaseResult):
            raise ArtifactError(f"{label}: row {old.query_id!r} is not a case row")
        if old.case_id not in gset:
            raise ArtifactError(
                f"case {old.case_id!r} of run {name!r} is not in the golden set "
                f"{gset.path or ''}".rstrip()
            )
        cases.append(gset.get(old.case_id))
    return cases


def _rescored_header(run: RunResult, gset: GoldenSet, rows: Sequence[CaseResult],
                     specs: Sequence[MetricSpec], agg_specs: Sequence[AggregateSpec],
                     kept: Sequence[str] = (), order: Sequence[str] = (), *,
                     aggregate_rows: Sequence[CaseResult] | None = None
                     ) -> dict[str, Any]:
    """The input's header with the metrics scored again, aggregates and golden set, what
    the rescoring changed (``rescored``), and the coverage kept: cases without a row stay
    missing, and the problems of a file altered after it was finished stay recorded. The
    ``kept`` metrics keep their recorded provenance and details totals;
    ``aggregate_rows``: the whole rows the aggregates read, when ``rows`` have their
    responses cut (:func:`finish_header`)."""
    header = dict(run.header)
    old_config = dict(header.get("config") or {})
    old_digests: Mapping[str, str] = (header.get("goldens") or {}).get("case_digests") or {}
    new_digests = gset.case_digests()
    present = {r.case_id for r in rows}
    missing = [c.id for c in gset if c.id not in present]
    # a file cut short or still unfinished keeps its rows; one altered after it was
    # finished (its trailer disagrees) cannot vouch for them
    damaged = list(run.integrity.problems) if run.integrity is not None \
        and run.integrity.has_trailer else []
    changed = sorted(c for c in new_digests if c in old_digests
                     and old_digests[c] != new_digests[c])
    old_provenance: Mapping[str, Any] = header.get("metrics") or {}
    old_totals: Mapping[str, Any] = header.get("details") or {}
    fresh = metric_provenance([s.name for s in specs])
    header["metrics"] = {m: fresh[m] if m in fresh else old_provenance[m]
                         for m in order if m in fresh or m in old_provenance}
    header["aggregate_definitions"] = metric_provenance([s.name for s in agg_specs])
    header["config"] = {**old_config, "metrics": list(order or (s.name for s in specs)),
                        "aggregates": [s.name for s in agg_specs]}
    prior = {k: v for k, v in (header.get("goldens") or {}).items()
             if k not in ("case_tags", "case_clusters")}  # the new set's, or none
    header["goldens"] = {**prior, **goldens_record(gset)}
    header["rescored"] = {
        "at": now(), "previous_metrics": list(old_config.get("metrics") or []),
        "metrics": [s.name for s in specs], "kept_metrics": list(kept),
        "goldens_changed": changed, "input_status": run.header.get("status"),
        "input_problems": damaged,
    }
    header.pop("details", None)
    finish_header(header, rows, agg_specs, specs, missing=missing, damaged=damaged,
                  aggregate_rows=aggregate_rows)
    totals = {m: old_totals[m] for m in kept if m in old_totals}
    if totals or "details" in header:
        header["details"] = {**totals, **(header.get("details") or {})}
    return header


def _rescored(case: GoldenCase, response: TargetResponse, latency: float | None,
              specs: Sequence[MetricSpec], source: object) -> CaseResult:
    """A stored response scored again. When its row did not keep the raw body, metrics
    see a :class:`~evalkit.data.rows.CutRaw` there, and one that uses it is refused by name
    (before anything is written), never recorded as that case's failure."""
    if response.raw_cut is None:
        return scored(case, response, latency, specs)
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
    row = scored(case, probe, latency, specs)
    row.response = response
    return row


def _rescore_goldens(run: RunResult, source: Path | None,
                     goldens: GoldensInput | None) -> GoldenSet:
    """``goldens``, else the golden file the run's header records (relative to the
    artifact's folder), read with the loader it records.

    Raises:
        GoldensNotRecorded: no ``goldens`` given and none recorded.
    """
    if goldens is not None:
        return as_golden_set(goldens)
    recorded = (run.header.get("goldens") or {}).get("path")
    if not recorded:
        raise GoldensNotRecorded(
            f"{source or run.name}: the header records no golden file; pass ",
            Setting("goldens"), " (the golden set it was run on)")
    gpath = Path(recorded)
    if not gpath.is_absolute() and source is not None:
        gpath = source.parent / gpath
    header, old_config = run.header, run.header.get("config") or {}
    loader = (header.get("goldens") or {}).get("loader") or old_config.get("goldens_loader")
    return load_goldens(gpath, loader)


def recorded_goldens(run: Path) -> Path | None:
    """The golden file the header of the run artifact at ``run`` records (what
    :func:`rescore` reads when no ``goldens`` is given), or None."""
    from evalkit.io.limits import MAX_ARTIFACT_DEPTH, loads_json

    try:
        with run.open(encoding="utf-8-sig", newline="\n") as fh:
            header = loads_json(fh.readline(), MAX_ARTIFACT_DEPTH)
        recorded = (header.get("goldens") or {}).get("path")
    except (OSError, ValueError, AttributeError):
        return None
    return Path(recorded) if isinstance(recorded, str) else None


def check_rescore_paths(run: Path, output: Path | None, goldens: Path | None, *,
                        overwrite: bool = True) -> None:
    """What ``evalkit rescore`` refuses before any work: ``run`` that is not a target-run
    artifact, and an artifact that cannot be written (``output``, else ``run`` itself,
    replaced; neither may be one of the inputs). Without ``overwrite`` an ``output`` that
    is an existing file other than ``run`` is refused (``--overwrite``).

    Raises:
        InputError: ``run`` is missing or not an artifact.
        DestinationError: the file to write cannot be written or is an input.
    """
    from evalkit.execute.run_files import require_artifact
    from evalkit.io.outputs import DestinationError, reached, require_writable

    require_artifact(run, "run", "rescore reads a target run written by `evalkit run` (a "
                     "TREC run is scored again with `evalkit eval`)", rows=False)
    if output is not None:
        same = reached(output).exists() and os.path.samefile(reached(output), run)
        require_writable(output, "--output", run.name,
                         inputs=[goldens, recorded_goldens(run)],
                         overwrite=overwrite or same)
        return
    try:  # RUN itself is replaced
        require_writable(run, "run", run.name)
    except DestinationError as exc:
        raise DestinationError(f"{exc}; pass --output to write the rescored run elsewhere"
                               ) from None
