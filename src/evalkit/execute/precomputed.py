"""``evaluate_run()``: score a precomputed run (TREC file, ``{qid: {doc: score}}`` or a
DataFrame in PyTerrier's shape, :mod:`evalkit.execute.frame_inputs`)."""

from __future__ import annotations

import hashlib
import json
import math
import operator
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from evalkit._version import __version__
from evalkit.core.registry import RegistryError
from evalkit.core.specs import LoaderSpec
from evalkit.data.judged_queries import JudgedQueries
from evalkit.data.provenance import metric_provenance, plugin_versions
from evalkit.data.results import RunResult
from evalkit.data.targets import TargetResponse
from evalkit.execute.ranking import RankedRun, rank_run
from evalkit.execute.scoring import require_metrics, resolve_metrics, score_rankings
from evalkit.io.limits import check_name, label_problem
from evalkit.io.setting_names import Setting, SettingError
from evalkit.plugins.default import default_registry

if TYPE_CHECKING:
    import pandas as pd

#: a TREC run path, a ranked run, ``{qid: {doc: score}}``, or a ``pandas.DataFrame`` with
#: ``qid, docno, score``
RunInput: TypeAlias = "str | Path | RankedRun | Mapping[str, Mapping[str, float]] | pd.DataFrame"


@dataclass(frozen=True)
class LoadedQrels:
    """Qrels as graded judgments plus where they came from (a loader may give each query
    a lazy ``{doc: label}`` view rather than a dict)."""

    judgments: Mapping[str, Mapping[str, int]]
    path: str | None
    sha256: str


#: a TREC qrels path, ``{qid: {doc: label}}``, ``{qid: relevant ids}`` (a set or list), a
#: ``pandas.DataFrame`` with ``qid, docno, label``, or qrels already loaded by
#: :func:`load_qrels_input`
QrelsInput: TypeAlias = (
    "str | Path | LoadedQrels | Mapping[str, Mapping[str, int] | Collection[str]]"
    " | pd.DataFrame")


def load_qrels_input(qrels: QrelsInput) -> LoadedQrels:
    """Qrels from a path (through the registered ``qrels`` loader) or a mapping
    (:class:`LoadedQrels` are returned as given).

    A mapping may give ``{doc: label}`` (integer labels; numpy integers, integral floats
    and integer text are accepted) or a set or list of relevant ids (label 1 each). A
    ``pandas.DataFrame`` with ``qid, docno, label`` columns is read by
    :func:`evalkit.execute.frame_inputs.qrels_from_frame` and hashed as the mapping it holds.

    Returns:
        ``judgments`` as ``{qid: {doc: label}}`` with text ids; ``sha256`` of the file's
        bytes, or of the judgments as canonical JSON for a mapping.

    Raises:
        FileNotFoundError: no such file. TrecFormatError (ValueError): a malformed file.
        ValueError: a label that is not an integer, a relevant id listed twice.
        TypeError: a query's judgments are neither a mapping nor a collection of ids.
        FrameFormatError (ValueError): a DataFrame that is not qrels (a missing column, a
            duplicate, a label that is not an integer; the row named).
    """
    if isinstance(qrels, LoadedQrels):
        return qrels
    from evalkit.execute.frame_inputs import is_dataframe, qrels_from_frame

    if is_dataframe(qrels):
        qrels = qrels_from_frame(qrels)
    if isinstance(qrels, str | Path):
        loader = _loader("qrels", qrels)
        if loader.scheme:  # SCHEME:ID, not a file (LoaderSpec.scheme)
            named = {str(q): j for q, j in loader.fn(str(qrels)).items()}
            text = json.dumps({q: dict(j) for q, j in named.items()}, sort_keys=True)
            return LoadedQrels(judgments=named, path=str(qrels),
                               sha256=hashlib.sha256(text.encode()).hexdigest())
        judg = loader.fn(Path(qrels))
        with Path(qrels).open("rb") as fh:  # hashed in chunks: no copy of the file in memory
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        return LoadedQrels(judgments=judg, path=str(qrels), sha256=digest)
    graded: dict[str, dict[str, int]] = {}
    for q, j in qrels.items():
        qid = str(q)
        if isinstance(j, Mapping):
            graded[qid] = {str(d): _label(qid, d, g) for d, g in j.items()}
        elif isinstance(j, str | bytes) or not isinstance(j, Collection):
            raise TypeError(
                f"qrels of query {qid!r}: expected {{doc id: label}} or a set of relevant "
                f"ids, got {type(j).__name__}"
            )
        else:
            ids = [str(d) for d in j]
            if len(set(ids)) != len(ids):
                dup = next(d for i, d in enumerate(ids) if d in ids[:i])
                raise ValueError(f"qrels of query {qid!r} list document {dup!r} twice")
            graded[qid] = dict.fromkeys(ids, 1)
    canon = json.dumps(graded, sort_keys=True).encode()
    return LoadedQrels(judgments=graded, path=None, sha256=hashlib.sha256(canon).hexdigest())


def _label(qid: str, doc: object, value: object) -> int:
    """An integer label (ints, numpy ints, integral floats, integer text) in the 64-bit
    range (:func:`evalkit.io.limits.label_problem`)."""
    label = _integer_label(qid, doc, value)
    problem = label_problem(label)
    if problem is not None:
        raise ValueError(f"qrels of query {qid!r}, document {doc!r}: {problem}")
    return label


def _integer_label(qid: str, doc: object, value: object) -> int:
    if type(value) is int:
        return value
    if not isinstance(value, bool):
        try:
            return operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            pass
        try:
            number = float(value) if isinstance(value, float | str) else math.nan
        except ValueError:
            number = math.nan
        if number.is_integer():
            return int(number)
    raise ValueError(
        f"qrels of query {qid!r}: the label of document {doc!r} is {value!r}; labels are "
        "integers (0 = not relevant)"
    )


def load_run_input(run: RunInput, name: str | None = None) -> RankedRun:
    """A ranked run from a path (through the registered ``run`` loader) or a mapping.

    A :class:`RankedRun` is returned as given; ``{qid: {doc: score}}`` is ranked with
    :func:`evalkit.execute.ranking.rank_run`, a ``pandas.DataFrame`` (``qid, docno, score``) with
    :func:`evalkit.execute.frame_inputs.run_from_frame`. ``name`` replaces the run tag of a file
    (and the ``name`` column of a frame).

    Raises:
        FileNotFoundError: no such file. TrecFormatError (ValueError): a malformed file.
        ValueError: a score that is not a finite number (NaN, inf, -inf) or not a number.
        RegistryError: no run loader is installed.
        FrameFormatError (ValueError): a DataFrame that is not a run (a missing column, a
            duplicate, a score that is not finite; the row named).
    """
    from evalkit.execute.frame_inputs import is_dataframe, run_from_frame

    if isinstance(run, RankedRun):
        return run
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


#: The plugin whose loaders read TREC run and qrels files (a facade: the kernel names it
#: to say how to get them, and never imports it).
TREC_LOADERS = "evalkit-retrieval"


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
        _refuse_without_retrieval(f"{path}: the TREC {kind} loader that reads it")
        raise
    if not _reads(spec, path):  # the only loader of the kind, not chosen for this file
        _refuse_without_retrieval(f"{path}: the TREC {kind} loader that reads it")
    return spec


def retrieval_loader(kind: str, name: str, what: str) -> LoaderSpec:
    """The loader ``name`` of ``kind`` that the retrieval plugin provides (``("queries",
    "topics")``: the topic files of ``evalkit.compare(topics=PATH)``).

    Raises:
        RegistryError: the plugin is disabled, failed or not installed (the message says
            which, naming ``what``, and how to get it), or it has no such loader.
    """
    try:
        return default_registry().loader(kind, name=name)
    except RegistryError:
        _refuse_without_retrieval(what)
        raise


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


def _refuse_without_retrieval(what: str) -> None:
    """Raise when ``what`` needs the retrieval plugin and it is not loaded
    (:func:`evalkit.plugins.loading.unavailable_plugin`)."""
    from evalkit.plugins.loading import unavailable_plugin

    why = unavailable_plugin(default_registry(), TREC_LOADERS, what)
    if why is not None:
        raise RegistryError(why)


def evaluate_run(
    run: RunInput,
    qrels: QrelsInput,
    metrics: Sequence[str],
    relevance_level: int = 1,
    missing: Literal["zero", "skip", "refuse"] = "zero",
    *,
    depth: int | None = None,
    name: str | None = None,
) -> RunResult:
    """Score a precomputed run against qrels: one row per evaluated query.

    Queries are those of the qrels (as trec_eval evaluates them): run topics without
    judgments are ignored, and judged topics missing from the run are scored as an empty
    ranking (``missing="zero"``, trec_eval ``-c``), left out (``"skip"``, as trec_eval
    9.0.8 did without ``-c``) or refused (``"refuse"``: ValueError naming them, as
    trec_eval 10.0 exits with an error without ``-c``). A judged query with no relevant
    document stays in and scores 0.

    Args:
        run: a TREC run file path, a :class:`~evalkit.execute.ranking.RankedRun`,
            ``{qid: {doc: score}}``, or a ``pandas.DataFrame`` in PyTerrier's shape
            (``qid, docno, score``; an optional ``name`` column names the run; ``rank``
            and other columns are ignored). Mappings and frames are ranked as trec_eval
            ranks a file: score descending, ties by doc id descending.
        qrels: a TREC qrels path, ``{qid: {doc: label}}`` / ``{qid: set of relevant
            ids}``, a ``pandas.DataFrame`` with ``qid, docno, label``, or
            :class:`LoadedQrels`.
        metrics: spec strings (``"ap"``, ``"ndcg@10"``, ``"P@10"``, ...), or one on its own;
            an empty list raises ValueError. Every registered
            count (``num_ret``, ``num_rel``, ``num_rel_ret``) is added to each row's
            ``counts``; a count named here goes there too (never to ``metrics``) and is
            listed in ``header["counts"]``. An unknown name raises.
        relevance_level: trec_eval ``-l``: the smallest label binary measures count as
            relevant (an integer >= 1; nDCG always uses the labels themselves).
        missing: ``"zero"``, ``"skip"`` or ``"refuse"``, see above. The counts of unjudged
            and missing queries go in the header (``"refuse"`` records them like
            ``"skip"``).
        depth: trec_eval ``-M``: only the first ``depth`` documents of each ranking (after
            ranking by score) are evaluated.
        name: the run's name (defaults to the run tag).

    Returns:
        A :class:`RunResult` with rows in query-id order (text order, as trec_eval prints
        them). ``header["notes"]`` holds ``num_queries``, ``unjudged_ignored`` (and up to
        20 ``unjudged_ignored_ids``), ``missing_scored_zero`` or ``missing_skipped`` (and
        ``missing_ids``), ``empty_rankings`` and ``empty_ranking_ids`` when a judged query
        was given an empty ranking (it scores 0); the header also records the run and
        qrels hashes, the settings and every metric's provider and definition version.

    Raises:
        ValueError: a bad ``missing``, ``depth`` or ``relevance_level``; qrels with no
            query; a ranking that lists a document twice.
        SettingError: (a ``ValueError``) ``missing="refuse"`` and a judged query is
            missing from the run; the message names the settings that score or skip it.
        RegistryError: an unknown metric name.
        TrecFormatError (a ValueError, from the retrieval plugin): a malformed file.
        FrameFormatError (a ValueError, :mod:`evalkit.execute.frame_inputs`): a DataFrame with a
            missing column, a duplicate (qid, docno), a NaN or infinite score, a label
            that is not an integer, or a missing id; the message names the row.
    """
    _check_settings(missing, depth, relevance_level)
    require_metrics(metrics)
    if name is not None:
        check_name(name)  # as long as a TREC run tag may be (it names the run everywhere)
    specs = resolve_metrics(metrics)
    ranked = load_run_input(run, name)
    q = load_qrels_input(qrels)
    if not q.judgments:
        raise ValueError("the qrels hold no judged query; nothing can be evaluated")
    rankings = ranked.rankings
    qids, notes = _evaluated_queries(rankings, q.judgments, missing)
    responses: list[TargetResponse] = []
    for qid in qids:
        docs = rankings.get(qid, [])
        if depth is not None and len(docs) > depth:
            docs = docs[:depth]
        responses.append(TargetResponse(ranked_ids=docs))
    # each case is built when read; vectorised metrics read the judgments in bulk
    cases = JudgedQueries(qids, q.judgments, relevance_level)
    rows = score_rankings(responses, cases, specs)
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
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "notes": {"num_queries": len(rows), **notes},
    }
    return RunResult(name=name or ranked.name, per_query=rows, header=header)


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
    counted.

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
    return qids, {
        "unjudged_ignored": len(unjudged),
        "unjudged_ignored_ids": unjudged[:20],
        ("missing_scored_zero" if missing == "zero" else "missing_skipped"): len(missing_ids),
        "missing_ids": missing_ids[:20],
        **({"empty_rankings": len(empty_ids), "empty_ranking_ids": empty_ids[:20]}
           if empty_ids else {}),
    }
