"""A run's record: its name, its per-query rows, the header that says how they were made,
what reading its file proved, its sample rows, and what is read straight off the rows.

:class:`~evalkit.data.results.RunResult` is this record with its checked views (scores that
refuse failed cases, means, coverage, the artifact file, DataFrames). The modules that read
a run for those views (:mod:`.coverage`, :mod:`.provenance`, :mod:`.run_views`) take a
:class:`RunRecord`, so that none of them knows the class whose methods call them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Any

from evalkit.data.artifact import Integrity


@dataclass(repr=False)
class RunRecord:
    """A named run: the per-query rows and the header that says how they were made.

    ``per_query`` is always retained; every aggregate derives from it and pairs by query
    id. With K >= 2 samples per case, ``per_query`` holds the reduced rows and ``samples``
    every sample row (:mod:`evalkit.data.samples`).
    """

    name: str
    per_query: list[Any]
    header: dict[str, Any] = field(default_factory=dict)
    #: what reading the file proved (set by ``RunResult.load``; ``None`` for a run built
    #: in memory)
    integrity: Integrity | None = field(default=None, compare=False, repr=False)
    #: the sample rows (by case, then sample) when K >= 2; empty otherwise
    samples: list[Any] = field(default_factory=list, repr=False)

    def metric_names(self) -> list[str]:
        """Metric names present on every row, in first-row order."""
        if not self.per_query:
            return []
        first = self.per_query[0].metrics
        names = list(first)
        held = list(map(attrgetter("metrics"), self.per_query))
        # the usual case, in C: every row holds as many metrics as the first, and all of
        # them together are no more than the first's, so each row holds the first's
        if set(map(len, held)) == {len(first)} and len(
                set(chain.from_iterable(held))) == len(first):
            return names
        everywhere = set(names)
        for r in self.per_query:
            if not everywhere <= r.metrics.keys():
                everywhere &= r.metrics.keys()
        return [n for n in names if n in everywhere]

    def available_scores(self, metric: str) -> dict[str, float]:
        """``{query id: value}`` of the cases that have a value of ``metric``: rows whose
        call or whose metric failed are left out (``RunResult.scores`` refuses them). For
        comparisons that pair what two incomplete runs share (``allow_incomplete``)."""
        metric = self._stored_name(metric)
        return {r.query_id: float(r.metrics[metric]) for r in self.per_query
                if r.error is None and metric in r.metrics}

    def metric_failures(self) -> dict[str, dict[str, str]]:
        """``{metric: {case id: message}}`` of every metric that failed on some case
        (rows whose target call failed are not included: see ``RunResult.coverage``)."""
        out: dict[str, dict[str, str]] = {}
        for r in self.per_query:
            for m, message in getattr(r, "metric_errors", {}).items():
                out.setdefault(m, {})[r.query_id] = message
        return out

    def _stored_name(self, metric: str) -> str:
        """The name rows store for ``metric``: itself, or its canonical registry name
        (so ``"AP"``, ``"map"`` and ``"nDCG@10"`` find ``ap`` and ``ndcg@10``)."""
        if not self.per_query or metric in self.per_query[0].metrics:
            return metric
        from evalkit.core.registry import RegistryError
        from evalkit.plugins.default import default_registry

        try:
            canonical = default_registry().resolve(metric).name
        except RegistryError:
            return metric
        return canonical if canonical in self.per_query[0].metrics else metric


__all__ = ["RunRecord"]
