""":func:`compare`: candidates against a baseline, metric by metric, as one object.

The statistics are :func:`evalkit.stats.compare_runs` (shared resamples, one family of
adjusted p-values); this module reads and checks the inputs (:mod:`.inputs`), then adds
what a reader of the comparison needs beside the test: both means, wins/ties/losses by
the metric's polarity, the queries that moved most with their text and per-case details,
every per-query difference, the binned distribution of the test's statistic, the
settings, the description, the warnings and provenance. Where an option is left out it
does what PyTerrier's ``pt.Experiment`` and ranx's ``compare`` do: every metric the runs
share, each candidate against the first run, p-values corrected over the whole table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import itemgetter
from os import PathLike
from typing import TYPE_CHECKING, Any, cast

from evalkit.comparison.inputs import Loaded, RunInput, load_inputs, query_texts
from evalkit.comparison.model import Comparison
from evalkit.comparison.options import check_request
from evalkit.comparison.records import (
    ComparisonError,
    FloatColumn,
    MetricComparison,
    QueryDelta,
    RunInfo,
    Settings,
)
from evalkit.comparison.slices import TagsArg
from evalkit.comparison.spread import samples_warnings, spread_of
from evalkit.data.case_clusters import ClustersArg
from evalkit.data.coverage import sequential_stop
from evalkit.data.results import RunResult
from evalkit.execute.run_files import QrelsArg
from evalkit.io.setting_names import Setting
from evalkit.report.comparison_rows import verdict_of
from evalkit.report.slices import SliceEffect, slice_family_size

if TYPE_CHECKING:  # the labels' models (pydantic) are imported only to read labels
    from evalkit.comparison.ppi_rows import RunLabelsArg
    from evalkit.data.labels import HumanLabels


def compare(
    baseline: RunInput,
    *candidates: RunInput,
    metrics: Sequence[str] | str | None = None,
    qrels: QrelsArg | None = None,
    method: str = "auto",
    correction: str = "holm",
    alpha: float = 0.05,
    alternative: str = "two-sided",
    ci: str | None = None,
    n_resamples: int = 10_000,
    seed: int = 42,
    all_pairs: bool = False,
    top: int = 0,
    relevance_level: int | None = None,
    missing: str | None = None,
    depth: int | None = None,
    topics: Mapping[str, str] | str | PathLike[str] | None = None,
    allow_incomplete: bool = False,
    by: str | None = None,
    tags: TagsArg | None = None,
    clusters: ClustersArg | bool | None = None,
    ppi: bool = False,
    labels: RunLabelsArg | None = None,
) -> Comparison:
    """Compare each candidate with the baseline on the same queries, metric by metric.

    Every comparison is ``candidate - baseline`` over the queries both runs hold, paired
    by id, and both means shown are over those queries only; all metrics and candidates
    share the resamples, and the p-values are adjusted over the whole family (Holm by
    default). ``evalkit compare`` is this function.

    Args:
        baseline, candidates: :class:`~evalkit.RunResult` objects, paths of run
            artifacts or of TREC run files, or run DataFrames in PyTerrier's shape
            (``qid, docno, score``, an optional ``name`` column;
            :mod:`evalkit_retrieval.frames`), the last two scored against ``qrels``.
            A name used twice is made distinct (the later run takes its file stem, or
            ``name#2``).
        metrics: metric names (ir_measures and trec_eval spellings resolve); None: every
            metric every artifact and run holds on every case it answered (with
            ``allow_incomplete``, on some case), or for TREC files only ``ap``,
            ``ndcg@10``, ``precision@10``, ``recall@100`` and ``rr``; each other metric a
            run holds is named in ``warnings`` with the reason (errored on k of n cases
            in run X, absent from run Y).
        qrels: TREC qrels (a path, ``{qid: {doc: label}}`` or a ``qid, docno, label``
            DataFrame) to score TREC run files and run frames; with artifacts, a qrels
            path is checked against the hash they were scored with.
        method: the paired test, as for :func:`evalkit.stats.paired_test`: ``"auto"``
            (the paired t-test on a metric whose registered value type is binary, else
            the sign-flip randomization test, joined by the bootstrap-t on skewed
            differences; docs/statistics.md), ``"randomization"``, ``"t-test"``,
            ``"bootstrap-t"``, ``"bootstrap"`` (the percentile bootstrap of
            :func:`evalkit.paired_bootstrap`) or ``"randomization+bootstrap-t"``.
        correction: ``"holm"``, ``"bh"``, ``"westfall-young"`` or ``"none"``.
        alpha: significance level, in (0, 1); intervals have confidence ``1 - alpha``.
        alternative: ``"two-sided"``, ``"greater"`` (candidate higher) or ``"less"``.
        ci: the interval method (None: the test's own); ``"inversion"`` only with
            ``method="randomization"``.
        n_resamples: resamples of the randomization or bootstrap test, at least 100.
        seed: the resampling seed.
        all_pairs: compare every pair of runs (each later run minus each earlier one).
        top: list the ``top`` queries that moved most each way (0: none).
        relevance_level, missing, depth: how TREC run files are scored (trec_eval
            ``-l``, ``-c`` / ``"skip"``, ``-M``). None (the default) takes the setting the
            artifacts among the inputs were scored with, else trec_eval's: 1, ``"zero"``,
            no depth limit. A value given must agree with every artifact's.
        topics: ``{query id: text}``, or the path of a topic file (TREC ``<top>`` topics,
            plain or gzipped, or ``qid<TAB>text`` TSV;
            :func:`evalkit_retrieval.topics.load_topics`);
            without it the text comes from the golden set the runs were made from, when
            its file is still there and unchanged.
        allow_incomplete: pair only the queries every run has, and say so in
            ``warnings``, instead of refusing runs over different queries.
        by: ``"tag"``: also compare on each tag's cases (``Comparison.slices``), every
            slice, metric and candidate adjusted together by ``correction`` (``"holm"``,
            ``"bh"`` or ``"none"``); the overall rows are unchanged (docs/statistics.md,
            Slices).
        tags: the cases' tags, ``{case id: [tag, ...]}`` or the path of a tags file
            (``query id<TAB>tag`` lines, :func:`evalkit.data.case_tags.load_tags`); without
            it, with ``by="tag"``, the tags of the golden sets the runs were made from.
        clusters: clustered cases (several questions about one passage, one
            conversation): ``{case id: cluster}``, the path of a clusters file
            (``query id<TAB>cluster`` lines) or of a golden set whose cases name their
            ``cluster``, or True for the clusters of the golden sets the runs were made
            from. Every test then takes the cluster as its unit
            (:mod:`evalkit.stats.clusters`: whole-cluster sign flips, the CR1 t-test on
            ``G - 1`` degrees of freedom, the cluster bootstrap); the description says
            how many clusters, each row's ``n_clusters`` holds it, and fewer than 20 add
            a warning. None or False: every case is its own cluster.
        ppi: give each metric that has human labels in both runs of a row the PPI++
            interval of the human difference on the cases labelled in both
            (:mod:`evalkit.comparison.ppi_rows`; docs/judge.md): the row's
            ``ci_low``/``ci_high`` are then that interval (``ci_method`` ``"ppi++"``) and
            its ``ppi`` says on how many human labels it rests; the p-value and the
            verdict stay the paired test's. Two-sided only.
        labels: with ``ppi``, the human labels of each run, one per run in the order
            given (baseline first; ``None`` for a run without), or ``{run name: labels}``;
            each a :class:`~evalkit.data.labels.HumanLabels` or the path of a labels file
            or labelled golden file. Without it, the labels of the golden file each
            run's header names.

    Returns:
        :class:`Comparison`.

    Raises:
        ComparisonError: fewer than two runs; ``alpha``, ``n_resamples``, ``ci`` or
            ``top`` out of range; a per-query count named as a metric; runs that share
            no metric held on every case (the reason given per metric) or lack a named
            one; an artifact scored otherwise than asked; runs
            scored against other qrels or with other settings; runs over different
            queries; a run with no evaluated query; a run scored against qrels whose
            query ids match none of the judged queries, or that has topics looking like
            judged queries it lacks (ids read as numbers, leading zeros stripped;
            :func:`evalkit.data.judged_match.judged_id_mismatch`). The messages
            are those ``evalkit compare`` prints.
        InputError: a path that is missing, a directory, or not a run (the message
            says what it looks like); a TREC run without ``qrels``.
        TopicsError: a ``topics`` file that cannot be read (file and line named).
        TagsError: a ``tags`` file that cannot be read (file and line named), a golden
            set the runs record that is gone or changed, or no case with a tag.
        LabelError: a labels file that cannot be read, a label of a case a run lacks,
            or fewer than 2 cases labelled in both runs (file and line named).
        ClustersError: a clusters file that cannot be read (file and line named); with
            ``clusters=True``, runs made from no golden set, or one gone or changed.
        ValueError: ``clusters`` that miss a compared case, name a case no run has, or
            hold fewer than two clusters (:func:`evalkit.stats.clusters.cluster_index`).
        FrameFormatError: a DataFrame that is not a run or qrels (the row named).
        ValueError: an unknown ``method``, ``correction`` or ``alternative`` (from
            :func:`evalkit.stats.compare_runs`).
        RegistryError: an unknown metric for a TREC run file; ``topics`` a path and the
            retrieval plugin, which reads topic files, not loaded.
    """
    inputs = [baseline, *candidates]
    check_request(len(inputs), alpha=alpha, method=method, ci=ci, n_resamples=n_resamples,
                  top=top)
    from evalkit.comparison.slices import check_by

    given_tags = check_by(by, tags, correction)  # a bad tags file stops before any work
    if isinstance(topics, str | PathLike):  # read first: a bad file stops before any work
        from evalkit.execute.run_evaluator import retrieval_loader

        reader = retrieval_loader("queries", "topics", f"{topics}: the topic file reader")
        topics = cast("dict[str, str]", reader.fn(topics))
    read_labels = _ppi_labels(ppi, labels, alternative, len(inputs))
    given_clusters = None
    if clusters is not None and not isinstance(clusters, bool):
        from evalkit.data.case_clusters import as_case_clusters

        given_clusters = as_case_clusters(clusters)  # a bad file stops before any work
    loaded = load_inputs(inputs, qrels=qrels, metrics=metrics,
                         relevance_level=relevance_level, missing=missing, depth=depth,
                         allow_incomplete=allow_incomplete)
    if any(not r.per_query for r in loaded.runs):
        raise ComparisonError("a run has no evaluated query; nothing to compare")
    polarity, value_types, polarity_notes = loaded.definitions()
    from evalkit.stats import compare_runs
    from evalkit.stats.histogram import MAX_BINS

    runs = loaded.runs
    if clusters is True:
        from evalkit.data.case_clusters import clusters_from_runs

        given_clusters = clusters_from_runs([r.header for r in runs])
    elif given_clusters is not None:  # never silently instead of the golden set's own
        from evalkit.data.case_clusters import agreed_clusters

        given_clusters = agreed_clusters(given_clusters, [r.header for r in runs],
                                         "--clusters")
    views = _RunViews(())  # the statistics and the rows read each run's scores once
    read_once = [_ReadOnce(r, views) for r in runs]
    family = compare_runs(
        read_once[0], list(read_once[1:]), list(loaded.metrics), all_pairs=all_pairs, method=method,
        alpha=alpha, alternative=alternative, ci=ci, correction=correction,
        n_resamples=n_resamples, seed=seed, distribution_bins=MAX_BINS,
        # the runs were checked above; a run a sequential rule stopped is paired on the
        # cases it holds (load_inputs accepted it as a subset of the others)
        allow_incomplete=allow_incomplete or any(
            sequential_stop(r.header or {}) is not None for r in runs),
        value_types=value_types,
        clusters=given_clusters,
    )
    from evalkit.stats.family import above_holm_note, correction_floor_note

    floor = correction_floor_note(family.results, correction, alpha, n_resamples)
    above = above_holm_note(family.results)
    floor_note = tuple(x for x in (floor, above) if x)
    texts, text_notes = query_texts(runs, topics)
    by_name = {r.name: r for r in runs}
    notes_by = {r.name: loaded.notes[i] for i, r in enumerate(runs)}
    ids = tuple(family.query_ids)
    assert family.differences is not None
    results: list[MetricComparison] = []
    views.ids = ids
    for j, res in enumerate(family.results):
        cand, base = by_name[res.name_a], by_name[res.name_b]
        diffs = FloatColumn(family.differences[:, j])
        results.append(_metric_comparison(
            res, base, cand, ids, diffs, texts, polarity[res.metric], top=top, alpha=alpha,
            correction=correction, method=method,
            input_notes=notes_by[base.name] + notes_by[cand.name], views=views))
    ppi_notes: list[str] = []
    if read_labels is not None:
        from evalkit.comparison.ppi_rows import run_labels, with_ppi

        results, ppi_notes = with_ppi(results, run_labels(read_labels, runs), alpha)
    slices: tuple[SliceEffect, ...] = ()
    slice_notes: tuple[str, ...] = ()
    if by is not None:
        from evalkit.comparison.slices import case_tags_for, compare_by_tag

        slices, slice_notes = compare_by_tag(
            runs, loaded.metrics, case_tags_for(given_tags, runs), polarity,
            correction=correction,
            method=method, alpha=alpha, alternative=alternative, n_resamples=n_resamples,
            ci=ci, seed=seed, all_pairs=all_pairs,
            value_types=value_types)
    settings = _settings(family.results, family.family_size, method=method, ci=ci,
                         alpha=alpha, alternative=alternative, correction=correction,
                         n_resamples=n_resamples, seed=seed, all_pairs=all_pairs, top=top,
                         relevance_level=relevance_level, missing=missing, depth=depth,
                         allow_incomplete=allow_incomplete, by=by,
                         slice_family_size=slice_family_size(slices))
    from evalkit._version import __version__
    from evalkit.comparison.text import describe

    return Comparison(
        baseline=_run_info(loaded, 0), candidates=tuple(
            _run_info(loaded, i) for i in range(1, len(runs))),
        results=tuple(results), metrics=tuple(loaded.metrics), settings=settings,
        description=describe(settings) + (_PPI_DESCRIPTION if read_labels is not None
                                          else ""),
        warnings=tuple(polarity_notes) + tuple(loaded.left_out)
        + tuple(w for ws in loaded.notes for w in ws)
        + tuple(text_notes)
        + tuple(samples_warnings(runs)) + floor_note + slice_notes + tuple(ppi_notes),
        query_ids=ids, queries={q: texts[q] for q in ids if q in texts},
        provenance={"evalkit_version": __version__, "generator": settings.generator},
        slices=slices,
    )


_PPI_DESCRIPTION = ("; a labelled metric's interval is the PPI++ interval of the human "
                    "difference (its p-value the paired test's on the judge's values)")


def _ppi_labels(ppi: bool, labels: RunLabelsArg | None, alternative: str, n_runs: int
                ) -> list[HumanLabels | None] | dict[str, HumanLabels] | None:
    """The labels files read when ``ppi`` (None otherwise); refuses labels without
    ``ppi`` and a one-sided alternative with it."""
    if not ppi:
        if labels is not None:
            raise ComparisonError("labels are read only for PPI intervals: add ",
                                  Setting("ppi", True))
        return None
    if alternative != "two-sided":
        raise ComparisonError(Setting("ppi", True), " gives two-sided intervals; leave ",
                              Setting("alternative", alternative), " out")
    from evalkit.comparison.ppi_rows import read_run_labels

    return read_run_labels(labels, n_runs)


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _details(base: RunResult, cand: RunResult, metric: str, views: _RunViews
             ) -> dict[str, dict[str, Any]]:
    """``{query id: {"baseline": ..., "candidate": ...}}`` of the per-case details either
    run's rows hold for ``metric``."""
    out: dict[str, dict[str, Any]] = {}
    for side, run in (("baseline", base), ("candidate", cand)):
        for qid, found in views.details(run, metric):
            out.setdefault(qid, {"baseline": None, "candidate": None})[side] = (
                dict(found) if isinstance(found, Mapping) else found)
    return out


class _ReadOnce:
    """A run as :func:`evalkit.stats.compare_runs` sees it, its scores read through
    the comparison's :class:`_RunViews` (read once, shared with the rows); every other
    attribute is the run's own."""

    def __init__(self, run: RunResult, views: _RunViews) -> None:
        self._run = run
        self._views = views
        self.name = run.name

    def scores(self, metric: str) -> dict[str, float]:
        return self._views.scores(self._run, metric)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._run, attr)


class _RunViews:
    """What the rows of a comparison read from each run, once per (run, metric): many
    comparisons share a run (every candidate shares the baseline), so its scores, mean,
    per-case details and values in the family's query order are built once and the
    values' tuple is shared by every row that shows them."""

    def __init__(self, ids: tuple[str, ...]) -> None:
        self.ids = ids
        self._scores: dict[tuple[int, str], dict[str, float]] = {}
        self._means: dict[tuple[int, str], float] = {}
        self._values: dict[tuple[int, str], tuple[float, ...]] = {}
        self._details: dict[tuple[int, str], list[tuple[str, Any]]] = {}
        self._held: dict[int, list[tuple[str, Any]]] = {}
        #: a mapping's values at ``ids`` as a tuple, in C (two ids or more)
        self._in_order = itemgetter(*ids) if len(ids) > 1 else None

    def scores(self, run: RunResult, metric: str) -> dict[str, float]:
        key = (id(run), metric)
        if key not in self._scores:
            self._scores[key] = run.scores(metric)
        return self._scores[key]

    def mean(self, run: RunResult, metric: str) -> float:
        """The run's mean of ``metric`` over the paired ids (``ids``) only, not over
        every case it holds (a run a sequential rule stopped is paired on its prefix)."""
        key = (id(run), metric)
        if key not in self._means:
            from evalkit.data.summaries import paired_mean

            self._means[key] = paired_mean(self.scores(run, metric), self.ids, metric)
        return self._means[key]

    def values(self, run: RunResult, metric: str) -> tuple[float, ...]:
        key = (id(run), metric)
        if key not in self._values:
            scores = self.scores(run, metric)  # floats: RunResult.scores converts them
            self._values[key] = (tuple(map(scores.__getitem__, self.ids))
                                 if self._in_order is None else self._in_order(scores))
        return self._values[key]

    def details(self, run: RunResult, metric: str) -> list[tuple[str, Any]]:
        key = (id(run), metric)
        if key not in self._details:
            held = self._held.get(id(run))
            if held is None:  # the rows that hold details, found once per run
                rows = run.per_query
                held = self._held[id(run)] = [(row.query_id, d) for row, d in zip(
                    rows, map(getattr, rows, repeat("details"), repeat(None)), strict=True)
                    if d]
            found = [(q, d.get(metric)) for q, d in held]
            self._details[key] = [(q, d) for q, d in found if d is not None]
        return self._details[key]


def _movers(ids: tuple[str, ...], diffs: Sequence[float], b: Mapping[str, float],
            c: Mapping[str, float], texts: Mapping[str, str],
            details: Mapping[str, Mapping[str, Any]], top: int
            ) -> tuple[tuple[QueryDelta, ...], tuple[QueryDelta, ...]]:
    """The ``top`` queries whose value rose most and fell most (ties by query id);
    ``diffs`` are snapped (a difference within rounding of 0 is exactly 0)."""
    if top <= 0:
        return (), ()
    pairs = list(zip(ids, diffs, strict=True))
    ups = sorted((p for p in pairs if p[1] > 0), key=lambda p: (-p[1], p[0]))[:top]
    downs = sorted((p for p in pairs if p[1] < 0), key=lambda p: (p[1], p[0]))[:top]

    def delta(q: str, d: float) -> QueryDelta:
        return QueryDelta(q, b[q], c[q], d, texts.get(q), details.get(q))

    return tuple(delta(*p) for p in ups), tuple(delta(*p) for p in downs)


def _metric_comparison(
    res: Any, base: RunResult, cand: RunResult, ids: tuple[str, ...],
    diffs: Sequence[float], texts: Mapping[str, str], hib: bool, *, top: int, alpha: float,
    correction: str, method: str, input_notes: list[str], views: _RunViews,
) -> MetricComparison:
    metric = res.metric
    effect = res.effect
    assert effect is not None
    # the test's own counts (rounding noise removed), read by the metric's polarity
    wins, losses = (effect.wins, effect.losses) if hib else (effect.losses, effect.wins)
    p_adj, verdict, p_note = verdict_of(res, correction=correction, method=method,
                                        alpha=alpha)
    why = (res.note,) if p_note and res.note else ()
    details = _details(base, cand, metric, views)
    b_scores, c_scores = views.scores(base, metric), views.scores(cand, metric)
    gains, falls = _movers(ids, diffs, b_scores, c_scores, texts, details, top)
    return MetricComparison(
        metric=metric, baseline=base.name, candidate=cand.name, n_queries=int(res.n_queries),
        baseline_mean=views.mean(base, metric), candidate_mean=views.mean(cand, metric),
        diff=float(res.observed), ci_low=_finite(res.ci_low), ci_high=_finite(res.ci_high),
        p_value=float(res.p_value), p_adjusted=p_adj, significant=bool(verdict),
        significant_unadjusted=bool(res.p_value < alpha), wins=wins, ties=effect.ties,
        losses=losses, higher_is_better=hib,
        standardized_effect=_finite(effect.standardized),
        warnings=(*input_notes, *res.warnings, *why), top_gains=gains, top_losses=falls,
        p_note=p_note,
        p_resamples=None if res.method == "t-test" or res.exact
        else int(res.n_resamples) or None,
        method=res.method, ci_method=res.ci_method, effect=effect, query_ids=ids,
        differences=diffs, distribution=res.distribution, details=details,
        baseline_values=views.values(base, metric),
        candidate_values=views.values(cand, metric),
        spread=spread_of(base, cand, metric, ids),
        n_clusters=res.n_clusters,
    )


def _settings(results: Sequence[Any], family_size: int, **asked: Any) -> Settings:
    methods = tuple(dict.fromkeys(r.method for r in results))
    cis = tuple(dict.fromkeys(r.ci_method for r in results))
    generator = next((r.generator for r in results if r.generator), None)
    return Settings(
        method=asked["method"], ci_method=results[-1].ci_method if results else asked["ci"],
        alpha=float(asked["alpha"]), alternative=asked["alternative"],
        correction=asked["correction"], n_resamples=asked["n_resamples"],
        seed=asked["seed"], all_pairs=bool(asked["all_pairs"]), top=asked["top"],
        relevance_level=asked["relevance_level"], missing=asked["missing"],
        depth=asked["depth"], allow_incomplete=bool(asked["allow_incomplete"]),
        family_size=family_size, generator=generator, methods_used=methods,
        ci_methods_used=cis, by=asked["by"], slice_family_size=asked["slice_family_size"],
        clusters=next((r.n_clusters for r in results), None),
        effective_clusters=next((r.effective_clusters for r in results), None),
    )


#: Header keys that say how a run was scored (kept as its provenance).
_PROVENANCE_KEYS = ("qrels", "run", "goldens", "relevance_level", "missing", "depth",
                    "evalkit_version", "plugins", "created", "samples")


def _run_info(loaded: Loaded, i: int) -> RunInfo:
    run = loaded.runs[i]
    header = run.header
    # "rows": what the rows are, "cases" of a target run (header kind "target") or "queries"
    prov: dict[str, Any] = {"kind": loaded.kinds[i], "rows": run.row_nouns[1]}
    for key in _PROVENANCE_KEYS:
        if key in header:
            value = header[key]
            if key == "goldens" and isinstance(value, Mapping):  # not every case's digest
                value = {k: v for k, v in value.items() if k != "case_digests"}
            prov[key] = value
    if loaded.kinds[i] == "trec":
        prov.pop("created", None)  # scored just now: not a property of the inputs
    defs = header.get("metrics") or {}
    prov["metrics"] = {m: defs[m] for m in loaded.metrics if m in defs}
    path = loaded.paths[i]
    return RunInfo(name=run.name, source=None if path is None else str(path),
                   provenance=prov)


__all__ = ["compare"]
