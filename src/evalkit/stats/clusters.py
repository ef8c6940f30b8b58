"""Clustered cases: tests whose unit of independence is the cluster, not the case.

Several questions about one passage, the turns of one conversation, the queries of one
sub-collection are not independent draws; tests that treat them as independent give
intervals that are too narrow and reject too often (Miller, "Adding Error Bars to Evals:
A Statistical Approach to Language Model Evaluations", arXiv:2411.00640, 2024, section
2.2; Cameron and Miller, "A Practitioner's Guide to Cluster-Robust Inference", Journal
of Human Resources 50(2), 2015). With ``clusters`` every paired test of this package
takes the cluster as its unit:

- the sign-flip randomization test flips the sign of each cluster's **sum** of
  differences as a whole (``2**G`` patterns, enumerated when ``G <= 16``);
- the t-test uses the cluster-robust CR1 standard error of the mean difference with
  ``G - 1`` degrees of freedom;
- the bootstrap (percentile, BCa, bootstrap-t) resamples whole clusters.

Each is the package's ordinary test run on ``G`` cluster-level values, one per cluster
(:func:`cluster_columns`), so every interval, p-value rule, degenerate-input rule and
family correction carries over with ``n`` read as ``G``. With ``N`` cases in ``G``
clusters, cluster ``g`` holding ``n_g`` cases whose differences sum to ``S_g``, and
``mean = sum S_g / N``:

- the values the sign-flip test flips are ``f_g = (G / N) S_g``: their mean is ``mean``
  and flipping them flips the clusters' sums, ``sum e_g f_g / G = sum e_g S_g / N``;
- the values the t-test, the bootstrap and the reported standard error use are
  ``r_g = (G / N) (S_g - n_g mean) + mean``, the clusters' residual totals: their mean
  is ``mean`` and ``var(r) / G`` (``G - 1`` divisor) is the CR1 variance
  ``G / (G - 1) * sum_g (S_g - n_g mean)**2 / N**2`` (Cameron and Miller 2015,
  section II.C, with one regressor, a constant; statsmodels' ``OLS(d, 1).fit(cov_type="cluster")``
  multiplies by ``(N - 1) / (N - K)``, which is 1 here since ``K = 1``). Resampling
  ``r_g`` resamples whole clusters' contributions to the mean: for clusters of equal
  size it is exactly the cluster bootstrap of the mean; for unequal sizes it is the
  bootstrap of its linearisation (the mean as a ratio of two sums, to first order).

With equal cluster sizes ``f_g = r_g = mean of cluster g``. With one case per cluster
both are the differences themselves and every test is the independent one.

When cluster sizes are unequal the mean is carried by the large clusters, and the CR1
t-test on ``G - 1`` degrees of freedom (and the cluster bootstrap) reject far more often
than alpha, even with 30 clusters; the cluster sign-flip test holds (docs/statistics.md,
Clustered cases). :func:`effective_clusters` gives the effective number of clusters
``G*`` of Carter, Schnepel and Steigerwald, which reads the sizes, and
:func:`few_clusters_note` warns when ``G`` or ``G*`` is below :data:`FEW_CLUSTERS`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

#: Fewer clusters than this add a warning: cluster-robust standard errors are biased
#: down and their t reference too liberal with few clusters (Cameron and Miller 2015,
#: section VI, who discuss "few" as below 20 to 50).
FEW_CLUSTERS = 20

#: The within-cluster correlation :func:`effective_clusters` assumes by default: 1, the
#: cautious end of the range Carter, Schnepel and Steigerwald (2017) consider when the
#: correlation is unknown (the R package effClust defaults to 0.999). For given sizes it
#: gives a smaller ``G*`` than ``rho = 0`` (``(sum n**2)**2 / sum n**4 <= N**2 / sum
#: n**2``, by the log-convexity of moments), so the warning errs toward firing.
EFFECTIVE_RHO = 1.0


@dataclass(frozen=True)
class ClusterIndex:
    """Which cluster each paired case belongs to.

    Attributes:
        labels: the cluster names, sorted, shape ``(G,)``.
        codes: for each case, in the order of the paired ids, the position of its
            cluster in ``labels``, shape ``(N,)``.
        sizes: cases per cluster, shape ``(G,)``.
    """

    labels: tuple[str, ...]
    codes: NDArray[np.intp]
    sizes: FloatArray

    @property
    def n_clusters(self) -> int:
        """``G``, the number of clusters the inference rests on."""
        return len(self.labels)

    @property
    def effective(self) -> float:
        """``G*``, the effective number of clusters of these sizes
        (:func:`effective_clusters` with the default ``rho``)."""
        return effective_clusters(self.sizes)


def effective_clusters(sizes: Sequence[float] | FloatArray, rho: float = EFFECTIVE_RHO
                       ) -> float:
    """The effective number of clusters ``G*`` of the mean of cases in clusters of
    ``sizes``, each case weighted equally.

    Carter, Schnepel and Steigerwald, "Asymptotic Behavior of a t-Test Robust to Cluster
    Heterogeneity", Review of Economics and Statistics 99(4), 2017, define
    ``G* = G / (1 + Gamma)`` with ``Gamma = (1/G) sum_g (gamma_g - gamma_bar)**2 /
    gamma_bar**2`` (the squared coefficient of variation, divisor ``G``, of the
    ``gamma_g``) and ``gamma_g = e' (X'X)^-1 X_g' Omega_g X_g (X'X)^-1 e``, where
    ``Omega_g`` is cluster ``g``'s error correlation, taken as equicorrelated with
    ``rho``. For the mean (``X`` a column of ones, ``X'X = N``) ``X_g' Omega_g X_g =
    n_g + rho n_g (n_g - 1)``, so ``gamma_g`` is proportional to
    ``w_g = n_g (1 + rho (n_g - 1))`` and, as ``1 + Gamma = mean(w**2) / mean(w)**2``,

        ``G* = (sum_g w_g)**2 / sum_g w_g**2``:

    with ``rho = 1`` (the default) ``(sum n_g**2)**2 / sum n_g**4``; with ``rho = 0``
    ``N**2 / sum n_g**2``. Equal sizes give ``G* = G`` whatever ``rho``; otherwise
    ``G* < G``. Sizes 1, 2, 3 give 2.0 (``rho = 1``) and 36/14 = 2.571 (``rho = 0``).

    Args:
        sizes: cases per cluster, shape ``(G,)``, each positive.
        rho: the within-cluster correlation assumed, in ``[0, 1]``.

    Returns:
        ``G*``, in ``[1, G]``.

    Raises:
        ValueError: no sizes, a size that is not positive and finite, or ``rho``
            outside ``[0, 1]``.
    """
    n = np.asarray(sizes, dtype=np.float64)
    if n.ndim != 1 or n.size == 0 or not bool(np.all(np.isfinite(n) & (n > 0))):
        raise ValueError(f"effective_clusters: sizes must be one or more positive "
                         f"numbers, got {sizes!r}")
    if not (isinstance(rho, float | int) and 0.0 <= float(rho) <= 1.0):
        raise ValueError(f"effective_clusters: rho must be in [0, 1], got {rho!r}")
    w = n * (1.0 + float(rho) * (n - 1.0))
    w = w / float(w.max())  # scale-free; keeps n**4 of big clusters far from overflow
    return float(math.fsum(w.tolist()) ** 2 / math.fsum((w * w).tolist()))


def _shown(items: Sequence[str], limit: int = 10) -> str:
    head = ", ".join(repr(x) for x in items[:limit])
    return head + (f" and {len(items) - limit} more" if len(items) > limit else "")


def cluster_index(ids: Sequence[str], clusters: Mapping[str, Hashable], *,
                  unpaired_ok: Sequence[str] = ()) -> ClusterIndex:
    """The clusters of the paired cases ``ids``.

    Args:
        ids: the paired case ids, in the order of the differences.
        clusters: ``{case id: cluster}``; a cluster is any text or number (taken as its
            text, so ``1`` and ``"1"`` are one cluster).
        unpaired_ok: case ids that may appear in ``clusters`` without being paired (the
            cases ``allow_incomplete`` left out); any other id of ``clusters`` that is not
            among ``ids`` is refused.

    Returns:
        :class:`ClusterIndex`.

    Raises:
        ValueError: a paired case without a cluster, an id of ``clusters`` that no run
            has, a cluster that is None, a bool or empty, or fewer than two clusters (one
            cluster leaves no variation between clusters to estimate from). Each message
            names up to ten of the ids and says what to fix.
    """
    missing = [i for i in ids if i not in clusters]
    if missing:
        raise ValueError(
            f"clusters: {len(missing)} compared case(s) have no cluster ({_shown(missing)}); "
            "give every compared case a cluster (a case alone in its cluster is its own "
            "cluster: name it after the case)")
    known = set(ids) | set(unpaired_ok)
    extra = sorted(str(k) for k in clusters if k not in known)
    if extra:
        raise ValueError(
            f"clusters: {len(extra)} id(s) are not cases of the compared runs "
            f"({_shown(extra)}); check that the clusters belong to these runs, or remove "
            "those ids")
    names: list[str] = []
    for i in ids:
        c = clusters[i]
        if c is None or isinstance(c, bool) or str(c).strip() == "":
            raise ValueError(f"clusters: case {i!r} has cluster {c!r}; a cluster is a "
                             "non-empty text or a number")
        names.append(str(c))
    labels = tuple(sorted(set(names)))
    if len(labels) < 2:
        raise ValueError(
            f"clusters: all {len(ids)} compared cases are in one cluster ({labels[0]!r}); "
            "cluster-robust inference needs at least two clusters (20 or more to be "
            "trusted)")
    pos = {c: k for k, c in enumerate(labels)}
    codes = np.fromiter((pos[c] for c in names), dtype=np.intp, count=len(names))
    sizes = np.bincount(codes, minlength=len(labels)).astype(np.float64)
    return ClusterIndex(labels, codes, sizes)


def cluster_sums(D: FloatArray, index: ClusterIndex) -> FloatArray:
    """Each cluster's sum of each column of ``D`` (``(N, m)`` -> ``(G, m)``), summed
    exactly (``math.fsum``) so no cancellation inside a cluster decides a result."""
    G, m = index.n_clusters, D.shape[1]
    order = np.argsort(index.codes, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(index.sizes.astype(np.intp))))
    out = np.empty((G, m))
    for j in range(m):
        col = D[order, j]
        for g in range(G):
            out[g, j] = math.fsum(col[bounds[g]:bounds[g + 1]].tolist())
    return out


def cluster_columns(D: FloatArray, index: ClusterIndex) -> tuple[FloatArray, FloatArray]:
    """The cluster-level values the tests run on, ``(robust, flip)``, each ``(G, m)``.

    Args:
        D: per-case differences, ``(N, m)``, rows in the order of ``index.codes``.
        index: the cases' clusters (:func:`cluster_index`).

    Returns:
        ``robust``, ``r_g = (G / N) (S_g - n_g mean) + mean``: the t-test (CR1), the
        bootstrap and the standard error read these; ``flip``, ``f_g = (G / N) S_g``:
        the sign-flip test flips these (module docstring). Both have column means equal
        to the per-case means.
    """
    return columns_from_sums(cluster_sums(D, index), index.sizes[:, None])


def columns_from_sums(S: FloatArray, sizes: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``(robust, flip)`` of :func:`cluster_columns` from the clusters' sums.

    Args:
        S: each cluster's sum of differences, ``(G, m)``: column ``j`` is one set of
            ``G`` clusters.
        sizes: the clusters' numbers of cases, ``(G, 1)`` (the same clusters in every
            column) or ``(G, m)`` (each column its own clusters, e.g. clusters drawn
            with replacement); column ``j`` has ``N_j = sum_g sizes[g, j]`` cases.

    Returns:
        ``r_g = (G / N_j) (S_g - n_g mean_j) + mean_j`` and ``f_g = (G / N_j) S_g``, each
        ``(G, m)``, with ``mean_j = sum_g S_g / N_j`` (summed exactly, ``math.fsum``).
    """
    G = S.shape[0]
    N = sizes.sum(axis=0)
    means = np.array([math.fsum(S[:, j].tolist()) for j in range(S.shape[1])]) / N
    resid = S - sizes * means[None, :]
    return resid * (G / N) + means[None, :], S * (G / N)


def cr1_se(d: FloatArray, index: ClusterIndex) -> float:
    """The CR1 cluster-robust standard error of the mean of ``d`` (``(N,)``, metric
    units): ``sqrt(G / (G - 1) * sum_g (S_g - n_g mean)**2) / N`` (Cameron and Miller
    2015, section II.C, and its CR1 factor; with a constant as the one regressor
    the factor ``(N - 1) / (N - K)`` is 1, so this equals statsmodels'
    ``OLS(d, ones).fit(cov_type="cluster", cov_kwds={"groups": g}).bse[0]``)."""
    robust, _ = cluster_columns(np.asarray(d, dtype=np.float64)[:, None], index)
    G = index.n_clusters
    r = robust[:, 0]
    mean = math.fsum(r.tolist()) / G
    return math.sqrt(math.fsum(((r - mean) ** 2).tolist()) / (G - 1) / G)


def count_clusters(names: Iterable[Hashable]) -> tuple[int, float | None]:
    """``(G, G*)`` of cases whose clusters are ``names`` (one per case, compared as text):
    how many clusters and their effective number (:func:`effective_clusters`); ``(0,
    None)`` for no cases."""
    sizes = Counter(str(c) for c in names)
    return len(sizes), (effective_clusters(list(sizes.values())) if sizes else None)


def clusters_phrase(g: int, effective: float | None) -> str:
    """``"30 clusters, effective number G* = 3.1"`` (without ``G*`` when None)."""
    star = "" if effective is None else f", effective number G* = {effective:.1f}"
    return f"{g} clusters{star}"


#: The tests whose error rate the effective number of clusters governs: the CR1 t-test
#: and the cluster bootstraps (not the sign-flip test, which holds on unequal sizes).
SIZE_SENSITIVE: frozenset[str] = frozenset({"t-test", "bootstrap-t", "bootstrap"})


def few_clusters_note(n_clusters: int, effective: float | None = None,
                      method: str | None = None) -> str | None:
    """The warning when the inference rests on fewer than :data:`FEW_CLUSTERS`
    clusters, or on fewer than that effectively (``effective``, ``G*`` of
    :func:`effective_clusters`, below :data:`FEW_CLUSTERS` while ``G`` is not); None
    otherwise. When ``method`` (the test that ran) is one of :data:`SIZE_SENSITIVE`,
    the note recommends the cluster sign-flip test (``method="randomization"``)."""
    small_g = n_clusters < FEW_CLUSTERS
    small_eff = effective is not None and effective < FEW_CLUSTERS
    if not (small_g or small_eff):
        return None
    advice = ("; the cluster sign-flip test (method 'randomization', the default 'auto' "
              "with clusters) holds there" if method in SIZE_SENSITIVE else "")
    if small_g:
        eff = (f", effective number G* = {effective:.1f}" if effective is not None
               and effective < n_clusters - 0.05 else "")
        return (f"the inference rests on {n_clusters} clusters{eff} (fewer than "
                f"{FEW_CLUSTERS}): cluster-robust tests are unreliable with few clusters "
                "(Cameron and Miller 2015); treat p-values and intervals as rough"
                + advice)
    return (f"the inference rests on {n_clusters} clusters of unequal sizes, whose "
            f"effective number G* = {effective:.1f} is below {FEW_CLUSTERS} (Carter, "
            "Schnepel and Steigerwald 2017): the CR1 t-test and the cluster bootstrap "
            "reject true nulls too often when a few large clusters carry the mean"
            + (advice or "; the sign-flip test, which ran here, held its level on such "
               "designs (docs/statistics.md, Clustered cases)"))


__all__ = ["EFFECTIVE_RHO", "FEW_CLUSTERS", "SIZE_SENSITIVE", "ClusterIndex",
           "cluster_columns", "cluster_index", "cluster_sums", "clusters_phrase",
           "columns_from_sums", "count_clusters", "cr1_se", "effective_clusters",
           "few_clusters_note"]
