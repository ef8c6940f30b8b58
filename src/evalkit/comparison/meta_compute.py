""":func:`meta_compare`: one candidate against one baseline over several collections, each
metric's per-collection effects pooled by a random-effects model.

Each collection is read and checked as :func:`evalkit.compare` reads a pair of runs
(:func:`~evalkit.comparison.inputs.load_inputs`: scored alike, over the same queries,
refusals prefixed with the collection's name); its effect is the mean per-query
difference with variance ``s^2 / n`` (:func:`evalkit.stats.meta.paired_effect`), and the
effects are pooled by :func:`evalkit.stats.meta.random_effects`. The pooled p-values are
adjusted over the metrics (Holm by default), as ``evalkit compare`` adjusts its table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, TypeAlias

from evalkit.comparison.inputs import Loaded, RunInput, load_inputs
from evalkit.comparison.meta_model import CollectionInfo, MetaComparison, MetaSettings
from evalkit.comparison.records import ComparisonError
from evalkit.execute.run_files import QrelsArg
from evalkit.io.error_messages import quoted
from evalkit.report.pooled import CollectionEffect, PooledEffect

#: One collection: ``(baseline, candidate)`` (artifacts, :class:`~evalkit.RunResult`
#: objects) or ``(baseline, candidate, qrels)`` (TREC run files or run DataFrames, scored
#: against the collection's qrels).
CollectionInput: TypeAlias = "tuple[RunInput, RunInput] | tuple[RunInput, RunInput, QrelsArg]"

#: The corrections of the pooled p-values over the metrics (no resampling: no
#: Westfall-Young).
META_CORRECTIONS: tuple[str, ...] = ("holm", "bh", "none")


#: Options of ``evalkit compare`` that a comparison over collections has no use for, and
#: why.
NOT_WITH_COLLECTIONS: dict[str, str] = {
    "--qrels": "each collection names its qrels in the collections file",
    "--topics": "the pooled tables list collections, not queries",
    "--top": "the pooled tables list collections, not queries",
    "--test": "each collection's effect is its mean difference with variance s^2/n, pooled "
              "by a z (or Hartung-Knapp t) test; there is no paired test to choose",
    "--ci": "the intervals are normal (or Hartung-Knapp t) intervals",
    "--alternative": "the pooled test is two-sided",
    "--all-pairs": "a collection holds one baseline and one candidate",
    "--resamples": "nothing is resampled",
    "--seed": "nothing is resampled",
    "--by": "the collections are pooled as wholes; compare one collection's runs by tag",
    "--tags": "the collections are pooled as wholes; compare one collection's runs by tag",
    "--cluster": "each collection's variance s^2/n treats its queries as independent",
    "--clusters": "each collection's variance s^2/n treats its queries as independent",
    "--ppi": "PPI intervals are given for one collection's runs",
    "--labels": "PPI intervals are given for one collection's runs",
}
#: Options that go only with ``--collections``.
ONLY_WITH_COLLECTIONS: tuple[str, ...] = ("--tau2", "--hartung-knapp")


def check_collections_options(given: Sequence[str], collections: bool, n_runs: int) -> None:
    """Refuse options of ``evalkit compare`` that do not go together: runs and
    ``--collections``; with ``--collections``, an option of :data:`NOT_WITH_COLLECTIONS`;
    without it, ``--tau2`` or ``--hartung-knapp``. ``given`` lists the options given on
    the command line (their first spelling).

    Raises:
        ComparisonError: naming the option and why.
    """
    if collections and n_runs:
        raise ComparisonError("give the runs (BASELINE CANDIDATE...) or --collections FILE, "
                              "not both: the collections file names each collection's runs")
    if collections:
        for option in given:
            if option in NOT_WITH_COLLECTIONS:
                raise ComparisonError(f"{option} does not go with --collections: "
                                      f"{NOT_WITH_COLLECTIONS[option]}")
        return
    for option in given:
        if option in ONLY_WITH_COLLECTIONS:
            raise ComparisonError(f"{option} goes with --collections FILE (it sets how "
                                  "the collections' differences are pooled)")


def _check(collections: Any, *, tau2: str, alpha: float, correction: str,
           hartung_knapp: bool) -> None:
    from evalkit.comparison.options import check_alpha
    from evalkit.stats.meta import TAU2_METHODS

    if not isinstance(collections, Mapping):
        raise TypeError("meta_compare takes a mapping {collection name: (baseline, "
                        f"candidate[, qrels])}}, not {type(collections).__name__}")
    if not collections:
        raise ComparisonError("no collections to compare; give at least one")
    from evalkit.io.limits import check_name

    for name, value in collections.items():
        if not isinstance(name, str) or not name.strip():
            raise ComparisonError(f"collection name {quoted(name)}: expected a non-empty text")
        try:
            check_name(name, "collection name")
        except ValueError as exc:
            raise ComparisonError(str(exc)) from None
        if not isinstance(value, tuple | list) or len(value) not in (2, 3):
            raise ComparisonError(
                f"collection {quoted(name)}: expected (baseline, candidate) or (baseline, "
                f"candidate, qrels), got {type(value).__name__}"
                + (f" of {len(value)}" if isinstance(value, tuple | list) else ""))
    check_alpha(alpha)
    if tau2 not in TAU2_METHODS:
        raise ComparisonError(f"--tau2 {tau2}: expected one of {', '.join(TAU2_METHODS)} "
                              "(Paule-Mandel, DerSimonian-Laird)")
    if correction not in META_CORRECTIONS:
        raise ComparisonError(
            f"--correction {correction}: the pooled p-values are adjusted over the metrics "
            f"with {', '.join(META_CORRECTIONS)} (westfall-young needs resamples, which "
            "the pooled z or t test has none of)")
    if hartung_knapp and len(collections) < 2:
        raise ComparisonError("--hartung-knapp needs at least two collections (its t has "
                              "k - 1 degrees of freedom)")


def _load(name: str, value: Sequence[Any], metrics: Sequence[str] | None,
          **scoring: Any) -> Loaded:
    from evalkit.io.input_files import InputError

    qrels = value[2] if len(value) == 3 else None
    try:
        return load_inputs([value[0], value[1]], qrels=qrels, metrics=metrics, **scoring)
    except ComparisonError as exc:
        raise ComparisonError(f"collection {quoted(name)}: {exc}") from None
    except InputError as exc:
        raise InputError(f"collection {quoted(name)}: {exc}") from None
    except ValueError as exc:  # a run or qrels that cannot be read (a file, irds:ID)
        raise InputError(f"collection {quoted(name)}: {exc}") from None


class SameEvidenceError(ComparisonError):
    """Two collections that are one piece of evidence (:func:`meta_compare`): ``first``
    and ``second`` name them, in the order given."""

    def __init__(self, message: str, first: str, second: str) -> None:
        super().__init__(message)
        self.first = first
        self.second = second


def _same_evidence(first: str, second: str, why: str) -> SameEvidenceError:
    return SameEvidenceError(
        f"collections {quoted(first)} and {quoted(second)} are the same evidence: {why}. "
        "Pooling them would count the same queries twice as independent collections and "
        "shrink the pooled standard error (a false significance); list each collection "
        "once, with its own runs", first, second)


_ROLES = ("baseline", "candidate")


def _refuse_shared_files(collections: Mapping[str, Sequence[Any]]) -> None:
    """Refuse two collections whose runs are one object (passed from Python), one file (a
    path, a link, a hard link) or byte copies of each other
    (:mod:`evalkit.data.same_run`, as the gate refuses a baseline that is the gated run).

    Raises:
        SameEvidenceError: naming both collections and the files.
    """
    from evalkit.data.same_run import content_digest, file_key

    by_file: dict[tuple[int, int], tuple[str, str, Any]] = {}
    by_bytes: dict[str, tuple[str, str, Any]] = {}
    by_object: dict[int, tuple[str, str]] = {}
    for name, value in collections.items():
        for role, item in zip(_ROLES, value[:2], strict=True):
            if not isinstance(item, str | PathLike):  # a run object or frame passed in
                first = by_object.setdefault(id(item), (name, role))
                if first[0] != name:
                    raise _same_evidence(first[0], name, f"the {first[1]} of "
                                         f"{quoted(first[0])} and the {role} of "
                                         f"{quoted(name)} are one object")
                continue
            key = file_key(item)
            if key is not None:
                seen = by_file.setdefault(key, (name, role, item))
                if seen[0] != name:
                    raise _same_evidence(seen[0], name, f"the {seen[1]} {seen[2]} of "
                                         f"{quoted(seen[0])} and the {role} {item} of "
                                         f"{quoted(name)} are the same file")
            digest = content_digest(item)
            if digest is not None:
                seen = by_bytes.setdefault(digest, (name, role, item))
                if seen[0] != name:
                    raise _same_evidence(seen[0], name, f"the {seen[1]} {seen[2]} of "
                                         f"{quoted(seen[0])} and the {role} {item} of "
                                         f"{quoted(name)} are byte-identical copies")


def _refuse_copied_runs(loaded: Mapping[str, Loaded]) -> None:
    """Refuse two collections holding one recorded run (a copy of an artifact written
    otherwise: :func:`evalkit.data.same_run.run_identity`).

    Raises:
        SameEvidenceError: naming both collections and the run.
    """
    from evalkit.data.same_run import run_identity

    seen: dict[Any, tuple[str, str]] = {}
    for name, ld in loaded.items():
        for role, run in zip(_ROLES, ld.runs, strict=True):
            ident = run_identity(run)
            if ident is None:
                continue
            first = seen.setdefault(ident, (name, role))
            if first[0] != name:
                raise _same_evidence(first[0], name, f"the {first[1]} of {quoted(first[0])} "
                                     f"and the {role} of {quoted(name)} are one run "
                                     f"({quoted(run.name)}: the same header name, start "
                                     "and end times and rows)")


def _require_files(collections: Mapping[str, Sequence[Any]]) -> None:
    from evalkit.io.input_files import InputError, require_file
    from evalkit.plugins.default import scheme_loader

    for name, value in collections.items():
        for item, what in zip(value, ("run", "run", "qrels"), strict=False):
            if isinstance(item, str | PathLike) and not (
                    what == "qrels" and scheme_loader("qrels", item)):  # irds:ID
                try:
                    require_file(Path(item), what)
                except InputError as exc:
                    raise InputError(f"collection {quoted(name)}: {exc}") from None


def _shared_metrics(loaded: Mapping[str, Loaded]) -> tuple[list[str], list[str]]:
    """``(the metrics every collection compares, a warning per metric some collection
    compares and another does not, naming those without it)``.

    Raises:
        ComparisonError: the collections share no metric (each one's named).
    """
    every = list(dict.fromkeys(m for ld in loaded.values() for m in ld.metrics))
    shared = [m for m in every if all(m in ld.metrics for ld in loaded.values())]
    if not shared:
        held = "; ".join(f"{quoted(name)} compares {', '.join(ld.metrics) or 'none'}"
                         for name, ld in loaded.items())
        raise ComparisonError(f"the collections share no metric ({held}); name one with -m")
    left_out = [f"{m} is not pooled: collection(s) "
                f"{', '.join(quoted(n) for n, ld in loaded.items() if m not in ld.metrics)} "
                "do not compare it" for m in every if m not in shared]
    return shared, left_out


def meta_compare(
    collections: Mapping[str, CollectionInput],
    *,
    metrics: Sequence[str] | str | None = None,
    tau2: str = "pm",
    hartung_knapp: bool = False,
    alpha: float = 0.05,
    correction: str = "holm",
    relevance_level: int | None = None,
    missing: str | None = None,
    depth: int | None = None,
    allow_incomplete: bool = False,
    scoring: Mapping[str, Mapping[str, Any]] | None = None,
) -> MetaComparison:
    """Compare a candidate with a baseline over several collections and pool each metric's
    effects with a random-effects model (docs/statistics.md#several-collections).

    In each collection the effect is the mean over its queries of the paired difference
    (candidate minus baseline, paired by query id) and its variance is ``s^2 / n``, ``s``
    the standard deviation of the differences: the query is the unit, as in every paired
    test of evalkit. The pooled effect weighs collection ``i`` by
    ``1 / (s_i^2 / n_i + tau^2)``; ``tau^2``, the variance of the true effects between
    collections, is estimated by Paule-Mandel (default) or DerSimonian-Laird.

    Args:
        collections: ``{name: (baseline, candidate)}`` or ``{name: (baseline, candidate,
            qrels)}``, in the order to report. Runs are what :func:`evalkit.compare`
            takes (run artifacts or TREC run files by path, :class:`~evalkit.RunResult`
            objects, run DataFrames); ``qrels`` scores a collection's TREC run files.
        metrics: metric names; None: the metrics every collection compares (each
            collection's as :func:`evalkit.compare` chooses them; for TREC run files
            ``ap``, ``ndcg@10``, ``precision@10``, ``recall@100``, ``rr``); a metric left
            out is named in ``warnings``, with the reason.
        tau2: ``"pm"`` (Paule-Mandel, the default) or ``"dl"`` (DerSimonian-Laird).
        hartung_knapp: the Hartung-Knapp-Sidik-Jonkman interval and p (Student's t on
            ``k - 1`` df) instead of the normal ones.
        alpha: significance level; intervals have confidence ``1 - alpha``.
        correction: ``"holm"``, ``"bh"`` or ``"none"``: how the pooled p-values are
            adjusted over the metrics.
        relevance_level, missing, depth, allow_incomplete: as :func:`evalkit.compare`,
            for every collection.
        scoring: ``{name: {key: value}}``, a collection's own ``relevance_level``,
            ``depth`` or ``missing``, which replace the arguments above for that
            collection (what a collections file's keys give,
            :func:`~evalkit.comparison.collections_file.load_collections_file`).
            Each collection's settings, as its runs were scored, are in
            ``collections[i].scoring`` and in its rows; collections scored otherwise than
            each other get a warning.

    Returns:
        :class:`~evalkit.comparison.MetaComparison`. With one collection the pooled
        effect is that collection's, ``tau^2`` is 0 and the heterogeneity (``i2``,
        ``q_p_value``) is undefined (None); the warnings say so.

    Raises:
        ComparisonError: no collections; a malformed entry; ``scoring`` naming a
            collection not in ``collections`` or a key other than ``relevance_level``,
            ``depth``, ``missing``; ``alpha``, ``tau2`` or
            ``correction`` out of range; ``hartung_knapp`` with one collection; any
            refusal of :func:`evalkit.compare` for a collection's pair (runs over
            different queries, scored otherwise, lacking a metric...), prefixed with
            ``collection 'name':``; collections that share no metric; a collection
            whose differences on a metric are all equal or fewer than two (the variance
            of its effect would be 0 or undefined).
        SameEvidenceError: two collections that are the same evidence (a ComparisonError
            naming both): a run of one is a run of the other (one object, one file by
            path, link or hard link, a byte-identical file, or one recorded run:
            :mod:`evalkit.data.same_run`), or they pair the same query ids with the same
            per-query differences on a metric; pooled, they would count one collection
            twice and shrink the pooled standard error by sqrt(2).
        InputError: a run or qrels (a path, ``irds:ID``) that cannot be read, prefixed
            likewise.
        TypeError: ``collections`` is not a mapping.
    """
    _check(collections, tau2=tau2, alpha=alpha, correction=correction,
           hartung_knapp=hartung_knapp)
    own = _own_scoring(collections, scoring)
    wanted = [metrics] if isinstance(metrics, str) else (list(metrics) if metrics else None)
    given = {"relevance_level": relevance_level, "missing": missing, "depth": depth,
             "allow_incomplete": allow_incomplete}
    _require_files(collections)  # a typo in the last collection stops before any scoring
    _refuse_shared_files(collections)  # before any scoring
    loaded = {name: _load(name, value, wanted, **{**given, **own.get(name, {})})
              for name, value in collections.items()}
    _refuse_copied_runs(loaded)
    if any(not r.per_query for ld in loaded.values() for r in ld.runs):
        empty = next(n for n, ld in loaded.items() if any(not r.per_query for r in ld.runs))
        raise ComparisonError(f"collection {quoted(empty)}: a run has no evaluated query; "
                              "nothing to compare")
    chosen, left_out = _shared_metrics(loaded)
    settings = MetaSettings(tau2=tau2, hartung_knapp=hartung_knapp, alpha=float(alpha),
                            correction=correction, relevance_level=relevance_level,
                            missing=missing, depth=depth, allow_incomplete=allow_incomplete)
    polarity, polarity_notes = _polarities(loaded, chosen)
    results = _pool(loaded, chosen, settings, polarity)
    infos = tuple(_collection_info(name, ld, collections[name]) for name, ld in
                  loaded.items())
    warnings = [*polarity_notes, *left_out, *_scored_otherwise(infos),
                *(f"collection {quoted(c.name)}: {w}" for c in infos for w in c.warnings)]
    from evalkit.stats.meta import HARTUNG_KNAPP_DEGENERATE

    warnings += [f"{r.metric}: {HARTUNG_KNAPP_DEGENERATE}" for r in results
                 if r.interval == "hartung-knapp" and r.std_error == 0.0]
    if len(infos) == 1:
        warnings.append("one collection: the pooled effect is its effect; tau^2 cannot be "
                        "estimated (taken as 0) and the heterogeneity (I^2, Q) is undefined")
    from evalkit._version import __version__

    return MetaComparison(
        results=results, collections=infos, metrics=tuple(chosen), settings=settings,
        description=describe(settings, len(infos), len(chosen)), warnings=tuple(warnings),
        provenance={"evalkit_version": __version__},
    )


def _own_scoring(collections: Mapping[str, Any],
                 scoring: Mapping[str, Mapping[str, Any]] | None
                 ) -> dict[str, dict[str, Any]]:
    """``scoring`` checked: every name a collection, every key a scoring setting.

    Raises:
        ComparisonError: an unknown collection or key (named).
    """
    from evalkit.comparison.collections_file import SCORING_KEYS

    if not scoring:
        return {}
    if not isinstance(scoring, Mapping):
        raise TypeError(f"scoring takes a mapping {{collection name: {{setting: value}}}}, "
                        f"not {type(scoring).__name__}")
    out: dict[str, dict[str, Any]] = {}
    for name, keys in scoring.items():
        if name not in collections:
            raise ComparisonError(f"scoring names collection {quoted(name)}, which is not among "
                                  f"the collections ({', '.join(map(quoted, collections))})")
        unknown = [k for k in keys if k not in SCORING_KEYS]
        if unknown:
            raise ComparisonError(f"collection {quoted(name)}: scoring setting {unknown[0]!r} is "
                                  f"not one of {', '.join(SCORING_KEYS)}")
        out[name] = {k: v for k, v in keys.items() if v is not None}
    return out


#: The settings a collection's runs were scored with, as their headers record them (the
#: :data:`~evalkit.comparison.collections_file.SCORING_KEYS`).
_SCORED_WITH = ("relevance_level", "depth", "missing")


def scoring_of(header: Mapping[str, Any]) -> dict[str, Any]:
    """The settings a run was scored with, from its header: ``relevance_level``,
    ``depth`` (None: no limit) and ``missing``; empty for a run that records none (a
    target's run, scored without qrels)."""
    if not any(k in header for k in _SCORED_WITH):
        return {}
    return {k: header.get(k) for k in _SCORED_WITH}


def scoring_label(scoring: Mapping[str, Any]) -> str:
    """:func:`scoring_of`'s settings in a few words, as the per-collection tables show
    them: ``"level 2"``, ``"level 1, depth 100"``, ``"level 1, missing skip"`` (the
    depth when limited, ``missing`` when not ``zero``); empty without settings."""
    if not scoring:
        return ""
    parts = [f"level {scoring.get('relevance_level') or 1}"]
    if scoring.get("depth") is not None:
        parts.append(f"depth {scoring['depth']}")
    if scoring.get("missing") not in (None, "zero"):
        parts.append(f"missing {scoring['missing']}")
    return ", ".join(parts)


def _scored_otherwise(infos: Sequence[CollectionInfo]) -> list[str]:
    """A warning when the collections' runs were scored with different settings: a metric
    then measures something else in each collection (AP at level 1 and at level 2)."""
    labels = {c.name: scoring_label(c.scoring) for c in infos}
    if len(set(labels.values())) < 2:
        return []
    by_label: dict[str, list[str]] = {}
    for name, label in labels.items():
        by_label.setdefault(label or "no scoring settings recorded", []).append(quoted(name))
    groups = "; ".join(f"{label}: {', '.join(names)}" for label, names in by_label.items())
    return [f"the collections were scored with different settings ({groups}); a metric "
            "means something different in each, and the pooled difference mixes them"]


def _polarities(loaded: Mapping[str, Loaded], metrics: Sequence[str]
                ) -> tuple[dict[str, bool], list[str]]:
    """The polarities and warnings of :func:`evalkit.comparison.inputs.definitions_of`
    over every collection's runs."""
    from evalkit.comparison.inputs import definitions_of

    polarity, _, warnings = definitions_of(
        metrics, [(f"collection {quoted(name)}: {ld.label(i)}", r.header or {})
                  for name, ld in loaded.items() for i, r in enumerate(ld.runs)])
    return polarity, warnings


def _pool(loaded: Mapping[str, Loaded], metrics: Sequence[str], settings: MetaSettings,
          polarity: Mapping[str, bool]) -> tuple[PooledEffect, ...]:
    from evalkit.data.summaries import paired_mean
    from evalkit.stats.meta import MetaAnalysisError, paired_effect, random_effects
    from evalkit.stats.multiple import benjamini_hochberg, holm
    from evalkit.stats.pairing import align

    pooled: list[tuple[str, list[tuple[str, Any, Any, Any, str, float, float]], Any]] = []
    for metric in metrics:
        rows = []
        pairings: dict[tuple[Any, ...], str] = {}
        for name, ld in loaded.items():
            base, cand = ld.runs
            paired = align(cand, base, metric, (cand.name, base.name))
            first = pairings.setdefault((tuple(paired.ids), tuple(paired.diffs)), name)
            if first != name:
                raise _same_evidence(first, name, f"on {metric} they pair the same "
                                     f"{len(paired.ids)} query ids with the same per-query "
                                     "differences")
            try:
                eff = paired_effect(paired.diffs, settings.alpha)
            except MetaAnalysisError as exc:
                raise ComparisonError(
                    f"collection {quoted(name)}, {metric}: {exc}; leave the collection out, or "
                    "compare it on its own with `evalkit compare`") from None
            # each collection's means over the queries it pairs
            rows.append((name, base, cand, eff, scoring_label(scoring_of(base.header or {})),
                         paired_mean(base.scores(metric), paired.ids, metric),
                         paired_mean(cand.scores(metric), paired.ids, metric)))
        res = random_effects([r[3].effect for r in rows], [r[3].variance for r in rows],
                             method=settings.tau2, alpha=settings.alpha,
                             hartung_knapp=settings.hartung_knapp)
        pooled.append((metric, rows, res))
    raw = [res.p_value for _, _, res in pooled]
    adjusted: list[float] | None = (holm(raw) if settings.correction == "holm" else
                                    benjamini_hochberg(raw) if settings.correction == "bh"
                                    else None)
    out: list[PooledEffect] = []
    for j, (metric, rows, res) in enumerate(pooled):
        p_adj = None if adjusted is None else adjusted[j]
        names = (", ".join(dict.fromkeys(r[2].name for r in rows)),
                 ", ".join(dict.fromkeys(r[1].name for r in rows)))
        out.append(PooledEffect(
            metric=metric, candidate=names[0], baseline=names[1], estimate=res.estimate,
            std_error=res.std_error, ci_low=res.ci_low, ci_high=res.ci_high,
            p_value=res.p_value, p_adjusted=p_adj,
            significant=(p_adj if p_adj is not None else res.p_value) < settings.alpha,
            tau2=res.tau2, q=res.q, q_df=res.q_df, q_p_value=res.q_p_value, i2=res.i2,
            k=res.k, df=res.df, method=res.method, interval=res.interval,
            alpha=settings.alpha, higher_is_better=polarity[metric],
            collections=tuple(
                CollectionEffect(
                    collection=name, metric=metric, baseline=base.name,
                    candidate=cand.name, n_queries=eff.n, baseline_mean=base_mean,
                    candidate_mean=cand_mean, effect=eff.effect,
                    std_error=eff.std_error, ci_low=eff.ci_low, ci_high=eff.ci_high,
                    weight=w, scoring=label)
                for (name, base, cand, eff, label, base_mean, cand_mean), w
                in zip(rows, res.weights, strict=True)),
        ))
    return tuple(out)


def _collection_info(name: str, ld: Loaded, value: Sequence[Any]) -> CollectionInfo:
    from evalkit.comparison.compute import _run_info

    qrels = value[2] if len(value) == 3 else None
    return CollectionInfo(
        name=name, baseline=_run_info(ld, 0), candidate=_run_info(ld, 1),
        qrels=str(qrels) if isinstance(qrels, str | PathLike) else None,
        n_queries=len(ld.runs[0].per_query), scoring=scoring_of(ld.runs[0].header or {}),
        warnings=(*ld.left_out, *(w for ws in ld.notes for w in ws)))


def describe(settings: MetaSettings, k: int, n_metrics: int) -> str:
    """How the effects were pooled, in one line: ``"random-effects meta-analysis of 3
    collections (Paule-Mandel tau^2, normal (z) interval); each effect is a collection's
    mean per-query difference, variance s^2/n; p adjusted by Holm over 2 metrics"``."""
    from evalkit.report.formatting import CORRECTION_LABELS
    from evalkit.stats.meta import INTERVAL_LABELS, TAU2_LABELS

    text = (f"random-effects meta-analysis of {k} collection{'s' if k != 1 else ''} "
            f"({TAU2_LABELS[settings.tau2]} tau^2, "
            f"{INTERVAL_LABELS['hartung-knapp' if settings.hartung_knapp else 'z']} "
            "interval); each effect is a collection's mean per-query difference, "
            "variance s^2/n")
    if settings.adjusted and n_metrics > 1:
        text += (f"; p adjusted by {CORRECTION_LABELS[settings.correction]} over "
                 f"{n_metrics} metrics")
    return text


__all__ = ["META_CORRECTIONS", "NOT_WITH_COLLECTIONS", "ONLY_WITH_COLLECTIONS",
           "CollectionInput", "SameEvidenceError", "check_collections_options", "describe",
           "meta_compare", "scoring_label", "scoring_of"]
