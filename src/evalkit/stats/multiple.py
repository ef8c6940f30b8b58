"""Multiplicity adjustments for a family of tests (several metrics and/or systems).

* Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6
  (1979): family-wise error control under any dependence (the default).
* Benjamini and Hochberg, "Controlling the false discovery rate", JRSS B 57 (1995):
  false discovery rate, valid under independence or positive dependence.
* Westfall and Young, *Resampling-Based Multiple Testing* (1993), sec. 2.6, Algorithm
  2.8 in its min-P form: step-down on the distribution of the smallest of the tests'
  p-values over resamples shared by all hypotheses, each p computed from the statistic
  its own test uses. It uses the correlation between metrics/systems, so where tests
  are correlated it rejects more than Holm, while keeping family-wise control.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.numeric import numbers_of

CORRECTIONS: tuple[str, ...] = ("holm", "bh", "westfall-young", "none")


def holm(p: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, same order as ``p``; each in ``[p_i, 1]``.

    Raises:
        ValueError: a p-value is not a number (a string, a bool).
    """
    arr = np.asarray(numbers_of(p, "p-value"), dtype=np.float64)
    m = arr.size
    order = np.argsort(arr, kind="stable")
    adj = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(arr[i])))
        adj[i] = running
    return adj.tolist()


def holm_floor_note(floors_at: Callable[[int], Sequence[float]], alpha: float,
                    n_resamples: int) -> str | None:
    """Why Holm over a family of tests can reject nothing, or None when it can.

    Holm's smallest adjusted p is ``m`` times the smallest raw p, and a resampling test's
    p never goes below its floor (:func:`evalkit.stats.methods.smallest_p`: ``1/(B+1)``,
    ``2/(B+1)`` for the two-sided bootstrap-t): when ``m * min(floor) >= alpha`` (with one
    Monte Carlo floor, ``B + 1 <= m / alpha``), no result can be significant whatever the
    data. The note names the fewest resamples with which one can, or says that no number
    up to :data:`evalkit.stats.bootstrap.MAX_RESAMPLES` can (an exact enumeration's floor,
    ``2/2**n``, does not move with ``B``).

    Args:
        floors_at: ``B -> each test's smallest attainable p with B resamples``, in the
            family's order (non-increasing in ``B``).
        alpha: the significance level.
        n_resamples: the ``B`` the family ran with.
    """
    from evalkit.stats.bootstrap import MAX_RESAMPLES

    def rejects(b: int) -> bool:
        floors = floors_at(b)
        return bool(floors) and min(1.0, len(floors) * min(floors)) < alpha  # Holm's step 1

    if rejects(n_resamples):
        return None
    m = len(floors_at(n_resamples))
    floor = min(floors_at(n_resamples))
    head = (f"no test can be significant after Holm's correction: {m} tests at alpha = "
            f"{alpha:g} need a raw p below {alpha / m:.3g}, and the smallest p these tests "
            f"can give with B = {n_resamples:,} resamples is {floor:.3g}")
    if not rejects(MAX_RESAMPLES):
        return head + ("; more resamples do not change that (an exact enumeration's "
                       "floor): test fewer metrics or pairs, or use correction 'bh'")
    low, high = n_resamples, MAX_RESAMPLES  # rejects(high), not rejects(low)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if rejects(mid) else (mid, high)
    return (head + f"; B = {high:,} is the fewest that can reject (n_resamples={high}; "
            f"--resamples {high} on the command line)")


def benjamini_hochberg(p: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (q-values), same order as ``p``.

    Raises:
        ValueError: a p-value is not a number (a string, a bool).
    """
    arr = np.asarray(numbers_of(p, "p-value"), dtype=np.float64)
    m = arr.size
    order = np.argsort(arr, kind="stable")
    adj = np.empty(m)
    running = 1.0
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, float(arr[i]) * m / (rank + 1))
        adj[i] = min(1.0, running)
    return adj.tolist()


def westfall_young(
    p_obs: NDArray[np.float64],
    p_null: NDArray[np.float64],
    exact: bool = False,
) -> list[float]:
    """Step-down min-P adjusted p-values (Westfall and Young 1993, Algorithm 2.8 with
    p-values in place of the statistics, eq. 2.10).

    With the observed ``p_(1) <= ... <= p_(m)``, ``p_adj(i) = max_{k <= i} c_k / R'``,
    ``c_k`` the rows whose smallest p over the hypotheses ``(k), ..., (m)`` is at most
    ``p_(k)``. Monte Carlo rows (``exact`` false) are joined by the observed data as one
    more row, which always counts: ``c_k = #{...} + 1`` and ``R' = R + 1``.

    Args:
        p_obs: each hypothesis's p of the observed data, shape ``(m,)``.
        p_null: the same p of each resample, shape ``(R, m)``; row ``r`` is one shared
            resample of every hypothesis, column ``j`` computed as ``p_obs[j]`` was.
        exact: the rows enumerate the whole null distribution, the observed data among
            them (no ``+1`` rule).

    Returns:
        Adjusted p-values, same order as ``p_obs``, monotone in the step-down order,
        in ``(0, 1]``.
    """
    obs = np.asarray(p_obs, dtype=np.float64)
    null = np.asarray(p_null, dtype=np.float64)
    m = obs.size
    R = null.shape[0]
    order = np.argsort(obs, kind="stable")  # most significant first
    # successive minima from the least significant hypothesis upwards
    running = np.full(R, np.inf)
    counts = np.empty(m)
    for pos in range(m - 1, -1, -1):
        j = order[pos]
        running = np.minimum(running, null[:, j])
        counts[pos] = np.count_nonzero(running <= obs[j] * (1.0 + 1e-12))
    p_sorted = counts / R if exact else (counts + 1) / (R + 1)
    p_sorted = np.minimum(1.0, np.maximum.accumulate(p_sorted))
    adj = np.empty(m)
    adj[order] = p_sorted
    return adj.tolist()
