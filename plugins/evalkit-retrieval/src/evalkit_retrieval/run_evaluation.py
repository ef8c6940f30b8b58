"""The run evaluator (:class:`~evalkit.core.specs.RunEvaluatorSpec` ``trec``): score a
precomputed run (TREC file, ``{qid: {doc: score}}`` or a DataFrame in PyTerrier's shape,
:mod:`evalkit_retrieval.frames`) against qrels; :func:`evalkit.evaluate_run` reaches
:func:`evaluate_run` through the registry."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from evalkit._version import __version__
from evalkit.core.registry import RegistryError
from evalkit.core.specs import LoaderSpec
from evalkit.data.coverage import notes_of
from evalkit.data.judged_queries import JudgedQueries
from evalkit.data.judgments import LoadedQrels, judgments_sha256, loaded_from_mapping
from evalkit.data.provenance import metric_provenance, plugin_versions
from evalkit.data.query_ids import near_ids, near_ids_warning, rank_column_warning
from evalkit.data.ranked_ids import RankedRun
from evalkit.data.results import RunResult
from evalkit.data.targets import TargetResponse
from evalkit.data.text_ids import text_ids
from evalkit.execute.run_evaluator import (
    NoJudgedQueryWarning,
    QrelsInput,
    RunInput,
    refuse_unavailable,
)
from evalkit.execute.scoring import require_metrics, resolve_metrics, score_rankings
from evalkit.io.input_files import InputError, no_query_message
from evalkit.io.limits import check_name
from evalkit.io.setting_names import Setting, SettingError
from evalkit.plugins.default import default_registry
from evalkit_retrieval.ranking import rank_run
from evalkit_retrieval.trec import DuplicateLineError


def load_qrels_input(qrels: QrelsInput, metrics: Sequence[str] | None = None
                     ) -> LoadedQrels:
    """Qrels from a path (through the registered ``qrels`` loader) or a mapping
    (:class:`LoadedQrels` are returned as given).

    A TREC qrels file is read as trec_eval reads it (the second column ignored, a
    document judged twice for one query refused), unless ``metrics`` name a diversity
    measure (``alpha_ndcg@k``, ``err_ia@k``: :func:`wants_subtopics`): the file is then
    read as subtopic qrels (``qid subtopic docno label``,
    :func:`evalkit_retrieval.trec.load_qrels` with ``subtopics=True``). ``irds:ID``
    qrels are read the same way, their ``iteration`` (or ``subtopic_id``) column as the
    subtopic (:func:`evalkit_retrieval.irds.load_qrels`).

    A mapping may give ``{doc: label}`` (integer labels; numpy integers, integral floats
    and integer text are accepted), a set or list of relevant ids (label 1 each), or a
    query's subtopic judgments, kept as such whatever the metrics: a
    :class:`~evalkit_retrieval.subtopics.SubtopicJudgments` (what
    ``trec.load_qrels(path, subtopics=True)`` gives) or ``{subtopic: {doc: label}}``
    (:func:`evalkit.data.judgments.graded_judgments`). A ``pandas.DataFrame`` with
    ``qid, docno, label`` columns is read by
    :func:`evalkit_retrieval.frames.qrels_from_frame` (its ``iteration`` column as the
    subtopic when a diversity measure is asked for, as a file's second column) and hashed
    as the mapping it holds.

    Returns:
        ``judgments`` as ``{qid: {doc: label}}`` with text ids (a query with subtopics a
        :class:`~evalkit_retrieval.subtopics.SubtopicJudgments`); ``sha256`` of the
        file's bytes, or of the judgments as canonical JSON for a mapping or an
        ``irds:`` id (:func:`evalkit.data.judgments.judgments_sha256`).

    Raises:
        FileNotFoundError: no such file. TrecFormatError (ValueError): a malformed file.
        ValueError: a label that is not an integer, a relevant id listed twice.
        TypeError: a query's judgments are neither a mapping nor a collection of ids.
        FrameFormatError (ValueError): a DataFrame that is not qrels (a missing column, a
            duplicate, a label that is not an integer; the row named).
    """
    if isinstance(qrels, LoadedQrels):
        return qrels
    from evalkit_retrieval.frames import is_dataframe, qrels_from_frame

    subtopics = bool(metrics) and wants_subtopics(metrics or [])
    if is_dataframe(qrels):
        qrels = qrels_from_frame(qrels, subtopics=subtopics)
    if isinstance(qrels, str | Path):
        loader = _loader("qrels", qrels)
        if loader.scheme:  # SCHEME:ID, not a file (LoaderSpec.scheme)
            if loader.name == "irds" and subtopics:
                from evalkit_retrieval import irds

                read = irds.load_qrels(str(qrels), subtopics=True)
            else:
                read = loader.fn(str(qrels))
            named = {str(q): j for q, j in read.items()}
            return LoadedQrels(judgments=named, path=str(qrels),
                               sha256=judgments_sha256(named))
        if loader.name == "trec" and subtopics:
            from evalkit_retrieval import trec

            judg = trec.load_qrels(Path(qrels), lazy=True, subtopics=True)
        else:
            judg = loader.fn(Path(qrels))
        with Path(qrels).open("rb") as fh:  # hashed in chunks: no copy of the file in memory
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        return LoadedQrels(judgments=judg, path=str(qrels), sha256=digest)
    return loaded_from_mapping(qrels)


#: the measure families that read subtopic qrels (:mod:`evalkit_retrieval.diversity`)
SUBTOPIC_FAMILIES = frozenset({"alpha_ndcg", "err_ia"})


def wants_subtopics(metrics: Sequence[str]) -> bool:
    """Whether ``metrics`` (spec strings) name a diversity measure, which reads qrels as
    subtopic qrels; a name the registry does not know counts as none (it is refused
    where the metrics are resolved).
    """
    reg = default_registry()
    for name in metrics:
        try:
            family = getattr(reg.resolve(name), "family", None)
        except (RegistryError, ValueError):
            continue
        if family in SUBTOPIC_FAMILIES:
            return True
    return False


def load_run_input(run: RunInput, name: str | None = None) -> RankedRun:
    """A ranked run from a path (through the registered ``run`` loader) or a mapping.

    A :class:`RankedRun` is returned as given; ``{qid: {doc: score}}`` is ranked with
    :func:`evalkit_retrieval.ranking.rank_run`, a ``pandas.DataFrame`` (``qid, docno, score``) with
    :func:`evalkit_retrieval.frames.run_from_frame`. ``name`` replaces the run tag of a file
    (and the ``name`` column of a frame).

    Raises:
        FileNotFoundError: no such file. TrecFormatError (ValueError): a malformed file.
        ValueError: a score that is NaN or not a number.
        IdCollisionError (ValueError): two query ids of a mapping, or of a
            :class:`RankedRun` built in Python, or two document ids of one of its rankings
            that are one id as text (``1`` and ``"1"``).
        RegistryError: no run loader is installed.
        FrameFormatError (ValueError): a DataFrame that is not a run (a missing column, a
            duplicate, a score that is NaN; the row named).
    """
    from evalkit_retrieval.frames import is_dataframe, run_from_frame

    if isinstance(run, RankedRun):
        return _text_keyed(run)
    if is_dataframe(run):
        return run_from_frame(run, name)
    if isinstance(run, str | Path):
        loader = _loader("run", run)
        loaded = loader.fn(Path(run))
        if not isinstance(loaded, RankedRun):
            raise TypeError(f"run loader {loader.name!r} returned {type(loaded).__name__}")
        if name:
            loaded.name = name
        return loaded
    return rank_run(run, name=name or "run")


def _text_keyed(run: RankedRun) -> RankedRun:
    """``run`` with text ids: a :class:`RankedRun` built in Python may key a ranking by
    ``1`` or list ``7``, which would never match the qrels' ``"1"`` and ``"7"``
    (:func:`~evalkit.data.text_ids.text_ids`; a loader's views are left as they are)."""
    import dataclasses

    keys = list(run.rankings)
    lists = {k for k in keys if type(run.rankings[k]) is list
             and not all(type(d) is str for d in run.rankings[k])}
    if all(type(k) is str for k in keys) and not lists:
        return run
    rankings = {q: (text_ids(run.rankings[k], f"run query {q!r}") if k in lists
                    else run.rankings[k])
                for q, k in zip(text_ids(keys, "run (query ids)"), keys, strict=True)}
    return dataclasses.replace(run, rankings=rankings)


def _judged_run(run: RunInput, name: str | None, judged: Mapping[str, Any]) -> RankedRun:
    """The TREC run file ``run`` read again knowing the judged queries, after it listed a
    document twice for one query: trec_eval never reads the ranking of a query the qrels
    do not judge, so a duplicate there is read once (its first line kept), and one in a
    judged query refused, as trec_eval refuses it (``duplicate docs``).

    Raises:
        DuplicateLineError (TrecFormatError): a duplicate in a judged query.
    """
    from evalkit_retrieval import trec

    assert isinstance(run, str | Path)  # only a TREC file raises DuplicateLineError
    return trec.load_run(Path(run), name=name or None, judged=judged)


def _loader(kind: str, path: str | Path) -> LoaderSpec:
    """The loader of ``kind`` for ``path``: by scheme (``irds:ID``) or suffix, else the one
    named ``trec``.

    Raises:
        RegistryError: no loader reads ``path`` (a TREC file, when the plugin of the TREC
            loaders is not loaded: the message says it is disabled, failed or not
            installed, and how to enable or install it).
    """
    reg = default_registry()
    try:
        spec = reg.loader(kind, path=str(path))
        if spec.scheme:
            return spec
    except RegistryError:
        try:
            return reg.loader(kind, name="trec")
        except RegistryError:
            pass
        refuse_unavailable(f"{path}: the TREC {kind} loader that reads it")
        raise
    if not _reads(spec, path):  # the only loader of the kind, not chosen for this file
        refuse_unavailable(f"{path}: the TREC {kind} loader that reads it")
    return spec


def _reads(spec: LoaderSpec, path: str | Path) -> bool:
    """Whether ``spec`` was chosen for ``path`` itself: a suffix of it matches and its
    ``accepts`` (when it has one) takes the file."""
    lowered = str(path).lower()
    if not any(lowered.endswith(s.lower()) for s in spec.suffixes):
        return False
    try:
        return spec.accepts is None or bool(spec.accepts(Path(path)))
    except Exception:
        return True  # the loader reports it


def evaluate_run(
    run: RunInput,
    qrels: QrelsInput,
    metrics: Sequence[str],
    relevance_level: int = 1,
    missing: Literal["zero", "skip", "refuse"] = "zero",
    *,
    depth: int | None = None,
    name: str | None = None,
    judged_only: bool = False,
) -> RunResult:
    """The ``trec`` run evaluator's ``evaluate``: a TREC run file, a
    :class:`~evalkit.data.ranked_ids.RankedRun`, ``{qid: {doc: score}}`` or a run
    DataFrame scored against qrels, one row per evaluated query, as
    :func:`evalkit.evaluate_run` documents it (the arguments, the header's ``notes``, the
    errors: a malformed file raises :class:`~evalkit_retrieval.trec.TrecFormatError`, a
    DataFrame :class:`~evalkit_retrieval.frames.FrameFormatError`, both ValueErrors naming
    the line or row).

    ``judged_only`` (trec_eval ``-J``): every measure is computed over each ranking
    without its unjudged documents (not in the query's qrels, or labelled < 0), taken
    out after the ``depth`` cut, as trec_eval does (form_res_rels.c); ``num_ret`` then
    counts the judged documents ranked. The header records ``"judged_only": true``.

    Warns:
        NoJudgedQueryWarning (UserWarning): no evaluated query is in the run (an empty
            run, or one whose topics the qrels do not judge): every query scores 0
            (:func:`no_overlap_warning`), or none is evaluated (``missing="skip"``).
    """
    _check_settings(missing, depth, relevance_level)
    if not isinstance(judged_only, bool):
        raise ValueError(f"judged_only must be True or False, got {judged_only!r}")
    require_metrics(metrics)
    if name is not None:
        check_name(name)  # as long as a TREC run tag may be (it names the run everywhere)
    specs = resolve_metrics(metrics)
    try:
        ranked = load_run_input(run, name)
    except DuplicateLineError as exc:
        q = load_qrels_input(qrels, metrics)
        if exc.qid in q.judgments:
            raise exc.in_judged_query() from None
        ranked = _judged_run(run, name, q.judgments)
    else:
        q = load_qrels_input(qrels, metrics)
    if not q.judgments:
        raise ValueError("the qrels hold no judged query; nothing can be evaluated")
    rankings = ranked.rankings
    qids, notes = _evaluated_queries(rankings, q.judgments, missing)
    responses: list[TargetResponse] = []
    for qid in qids:
        docs = rankings.get(qid, [])
        if depth is not None and len(docs) > depth:
            docs = docs[:depth]
        if judged_only:
            docs = _judged_docs(docs, q.judgments.get(qid, {}))
        responses.append(TargetResponse(ranked_ids=docs))
    # each case is built when read; vectorised metrics read the judgments in bulk
    cases = JudgedQueries(qids, q.judgments, relevance_level)
    rows = score_rankings(responses, cases, specs)
    if _has_subtopics(q.judgments):
        notes["subtopic_qrels"] = True
    if ranked.meta.get("rank_column_ignored"):  # every score tied, the ranks in order
        notes["rank_column_ignored"] = True
    if not any(qid in rankings for qid in qids):
        import warnings

        where = q.path or "the qrels"
        warnings.warn(no_overlap_warning(where) if qids else (
            f"none of the run's topics appears in {where}; no query was evaluated "
            "(missing='skip' leaves out the judged queries the run lacks). Are these the "
            "right files?"), NoJudgedQueryWarning, stacklevel=_outside_evalkit())
    header: dict[str, Any] = {
        "evalkit_version": __version__,
        "plugins": plugin_versions(),
        "metrics": metric_provenance([s.name for s in specs]),
        "counts": [s.name for s in specs if s.kind == "count"],
        "run": {"path": ranked.path, "sha256": ranked.sha256, "tag": ranked.name},
        "qrels": {"path": q.path, "sha256": q.sha256},
        "relevance_level": relevance_level,
        "missing": missing,
        "depth": depth,
        **({"judged_only": True} if judged_only else {}),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "notes": {"num_queries": len(rows), **notes},
    }
    return RunResult(name=name or ranked.name, per_query=rows, header=header)


def _judged_docs(docs: Sequence[str], labels: Mapping[str, int]) -> list[str]:
    """``docs`` in order, without those ``labels`` do not judge (absent, or a label < 0:
    trec_eval's "not in pool" and "in the pool but unjudged")."""
    return [d for d in docs if labels.get(d, -1) >= 0]


def _outside_evalkit() -> int:
    """The ``stacklevel`` that makes a warning issued by the caller point at the first
    frame outside evalkit's packages (the user's call of :func:`evalkit.evaluate_run`,
    however many of evalkit's frames lie between)."""
    import sys

    level, frame = 1, sys._getframe(1)
    while frame.f_back is not None and str(frame.f_globals.get("__name__", "")).split(".")[
            0] in ("evalkit", "evalkit_retrieval"):
        frame, level = frame.f_back, level + 1
    return level


def no_overlap_warning(qrels: object) -> str:
    """The warning for a run none of whose topics is judged in ``qrels`` (named): every
    query scores 0 (told by :func:`evaluate_run` with :func:`warnings.warn`, and by
    ``evalkit eval``)."""
    return (f"none of the run's topics appears in {qrels}; every query scores 0. Are these "
            "the right files?")


def _has_subtopics(judgments: Mapping[str, Any]) -> bool:
    """Whether ``judgments`` were read as subtopic qrels (a query's judgments carry
    ``subtopics``: :class:`~evalkit_retrieval.subtopics.SubtopicJudgments`)."""
    return any(isinstance(getattr(j, "subtopics", None), Mapping) for j in judgments.values())


def _check_settings(missing: object, depth: object, relevance_level: object) -> None:
    """Raises ValueError naming a bad ``missing``, ``depth`` or ``relevance_level``."""
    if missing not in ("zero", "skip", "refuse"):
        raise ValueError(f"missing must be 'zero', 'skip' or 'refuse', got {missing!r}")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)
                              or depth < 1):
        raise ValueError(f"depth must be a positive integer (trec_eval -M), got {depth!r}")
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, int) \
            or relevance_level < 1:
        raise ValueError(
            f"relevance_level must be an integer >= 1 (trec_eval -l), got {relevance_level!r};"
            " labels <= 0 never count as relevant"
        )


def _evaluated_queries(rankings: Mapping[str, Any], judgments: Mapping[str, Any],
                       missing: str) -> tuple[list[str], dict[str, Any]]:
    """``(query ids evaluated, in text order; the header's notes on the others)``: run
    topics without judgments are ignored, judged topics missing from the run scored
    (``"zero"``) or left out (``"skip"``), and judged queries given an empty ranking
    counted; ``near_ids`` pairs a few ignored run topics with missing judged queries whose
    ids differ only by leading zeros, white space or invisible characters
    (:func:`evalkit.data.query_ids.near_ids`).

    Raises:
        SettingError: ``missing="refuse"`` and a judged query is missing from the run.
    """
    unjudged = sorted(set(rankings).difference(judgments))
    missing_ids = sorted(set(judgments).difference(rankings))
    # a judged query given an empty ranking ({qid: {}} in a mapping or frame; a TREC file
    # cannot say it) is in the run and scores 0, as pytrec_eval scores it: counted in the
    # notes, so that `evalkit eval` says so instead of a silent 0
    empty_ids = sorted(x for x in judgments if x in rankings and not len(rankings[x]))
    qids = sorted(judgments)
    if missing == "refuse" and missing_ids:
        shown = ", ".join(repr(x) for x in missing_ids[:5])
        raise SettingError(
            f"{len(missing_ids)} judged quer{'y is' if len(missing_ids) == 1 else 'ies are'} "
            f"missing from the run ({shown}{', ...' if len(missing_ids) > 5 else ''}); "
            "trec_eval 10.0 without -c stops here too. Score them 0 (",
            Setting("missing", "zero"), ", trec_eval -c) or leave them out (",
            Setting("missing", "skip"), ", as trec_eval 9.0.8 did)")
    if missing == "skip":
        qids = [x for x in qids if x in rankings]
    near = near_ids(unjudged, missing_ids)
    return qids, {
        **({"near_ids": near} if near else {}),
        "unjudged_ignored": len(unjudged),
        "unjudged_ignored_ids": unjudged[:20],
        ("missing_scored_zero" if missing == "zero" else "missing_skipped"): len(missing_ids),
        "missing_ids": missing_ids[:20],
        **({"empty_rankings": len(empty_ids), "empty_ranking_ids": empty_ids[:20]}
           if empty_ids else {}),
    }


def judgments_of(qrels: Path, loaded: Mapping[Path, LoadedQrels] | None = None
                 ) -> Mapping[str, Mapping[str, int]]:
    """The judgments of the qrels file ``qrels`` (``{qid: {doc: label}}``), taken from
    ``loaded`` when
    :func:`evalkit.execute.run_files.load_or_evaluate` has read that file already, else
    read now.

    Raises:
        FileNotFoundError, TrecFormatError (a ValueError): a missing or malformed file.
    """
    found = (loaded or {}).get(qrels)
    if found is not None:
        return found.judgments
    return load_qrels_input(qrels).judgments




def check_scored(result: RunResult, run: Path, qrels: Path | None) -> list[str]:
    """Refuse a scored run with no query, and say when no topic of the run is judged.

    Returns:
        Notes and warnings for the reader (the qrels read as subtopic qrels; none of the
        run's topics in the qrels: every query scores 0).

    Raises:
        InputError: no query was evaluated (no topic judged, and ``missing=skip``).
    """
    if not result.per_query:
        raise InputError(no_query_message(run))
    notes = notes_of(result)
    told: list[str] = []
    if notes["near_ids"]:
        told.append(f"warning: {near_ids_warning(notes['near_ids'])}")
    if notes["rank_column_ignored"]:
        told.append(f"warning: {rank_column_warning(run)}")
    if result.header.get("notes", {}).get("subtopic_qrels"):
        told.append(f"note: {qrels} read as subtopic qrels (qid subtopic docno label), as a "
                    "diversity measure was requested; every other measure sees each "
                    "document with its largest label over the subtopics")
    judged_overlap = len(result.per_query) - (notes["missing_count"] or 0)
    if notes["missing"] == "zero" and judged_overlap == 0:
        return [*told, f"warning: {no_overlap_warning(qrels)}"]
    return told
