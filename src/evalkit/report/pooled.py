"""A metric pooled over several collections: the records of :func:`evalkit.meta_compare`,
which its :class:`~evalkit.comparison.MetaComparison` holds and a :class:`~evalkit.report.
Report` carries (``Report.pooled``), and the cells every reporter prints from them.

They sit on the report floor, below the comparison, as :class:`~evalkit.report.QueryDelta`
does: the comparison builds them and the reporters render them, so both name one type.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalkit.report.formatting import decimal, figure, interval, p_cell, p_phrase, signed


def _clean(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _opt(x: Any) -> float | None:
    return None if x is None else float(x)


@dataclass(frozen=True)
class CollectionEffect:
    """One collection's paired effect on one metric: a row of the forest plot.

    Attributes:
        collection: the collection's name.
        metric: the metric.
        baseline, candidate: the names of the two runs in this collection.
        n_queries: the queries paired by id.
        baseline_mean, candidate_mean: the runs' means over those queries.
        effect: mean per-query difference, candidate minus baseline (metric units).
        std_error: ``s / sqrt(n)``, ``s`` the standard deviation of the differences
            (``n - 1`` in its denominator): the query is the unit.
        ci_low, ci_high: ``effect -+ z_{1-alpha/2} * std_error``.
        weight: the collection's share of the pooled estimate's weight,
            ``w_i / sum w_j`` with ``w_i = 1 / (std_error_i^2 + tau^2)`` (sums to 1).
        scoring: the settings the collection's runs were scored with, in words
            (``"level 2"``, ``"level 1, depth 100"``); empty when they record none.
    """

    collection: str
    metric: str
    baseline: str
    candidate: str
    n_queries: int
    baseline_mean: float
    candidate_mean: float
    effect: float
    std_error: float
    ci_low: float
    ci_high: float
    weight: float
    scoring: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values (:meth:`from_dict` reads them back)."""
        return {"collection": self.collection, "metric": self.metric,
                "baseline": self.baseline, "candidate": self.candidate,
                "n_queries": self.n_queries, "baseline_mean": _clean(self.baseline_mean),
                "candidate_mean": _clean(self.candidate_mean), "effect": self.effect,
                "std_error": self.std_error, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "weight": self.weight, "scoring": self.scoring}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CollectionEffect:
        """The inverse of :meth:`to_dict`."""
        return cls(collection=str(data["collection"]), metric=str(data["metric"]),
                   baseline=str(data["baseline"]), candidate=str(data["candidate"]),
                   n_queries=int(data["n_queries"]),
                   baseline_mean=float(data["baseline_mean"] if data["baseline_mean"]
                                       is not None else math.nan),
                   candidate_mean=float(data["candidate_mean"] if data["candidate_mean"]
                                        is not None else math.nan),
                   effect=float(data["effect"]), std_error=float(data["std_error"]),
                   ci_low=float(data["ci_low"]), ci_high=float(data["ci_high"]),
                   weight=float(data["weight"]), scoring=str(data.get("scoring") or ""))


@dataclass(frozen=True)
class PooledEffect:
    """One metric pooled over the collections by a random-effects model
    (:func:`evalkit.stats.meta.random_effects`).

    Attributes:
        metric: the metric.
        candidate, baseline: the runs' names (``"a, b"`` when they differ by collection).
        estimate: the pooled difference, candidate minus baseline.
        std_error: its standard error (Hartung-Knapp's when ``interval`` says so).
        ci_low, ci_high: its interval, confidence ``1 - alpha``.
        p_value: two-sided p of a pooled difference of 0 (z, or t on ``k - 1`` df).
        p_adjusted: ``p_value`` adjusted over the metrics (``correction``), or None.
        significant: the adjusted p (the raw p when nothing is adjusted) below alpha.
        tau2: the between-collection variance ``tau^2``; ``tau`` its square root.
        q, q_df, q_p_value: Cochran's Q, its ``k - 1`` degrees of freedom and chi-square
            p (None for one collection).
        i2: ``max(0, (Q - (k - 1)) / Q)`` in [0, 1]; None when undefined (one collection).
        k: the collections pooled.
        df: the t's degrees of freedom (Hartung-Knapp), or None (normal).
        method: the ``tau^2`` estimator, ``"pm"`` or ``"dl"``.
        interval: ``"z"`` or ``"hartung-knapp"``.
        alpha: the significance level.
        higher_is_better: the metric's polarity, None when unknown.
        collections: each collection's :class:`CollectionEffect`, in the order given.
    """

    metric: str
    candidate: str
    baseline: str
    estimate: float
    std_error: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float | None
    significant: bool
    tau2: float
    q: float
    q_df: int
    q_p_value: float | None
    i2: float | None
    k: int
    df: int | None
    method: str
    interval: str
    alpha: float
    higher_is_better: bool | None
    collections: tuple[CollectionEffect, ...]

    @property
    def tau(self) -> float:
        """``sqrt(tau2)``, in the metric's units."""
        return math.sqrt(self.tau2)

    @property
    def n_queries(self) -> int:
        """The queries of every collection together."""
        return sum(c.n_queries for c in self.collections)

    def to_dict(self) -> dict[str, Any]:
        """Every field, ``tau`` and ``n_queries`` as JSON-ready values (:meth:`from_dict`
        reads them back)."""
        out: dict[str, Any] = {
            name: getattr(self, name) for name in self.__dataclass_fields__
            if name != "collections"}
        out["tau"] = self.tau
        out["n_queries"] = self.n_queries
        out["collections"] = [c.to_dict() for c in self.collections]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PooledEffect:
        """The inverse of :meth:`to_dict`."""
        hib = data.get("higher_is_better")
        return cls(
            metric=str(data["metric"]), candidate=str(data["candidate"]),
            baseline=str(data["baseline"]), estimate=float(data["estimate"]),
            std_error=float(data["std_error"]), ci_low=float(data["ci_low"]),
            ci_high=float(data["ci_high"]), p_value=float(data["p_value"]),
            p_adjusted=_opt(data.get("p_adjusted")), significant=bool(data["significant"]),
            tau2=float(data["tau2"]), q=float(data["q"]), q_df=int(data["q_df"]),
            q_p_value=_opt(data.get("q_p_value")), i2=_opt(data.get("i2")),
            k=int(data["k"]), df=None if data.get("df") is None else int(data["df"]),
            method=str(data["method"]), interval=str(data["interval"]),
            alpha=float(data["alpha"]), higher_is_better=None if hib is None else bool(hib),
            collections=tuple(CollectionEffect.from_dict(c) for c in data["collections"]),
        )


def heterogeneity(p: PooledEffect) -> str:
    """The heterogeneity in one line: ``tau^2 = 0.0004 (tau 0.0200), I^2 = 41.2%,
    Q = 3.40 on 2 df (p = 0.1827)``; with one collection, that it is undefined."""
    if p.k < 2:
        return "heterogeneity undefined: one collection (tau^2 is taken as 0)"
    i2 = "undefined" if p.i2 is None else f"{100 * p.i2:.1f}%"
    q_p = "" if p.q_p_value is None else f" ({p_phrase(p.q_p_value)})"
    return (f"tau^2 = {figure(p.tau2)} (tau {figure(p.tau)}), I^2 = {i2}, "
            f"Q = {p.q:.2f} on {p.q_df} df{q_p}")


def collection_cells(p: PooledEffect) -> tuple[list[str], list[list[str]]]:
    """``(headers, cells)`` of one metric's forest table: a line per collection (its
    queries, both means, the effect, its interval and standard error, its weight) and a
    last line, ``pooled``, with the pooled estimate, interval and standard error. When the
    collections record how they were scored, a ``scored`` column after ``collection``
    says it (``level 2``), so that rows scored at different levels are seen as such."""
    confidence = f"{100 * (1 - p.alpha):g}% CI"
    scored = any(c.scoring for c in p.collections)
    headers = ["collection", *(["scored"] if scored else []), "queries", "baseline",
               "candidate", "effect", confidence, "SE", "weight"]
    cells = [[c.collection, *([c.scoring] if scored else []), str(c.n_queries),
              decimal(c.baseline_mean), decimal(c.candidate_mean), signed(c.effect),
              interval(c.ci_low, c.ci_high), figure(c.std_error), f"{100 * c.weight:.1f}%"]
             for c in p.collections]
    cells.append(["pooled", *([""] if scored else []), str(p.n_queries), "", "",
                  signed(p.estimate), interval(p.ci_low, p.ci_high), figure(p.std_error),
                  "100.0%"])
    return headers, cells


def pooled_cells(pooled: tuple[PooledEffect, ...], correction: str | None
                 ) -> tuple[list[str], list[list[str]]]:
    """``(headers, cells)`` of the summary table: a line per metric with the pooled
    difference, its interval, p (and adjusted p, headed by ``correction``), the verdict,
    ``tau^2``, ``I^2``, Q with its df, and the number of collections."""
    alpha = pooled[0].alpha if pooled else 0.05
    adjusted = any(p.p_adjusted is not None for p in pooled)
    headers = ["metric", "pooled diff", f"{100 * (1 - alpha):g}% CI", "p"]
    if adjusted:
        headers.append(f"p ({correction or 'adjusted'})")
    headers += ["significant", "tau^2", "I^2", "Q (df)", "collections"]
    cells: list[list[str]] = []
    for p in pooled:
        line = [p.metric, signed(p.estimate), interval(p.ci_low, p.ci_high),
                p_cell(p.p_value)]
        if adjusted:
            line.append(p_cell(p.p_adjusted))
        line += ["yes" if p.significant else "no", figure(p.tau2),
                 "" if p.i2 is None else f"{100 * p.i2:.1f}%",
                 f"{p.q:.2f} ({p.q_df})" if p.k > 1 else "", str(p.k)]
        cells.append(line)
    return headers, cells


__all__ = ["CollectionEffect", "PooledEffect", "collection_cells", "heterogeneity",
           "pooled_cells"]
