"""The parts of a comparison: one :class:`MetricComparison` per (candidate, metric), the
runs (:class:`RunInfo`), the :class:`Settings`, :class:`ComparisonError`, and the
record they make, :class:`ComparisonRecord`.

Pure records: :mod:`.model` adds to the record its outputs as
:class:`~evalkit.comparison.Comparison`, and the modules that write, read and render it
(:mod:`.serialize`, :mod:`.report`, :mod:`.tables`, :mod:`.text`) take these, never the
model, so the package has no import circle.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from evalkit.io.setting_names import SettingError
from evalkit.report.model import QueryDelta
from evalkit.report.slices import SliceEffect

if TYPE_CHECKING:
    from evalkit.stats.histogram import Histogram
    from evalkit.stats.results import EffectSizes
    from evalkit.stats.spread import WithinCaseSpread


class ComparisonError(SettingError):
    """Runs that cannot be compared, or options no test can run with; the message names
    the files (or runs) and says what to do, naming each setting to change as Python
    spells it (the command line prints its options instead:
    :class:`~evalkit.io.setting_names.SettingError`)."""


@dataclass(frozen=True)
class RunInfo:
    """One run of the comparison.

    Attributes:
        name: its name in the comparison (made distinct: a second ``tfidf`` is ``tfidf#2``
            or its file stem).
        source: the path it was read from, or None for a :class:`~evalkit.RunResult`
            passed in.
        provenance: how it was scored, from its header: ``kind`` (``"artifact"``,
            ``"trec"`` or ``"run"``), ``qrels`` (path and sha256), ``run`` (the TREC
            file's path and sha256), ``goldens``, ``relevance_level``, ``missing``,
            ``depth``, ``metrics`` (provider and definition version of each compared
            metric), ``evalkit_version``, ``plugins`` and ``created`` as recorded.
    """

    name: str
    source: str | None
    provenance: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    """How the comparison was scored and tested.

    The first group is what was asked (the arguments of :func:`evalkit.compare`), the
    second what ran: ``ci_method`` (the interval of the last test), ``family_size``
    (hypotheses adjusted together), ``generator`` (the resampling generator, None when
    nothing was drawn), ``methods_used`` / ``ci_methods_used`` (with ``method="auto"``
    each metric gets its own test). ``by``: ``"tag"`` when the comparison was also made
    slice by slice (``evalkit compare --by tag``), else None; ``slice_family_size``: the
    hypotheses the slices' p-values were adjusted over (slices x metrics x candidates,
    less those on a slice of one case, which has no test).
    ``clusters``: the number of clusters the tests took as their unit, None when the
    cases were not clustered; ``effective_clusters``: their effective number ``G*``
    (:func:`evalkit.stats.clusters.effective_clusters`), None likewise (and left out
    of the JSON).
    """

    method: str = "auto"
    ci_method: str | None = None
    alpha: float = 0.05
    alternative: str = "two-sided"
    correction: str = "holm"
    n_resamples: int = 10_000
    seed: int = 42
    all_pairs: bool = False
    top: int = 0
    relevance_level: int | None = None
    missing: str | None = None
    depth: int | None = None
    allow_incomplete: bool = False
    family_size: int = 0
    generator: str | None = None
    methods_used: tuple[str, ...] = ()
    ci_methods_used: tuple[str, ...] = ()
    by: str | None = None
    slice_family_size: int = 0
    clusters: int | None = None
    effective_clusters: float | None = None

    @property
    def adjusted(self) -> bool:
        """Whether the p-values were adjusted for multiplicity."""
        return self.correction != "none"

    def to_dict(self) -> dict[str, Any]:
        """Every setting, as the comparison's JSON holds them at its top level."""
        return {
            "method": self.method, "ci_method": self.ci_method, "alpha": self.alpha,
            "alternative": self.alternative, "correction": self.correction,
            "n_resamples": self.n_resamples, "seed": self.seed, "all_pairs": self.all_pairs,
            "top": self.top, "relevance_level": self.relevance_level,
            "missing": self.missing, "depth": self.depth,
            "allow_incomplete": self.allow_incomplete, "family_size": self.family_size,
            "generator": self.generator, "methods_used": list(self.methods_used),
            "ci_methods_used": list(self.ci_methods_used), "clusters": self.clusters,
        } | ({"by": self.by, "slice_family_size": self.slice_family_size}
             if self.by is not None else {}) | (
            {"effective_clusters": self.effective_clusters}
            if self.clusters is not None else {})


class FloatColumn(Sequence[float]):
    """A read-only sequence of floats kept as one float64 array (8 bytes a value, where a
    tuple of floats takes 32): the :attr:`MetricComparison.differences` of a comparison
    :func:`evalkit.compare` computed, a column of the family's matrix of differences.

    It behaves as the tuple of its values: indexing gives a ``float`` (a slice, a
    tuple); iteration, ``len``, ``in``, ``==`` (equal to the tuple of the same values or
    another column of them), ``hash``, ``repr`` and pickling are the tuple's;
    ``np.asarray`` reads the array without a copy.

    Raises:
        ValueError: ``values`` is not one-dimensional.
    """

    __slots__ = ("_values",)

    def __init__(self, values: Any) -> None:
        import numpy as np

        arr = np.asarray(values, dtype=np.float64)
        if arr.ndim != 1:
            raise ValueError(f"a column of floats is one-dimensional, got shape {arr.shape}")
        arr = arr.view()
        arr.flags.writeable = False
        self._values = arr

    def __len__(self) -> int:
        return int(self._values.shape[0])

    @overload
    def __getitem__(self, index: int) -> float: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[float, ...]: ...

    def __getitem__(self, index: int | slice) -> float | tuple[float, ...]:
        if isinstance(index, slice):
            return tuple(self._values[index].tolist())
        return float(self._values[index])

    def __iter__(self) -> Iterator[float]:
        return iter(self._values.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FloatColumn):
            return bool(self._values.tolist() == other._values.tolist())
        if isinstance(other, tuple):
            return tuple(self._values.tolist()) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self._values.tolist()))

    def __repr__(self) -> str:
        return repr(tuple(self._values.tolist()))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        return self._values if dtype is None else self._values.astype(dtype)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FloatColumn, (self._values.tolist(),))


@dataclass(frozen=True, repr=False)
class MetricComparison:
    """One candidate against its baseline on one metric.

    Attributes:
        metric: the metric (canonical name).
        baseline, candidate: the two runs' names.
        n_queries: queries paired by id.
        baseline_mean, candidate_mean: the means over those queries (for gm_map and
            gm_bpref, whose per-query values are logs, the geometric means trec_eval
            prints: ``exp`` of the mean log).
        diff: the mean per-query difference, ``candidate_mean - baseline_mean``; for
            gm_map and gm_bpref the difference of mean logs, ``exp(diff)`` being
            ``candidate_mean / baseline_mean`` (docs/metrics.md).
        ci_low, ci_high: its interval at confidence ``1 - alpha`` (None: unbounded).
        p_value: the test's p; ``p_adjusted``: adjusted over the whole family (None with
            ``correction="none"``).
        significant: the verdict: the adjusted p (or the raw p when nothing is adjusted)
            below alpha; ``"bootstrap"`` without correction decides by its interval.
        significant_unadjusted: the raw p below alpha.
        wins, ties, losses: queries where the candidate is better, equal (a difference
            of 0 after rounding noise is removed), worse, by the metric's polarity.
        higher_is_better: that polarity (True when the metric declares none).
        standardized_effect: Cohen's d_z, mean / sd of the differences (None: infinite).
        warnings: the inputs' notes on the two runs, then the statistics' notes.
        top_gains, top_losses: the ``top`` queries whose value rose / fell most (ties
            broken by id), as :class:`QueryDelta`.
        p_resamples: the resamples behind p (its floor is ``1/(B+1)``); None for an
            analytic or exact p.
        method, ci_method: the test and the interval that ran.
        effect: the full :class:`evalkit.stats.EffectSizes` (sd, skewness...).
        query_ids, differences: every paired query id (sorted) and its difference
            ``candidate - baseline``, as the test saw it: a sequence of floats (from
            :func:`evalkit.compare`, a :class:`FloatColumn`, which behaves as a tuple).
        baseline_values, candidate_values: each paired query's value in the two runs, in
            the order of ``query_ids``.
        distribution: the binned null (randomization) or resampling (bootstrap)
            distribution of the test's statistic, at most 200 bins; None for the t-test
            and for constant differences.
        details: per-case details the metric published (an LLM judge's score and
            reason), ``{query id: {"baseline": {...} | None, "candidate": {...} | None}}``.
        spread: with K >= 2 samples per case in both runs (reduced by the mean), the
            :class:`evalkit.stats.spread.WithinCaseSpread` of the differences; else None.
        p_note: why reports show words instead of the p-values, or None:
            ``"n too small"`` when every per-query difference is equal and the
            degenerate-input rule (docs/statistics.md) finds no significance although p
            is below alpha (the paired bootstrap on one query gives ``1/(B+1)``); the
            reason in full is the last of ``warnings``
            (:func:`evalkit.report.comparison_rows.p_note_for`).
        n_clusters: the number of clusters the test took as its unit when the cases
            were clustered (``evalkit.compare(..., clusters=...)``), else None.
        ppi: with ``ppi=True`` and human labels of this metric in both runs, the PPI++
            interval of the human difference
            (:meth:`evalkit.data.ppi_labels.PairedPPI.to_dict`: ``estimate``,
            ``ci_low``, ``ci_high``, ``se``, ``lambda``, ``n_labels``, ``n_unlabelled``,
            ``p_value``, ``judge_difference``, ``labels``, ``notes``), which is then
            ``ci_low``/``ci_high`` (``ci_method`` ``"ppi++"``); else None.
    """

    metric: str
    baseline: str
    candidate: str
    n_queries: int
    baseline_mean: float
    candidate_mean: float
    diff: float
    ci_low: float | None
    ci_high: float | None
    p_value: float
    p_adjusted: float | None
    significant: bool
    significant_unadjusted: bool
    wins: int
    ties: int
    losses: int
    higher_is_better: bool
    standardized_effect: float | None = None
    warnings: tuple[str, ...] = ()
    top_gains: tuple[QueryDelta, ...] = ()
    top_losses: tuple[QueryDelta, ...] = ()
    p_resamples: int | None = None
    method: str | None = None
    ci_method: str | None = None
    effect: EffectSizes | None = None
    query_ids: tuple[str, ...] = ()
    differences: Sequence[float] = ()
    distribution: Histogram | None = None
    details: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    baseline_values: tuple[float, ...] = ()
    candidate_values: tuple[float, ...] = ()
    spread: WithinCaseSpread | None = None
    p_note: str | None = None
    n_clusters: int | None = None
    ppi: Mapping[str, Any] | None = None

    def per_query(self) -> dict[str, float]:
        """``{query id: candidate - baseline}`` over the paired queries."""
        return dict(zip(self.query_ids, self.differences, strict=True))

    def __repr__(self) -> str:
        def num(x: float | None) -> str:
            return "unbounded" if x is None else f"{x:+.4f}"

        adj = "" if self.p_adjusted is None else f", p_adjusted={self.p_adjusted:.4g}"
        return (f"MetricComparison({self.metric!r}: {self.candidate!r} - {self.baseline!r} "
                f"= {self.diff:+.4f} [{num(self.ci_low)}, {num(self.ci_high)}], "
                f"p={self.p_value:.4g}{adj}, significant={self.significant}, "
                f"W/T/L={self.wins}/{self.ties}/{self.losses}, n={self.n_queries})")


@dataclass(frozen=True, repr=False)
class ComparisonRecord:
    """The fields of a :class:`~evalkit.comparison.Comparison` (its attributes are
    documented there) and what is read straight off them; the comparison adds its
    outputs (JSON, report, tables, HTML, LaTeX)."""

    baseline: RunInfo
    candidates: tuple[RunInfo, ...]
    results: tuple[MetricComparison, ...]
    metrics: tuple[str, ...]
    settings: Settings
    description: str = ""
    warnings: tuple[str, ...] = ()
    query_ids: tuple[str, ...] = ()
    queries: Mapping[str, str] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)
    slices: tuple[SliceEffect, ...] = ()

    def __repr__(self) -> str:
        shown = ", ".join(repr(r) for r in self.results[:3])
        more = f", ... {len(self.results) - 3} more" if len(self.results) > 3 else ""
        s = self.settings
        return (f"{type(self).__name__}(baseline={self.baseline.name!r}, candidates="
                f"{[c.name for c in self.candidates]!r}, metrics={list(self.metrics)!r}, "
                f"{len(self.query_ids)} queries, method={s.method!r}, "
                f"correction={s.correction!r}, alpha={s.alpha}, results=[{shown}{more}])")

    @property
    def runs(self) -> tuple[RunInfo, ...]:
        """The baseline, then the candidates."""
        return (self.baseline, *self.candidates)

    def __iter__(self) -> Iterator[MetricComparison]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def get(self, metric: str, candidate: str | None = None,
            baseline: str | None = None) -> MetricComparison:
        """The result for ``metric`` (and ``candidate``, and ``baseline`` with
        ``all_pairs``; the first candidate / the baseline by default).

        Raises:
            KeyError: no such comparison.
        """
        cand = candidate if candidate is not None else self.candidates[0].name
        for r in self.results:
            if r.metric == metric and r.candidate == cand and (
                    baseline is None or r.baseline == baseline):
                return r
        raise KeyError(f"no comparison of {cand!r} on {metric!r}"
                       + (f" against {baseline!r}" if baseline is not None else ""))


__all__ = ["ComparisonError", "ComparisonRecord", "FloatColumn", "MetricComparison",
           "QueryDelta", "RunInfo", "Settings"]
