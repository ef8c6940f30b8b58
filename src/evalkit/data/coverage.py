"""Coverage: whether a run holds a result for every case it should.

A verdict rests on two levels of completeness (docs/artifacts.md):

* **coverage**, for the whole run (this module). A target run is complete when its
  status is ``complete``, it has a row with a response for every case of the golden set
  its header records (``goldens.n_cases`` and ``goldens.case_digests``, which must hash
  to its ``goldens.sha256``: :func:`evalkit.data.run_origin.goldens_record_problems`),
  and its file is neither cut short nor still being written
  (:class:`evalkit.data.artifact.Integrity`);
  with repeated samples (``epochs`` K >= 2) it counts (case, sample) pairs. A
  retrieval run is complete when its rows match the counts its header records
  (``notes.num_queries``; for a baseline also the promoted fingerprint's case count and
  ids). A failed metric leaves coverage alone: only a missing row or a failed target call
  (no response) makes a run incomplete.
  A target run a sequential rule stopped early (``evalkit run --until-decided``) is
  complete for what it evaluated when every case of the prefix its decision rests on has
  a row; it still counts the golden set its header records (``expected``), and
  :attr:`Coverage.partial` says it is evidence for the rule's comparison only.
* **validity**, per check: a metric that failed on a case in a check's scope makes that
  check an error (:mod:`evalkit.gate`), and :meth:`RunResult.mean` refuses it.

:func:`coverage_of` computes it; :func:`require_complete` raises
:class:`IncompleteRunError` for commands that refuse incomplete input (``evalkit gate``,
``baseline promote``, ``compare`` without ``--allow-incomplete``). :func:`notes_of` reads
what the scoring of a TREC run noted about the judged queries: run topics without
judgments (ignored) and judged queries the run lacks (scored 0 or skipped).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from evalkit.data.rows import QueryResult
from evalkit.data.run_origin import goldens_record_problems
from evalkit.io.error_messages import quoted

if TYPE_CHECKING:
    from evalkit.data.run_record import RunRecord

__all__ = ["Coverage", "IncompleteRunError", "completeness_lines", "coverage_of",
           "notes_of", "recorded_case_ids", "require_complete", "sequential_stop",
           "skipped_judged", "stopped_note", "stopped_problem"]

#: Case ids shown in a message before "and N more".
SHOWN_IDS = 10


@dataclass(frozen=True)
class Coverage:
    """What a run covers, against what its header says it should.

    Attributes:
        run: the run's name.
        complete: ``True`` when nothing is missing, failed, cut short or unfinished.
        expected: the number of cases (queries) the header records, or ``None`` when it
            records none (a run built in memory; nothing to compare against).
        rows: the rows present.
        missing: recorded case ids without a row, in golden-set order (empty when the
            header records only a count: :attr:`problems` then says how many).
        failed: ids of rows whose target call failed (no response).
        problems: one sentence per reason the run is incomplete.
        notes: what the file cannot prove (a schema 1 artifact has no trailer).
        partial: for a run that is complete for what it evaluated but holds fewer cases
            than its header records (a sequential rule stopped it early:
            :func:`sequential_stop`), one sentence saying so and naming the fix; such a
            run is evidence for the rule's own decision only, so ``evalkit gate`` judges
            no other check on it and ``baseline promote`` refuses it. ``None`` otherwise.
    """

    run: str
    complete: bool
    expected: int | None
    rows: int
    missing: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    partial: str | None = None

    @property
    def present(self) -> int:
        """Cases with a usable row: rows present, minus those whose call failed."""
        return self.rows - len(self.failed)

    def message(self, role: str = "run") -> str:
        """One paragraph: ``"<role> '<name>' is incomplete: ..."`` (or complete)."""
        if self.complete:
            return f"{role} {quoted(self.run)} is complete ({self.rows} rows)"
        return f"{role} {quoted(self.run)} is incomplete: " + "; ".join(self.problems)


class IncompleteRunError(ValueError):
    """A run that fails coverage where complete evidence is required.

    ``coverage`` holds the details (missing and failed case ids)."""

    def __init__(self, message: str, coverage: Coverage) -> None:
        super().__init__(message)
        self.coverage = coverage


def show_ids(ids: Sequence[str], limit: int = SHOWN_IDS) -> str:
    """``'a', 'b' and 3 more``."""
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


_RANKING_ROWS = frozenset({QueryResult})


def _row_id(row: Any) -> str:
    return str(getattr(row, "query_id", None) or getattr(row, "case_id", ""))


def _sha256(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def coverage_of(run: RunRecord) -> Coverage:
    """The :class:`Coverage` of ``run`` (a loaded artifact or a run built in memory).

    Never raises for an odd header: a field that is not what it should be is a problem
    in the result.
    """
    header: Mapping[str, Any] = run.header or {}
    rows = list(run.per_query)
    failed: tuple[str, ...] = ()
    if set(map(type, rows)) <= _RANKING_ROWS:  # scored rankings: no call, none failed
        ids = [str(r.query_id or "") for r in rows]
    else:
        ids = [_row_id(r) for r in rows]
        failed = tuple(i for i, r in zip(ids, rows, strict=True)
                       if getattr(r, "error", None) is not None
                       and getattr(r, "response", None) is None)
    integrity = run.integrity
    problems: list[str] = []
    notes: list[str] = list(integrity.notes) if integrity is not None else []
    missing: tuple[str, ...] = ()
    expected: int | None = None
    partial: str | None = None
    if header.get("kind") == "target":
        expected, missing, found = _target(header, ids)
        problems.extend(found)
        problems.extend(goldens_record_problems(header, ids))  # a header edited
        stopped = sequential_stop(header)
        if stopped is not None:
            notes.append(stopped_note(stopped, header))
            if expected is not None and len(set(ids)) < expected:
                partial = stopped_problem(stopped, expected)
        problems.extend(_samples(header, run.samples))
        unfinished = header.get("status") == "running"
    else:
        expected, found = _retrieval(header, ids)
        problems.extend(found)
        unfinished = False
    if header.get("kind") == "target" and header.get("status") == "incomplete" \
            and not failed and not missing and not problems \
            and (integrity is None or integrity.schema_version >= 2):
        # schema 1 wrote "incomplete" for metric failures; schema 2 only for a reason
        why = (header.get("rescored") or {}).get("input_problems") or []
        problems.append("its header marks it incomplete" + (
            f" (rescored from a file that was altered: {'; '.join(map(str, why))})"
            if why else ""))
    if failed:
        of = f" of {expected}" if expected is not None else f" of {len(rows)}"
        problems.append(f"{len(failed)}{of} case(s) have no response: the target call "
                        f"failed ({show_ids(failed)})")
    if integrity is not None and integrity.problems:
        if unfinished and not integrity.has_trailer:
            cut = (f"; line {integrity.cut_line} was cut mid-line and dropped"
                   if integrity.cut_line is not None else "")
            problems.append(
                "it never finished (status 'running', no trailer line): the run is still "
                "being written, or was stopped or killed; `evalkit run --resume` (or "
                f"evaluate(..., resume=True)) continues it{cut}")
        else:
            problems.extend(integrity.problems)
    elif unfinished:
        problems.append("its status is 'running': the run never finished")
    return Coverage(
        run=run.name, complete=not problems, expected=expected, rows=len(rows),
        missing=missing, failed=failed, problems=tuple(problems), notes=tuple(notes),
        partial=partial,
    )


def recorded_case_ids(run: RunRecord) -> frozenset[str] | None:
    """The ids of the cases ``run`` should hold, as its header records them, whether it
    holds them or not: a target run's golden cases (``goldens.case_digests``); a scored
    ranked run's judged queries (every one has a row, scored 0 when the ranking lacks
    it), read from the qrels file its header names when that file is there unchanged
    (same SHA-256), plus the judged queries it notes were missing. ``None`` when the
    header lists none (a count alone, qrels gone or changed, a run built in memory).

    Never raises: a qrels file that cannot be read gives ``None``."""
    header: Mapping[str, Any] = run.header or {}
    goldens = header.get("goldens")
    digests = goldens.get("case_digests") if isinstance(goldens, Mapping) else None
    if isinstance(digests, Mapping):
        return frozenset(str(c) for c in digests)
    qrels = header.get("qrels")
    path = qrels.get("path") if isinstance(qrels, Mapping) else None
    if not isinstance(path, str) or not path:
        return None
    from pathlib import Path

    from evalkit.core.specs import RunEvaluatorSpec
    from evalkit.plugins.default import default_registry

    found = [e.spec for _, _, e in default_registry().entries("run_evaluator")
             if isinstance(e.spec, RunEvaluatorSpec)]
    if len(found) != 1 or not Path(path).is_file():
        return None
    try:
        loaded = found[0].load_qrels(path)
    except (OSError, ValueError, LookupError, TypeError):
        return None
    if getattr(loaded, "sha256", None) != qrels.get("sha256"):  # type: ignore[union-attr]
        return None
    noted = [str(x) for x in notes_of(run)["missing_ids"] or ()]
    return frozenset([*map(str, loaded.judgments), *noted])


def stopped_note(record: Mapping[str, Any], header: Mapping[str, Any]) -> str:
    """One line: a sequential rule stopped the run, after how many cases, why, and the
    interval valid for it."""
    goldens = header.get("goldens")
    total = goldens.get("n_cases") if isinstance(goldens, Mapping) else None
    low, high = [*list(record.get("interval") or []), None, None][:2]
    level = 1 - float(record.get("alpha") or 0.05)
    why = {"differs": "its confidence sequence excluded 0",
           "equivalent": f"its confidence sequence lay inside +-{record.get('margin')}"
           }.get(str(record.get("reason")), str(record.get("reason")))
    return (f"stopped by a sequential rule after {decided_after(record)} of {total} "
            f"cases in a random order (seed {record.get('seed')}): {why} for "
            f"{record.get('metric')}; the interval valid for this run is the sequence's, "
            f"[{_num(low)}, {_num(high)}] (anytime-valid at {level:.0%}), "
            "not a fixed-n test's")


def stopped_problem(record: Mapping[str, Any], total: int) -> str:
    """One sentence for :attr:`Coverage.partial`: after how many of the ``total`` cases
    a sequential rule stopped the run, for which comparison its rows are evidence, and
    the fix (``evalkit run`` does not finish a stopped run on ``--resume``: the resume
    keeps the rule, which stays decided)."""
    return (f"was stopped early by a sequential rule (evalkit run --until-decided) after "
            f"{decided_after(record)} of its {total} cases: its rows are the cases the "
            f"rule drew to decide {record.get('metric')} against its baseline, evidence "
            "for that comparison only, not for any other check or as a baseline; run the "
            "whole golden set (`evalkit run` without --until-decided, to another output "
            "or with --overwrite)")


def decided_after(record: Mapping[str, Any]) -> str:
    """The cases after which a sequential rule decided (``cases_at_decision``), and, when
    the run holds more (calls in flight then, whose rows extend the sequence), how many:
    ``"61 (decided; the run holds 63)"``; a record without ``cases_at_decision``: the
    cases the sequence used."""
    used, at = record.get("cases_used"), record.get("cases_at_decision")
    if not isinstance(at, int) or at == used:
        return str(used)
    return f"{at} (decided; the run holds {used})"


def _num(x: Any) -> str:
    return f"{x:+.4f}" if isinstance(x, int | float) else "?"


def _target(header: Mapping[str, Any], ids: Sequence[str]
            ) -> tuple[int | None, tuple[str, ...], list[str]]:
    """``(expected count, missing ids, problems)`` of a target run."""
    problems: list[str] = []
    goldens = header.get("goldens")
    goldens = goldens if isinstance(goldens, Mapping) else {}
    digests = goldens.get("case_digests")
    n_cases = _int(goldens.get("n_cases"))
    if not isinstance(digests, Mapping):
        if n_cases is None:  # a run built by hand: only its rows can say anything
            return None, (), []
        if len(ids) != n_cases:
            problems.append(f"{len(ids)} row(s) for the {n_cases} cases its header records")
        return n_cases, (), problems
    recorded = [str(c) for c in digests]
    expected = n_cases if n_cases is not None else len(recorded)
    if n_cases is not None and n_cases != len(recorded):
        problems.append(f"its header records {n_cases} cases but {len(recorded)} case "
                        "digests")
    present = set(ids)
    missing = tuple(c for c in recorded if c not in present)
    stopped = sequential_stop(header)
    if stopped is not None and missing:
        unused = _sequential_gaps(stopped, recorded, present)
        if unused:
            problems.append(unused)
        else:  # complete for what it evaluated: the cases the rule left out are no gap,
            # but the run still covers the whole golden set (Coverage.partial)
            return expected, (), problems + _status_problems(header)
    if missing:
        problems.append(f"{len(missing)} of {expected} cases have no row "
                        f"({show_ids(missing)})")
    known = set(recorded)
    extra = [i for i in ids if i not in known]
    if extra:
        problems.append(f"{len(extra)} row(s) are not cases of its golden set "
                        f"({show_ids(extra)})")
    return expected, missing, problems + _status_problems(header)


def _status_problems(header: Mapping[str, Any]) -> list[str]:
    status = header.get("status")
    if status not in ("running", "complete", "incomplete"):
        return [f"its status is {status!r}, not 'complete'"]
    return []


def sequential_stop(header: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``sequential`` record of a target run that a sequential rule stopped early
    (``evalkit run --until-decided``: :mod:`evalkit.execute.sequential_run`), else
    ``None``."""
    record = header.get("sequential")
    if isinstance(record, Mapping) and record.get("stopped_early") is True:
        return record
    return None


def sequential_baseline_values(rows: Sequence[Any], metric: str) -> dict[str, float]:
    """The per-case values of ``metric`` a sequential rule compares against in the
    baseline run whose rows are ``rows``: ``{case id: value}`` over the rows holding a
    value and no error (a later row of a case replaces an earlier one)."""
    values: dict[str, float] = {}
    for row in rows:
        value = row.metrics.get(metric)
        if value is not None and getattr(row, "error", None) is None:
            values[str(row.query_id)] = float(value)
    return values


def sequential_baseline_sha256(values: Mapping[str, float]) -> str:
    """``header["sequential"]["baseline_sha256"]``: sha256 of the JSON list of
    ``[case id, value]`` pairs sorted by id (:func:`sequential_baseline_values`), what
    the rule decided against; the gate compares it with the baseline it is given."""
    pairs = sorted((str(k), float(v)) for k, v in values.items())
    return hashlib.sha256(json.dumps(pairs, allow_nan=True).encode()).hexdigest()


def _sequential_gaps(record: Mapping[str, Any], recorded: Sequence[str],
                     present: set[str]) -> str | None:
    """Why a sequentially stopped run is not complete for what it evaluated: a case of
    the prefix its decision rests on has no row (the order is rebuilt from the seed:
    :func:`evalkit.stats.sequential.random_order`; for a run by cluster only the count
    is checked)."""
    used = _int(record.get("cases_used"))
    seed = _int(record.get("seed"))
    if used is None or seed is None or used > len(present):
        return ("its sequential record says its decision rests on more cases than it "
                "holds rows for")
    if record.get("unit") != "case":
        return None
    from evalkit.stats.sequential import random_order

    prefix = [recorded[i] for i in random_order(len(recorded), seed)[:used]]
    gone = [c for c in prefix if c not in present]
    if gone:
        return (f"{len(gone)} of the {used} cases its sequential decision rests on have "
                f"no row ({show_ids(gone)})")
    return None


def _samples(header: Mapping[str, Any], samples: Sequence[Any]) -> list[str]:
    """With repeated samples, completeness counts (case, sample) pairs: a case with a
    row for only some of its K samples is missing the others."""
    if not samples:
        return []
    from evalkit.data.samples import missing_samples

    pairs, count, absent = missing_samples(header, samples, SHOWN_IDS)
    if not count:
        return []
    shown = ", ".join(absent)
    more = f" and {count - len(absent)} more" if count > len(absent) else ""
    return [f"{count} of {pairs} (case, sample) pairs have no row ({shown}{more})"]


def _retrieval(header: Mapping[str, Any], ids: Sequence[str]) -> tuple[int | None, list[str]]:
    """``(expected count, problems)`` of a run of per-query rows."""
    problems: list[str] = []
    notes = header.get("notes")
    expected = _int(notes.get("num_queries")) if isinstance(notes, Mapping) else None
    if expected is not None and expected != len(ids):
        last = f"; the last row is query {ids[-1]!r}" if ids and len(ids) < expected else ""
        problems.append(f"it holds {len(ids)} of the {expected} queries its header records"
                        f"{last}")
    stored = header.get("baseline")
    fingerprint = stored.get("fingerprint") if isinstance(stored, Mapping) else None
    cases = fingerprint.get("cases") if isinstance(fingerprint, Mapping) else None
    if isinstance(cases, Mapping):
        count = _int(cases.get("count"))
        if count is not None and count != len(ids):
            if expected is None or count != expected:
                problems.append(f"it holds {len(ids)} of the {count} cases its baseline "
                                "fingerprint records")
            expected = count if expected is None else expected
        elif cases.get("ids_sha256") not in (None, _sha256(sorted(ids))):
            problems.append("its case ids differ from those its baseline fingerprint "
                            "records")
    return expected, problems


def require_complete(run: RunRecord, role: str = "run", *,
                     allow_incomplete: bool = False) -> Coverage:
    """``run``'s :class:`Coverage`; raise unless it is complete or ``allow_incomplete``.

    Args:
        run: the run.
        role: what the run is to the caller, for the message ("run", "baseline").
        allow_incomplete: return the coverage of an incomplete run instead of raising.

    Raises:
        IncompleteRunError: the run fails coverage; the message names how many and which
            cases are missing or failed, and why.
    """
    cov = coverage_of(run)
    if cov.complete or allow_incomplete:
        return cov
    where = f" ({run.integrity.path})" if run.integrity is not None else ""
    raise IncompleteRunError(
        f"{role} {quoted(run.name)}{where} is incomplete: " + "; ".join(cov.problems)
        + ". No verdict rests on evidence it did not fully see", cov)


def empty_answers(run: RunRecord) -> list[str]:
    """Ids of the target-run cases whose call succeeded but answered nothing to rank: no
    ranked ids, while other cases have some (a retrieval target that found nothing) or
    while the response has no text either. Retrieval metrics score such a case 0: a
    legitimate score of an empty ranking, said in a note so that it is never silent."""
    responses = [(r.query_id, r.response) for r in run.per_query
                 if getattr(r, "response", None) is not None]
    ranked_somewhere = any(resp.ranked_ids for _, resp in responses)
    return [str(qid) for qid, resp in responses
            if not resp.ranked_ids and (ranked_somewhere or not resp.text)]


def has_retrieval_metric(run: RunRecord) -> bool:
    """Whether some metric of ``run`` ranks ids against judgments (its registered record
    needs ``"relevance"``: the retrieval measures); unknown names count as not."""
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    reg = default_registry()
    names = set(run.metric_names()) | {m for r in run.per_query for m in r.metrics}
    for name in names:
        try:
            if "relevance" in getattr(reg.resolve(name), "needs", ()):
                return True
        except (RegistryError, ValueError, TypeError):
            continue
    return False


def empty_answers_line(run: RunRecord) -> str | None:
    """The ``note:`` line of :func:`empty_answers`, or None when every case has some, or
    when no metric of the run is a retrieval metric (:func:`has_retrieval_metric`: a
    text-only run has no ranking to score)."""
    empty = empty_answers(run)
    if not empty or not has_retrieval_metric(run):
        return None
    return (f"note: {len(empty)} of {len(run.per_query)} case(s) answered with no ranked "
            f"ids ({show_ids(empty, 5)}): retrieval metrics score an empty ranking 0")


def _non_finite_lines(run: RunRecord) -> list[str]:
    """A ``warning:`` per metric stored as a non-finite number on some row (a file
    written by hand, or by an evalkit before 0.4, as ``NaN``)."""
    import math

    bad: dict[str, list[str]] = {}
    for r in run.per_query:
        for k, v in r.metrics.items():
            if isinstance(v, float) and not math.isfinite(v):
                bad.setdefault(k, []).append(_row_id(r))
    return [f"warning: metric {m} holds a non-finite value ({show_ids(ids, 5)}) on "
            f"{len(ids)} of {len(run.per_query)} rows: its mean is not defined"
            for m, ids in bad.items()]


def completeness_lines(run: RunRecord) -> list[str]:
    """What a command that shows a run's figures says about its completeness: one
    ``warning:`` line when it fails coverage, one per metric that failed on some case,
    one per metric stored as a non-finite number, one ``note:`` per thing the file
    cannot prove (a schema 1 file has no trailer), and
    one when cases answered with an empty ranking (:func:`empty_answers_line`)."""
    cov = coverage_of(run)
    out = [] if cov.complete else [f"warning: {cov.message()}"]
    from evalkit.data.metric_counts import metric_counts

    for c in metric_counts(run, list(run.metric_failures())).values():
        ids = [i for g in c.errors for i in g.ids]
        out.append(f"warning: metric {c.metric} scored on {c.scored} of {c.cases} cases; "
                   f"{c.errored} error(s) ({show_ids(ids, 5)}): its mean is not defined "
                   "(`evalkit rescore` scores it again)")
    out.extend(_non_finite_lines(run))
    out.extend(f"note: {n}" for n in cov.notes)
    empty = empty_answers_line(run)
    return out if empty is None else [*out, empty]


class SkippedJudged(NamedTuple):
    """Judged queries a run was scored without (``--missing skip``).

    Attributes:
        skipped: judged queries the run lacks, left out of every mean.
        judged: the judged queries of the qrels (rows present plus ``skipped``).
        problem: one sentence saying so and naming the fix (``--missing zero``).
    """

    skipped: int
    judged: int
    problem: str


def skipped_judged(run: RunRecord) -> SkippedJudged | None:
    """What a run scored with ``missing="skip"`` left out: its means are over the judged
    queries it has, not over the judged set, so a run that lacks most of them can score
    higher than the whole run would. ``None`` when nothing judged was skipped (or the
    header records no evaluation notes).

    ``evalkit gate`` and ``evalkit baseline promote`` refuse such a run as incomplete
    evidence (docs/gate.md); ``evalkit eval`` and ``compare`` say it in a note."""
    n = notes_of(run)
    count = n["missing_count"]
    if n["missing"] != "skip" or not isinstance(count, int) or count <= 0:
        return None
    judged = len(run.per_query) + count
    ids = [str(x) for x in n["missing_ids"]][:5]
    shown = ", ".join(repr(i) for i in ids) + (
        f" and {count - len(ids)} more" if count > len(ids) else "")
    return SkippedJudged(count, judged, (
        f"it was scored without {count} of the {judged} judged queries (--missing skip, "
        f"missing='skip' in Python: {shown}), so its means are over {len(run.per_query)} "
        f"quer{'y' if len(run.per_query) == 1 else 'ies'}, not the judged set; score the "
        "run again with --missing zero (judged queries it lacks score 0, as trec_eval -c)"))


def notes_of(result: RunRecord) -> dict[str, Any]:
    """The evaluation notes of a run header: ``unjudged_ignored`` (run topics without
    judgments, ignored) and their ids, ``missing`` (the policy), ``missing_count``
    (judged queries the run lacks, scored 0 or skipped) and their ids, ``empty_rankings``
    (judged queries given an empty ranking, scored 0; 0 when none) and their ids,
    ``near_ids`` (:func:`evalkit.data.query_ids.near_ids`' pairs; empty when none),
    ``rank_column_ignored`` (:func:`evalkit.data.query_ids.rank_column_warning`). Counts
    are None
    when the header does not record them (a run scored elsewhere)."""
    notes: dict[str, Any] = dict(result.header.get("notes") or {})
    missing_policy = result.header.get("missing")
    if "missing_scored_zero" in notes:
        missing_count = notes["missing_scored_zero"]
    else:
        missing_count = notes.get("missing_skipped")
    return {
        "unjudged_ignored": notes.get("unjudged_ignored"),
        "unjudged_ignored_ids": notes.get("unjudged_ignored_ids", []),
        "missing": missing_policy,
        "missing_count": missing_count,
        "missing_ids": notes.get("missing_ids", []),
        "empty_rankings": notes.get("empty_rankings", 0),
        "empty_ranking_ids": notes.get("empty_ranking_ids", []),
        "near_ids": notes.get("near_ids", []),
        "rank_column_ignored": bool(notes.get("rank_column_ignored")),
    }
