"""A target run as ``evalkit run`` and ``evalkit rescore`` report it: the metric means and
aggregates, the one-line status, why cases errored, how many cases each metric scored and
why it failed on the others, why the command exits 4, what ``--resume`` did, and the same
summary as JSON.

Only the run's header and rows are read (:class:`~evalkit.data.results.RunResult`); a run
that is not complete shows no means (nothing is scored as if complete).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalkit.data.coverage import empty_answers_line
from evalkit.data.metric_counts import message_groups, unmeasured
from evalkit.report.formatting import decimal

if TYPE_CHECKING:
    from evalkit.data.metric_counts import MetricCounts
    from evalkit.data.results import RunResult

#: kinds of error printed under an incomplete run's status line (all go in --json)
SHOWN_ERROR_KINDS = 3


def error_groups(run: RunResult) -> list[dict[str, Any]]:
    """The errored rows grouped by message, most frequent first
    (:func:`evalkit.data.metric_counts.message_groups`: messages that differ only in the
    case id they name are one group). Each group: ``message`` (the first case's own
    text), ``cases`` (how many) and ``ids`` (up to 20).
    """
    failed = [(str(r.query_id), str(r.error)) for r in run.per_query
              if getattr(r, "error", None) is not None]
    return [g.as_dict() for g in message_groups(failed)]


def error_lines(run: RunResult) -> list[str]:
    """Why cases errored, for people: the first message of each kind, with its cases."""
    return _group_lines(error_groups(run), "error message(s)")


def _group_lines(groups: list[dict[str, Any]], what: str) -> list[str]:
    lines: list[str] = []
    for g in groups[:SHOWN_ERROR_KINDS]:
        n = int(g["cases"])
        ids = ", ".join(repr(i) for i in g["ids"][:3]) + (", ..." if n > 3 else "")
        which = f"{n} case{'' if n == 1 else 's'} ({ids})"
        lines.append(f"  {which}: {g['message']}")
    rest = groups[SHOWN_ERROR_KINDS:]
    if rest:
        n = sum(int(g["cases"]) for g in rest)
        lines.append(f"  and {n} more case{'' if n == 1 else 's'} with {len(rest)} other "
                     f"{what}; --json lists them all")
    return lines


def coverage_text(counts: MetricCounts) -> str:
    """``"scored on 27 of 30 cases; 3 errors"`` (and the cases without a response, when
    some call failed)."""
    text = f"scored on {counts.scored} of {counts.cases} cases"
    if counts.errored:
        text += f"; {counts.errored} error{'' if counts.errored == 1 else 's'}"
    if counts.no_response:
        text += f"; {counts.no_response} without a response"
    return text


def metric_error_lines(run: RunResult) -> list[str]:
    """Per metric that failed on some case: ``judged: scored on 27 of 30 cases; 3
    errors:`` and its first messages, each with its cases."""
    lines: list[str] = []
    for name, counts in run.metric_counts().items():
        if counts.errored:
            lines.append(f"{name}: {coverage_text(counts)}:")
            lines.extend(_group_lines([g.as_dict() for g in counts.errors], "messages"))
    return lines


def unmeasured_lines(run: RunResult, *, allow_errors: bool = False, command: str = "run"
                     ) -> list[str]:
    """Why ``evalkit run`` (or ``rescore``, ``command="rescore"``) exits 4, one line per
    metric that did not measure the run (:func:`evalkit.data.metric_counts.unmeasured`)
    and per aggregate not computed; empty when none."""
    lines: list[str] = []
    again = ("`evalkit rescore RUN -m {m}` scores them again" if command == "rescore"
             else "`evalkit run --resume` scores them again from the stored responses")
    for c in unmeasured(run.metric_counts().values(), allow_errors=allow_errors):
        if c.scored == 0:
            lines.append(f"metric {c.metric} scored no case: it failed on all "
                         f"{c.errored} it was given; a metric that measured nothing exits "
                         "4 even with --allow-metric-errors")
        else:
            lines.append(f"metric {c.metric} failed on {c.errored} of {c.cases} cases, so "
                         "the run did not measure every case (exit 4); "
                         f"{again.format(m=c.metric)}, and "
                         "--allow-metric-errors accepts a metric that scored some cases")
    for name, why in (run.header.get("aggregate_errors") or {}).items():
        lines.append(f"aggregate {name} was not computed ({why}), so the run did not "
                     "measure everything (exit 4); fix what the message names, or "
                     "`evalkit rescore RUN --aggregates ...` with the aggregates that apply")
    return lines


def aggregate_text(value: float) -> str:
    """An aggregate's value for people: four decimals, or four significant digits below
    0.01 so that a small cost stays readable (``0.0002063``, not ``0.0002``)."""
    v = float(value)
    if v == 0 or not math.isfinite(v) or abs(v) >= 0.01:
        return decimal(v)
    return f"{v:.{3 - math.floor(math.log10(abs(v)))}f}"


def ppi_lines(recorded: Any) -> list[str]:
    """The PPI++ means a run's header records (``evaluate(..., ppi=True)``), one line per
    labelled metric, then the labels' selection warning."""
    if not isinstance(recorded, Mapping):
        return []
    from evalkit.data.ppi_labels import ppi_mean_line

    lines = [ppi_mean_line(str(m), found)
             for m, found in (recorded.get("metrics") or {}).items()
             if isinstance(found, Mapping)]
    if recorded.get("warning"):
        lines.append(f"warning: {recorded['warning']}")
    return lines


def summary_lines(run: RunResult) -> list[str]:
    """Metric means, aggregates and the status line of a target run, for people."""
    lines: list[str] = []
    complete = run.header.get("status") == "complete"
    names = list((run.header.get("config") or {}).get("metrics") or [])
    if complete and names:
        counts = run.metric_counts()
        width = max(len(n) for n in names)
        lines.append(f"{'metric':<{width}}  {'mean':>8}")
        for n in names:
            if counts[n].errored:  # its mean is undefined; the other metrics keep theirs
                lines.append(f"{n:<{width}}  {'n/a':>8}  ({coverage_text(counts[n])})")
            else:
                lines.append(f"{n:<{width}}  {decimal(run.mean(n)):>8}")
    aggs: dict[str, float] = run.header.get("aggregates") or {}
    for n, v in aggs.items():
        lines.append(f"{n}: {aggregate_text(v)}")
    lines.extend(ppi_lines(run.header.get("ppi")))
    for n, problem in (run.header.get("aggregate_errors") or {}).items():
        lines.append(f"{n}: not computed ({problem})")
    lines.append(status_line(run))
    lines.extend(error_lines(run))
    lines.extend(metric_error_lines(run))
    retried = retried_line(run)
    if retried is not None:
        lines.append(retried)
    executor = executor_line(run)
    if executor:
        lines.append(executor)
    token_note = (run.header.get("notes") or {}).get("tokens_per_minute")
    if isinstance(token_note, str):  # a rate limit that could not act
        lines.append(f"note: {token_note}")
    empty = empty_answers_line(run)
    return lines if empty is None else [*lines, empty]


def retried_requests(run: RunResult) -> dict[str, int]:
    """The requests sent again after a 5xx, a transport failure or a rate-limit answer:
    ``{"target": n}``, every sample row's ``requests`` beyond its first (a target that
    does not count its requests adds none), then ``{metric: n}`` for each metric whose run
    totals in the header count the requests it sent again as ``retried`` (an LLM judge),
    when not 0."""
    rows = run.samples or run.per_query
    out = {"target": sum(max(0, int(getattr(r, "requests", None) or 0) - 1) for r in rows)}
    for metric, totals in (run.header.get("details") or {}).items():
        n = totals.get("retried") if isinstance(totals, dict) else None
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            out[str(metric)] = n
    return out


def retried_line(run: RunResult) -> str | None:
    """:func:`retried_requests` for people, or ``None`` when nothing was sent again."""
    counts = retried_requests(run)
    if not any(counts.values()):
        return None
    by = ", ".join(f"{n} by metric {metric!r}" for metric, n in counts.items()
                   if metric != "target")
    return (f"retried: {counts['target']} request(s) sent again by the target"
            f"{', ' + by if by else ''} (after a 5xx, a transport failure or a rate-limit "
            "answer)")


def rescore_counts(run: RunResult) -> dict[str, int]:
    """What ``rescore`` did (:func:`evalkit.execute.rescore.rescore`): ``rescored`` rows
    scored again from their stored responses, ``kept_errored`` rows without a response
    (their call had failed: kept as they were), ``missing`` cases without a row,
    ``goldens_changed`` cases whose golden changed since the run, and ``metric_failures``
    (metric, case) values that failed."""
    rec = run.header.get("rescored") or {}
    responded = sum(1 for r in run.per_query if getattr(r, "response", None) is not None)
    return {
        "rescored": responded, "kept_errored": len(run.per_query) - responded,
        "missing": int(run.header.get("missing_cases") or 0),
        "goldens_changed": len(rec.get("goldens_changed") or []),
        "metric_failures": sum(len(c) for c in run.metric_failures().values()),
    }


def rescore_line(run: RunResult) -> str:
    """One line of :func:`rescore_counts`, for people."""
    c = rescore_counts(run)
    return (f"rescored {c['rescored']} case(s) from their stored responses; "
            f"{c['kept_errored']} without a response kept as errored; {c['missing']} "
            f"without a row; {c['goldens_changed']} whose golden changed since the run; "
            f"{c['metric_failures']} metric value(s) failed")


def executor_line(run: RunResult) -> str:
    """What a remote executor did, for people (``""`` for the local pool): its workers and
    the items sent again after a worker died, each of which may have repeated a paid
    call."""
    rec = run.header.get("executor")
    if not isinstance(rec, dict) or rec.get("name", "local") == "local":
        return ""
    workers = rec.get("workers")
    where = f" ({workers} workers)" if workers else ""
    retried = int(rec.get("retried", 0))
    line = f"executor: {rec['name']}{where}; {retried} item(s) retried after a worker died"
    if retried:
        line += " (each may have repeated a paid call)"
    lost = int(rec.get("lost_rows", 0))
    return line + (f"; {lost} given up after repeated losses" if lost else "")


def resume_line(run: RunResult) -> str:
    """What ``--resume`` did: rows kept from the earlier run and cases called now (or that
    there was no earlier run to resume)."""
    rec = run.header.get("resume")
    if not isinstance(rec, dict):  # the artifact did not exist: a new run
        n = len(run.per_query)
        return f"resume: no earlier run in the artifact; all {n} case(s) were called"
    kept, called, retried = int(rec["kept"]), int(rec["called"]), int(rec.get("retried", 0))
    again = f" ({retried} of them had errored before)" if retried else ""
    rescored = int(rec.get("rescored", 0))
    scored = (f"; {rescored} kept row(s) had a failed metric, scored again from the stored "
              "response" if rescored else "")
    return (f"resume: {kept} row(s) kept from the earlier run, {called} case(s) called "
            f"now{again}{scored}")


def summary_json(run: RunResult, path: Path | None, *, resumed: bool = False,
                 rescored: bool = False, exit_status: int | None = None) -> str:
    """The same summary as JSON (means only when the run is complete; ``retried_requests``
    is :func:`retried_requests`); with ``resumed``
    (``evalkit run --resume``), also ``resume``: ``{"kept", "called", "retried"}``, or
    null when there was no earlier run; with ``rescored`` (``evalkit rescore``), also
    ``rescored``: :func:`rescore_counts`; with ``exit_status``, also ``exit_code`` (the
    command's, :func:`evalkit.cli.output.exit_status`: ``status`` is the rows' coverage,
    ``"complete"`` also when a metric or an aggregate failed, exit 4) and its deprecated
    duplicate ``exit_status``. A run made with ``--until-decided`` also has
    ``stopped_early``, ``stop_reason`` (``"differs"``, ``"equivalent"`` or null),
    ``cases_planned`` (the golden set's cases; null for a rule on clusters) and
    ``sequential`` (the header's record): a run the rule stopped holds ``cases`` of
    ``cases_planned``, and its means are over those cases only."""
    complete = run.header.get("status") == "complete"
    names = list((run.header.get("config") or {}).get("metrics") or [])
    failed = run.metric_failures()
    out: dict[str, Any] = {
        "name": run.name,
        "artifact": None if path is None else str(path),
        "status": run.header.get("status"),
        "cases": len(run.per_query),
        "epochs": run.epochs,
        "errors": run.header.get("errors", 0),
        "error_ids": run.header.get("error_ids", []),
        "error_messages": error_groups(run),
        "means": {n: None if n in failed else run.mean(n) for n in names} if complete else {},
        "metric_errors": {m: {"cases": len(c), "ids": list(c)[:20], "first": next(iter(
            c.values()))} for m, c in failed.items()},
        "metric_counts": {m: c.as_dict() for m, c in run.metric_counts().items()},
        "aggregates": run.header.get("aggregates") or {},
        "aggregate_errors": run.header.get("aggregate_errors") or {},
        "retried_requests": retried_requests(run),
    }
    if run.header.get("ppi") is not None:
        out["ppi"] = run.header["ppi"]
    if resumed:
        out["resume"] = run.header.get("resume")
    if rescored:
        out["rescored"] = rescore_counts(run)
    if exit_status is not None:  # exit_code as every command's document; exit_status
        out["exit_code"] = exit_status  # is the same value, kept for earlier scripts
        out["exit_status"] = exit_status
    record = run.header.get("sequential")
    if isinstance(record, dict):  # a run --until-decided: whether the rule stopped it
        out["stopped_early"] = bool(record.get("stopped_early"))
        out["stop_reason"] = record.get("reason") if record.get("stopped_early") else None
        out["cases_planned"] = (record.get("units") if record.get("unit") == "case"
                                else None)
        out["sequential"] = record
    if isinstance(run.header.get("executor"), dict):
        out["executor"] = run.header["executor"]
    from evalkit.stats.numeric import json_ready  # standard JSON: no NaN token, ever

    return json.dumps(json_ready(out), indent=2, allow_nan=False)


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
    per = ""
    if run.epochs > 1:  # repeated samples: each case's row is its samples reduced
        how = (run.header.get("samples") or {}).get("reduce", "mean")
        per = f" x {run.epochs} samples (reduced by {how})"
    if not errors and not n_missing and run.header.get("status", "complete") == "complete":
        return f"complete: {n} cases{per}{metric_note}"
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
    return f"INCOMPLETE{per}: {'; '.join(parts)}; not scored{metric_note}"
