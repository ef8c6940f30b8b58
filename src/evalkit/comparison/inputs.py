"""The inputs of a comparison: runs read, scored alike, named apart and paired by id.

:func:`load_inputs` turns what :func:`evalkit.compare` is given (run artifacts, TREC run
files or run DataFrames scored with ``qrels``, :class:`~evalkit.RunResult` objects) into
runs over the same
queries with the same metrics, and refuses, with the message the command line prints,
everything a paired comparison cannot answer: per-query counts, runs that share no
metric or lack one, artifacts scored otherwise than asked, runs not evaluated alike, a
run whose query ids do not match the judged queries as meant
(:func:`evalkit.data.judged_match.judged_id_mismatch`) and runs over different queries (unless
``allow_incomplete``). :func:`input_warnings` says what the scoring noted (judged
queries a run lacks, topics without judgments).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, TypedDict

from evalkit.comparison.records import ComparisonError
from evalkit.data.coverage import IncompleteRunError, notes_of
from evalkit.data.judged_match import judged_id_mismatch
from evalkit.data.metric_info import canonical_metric, is_count
from evalkit.data.provenance import settings_differences
from evalkit.data.results import RunResult
from evalkit.execute.run_files import (
    QrelsArg,
    check_artifact,
    is_artifact,
    load_or_evaluate,
    require_rows,
)
from evalkit.io.dataframes import is_dataframe
from evalkit.io.error_messages import quoted
from evalkit.io.input_files import require_file
from evalkit.io.setting_names import Setting

if TYPE_CHECKING:
    import pandas as pd

#: What may be compared: a run artifact or TREC run file by path, a run in memory, or a
#: run DataFrame in PyTerrier's shape (``qid, docno, score``), scored like a TREC file.
RunInput: TypeAlias = "RunResult | str | os.PathLike[str] | pd.DataFrame"


@dataclass
class Loaded:
    """Runs ready to pair: ``runs[0]`` is the baseline; ``paths[i]`` is where run ``i``
    came from (None for a :class:`RunResult` or a DataFrame passed in); ``kinds[i]`` is
    ``"artifact"``, ``"trec"``, ``"frame"`` or ``"run"``; ``notes[i]`` the warnings about
    run ``i``; ``left_out`` a warning per metric the runs hold that the default metric
    list leaves out, with the reason."""

    runs: list[RunResult]
    paths: list[Path | None]
    kinds: list[str]
    metrics: list[str]
    notes: list[list[str]] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)

    def label(self, i: int) -> str:
        """How messages name run ``i``: its path, else ``run 'name'``."""
        p = self.paths[i]
        return str(p) if p is not None else f"run {quoted(self.runs[i].name)}"

    def definitions(self) -> tuple[dict[str, bool], dict[str, str | None], list[str]]:
        """:func:`definitions_of` this comparison's metrics over its runs."""
        return definitions_of(self.metrics, [(self.label(i), r.header or {})
                                             for i, r in enumerate(self.runs)])


def definitions_of(metrics: Sequence[str], runs: Sequence[tuple[str, Mapping[str, Any]]]
                   ) -> tuple[dict[str, bool], dict[str, str | None], list[str]]:
    """``({metric: higher_is_better}, {metric: value type}, warnings)`` for comparing the
    runs of ``runs`` (``(label, header)`` pairs): each metric's polarity and value type
    as registered now, checked against the ones the runs recorded when they were scored,
    else the recorded ones (:func:`evalkit.data.provenance.comparison_definition`; higher
    is better when neither says; the value type chooses the default test), and a warning
    per metric whose provider or version differs from the one that scored a run.

    Raises:
        ComparisonError: the runs recorded opposite polarities or different value types
            or bounds, or the definition registered now declares others (both named, with
            the fix).
    """
    from evalkit.data.provenance import PolarityMismatch, comparison_definition

    out: dict[str, bool] = {}
    types: dict[str, str | None] = {}
    warnings: list[str] = []
    for metric in metrics:
        try:
            found = comparison_definition(metric, runs)
        except PolarityMismatch as exc:
            raise ComparisonError(str(exc)) from None
        out[metric] = True if found.higher_is_better is None else found.higher_is_better
        types[metric] = found.value_type
        warnings.extend(found.warnings)
    return out, types, warnings


def _path_of(x: Any) -> Path | None:
    if isinstance(x, RunResult) or is_dataframe(x):
        return None
    if isinstance(x, str | os.PathLike):
        return Path(x)
    raise TypeError(f"compare takes RunResult objects, run DataFrames (qid, docno, score) or "
                    f"paths of run artifacts or TREC run files, not {type(x).__name__}")


def load_inputs(
    inputs: Sequence[RunInput],
    *,
    qrels: QrelsArg | None,
    metrics: Sequence[str] | None,
    relevance_level: int | None,
    missing: str | None,
    depth: int | None,
    allow_incomplete: bool = False,
) -> Loaded:
    """Every input as a :class:`RunResult` (TREC runs scored alike), and the metrics.

    ``relevance_level``, ``missing`` and ``depth`` score TREC run files; None takes the
    setting of the first artifact (or run) among the inputs, else trec_eval's default
    (1, ``"zero"``, no limit). A setting given explicitly must match every artifact's.

    Raises:
        ComparisonError, InputError: see the module docstring.
    """
    paths = [_path_of(x) for x in inputs]
    if is_dataframe(qrels):  # read once, by the run evaluator, for every run
        from evalkit.execute.run_evaluator import load_qrels_input

        qrels = dict(load_qrels_input(qrels).judgments)
    for p in paths:
        if p is not None:
            require_file(p, "run")
    stored = _stored_runs(inputs, paths)
    incomplete = _coverage_notes(stored, paths, allow_incomplete)
    chosen, left_out = _chosen_metrics(metrics, stored, paths, allow_incomplete)
    trec = _trec_settings(stored, relevance_level, missing, depth)
    runs: list[RunResult] = []
    kinds: list[str] = []
    for i, p in enumerate(paths):
        if i in stored:  # checked against the settings given, not those it lends
            check_artifact(stored[i], p if p is not None else f"run {quoted(stored[i].name)}",
                           qrels=qrels, relevance_level=relevance_level, missing=missing,
                           depth=depth)
            runs.append(stored[i])
            kinds.append("run" if p is None else "artifact")
        elif p is None:  # a DataFrame, scored as a TREC run file is
            runs.append(_score_frame(inputs[i], qrels=qrels, metrics=chosen, **trec))
            kinds.append("frame")
        else:
            runs.append(load_or_evaluate(p, qrels=qrels, metrics=chosen, **trec))
            kinds.append("trec")
    loaded = Loaded(runs, paths, kinds, [canonical_metric(m) for m in chosen],
                    left_out=left_out)
    for i, r in enumerate(runs):  # judged queries scored 0 for the ids, not the system
        mismatch = judged_id_mismatch(r)
        if mismatch is not None:
            raise ComparisonError(f"{loaded.label(i)}"
                                  + ("" if paths[i] is None else f": run {quoted(r.name)}")
                                  + f": {mismatch}")
    _require_metrics(loaded, allow_incomplete)
    _unique_names(loaded)
    _require_alike(loaded, allow_incomplete)
    loaded.notes = [input_warnings(r, loaded.label(i)) for i, r in enumerate(runs)]
    for i, message in incomplete.items():
        loaded.notes[i].insert(0, message)
    if allow_incomplete:
        _pair_common_queries(loaded)
    else:
        _pair_stopped_runs(loaded)
    return loaded


def _stored_runs(inputs: Sequence[RunInput], paths: Sequence[Path | None]
                 ) -> dict[int, RunResult]:
    """The runs already scored (artifacts and :class:`RunResult` objects), by position:
    the same file given twice is two runs, renamed independently."""
    stored: dict[int, RunResult] = {}
    for i, (x, p) in enumerate(zip(inputs, paths, strict=True)):
        if isinstance(x, RunResult):
            stored[i] = dataclasses.replace(x)  # renamed later: never the caller's object
        elif p is not None and is_artifact(p):
            stored[i] = RunResult.load(p)
            require_rows(stored[i], p)
    return stored


def _coverage_notes(stored: Mapping[int, RunResult], paths: Sequence[Path | None],
                    allow_incomplete: bool) -> dict[int, str]:
    """``{position: note}`` for the stored runs that did not see every case; no verdict
    on evidence a run did not fully see unless ``allow_incomplete``.

    Raises:
        ComparisonError: an incomplete run, and ``allow_incomplete`` is false.
    """
    incomplete: dict[int, str] = {}
    for i, run in stored.items():
        where = f"{paths[i]}: " if paths[i] is not None else ""
        role = "baseline" if i == 0 else "candidate"
        try:
            cov = run.require_complete(role, allow_incomplete=allow_incomplete)
        except IncompleteRunError as exc:
            raise ComparisonError(f"{where}{exc}; pass ", Setting("allow_incomplete", True),
                                  " to compare the cases it has") from None
        if not cov.complete:
            incomplete[i] = f"{where}{cov.message(role)}"
    return incomplete


def _chosen_metrics(metrics: Sequence[str] | None, stored: Mapping[int, RunResult],
                    paths: Sequence[Path | None], allow_incomplete: bool
                    ) -> tuple[list[str], list[str]]:
    """``(metrics to compare, warnings)``: those asked for, else those every stored run
    holds on every case it answered (with ``allow_incomplete``, on some case), else the
    registered run evaluator's ``default_metrics``; once each, in order. Each metric a
    stored run holds that is left out of the default list gets a warning saying why
    (:func:`_left_out`); per-query counts (``num_rel``) are never compared.

    Raises:
        ComparisonError: a per-query count asked for, or stored runs sharing no metric
            they can all compare (the reason given per metric).
    """
    requested = [str(m) for m in ([metrics] if isinstance(metrics, str) else metrics or [])]
    counts = [m for m in requested if is_count(canonical_metric(m))]
    if counts:
        raise ComparisonError(
            f"{', '.join(counts)}: a per-query count is reported by `evalkit eval`, not "
            "compared; compare a metric (ap, ndcg@10, ...)"
        )
    if requested:
        return list(dict.fromkeys(canonical_metric(m) for m in requested)), []
    if not stored:
        from evalkit.execute.run_evaluator import run_evaluator

        return list(dict.fromkeys(run_evaluator("comparing run files").default_metrics)), []
    held = {i: _metric_holding(run) for i, run in stored.items()}
    names = [m for h in held.values() for m in h.held if not is_count(m)]
    chosen: list[str] = []
    reasons: dict[str, list[_Reason]] = {}
    for m in dict.fromkeys(names):
        why = [r for r in (_why_not(m, held[i], _run_label(stored[i], paths[i]),
                                    allow_incomplete) for i in stored) if r is not None]
        if why:
            reasons[m] = why
        else:
            chosen.append(m)
    if not chosen:
        detail = "; ".join(f"{m}: {', '.join(r.text for r in why)}"
                           for m, why in reasons.items())
        raise ComparisonError(
            "the runs share no metric that every run holds on every case"
            + (f" ({detail})" if detail else " (they hold none)")
            + ("; name one with -m" + _INCOMPLETE_HINT if any(
                all(r.partial for r in why) for why in reasons.values())
               else "; compare runs scored with a metric in common"))
    return chosen, [_left_out(m, why) for m, why in reasons.items()]


#: How a metric that failed on some case can still be compared, or made whole.
_INCOMPLETE_HINT = (" (with --allow-incomplete to pair the cases where every run has it),"
                    " or score the run again")


def _run_label(run: RunResult, path: Path | None) -> str:
    return f"{path}: run {quoted(run.name)}" if path is not None else f"run {quoted(run.name)}"


class _Holding(NamedTuple):
    """What a run holds (:func:`_metric_holding`), read in one pass over its rows."""

    #: ``{metric: answered cases that hold a value of it}``, in first-seen order
    held: dict[str, int]
    #: the cases whose call did not fail
    answered: int
    #: :meth:`~evalkit.data.results.RunResult.metric_failures`
    failures: dict[str, dict[str, str]]


def _metric_holding(run: RunResult) -> _Holding:
    """For every metric some case of ``run`` holds or failed on, the number of answered
    cases that hold a value of it (a case whose call failed answered nothing; run
    coverage speaks of it), with the number of answered cases and the metric failures."""
    held: dict[str, int] = {}
    answered = 0
    for row in run.per_query:
        if row.error is not None:
            continue
        answered += 1
        for m in row.metrics:
            held[m] = held.get(m, 0) + 1
    failures = run.metric_failures()
    for m in failures:
        held.setdefault(m, 0)
    return _Holding(held, answered, failures)


class _Reason(NamedTuple):
    """Why a metric is not compared: ``text`` names the run; ``partial`` when the run
    holds it on some of its cases (``allow_incomplete`` would pair those)."""

    text: str
    partial: bool = False


def _why_not(metric: str, holding: _Holding, label: str,
             allow_incomplete: bool) -> _Reason | None:
    """Why ``metric`` cannot be compared from a run (None: it can): absent from it,
    failed on every case, or held on only some cases (unless ``allow_incomplete``)."""
    answered = holding.answered
    on = holding.held.get(metric)
    failed = holding.failures.get(metric, {})
    if on is None:
        return _Reason(f"absent from {label}")
    if on == 0:
        return _Reason(f"failed on every case ({len(failed)} of {answered}) in {label}")
    if on == answered or allow_incomplete:
        return None
    example = next(iter(failed.items()), None)
    if example is None:
        return _Reason(f"held on only {on} of {answered} cases in {label}", partial=True)
    return _Reason(f"errored on {len(failed)} of {answered} cases in {label} (first "
                   f"{example[0]!r}: {example[1]})", partial=True)


def _left_out(metric: str, why: Sequence[_Reason]) -> str:
    """The warning that names a metric the runs hold but the comparison leaves out."""
    hint = ("; name it with -m" + _INCOMPLETE_HINT) if all(r.partial for r in why) else ""
    return f"{metric} is not compared: {'; '.join(r.text for r in why)}{hint}"


class _TrecSettings(TypedDict):
    relevance_level: int
    missing: str
    depth: int | None


def _trec_settings(stored: Mapping[int, RunResult], relevance_level: int | None,
                   missing: str | None, depth: int | None) -> _TrecSettings:
    """The settings that score TREC run files and DataFrames: each given one, else the
    first stored run's, else trec_eval's default (1, ``"zero"``, no limit)."""
    header = stored[min(stored)].header if stored else {}
    return _TrecSettings(
        relevance_level=relevance_level if relevance_level is not None
        else int(header.get("relevance_level") or 1),
        missing=missing if missing is not None else str(header.get("missing") or "zero"),
        depth=depth if depth is not None else header.get("depth"),
    )


def _require_metrics(loaded: Loaded, allow_incomplete: bool) -> None:
    """Every run has every compared metric (with ``allow_incomplete``, a metric that
    failed on some case counts: it is paired where present).

    Raises:
        ComparisonError: names the run, what it lacks and what it has.
    """
    for i, r in enumerate(loaded.runs):
        holding = _metric_holding(r)  # on the cases it answered: coverage speaks of the rest
        have = [m for m, on in holding.held.items()
                if allow_incomplete or on == holding.answered]
        lacking = [m for m in loaded.metrics if m not in have]
        if lacking:
            p = loaded.paths[i]
            what = f"{p}: run {quoted(r.name)}" if p is not None else f"run {quoted(r.name)}"
            partial = _partial_metric(r, lacking)
            if partial:
                raise ComparisonError(f"{what} {partial}")
            from evalkit.core.metric_lookup import suggestion

            hint = "".join(suggestion(m, have) for m in lacking)
            raise ComparisonError(
                f"{what} has no {', '.join(lacking)}{hint} (it has: "
                f"{', '.join(have) or 'none'})")


def _partial_metric(run: RunResult, lacking: Sequence[str]) -> str | None:
    """What to say of a metric some of ``run``'s rows have and others lack (a value that
    failed or was never stored), or None when no row has any of ``lacking``."""
    failures = run.metric_failures()
    for m in lacking:
        on = sum(1 for row in run.per_query if m in row.metrics)
        if on == 0 and m not in failures:
            continue
        failed = failures.get(m, {})
        example = next(iter(failed.items()), None)
        why = (f"; it failed on {len(failed)} (first {example[0]!r}: {example[1]})"
               if example else "")
        return (f"has {m} on {on} of {len(run.per_query)} cases{why}: pass "
                "--allow-incomplete (allow_incomplete=True) to pair the cases where both "
                "runs have it, or score the run again")
    return None


def _require_alike(loaded: Loaded, allow_incomplete: bool) -> None:
    """Every candidate was evaluated like the baseline and (unless ``allow_incomplete``)
    over the same queries.

    Raises:
        ComparisonError: the settings that differ, or the queries only one run has.
    """
    base = loaded.runs[0]
    for i, r in enumerate(loaded.runs[1:], start=1):
        diffs = settings_differences(base, r)
        if diffs:
            raise ComparisonError(
                f"{loaded.label(0)} and {loaded.label(i)} were not evaluated alike: "
                f"{'; '.join(diffs)}. Compare runs scored against the same qrels (target "
                "runs: made from the same golden set) with the same settings"
            )
        if not allow_incomplete:
            _check_same_queries(loaded, i)


def _score_frame(df: Any, *, qrels: QrelsArg | None, metrics: Sequence[str],
                 relevance_level: int, missing: str, depth: int | None) -> RunResult:
    """A run DataFrame scored with :func:`evalkit.evaluate_run`.

    Raises:
        InputError: no ``qrels``.
    """
    from evalkit.execute.run_evaluator import evaluate_run
    from evalkit.io.input_files import InputError

    if qrels is None:
        raise InputError("a run DataFrame is scored against qrels: pass qrels= (a TREC "
                         "qrels path, {qid: {docno: label}} or a qid, docno, label frame)")
    judgments = Path(qrels) if isinstance(qrels, str | os.PathLike) else qrels
    return evaluate_run(df, judgments, list(metrics), relevance_level=relevance_level,
                        missing=missing,  # type: ignore[arg-type]
                        depth=depth)


def _unique_names(loaded: Loaded) -> None:
    """Give runs distinct names: the first keeps its name; a later run whose name is taken
    gets its file stem, or the name with its position (``tfidf#2``)."""
    from evalkit.io.run_paths import unique_names

    names = unique_names([r.name for r in loaded.runs], loaded.paths)
    for r, name in zip(loaded.runs, names, strict=True):
        r.name = name


def _check_same_queries(loaded: Loaded, i: int) -> None:
    a, b = loaded.runs[0], loaded.runs[i]
    ia, ib = set(a.ids()), set(b.ids())
    if ia == ib:
        return
    from evalkit.data.coverage import sequential_stop

    if (sequential_stop(b.header or {}) is not None and ib <= ia) or (
            sequential_stop(a.header or {}) is not None and ia <= ib):
        return  # a run a sequential rule stopped: compared on the cases it holds
    only_a, only_b = sorted(ia - ib), sorted(ib - ia)
    parts = []
    if only_a:
        parts.append(f"{len(only_a)} only in {loaded.label(0)} (e.g. {', '.join(only_a[:5])})")
    if only_b:
        parts.append(f"{len(only_b)} only in {loaded.label(i)} (e.g. {', '.join(only_b[:5])})")
    raise ComparisonError(
        f"the runs cover different queries: {'; '.join(parts)}. A paired comparison needs "
        "the same queries in both (score TREC runs with --missing zero)"
    )


def _pair_stopped_runs(loaded: Loaded) -> None:
    """Keep, in every run, only the cases a run a sequential rule stopped holds (the
    others were checked to hold them, :func:`_check_same_queries`): every mean, slice
    and test of the comparison is then over the paired cases; the stopped run's own
    warning says where it stopped."""
    common = set(loaded.runs[0].ids()).intersection(*(r.ids() for r in loaded.runs[1:]))
    for i, r in enumerate(loaded.runs):
        if len(r.per_query) != len(common):
            loaded.runs[i] = dataclasses.replace(
                r, per_query=[row for row in r.per_query if row.query_id in common])


def _pair_common_queries(loaded: Loaded) -> None:
    """Keep, in every run, only the queries every run has (``allow_incomplete``), and
    note what each run loses."""
    def usable(r: RunResult) -> set[str]:  # a row whose call or metric failed is out
        ids = set(r.ids())
        for m in loaded.metrics:
            ids &= set(r.available_scores(m))
        return ids

    common = usable(loaded.runs[0])
    for r in loaded.runs[1:]:
        common &= usable(r)
    if not common:
        raise ComparisonError(
            "the runs share no query, so nothing can be paired (with incomplete runs "
            "allowed, only the queries every run has are compared)")
    for i, r in enumerate(loaded.runs):
        dropped = sorted(set(r.ids()) - common)
        if not dropped:
            continue
        shown = ", ".join(dropped[:5]) + (", ..." if len(dropped) > 5 else "")
        loaded.notes[i].append(
            f"{loaded.label(i)}: run {quoted(r.name)} has {len(dropped)} queries that another run "
            f"lacks, or on which a compared metric failed ({shown}); left out "
            f"(incomplete runs allowed), so {len(common)} queries are paired")
        loaded.runs[i] = dataclasses.replace(
            r, per_query=[row for row in r.per_query if row.query_id in common])


def input_warnings(r: RunResult, label: str) -> list[str]:
    """What a run's evaluation notes say about queries the comparison does not see as the
    file has them: judged queries the run lacks (scored 0 or skipped) and run topics
    without judgments (ignored), as ``evalkit eval`` reports them."""
    from evalkit.data.coverage import sequential_stop, stopped_note
    from evalkit.data.query_ids import near_ids_warning, rank_column_warning

    out: list[str] = []
    stopped = sequential_stop(r.header or {})
    if stopped is not None:  # which interval is valid for it, not the fixed-n test's
        out.append(f"{label}: run {quoted(r.name)} was {stopped_note(stopped, r.header)}")
    n = notes_of(r)
    missing_count = n["missing_count"] or 0
    if missing_count:
        ids = ", ".join(str(x) for x in n["missing_ids"][:5])
        more = ", ..." if missing_count > len(n["missing_ids"][:5]) else ""
        how = ("scored 0 (--missing zero, trec_eval -c)" if n["missing"] == "zero"
               else "left out (--missing skip)")
        judged = len(r.per_query) if n["missing"] == "zero" else (
            len(r.per_query) + missing_count)
        out.append(
            f"{label}: run {quoted(r.name)} lacks {missing_count} of the {judged} judged "
            f"queries ({ids}{more}); they are {how}"
        )
    unjudged = n["unjudged_ignored"] or 0
    if unjudged:
        ids = ", ".join(str(x) for x in n["unjudged_ignored_ids"][:5])
        more = ", ..." if unjudged > len(n["unjudged_ignored_ids"][:5]) else ""
        out.append(
            f"{label}: {unjudged} topic(s) of run {quoted(r.name)} have no judgments in the qrels "
            f"({ids}{more}) and are ignored"
        )
    if n["near_ids"]:
        out.append(f"{label}: {near_ids_warning(n['near_ids'])}")
    if n["rank_column_ignored"]:
        out.append(rank_column_warning(label))
    return out


def query_texts(runs: Sequence[RunResult], topics: Mapping[str, str] | None
                ) -> tuple[dict[str, str], list[str]]:
    """``({query id: text}, warnings)``: from ``topics`` when given, else from the golden
    sets the runs' headers record (read only when the file is still there and unchanged).
    """
    if topics is not None:
        if not isinstance(topics, Mapping):
            raise TypeError(f"topics must be a mapping of query id to text, not "
                            f"{type(topics).__name__}")
        given = {str(k): str(v) for k, v in topics.items() if v is not None}
        ids = {q.query_id for r in runs for q in r.per_query}
        if given and ids and ids.isdisjoint(given):
            example = sorted(given)[0]
            return given, [f"query text: the topics name none of the {len(ids):,} compared "
                           f"queries (they start with {example!r}); is it the topic file of "
                           "this collection?"]
        return given, []
    texts: dict[str, str] = {}
    notes: list[str] = []
    seen: set[str] = set()
    for r in runs:
        record = r.header.get("goldens") or {}
        path = record.get("path") if isinstance(record, Mapping) else None
        if not path or path in seen or not Path(path).is_file():
            continue
        seen.add(path)
        from evalkit.data.goldens import load_goldens

        try:
            gset = load_goldens(path, loader=record.get("loader"))
        except (OSError, ValueError, LookupError) as exc:
            notes.append(f"query text: the golden set {path} could not be read ({exc})")
            continue
        if record.get("sha256") and gset.digest() != record["sha256"]:
            notes.append(f"query text: the golden set {path} changed since run {quoted(r.name)} "
                         "was made; its text is left out")
            continue
        texts.update({c.id: c.query for c in gset if c.query})
    return texts, notes


__all__ = ["Loaded", "RunInput", "definitions_of", "input_warnings", "load_inputs",
           "query_texts"]
