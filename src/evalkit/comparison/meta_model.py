"""What :func:`evalkit.meta_compare` returns: a candidate against a baseline over several
collections, each metric pooled by a random-effects model.

A :class:`MetaComparison` holds one :class:`~evalkit.report.pooled.PooledEffect` per
metric (with its collections' rows, :class:`~evalkit.report.pooled.CollectionEffect`),
the collections and their runs (:class:`CollectionInfo`), the :class:`MetaSettings`, a
one-line description, the warnings on the inputs and provenance. It becomes JSON
(:meth:`MetaComparison.to_json`, what ``evalkit compare --collections --json`` prints,
read back by :meth:`MetaComparison.from_json`), a DataFrame
(:meth:`MetaComparison.to_pandas`: a row per collection and a pooled row per metric) and
a reporters' :class:`~evalkit.report.Report` (:meth:`MetaComparison.to_report`,
:func:`meta_report`: a row per metric with the pooled difference, so that a reporter that
knows only rows, JUnit or a plugin's, shows the pooled verdicts, and ``pooled`` with each
metric's collections, which the console, Markdown, JSON and LaTeX reporters print).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from os import PathLike
from typing import TYPE_CHECKING, Any

from evalkit.comparison.records import RunInfo
from evalkit.report.pooled import CollectionEffect, PooledEffect

if TYPE_CHECKING:
    import pandas as pd

    from evalkit.report.model import Report, ReportRow

#: The JSON document's ``type`` and version.
DOCUMENT_TYPE = "meta_comparison"
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class CollectionInfo:
    """One collection of a :class:`MetaComparison`.

    Attributes:
        name: the collection's name.
        baseline, candidate: its two runs (:class:`~evalkit.comparison.RunInfo`: name,
            the path read, how it was scored).
        qrels: the qrels path the runs were scored with, or None (artifacts, runs).
        n_queries: the queries paired by id.
        scoring: the settings its runs were scored with, as the baseline's header records
            them (``relevance_level``, ``depth``, ``missing``); empty for runs that record
            none.
        warnings: notes on its inputs (judged queries a run lacks, topics without
            judgments, queries left out by ``allow_incomplete``).
    """

    name: str
    baseline: RunInfo
    candidate: RunInfo
    qrels: str | None
    n_queries: int
    warnings: tuple[str, ...] = ()
    scoring: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The collection as JSON-ready values."""
        def run(r: RunInfo) -> dict[str, Any]:
            return {"name": r.name, "source": r.source, "provenance": dict(r.provenance)}

        return {"name": self.name, "baseline": run(self.baseline),
                "candidate": run(self.candidate), "qrels": self.qrels,
                "n_queries": self.n_queries, "scoring": dict(self.scoring),
                "warnings": list(self.warnings)}


@dataclass(frozen=True)
class MetaSettings:
    """How the collections were scored and pooled (the arguments of
    :func:`evalkit.meta_compare`)."""

    tau2: str = "pm"
    hartung_knapp: bool = False
    alpha: float = 0.05
    correction: str = "holm"
    relevance_level: int | None = None
    missing: str | None = None
    depth: int | None = None
    allow_incomplete: bool = False

    @property
    def adjusted(self) -> bool:
        """Whether the pooled p-values were adjusted over the metrics."""
        return self.correction != "none"

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON-ready values."""
        return asdict(self)


@dataclass(frozen=True, repr=False)
class MetaComparison:
    """A candidate against a baseline over several collections, metric by metric.

    Attributes:
        results: one :class:`~evalkit.report.pooled.PooledEffect` per metric, in the
            order compared.
        collections: the collections (:class:`CollectionInfo`), in the order given.
        metrics: the metrics compared.
        settings: :class:`MetaSettings`.
        description: how the effects were pooled, in one line.
        warnings: every collection's notes, each prefixed with its name.
        provenance: ``evalkit_version``.
    """

    results: tuple[PooledEffect, ...]
    collections: tuple[CollectionInfo, ...]
    metrics: tuple[str, ...]
    settings: MetaSettings
    description: str = ""
    warnings: tuple[str, ...] = ()
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        shown = ", ".join(f"{r.metric}: {r.estimate:+.4f} [{r.ci_low:+.4f}, {r.ci_high:+.4f}]"
                          for r in self.results[:3])
        return (f"MetaComparison({len(self.collections)} collections "
                f"{[c.name for c in self.collections]!r}, tau2={self.settings.tau2!r}, "
                f"{shown})")

    def __iter__(self) -> Iterator[PooledEffect]:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def get(self, metric: str) -> PooledEffect:
        """The pooled result of ``metric``.

        Raises:
            KeyError: the metric was not compared.
        """
        for r in self.results:
            if r.metric == metric:
                return r
        raise KeyError(f"no pooled result for {metric!r} (compared: "
                       f"{', '.join(self.metrics)})")

    def to_json(self) -> dict[str, Any]:
        """The versioned JSON document of ``evalkit compare --collections --json``
        (docs/comparison.md#several-collections): ``type``, ``schema_version``,
        ``settings``, ``description``, ``metrics``, ``collections``, ``results`` (one
        per metric, with its collections' rows), ``warnings``, ``provenance``."""
        from evalkit.stats.numeric import json_ready

        return dict(json_ready({
            "type": DOCUMENT_TYPE, "schema_version": SCHEMA_VERSION,
            "settings": self.settings.to_dict(), "description": self.description,
            "metrics": list(self.metrics),
            "collections": [c.to_dict() for c in self.collections],
            "results": [r.to_dict() for r in self.results],
            "warnings": list(self.warnings), "provenance": dict(self.provenance),
        }))

    @classmethod
    def from_json(cls, doc: Mapping[str, Any] | str) -> MetaComparison:
        """Read :meth:`to_json`'s document back (a mapping, or its JSON text): the same
        fields, an open interval end or a NaN mean written as null read as infinite or
        NaN.

        Raises:
            ValueError: not a meta-comparison document, a version this evalkit cannot
                read, or a malformed field (the message names it).
        """
        from evalkit.io.limits import loads_json

        data: Any = loads_json(doc) if isinstance(doc, str) else doc
        if not isinstance(data, Mapping) or data.get("type") != DOCUMENT_TYPE:
            raise ValueError(f"not an evalkit {DOCUMENT_TYPE} document (its 'type' is "
                             f"{data.get('type') if isinstance(data, Mapping) else None!r})")
        if data.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"{DOCUMENT_TYPE} document of schema_version "
                             f"{data.get('schema_version')!r}: this evalkit reads "
                             f"schema_version {SCHEMA_VERSION}")

        def run(d: Mapping[str, Any]) -> RunInfo:
            return RunInfo(str(d["name"]), d.get("source"), dict(d.get("provenance") or {}))

        try:
            return cls(
                results=tuple(PooledEffect.from_dict(r) for r in data["results"]),
                collections=tuple(CollectionInfo(
                    name=str(c["name"]), baseline=run(c["baseline"]),
                    candidate=run(c["candidate"]), qrels=c.get("qrels"),
                    n_queries=int(c["n_queries"]), scoring=dict(c.get("scoring") or {}),
                    warnings=tuple(str(w) for w in c.get("warnings") or ()))
                    for c in data["collections"]),
                metrics=tuple(str(m) for m in data["metrics"]),
                settings=MetaSettings(**dict(data["settings"])),
                description=str(data.get("description") or ""),
                warnings=tuple(str(w) for w in data.get("warnings") or ()),
                provenance=dict(data.get("provenance") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed {DOCUMENT_TYPE} document: {type(exc).__name__}: "
                             f"{exc}") from None

    def to_pandas(self) -> pd.DataFrame:
        """The comparison as a ``pandas.DataFrame``: per metric one row per collection
        (``row`` ``"collection"``: its queries, both means, ``effect``, ``std_error``,
        interval, ``weight``) and one pooled row (``row`` ``"pooled"``, ``collection``
        empty: the pooled ``effect``, its ``std_error`` and interval, ``p_value``,
        ``p_adjusted``, ``significant``, ``tau2``, ``i2``, ``q``, ``q_p_value``, ``k``),
        the columns of :func:`meta_columns`.

        Raises:
            evalkit.tables.frames.MissingExtraError: (an ``ImportError``) pandas is not
                installed: ``pip install 'paired-evalkit[pandas]'``.
        """
        from evalkit.tables.frames import frame

        return frame(meta_columns(self), _META_FLOATS)

    def to_report(self) -> Report:
        """The reporters' :class:`~evalkit.report.Report`: a row per metric with the
        pooled difference, and ``pooled`` with every collection's row."""
        return meta_report(self)

    def to_latex(self, path: str | PathLike[str] | None = None) -> str:
        """The forest table of a paper (a row per collection and the pooled row, a column
        pair per metric), rendered by the ``latex`` reporter; the text of ``evalkit
        compare --collections ... --report latex:PATH``.

        Args:
            path: also write the table to this file.

        Raises:
            RegistryError: no ``latex`` reporter is registered.
            evalkit.io.outputs.UnwritableError: ``path`` cannot be written.
        """
        from evalkit.report.writing import render_text

        return render_text(self, "latex", path)


TITLE = "evalkit compare --collections"

#: The columns of :func:`meta_columns`, in order.
META_COLUMNS: tuple[str, ...] = (
    "metric", "row", "collection", "baseline", "candidate", "n_queries", "baseline_mean",
    "candidate_mean", "effect", "std_error", "ci_low", "ci_high", "weight", "p_value",
    "p_adjusted", "significant", "tau2", "i2", "q", "q_p_value", "k")
_META_FLOATS = ("baseline_mean", "candidate_mean", "weight", "p_value", "p_adjusted",
                "tau2", "i2", "q", "q_p_value")


def meta_columns(m: MetaComparison) -> dict[str, list[Any]]:
    """:data:`META_COLUMNS` of ``m``: per metric, a row per collection then the pooled
    row; a field that does not apply to a row is None."""
    out: dict[str, list[Any]] = {c: [] for c in META_COLUMNS}

    def add(**row: Any) -> None:
        for c in META_COLUMNS:
            out[c].append(row.get(c))

    for p in m.results:
        for c in p.collections:
            add(metric=p.metric, row="collection", collection=c.collection,
                baseline=c.baseline, candidate=c.candidate, n_queries=c.n_queries,
                baseline_mean=c.baseline_mean, candidate_mean=c.candidate_mean,
                effect=c.effect, std_error=c.std_error, ci_low=c.ci_low, ci_high=c.ci_high,
                weight=c.weight)
        add(metric=p.metric, row="pooled", collection="", baseline=p.baseline,
            candidate=p.candidate, n_queries=p.n_queries, effect=p.estimate,
            std_error=p.std_error, ci_low=p.ci_low, ci_high=p.ci_high, weight=1.0,
            p_value=p.p_value, p_adjusted=p.p_adjusted, significant=p.significant,
            tau2=p.tau2, i2=p.i2, q=p.q, q_p_value=p.q_p_value, k=p.k)
    return out


def _method(tau2: str, interval: str) -> str:
    from evalkit.stats.meta import TAU2_LABELS

    how = "Hartung-Knapp" if interval == "hartung-knapp" else "z"
    return f"random effects ({TAU2_LABELS.get(tau2, tau2)} tau^2, {how})"


def meta_report(m: MetaComparison) -> Report:
    """The report of ``m``: the candidate is system A, the baseline B; the notes are the
    collections' warnings, then each metric's heterogeneity."""
    from evalkit.report.comparison_rows import NO_DIFFERENCE, comparison_row, row_label
    from evalkit.report.formatting import CORRECTION_LABELS
    from evalkit.report.model import Report, ReportRun
    from evalkit.report.pooled import heterogeneity

    s = m.settings
    correction = CORRECTION_LABELS[s.correction] if s.adjusted else None
    rows: list[ReportRow] = []
    for p in m.results:
        rows.append(comparison_row(
            name=row_label(p.metric, p.metric), metric=p.metric, a=p.candidate,
            b=p.baseline, diff=p.estimate, p_value=p.p_value, p_adjusted=p.p_adjusted,
            alpha=p.alpha, significant=p.significant, higher_is_better=p.higher_is_better,
            value=None, reference_value=None, ci_low=p.ci_low, ci_high=p.ci_high,
            n_queries=p.n_queries, n_resamples=None, method=_method(p.method, p.interval),
            correction=correction,
        ))
    n_sig = sum(1 for r in rows if r.status != NO_DIFFERENCE)
    cand = m.results[0].candidate if m.results else ""
    base = m.results[0].baseline if m.results else ""
    k = len(m.collections)
    summary = (f"{cand} vs {base} over {k} collection{'s' if k != 1 else ''}: {n_sig} of "
               f"{len(rows)} pooled difference(s) significant")
    notes = [*m.warnings, *(f"{p.metric}: {heterogeneity(p)}" for p in m.results)]
    runs: list[ReportRun] = []
    for c in m.collections:
        runs.append(ReportRun(c.baseline.name, c.baseline.source, f"baseline ({c.name})"))
        runs.append(ReportRun(c.candidate.name, c.candidate.source, f"candidate ({c.name})"))
    return Report(
        kind="compare", title=TITLE, subject=cand, reference=base, rows=tuple(rows),
        status="done", summary=summary, exit_code=None, notes=tuple(notes),
        data=m.to_json(), correction=correction, description=m.description,
        settings=s.to_dict(), provenance=dict(m.provenance), runs=tuple(runs),
        warnings=m.warnings, pooled=m.results,
    )


__all__ = ["META_COLUMNS", "TITLE", "CollectionEffect", "CollectionInfo", "MetaComparison",
           "MetaSettings", "PooledEffect", "meta_columns", "meta_report"]
