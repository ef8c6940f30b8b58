"""Ranked runs scored against qrels, through the run evaluator a plugin registers.

The kernel does not read TREC run or qrels files itself: :func:`evaluate_run` (exported as
:func:`evalkit.evaluate_run`) and :func:`load_qrels_input` hand their inputs to the
:class:`~evalkit.core.specs.RunEvaluatorSpec` in the registry
(``evalkit_register_run_evaluators``; ``evalkit-retrieval`` provides ``trec``). With no
evaluator loaded, the refusal says which plugin provides one and whether it is disabled,
failed or not installed (:func:`refuse_unavailable`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from evalkit.core.registry import RegistryError
from evalkit.core.specs import LoaderSpec, RunEvaluatorSpec
from evalkit.data.judgments import LoadedQrels, loaded_from_mapping
from evalkit.plugins.default import default_registry

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.data.ranked_ids import RankedRun
    from evalkit.data.results import RunResult

#: a TREC run path, a ranked run, ``{qid: {doc: score}}``, or a ``pandas.DataFrame`` with
#: ``qid, docno, score``
RunInput: TypeAlias = "str | Path | RankedRun | Mapping[str, Mapping[str, float]] | pd.DataFrame"

#: a TREC qrels path, ``{qid: {doc: label}}``, ``{qid: relevant ids}`` (a set or list), a
#: ``pandas.DataFrame`` with ``qid, docno, label``, or qrels already loaded by
#: :func:`load_qrels_input`
QrelsInput: TypeAlias = (
    "str | Path | LoadedQrels | Mapping[str, Mapping[str, int] | Collection[str]]"
    " | pd.DataFrame")

#: The plugin that provides the run evaluator and the TREC loaders: the kernel names it
#: to say how to get them, and never imports it.
TREC_LOADERS = "evalkit-retrieval"


class NoJudgedQueryWarning(UserWarning):
    """:func:`evaluate_run` evaluated no query that the run holds (an empty run, or one
    whose topics the qrels do not judge): every query scores 0, or none is evaluated.
    ``evalkit eval`` and ``evalkit compare`` say so in their own words."""


def run_evaluator(what: str = "scoring a ranked run against qrels") -> RunEvaluatorSpec:
    """The run evaluator of the registry.

    Raises:
        RegistryError: none is loaded (the message names ``what``, the plugin that
            provides one and why it is not loaded), or two plugins provide one (naming
            both).
    """
    registry = default_registry()
    blocked = next((c for c in registry.conflicts() if c.namespace == "run_evaluator"), None)
    if blocked is not None:
        raise RegistryError(blocked.message())
    found = [(key, entry) for _, key, entry in registry.entries("run_evaluator")]
    if len(found) > 1:
        named = " and ".join(f"{key!r} of {entry.provider}" for key, entry in found)
        raise RegistryError(f"two run evaluators are loaded ({named}); disable one of "
                            "their plugins (see `evalkit plugins list`)")
    if not found:
        refuse_unavailable(what)
        raise RegistryError(f"{what}: no plugin provides a run evaluator; install "
                            f"{TREC_LOADERS}")
    spec = found[0][1].spec
    assert isinstance(spec, RunEvaluatorSpec)
    return spec


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
    """Score a precomputed run against qrels: one row per evaluated query.

    Queries are those of the qrels (as trec_eval evaluates them): run topics without
    judgments are ignored, and judged topics missing from the run are scored as an empty
    ranking (``missing="zero"``, trec_eval ``-c``: each measure's value with nothing
    retrieved, 0 for all but utility, whose value is p3·R − p4·R), left out (``"skip"``,
    as trec_eval 9.0.8 did without ``-c``) or refused (``"refuse"``: ValueError naming them, as
    trec_eval 10.0 exits with an error without ``-c``). A judged query with no relevant
    document stays in and scores 0.

    Args:
        run: a TREC run file path, a :class:`~evalkit.data.ranked_ids.RankedRun`,
            ``{qid: {doc: score}}``, or a ``pandas.DataFrame`` in PyTerrier's shape
            (``qid, docno, score``; an optional ``name`` column names the run; ``rank``
            and other columns are ignored). Mappings and frames are ranked as trec_eval
            ranks a file: score descending, ties by doc id descending.
        qrels: a TREC qrels path (or ``irds:DATASET_ID``), ``{qid: {doc: label}}`` /
            ``{qid: set of relevant ids}``, a ``pandas.DataFrame`` with ``qid, docno,
            label``, or :class:`~evalkit.data.judgments.LoadedQrels`. Subtopic qrels
            (``qid subtopic docno label``, the diversity measures' ``alpha_ndcg@k`` and
            ``err_ia@k``) keep their subtopics however they come: a file or an
            ``irds:`` id (its ``iteration`` column) read as subtopic qrels when a
            diversity measure is asked for and the column holds two or more values, a
            mapping whose query gives a
            :class:`~evalkit.data.judgments.SubtopicJudgments` or ``{subtopic: {doc:
            label}}`` always (:func:`~evalkit.data.judgments.graded_judgments`); every
            other measure sees a document's largest label over its subtopics.
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
        judged_only: trec_eval ``-J``: every measure over each ranking without its
            unjudged documents (taken out after the ``depth`` cut); the header records it.

    Returns:
        A :class:`~evalkit.data.results.RunResult` with rows in query-id order (text
        order, as trec_eval prints them). ``header["notes"]`` holds ``num_queries``,
        ``unjudged_ignored`` (and up to 20 ``unjudged_ignored_ids``),
        ``missing_scored_zero`` or ``missing_skipped`` (and ``missing_ids``),
        ``empty_rankings`` and ``empty_ranking_ids`` when a judged query was given an
        empty ranking (it scores 0); the header also records the run and qrels hashes,
        the settings and every metric's provider and definition version.

    Raises:
        ValueError: a bad ``missing``, ``depth`` or ``relevance_level``; qrels with no
            query; a ranking that lists a document twice; a score that is NaN or a bool.
        SettingError: (a ``ValueError``) ``missing="refuse"`` and a judged query is
            missing from the run; the message names the settings that score or skip it.
        RegistryError: an unknown metric name; no run evaluator is loaded (the message
            says which plugin provides one and how to enable or install it).

    Warns:
        NoJudgedQueryWarning: (a ``UserWarning``) no evaluated query is in the run (an
            empty run, or one whose topics the qrels do not judge): ``none of the run's
            topics appears in QRELS; every query scores 0. Are these the right files?``
        TrecFormatError (a ValueError, from the retrieval plugin): a malformed file.
        FrameFormatError (a ValueError, from the retrieval plugin): a DataFrame with a
            missing column, a duplicate (qid, docno), a NaN score (an infinite one ranks
            above or below every finite one, as in trec_eval), a label that is not an
            integer, or a missing id; the message names the row.
        IdCollisionError: (a ``ValueError``) two keys of a mapping, or two cells of a
            frame's id column, that are one id as text (``1`` and ``"1"``), naming both.
    """
    what = f"{run}: the TREC run loader that reads it" if isinstance(run, str | Path) \
        else "scoring a ranked run against qrels"
    options: dict[str, Any] = {"judged_only": True} if judged_only else {}
    result: RunResult = run_evaluator(what).evaluate(
        run, qrels, metrics, relevance_level, missing, depth=depth, name=name, **options)
    return result


def load_qrels_input(qrels: QrelsInput, metrics: Sequence[str] | None = None
                     ) -> LoadedQrels:
    """Qrels from a mapping (read here, :func:`~evalkit.data.judgments.loaded_from_mapping`)
    or a path or DataFrame (read by the run evaluator); :class:`LoadedQrels` are returned
    as given. ``metrics``, the measures the qrels are read for, go to the run evaluator's
    ``load_qrels`` (the retrieval plugin reads a file as subtopic qrels for a diversity
    measure only).

    Raises:
        FileNotFoundError: no such file. ValueError: a malformed file or frame, a label
            that is not an integer, a relevant id listed twice. TypeError: a query's
            judgments are neither a mapping nor a collection of ids. RegistryError: a
            path or frame with no run evaluator loaded.
    """
    if isinstance(qrels, LoadedQrels):
        return qrels
    if isinstance(qrels, Mapping):
        return loaded_from_mapping(qrels)
    what = f"{qrels}: the TREC qrels loader that reads it" if isinstance(qrels, str | Path) \
        else "reading qrels"
    spec = run_evaluator(what)
    loaded: LoadedQrels = (spec.load_qrels(qrels) if metrics is None
                           else spec.load_qrels(qrels, list(metrics)))
    return loaded


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
        refuse_unavailable(what)
        raise


def refuse_unavailable(what: str) -> None:
    """Raise when ``what`` needs the retrieval plugin and it is not loaded
    (:func:`evalkit.plugins.loading.unavailable_plugin`).

    Raises:
        RegistryError: the plugin is disabled, failed to load or is not installed.
    """
    from evalkit.plugins.loading import unavailable_plugin

    why = unavailable_plugin(default_registry(), TREC_LOADERS, what)
    if why is not None:
        raise RegistryError(why)
