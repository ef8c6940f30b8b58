"""A ranking run's per-query row (:class:`QueryResult`) and reading any row back from its
artifact line.

A row line (:mod:`evalkit.data.artifact` gives the whole format) is ``{"type": "row",
"id": ..., "metrics": {...}, "counts": {...}, "retrieved": [...]}``, with
``metric_errors`` (``{metric: message}``) when a metric failed on the row and ``sample``
(an integer) when the run holds repeated samples; a target run's row adds ``response``,
``latency_ms`` and ``error`` and is read as a :class:`~evalkit.data.rows.CaseResult`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.data.artifact import metric_errors_of, sample_of


@dataclass
class QueryResult:
    """One query's row: what was retrieved and every metric value.

    Attributes:
        query_id: the query id (text).
        retrieved: ids best first, as scored (after any depth limit): a list, or a
            read-only lazy view (:class:`evalkit.execute.ranking.RankedIds`) for a run read
            from a TREC file.
        metrics: ``{canonical metric name: value}``.
        counts: per-query values that are reported but never gated or compared: counts
            (num_rel, num_ret, num_rel_ret; integers) and residuals (rbp_resid).
        metric_errors: ``{metric: message}`` for metrics that failed on this query (they
            have no value in ``metrics``).
        sample: the sample number of a run with repeated samples; ``None`` (the usual
            case) means the run has one sample per query.
    """

    query_id: str
    retrieved: Sequence[str]
    metrics: dict[str, float]
    counts: dict[str, float] = field(default_factory=dict)
    metric_errors: dict[str, str] = field(default_factory=dict)
    sample: int | None = None

    @property
    def id(self) -> str:
        """The query id (``query_id``)."""
        return self.query_id

    @property
    def error(self) -> str | None:
        """Always None: a scored ranking has no failed call."""
        return None

    def to_json(self) -> dict[str, Any]:
        """The row's artifact line (the module docstring gives its keys)."""
        row: dict[str, Any] = {"type": "row", "id": self.query_id}
        if self.sample is not None:
            row["sample"] = self.sample
        row["metrics"] = self.metrics
        if self.metric_errors:
            row["metric_errors"] = self.metric_errors
        if self.counts:
            row["counts"] = self.counts
        row["retrieved"] = list(self.retrieved)
        return row


def row_from_json(obj: Mapping[str, Any]) -> Any:
    """The row an artifact line holds: a :class:`~evalkit.data.rows.CaseResult` for a
    target run's line, else a :class:`QueryResult`.

    Raises:
        ValueError: a metric value or a count that is not a number (named).
        TypeError, AttributeError: a line whose parts have the wrong shape.
    """
    if "response" in obj or "error" in obj:
        from evalkit.data.rows import case_result_from_json

        return case_result_from_json(obj)
    return QueryResult(
        query_id=str(obj["id"]),
        retrieved=[str(x) for x in obj.get("retrieved", [])],
        metrics={str(k): _value(v, "metric", k, float) for k, v in obj.get("metrics", {}).items()},
        counts={str(k): _count(v, k) for k, v in obj.get("counts", {}).items()},
        metric_errors=metric_errors_of(obj),
        sample=sample_of(obj),
    )


def _value(value: Any, what: str, name: str, kind: type[float] | type[int]) -> Any:
    """A stored number; text or a structure is refused naming the metric."""
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            kind is int and isinstance(value, float) and not value.is_integer()):
        noun = "an integer" if kind is int else "a number"
        raise ValueError(f"{what} {name!r} is {value!r}, not {noun}")
    return kind(value)


def _count(value: Any, name: str) -> float:
    """A stored count (an integer) or, for a count-kind measure whose summary is a mean
    (a residual such as rbp_resid), a number."""
    if isinstance(value, float) and not value.is_integer() and _is_residual(name):
        return value
    count: int = _value(value, "count", name, int)
    return count


def _is_residual(name: str) -> bool:
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    try:
        return getattr(default_registry().resolve(name), "summary", None) == "mean"
    except RegistryError:
        return False


__all__ = ["QueryResult", "row_from_json"]
