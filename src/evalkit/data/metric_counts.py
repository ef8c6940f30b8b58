"""How many cases each metric of a run scored, and why it failed on the others.

A metric that raises on a case leaves that case without its value (``metric_errors`` on
the row) and the run complete; :func:`metric_counts` counts, per metric, the cases it
scored and those it failed on, with the first messages grouped, so that a run whose judge
refused every reply never reads as measured. :func:`unmeasured` says which metrics make
``evalkit run`` and ``evalkit rescore`` exit 4. Only the rows are read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class Rows(Protocol):
    """What is read of a run (a :class:`~evalkit.data.results.RunResult`): its rows and
    its header."""

    @property
    def per_query(self) -> Sequence[Any]: ...

    @property
    def header(self) -> Mapping[str, Any]: ...

__all__ = ["MessageGroup", "MetricCounts"]

#: How many case ids a message group keeps.
GROUP_IDS = 20


@dataclass(frozen=True)
class MessageGroup:
    """Failures that share one message, up to the case id each names.

    Attributes:
        message: the first case's message, as it was recorded.
        cases: how many cases failed with it.
        ids: the first :data:`GROUP_IDS` of those case ids, in row order.
    """

    message: str
    cases: int
    ids: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """``{"message": str, "cases": int, "ids": [str, ...]}`` (for JSON)."""
        return {"message": self.message, "cases": self.cases, "ids": list(self.ids)}


def message_groups(failures: Iterable[tuple[str, str]]) -> list[MessageGroup]:
    """``(case id, message)`` pairs grouped by message, most frequent first (ties in
    order of first appearance). Messages that differ only in the case id they quote
    (``metric 'judge' failed on case '001': ...``) are one group."""
    groups: dict[str, tuple[str, list[str], list[int]]] = {}
    for case_id, message in failures:
        key = str(message)
        for quoted in (repr(case_id), f'"{case_id}"'):
            key = key.replace(quoted, "<case>")
        _, ids, count = groups.setdefault(key, (str(message), [], [0]))
        count[0] += 1
        if len(ids) < GROUP_IDS:
            ids.append(case_id)
    made = [MessageGroup(first, count[0], tuple(ids)) for first, ids, count in
            groups.values()]
    return sorted(made, key=lambda g: -g.cases)


@dataclass(frozen=True)
class MetricCounts:
    """One metric's coverage of a run's rows.

    Attributes:
        metric: the metric's name, as rows store it.
        cases: the run's rows (a target run's cases; with repeated samples, the cases
            after reduction, where a metric that failed on one sample failed on the
            case).
        scored: rows with a value of the metric.
        errored: rows on which the metric failed (``row.metric_errors``).
        no_response: rows whose target call failed: neither scored nor errored.
        errors: the failures grouped by message (:func:`message_groups`), most frequent
            first.
    """

    metric: str
    cases: int
    scored: int
    errored: int
    no_response: int
    errors: tuple[MessageGroup, ...]

    @property
    def measured_all(self) -> bool:
        """Whether the metric has a value on every row."""
        return self.scored == self.cases

    def as_dict(self) -> dict[str, Any]:
        """``{"cases", "scored", "errored", "no_response": int, "errors": [group, ...]}``
        (each group :meth:`MessageGroup.as_dict`), for JSON."""
        return {"cases": self.cases, "scored": self.scored, "errored": self.errored,
                "no_response": self.no_response,
                "errors": [g.as_dict() for g in self.errors]}


def metric_counts(run: Rows, metrics: Sequence[str] | None = None
                  ) -> dict[str, MetricCounts]:
    """``{metric: MetricCounts}`` for ``metrics`` (default: those the run asked for, as
    its header's ``config`` records them, else those on some row or in some row's
    ``metric_errors``), in that order."""
    rows = run.per_query
    names = list(metrics) if metrics is not None else _names(run)
    out: dict[str, MetricCounts] = {}
    for name in names:
        scored = sum(1 for r in rows if name in r.metrics)
        failed = [(str(r.query_id), str(r.metric_errors[name])) for r in rows
                  if name not in r.metrics and name in (getattr(r, "metric_errors", None)
                                                        or {})]
        silent = sum(1 for r in rows if getattr(r, "error", None) is not None
                     and name not in r.metrics)
        out[name] = MetricCounts(name, len(rows), scored, len(failed), silent,
                                 tuple(message_groups(failed)))
    return out


def _names(run: Rows) -> list[str]:
    asked = (run.header.get("config") or {}).get("metrics")
    if isinstance(asked, list) and asked:
        return [str(m) for m in asked]
    seen: dict[str, None] = {}
    for r in run.per_query:
        seen.update(dict.fromkeys(r.metrics))
        seen.update(dict.fromkeys(getattr(r, "metric_errors", None) or {}))
    return list(seen)


def unmeasured(counts: Iterable[MetricCounts], *, allow_errors: bool = False
               ) -> list[MetricCounts]:
    """The metrics that did not measure the run: every metric that failed on some case,
    or, with ``allow_errors``, only those that scored no case at all (whatever
    ``allow_errors``, a metric that scored nothing measured nothing). Rows without a
    response (an incomplete run) are the run's failure, not the metric's."""
    return [c for c in counts
            if (c.errored and not allow_errors) or (c.scored == 0 and c.errored)]
