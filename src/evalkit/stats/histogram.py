"""A binned distribution of a test statistic: the null of a randomization test, or the
resampling distribution of a bootstrap.

:func:`evalkit.stats.compare_runs` (``distribution_bins=``) bins the values its method
computed anyway (the sign-flip sums, the bootstrap means, the studentized bootstrap
statistics), so a report can draw where the observed value falls without keeping every
resample. The paired t-test has no resampling distribution and gets none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

#: The most bins a distribution may have (enough for a plot, small in JSON).
MAX_BINS = 200

HistogramKind = Literal["null", "bootstrap"]


@dataclass(frozen=True)
class Histogram:
    """Counts of a statistic's values in equal-width bins.

    Attributes:
        kind: ``"null"``, the distribution under H0 (the sign-flip randomization test:
            every per-query difference given a random sign, or every sign pattern when
            ``exact``); ``"bootstrap"``, the distribution over resamples of the queries
            (the paired bootstrap: the mean difference of each resample; bootstrap-t:
            the studentized statistic ``(mean* - mean) / se*``, which stands in for its
            null).
        statistic: ``"mean difference"`` (metric units) or ``"studentized mean
            difference"`` (unitless, like a t statistic).
        edges: ``len(counts) + 1`` increasing bin edges; bin ``i`` holds the values in
            ``[edges[i], edges[i + 1])``, the last bin includes its right edge.
        counts: values per bin; their sum is the number binned.
        observed: the statistic of the data itself, in the same units as ``edges``.
        n_resamples: resamples (or sign patterns) the values come from. Values that are
            not finite (a bootstrap-t resample with no spread gives ``+-inf``) are left
            out, so ``sum(counts)`` may be smaller.
        exact: the values enumerate every sign pattern (a randomization test with at
            most 16 queries) instead of sampling them.
    """

    kind: HistogramKind
    statistic: str
    edges: tuple[float, ...]
    counts: tuple[int, ...]
    observed: float
    n_resamples: int
    exact: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``distribution`` of ``evalkit compare --json``)."""
        return {"kind": self.kind, "statistic": self.statistic, "edges": list(self.edges),
                "counts": list(self.counts), "observed": self.observed,
                "n_resamples": self.n_resamples, "exact": self.exact}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Histogram:
        """The inverse of :meth:`to_dict`.

        Raises:
            KeyError, TypeError, ValueError: a missing or malformed field.
        """
        kind = str(data["kind"])
        if kind not in ("null", "bootstrap"):
            raise ValueError(f"unknown distribution kind {kind!r}")
        edges = tuple(float(x) for x in data["edges"])
        counts = tuple(int(x) for x in data["counts"])
        if len(edges) != len(counts) + 1:
            raise ValueError(f"{len(counts)} counts need {len(counts) + 1} edges, "
                             f"got {len(edges)}")
        return cls(kind=kind,  # type: ignore[arg-type]
                   statistic=str(data["statistic"]), edges=edges, counts=counts,
                   observed=float(data["observed"]), n_resamples=int(data["n_resamples"]),
                   exact=bool(data.get("exact", False)))

    def scaled(self, factor: float) -> Histogram:
        """The histogram of the statistic multiplied by ``factor`` (a power of two, so
        exactly): edges and observed value of a mean difference, in the metric's units;
        a studentized statistic has no units and is returned as it is."""
        if factor == 1.0 or self.statistic != "mean difference":
            return self
        return replace(self, edges=tuple(e * factor for e in self.edges),
                       observed=self.observed * factor)


def histogram(
    values: NDArray[np.float64],
    *,
    kind: HistogramKind,
    statistic: str,
    observed: float,
    exact: bool = False,
    bins: int = MAX_BINS,
) -> Histogram | None:
    """Bin ``values`` into ``bins`` equal-width bins spanning their finite range.

    When every finite value is the same, there is one bin ``[v - 0.5, v + 0.5]`` scaled
    to the value (so a plot still has a width). Returns None when no value is finite.

    Raises:
        ValueError: ``bins`` outside 1..:data:`MAX_BINS`.
    """
    if isinstance(bins, bool) or not isinstance(bins, int) or not 1 <= bins <= MAX_BINS:
        raise ValueError(f"bins must be an integer from 1 to {MAX_BINS}, got {bins!r}")
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return None
    lo, hi = float(finite.min()), float(finite.max())
    if lo == hi:
        half = 0.5 * max(abs(lo), 1e-12)
        edges_l: tuple[float, ...] = (lo - half, hi + half)
        counts_l: tuple[int, ...] = (int(finite.size),)
    else:
        counts, edges = np.histogram(finite, bins=bins, range=(lo, hi))
        edges_l = tuple(float(e) for e in edges)
        counts_l = tuple(int(c) for c in counts)
    return Histogram(kind=kind, statistic=statistic, edges=edges_l, counts=counts_l,
                     observed=float(observed), n_resamples=int(values.size), exact=exact)


def distribution(
    method: str, j: int, n: int, mean: float, t_obs: float,
    flips: NDArray[np.float64] | None, dev: NDArray[np.float64] | None,
    tstar: NDArray[np.float64] | None, exact: bool, bins: int,
) -> Histogram | None:
    """Column ``j``'s statistic as the test resampled it, binned: the sign-flip null of
    the mean difference (randomization, and randomization+bootstrap-t, whose first test
    it is), the bootstrap means (bootstrap), the studentized bootstrap statistics
    (bootstrap-t); None for the t-test."""
    if method in ("randomization", "randomization+bootstrap-t") and flips is not None:
        return histogram(flips[:, j] / n, kind="null", statistic="mean difference",
                         observed=mean, exact=exact, bins=bins)
    if method == "bootstrap" and dev is not None:
        return histogram(mean + dev[:, j], kind="bootstrap", statistic="mean difference",
                         observed=mean, bins=bins)
    if method == "bootstrap-t" and tstar is not None:
        return histogram(tstar[:, j], kind="bootstrap",
                         statistic="studentized mean difference", observed=t_obs, bins=bins)
    return None


__all__ = ["MAX_BINS", "Histogram", "distribution", "histogram"]
