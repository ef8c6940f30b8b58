"""Ties (exact zero differences) in the sign-flip test and the bootstrap-t beside it.

A zero has no sign, so the sign-flip test's null distribution of the sum is that of the
non-zero differences alone; :func:`nonzero_studentized` runs the bootstrap-t of
:data:`evalkit.stats.methods.BOTH` on them too (docs/statistics.md, "Ties").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from evalkit.stats._kernels import Backend, bootstrap_sums
from evalkit.stats.intervals import studentized_stats
from evalkit.stats.moments import column_moments

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class NonZeroT:
    """The bootstrap-t over each column's non-zero differences, what
    :data:`evalkit.stats.methods.BOTH` runs beside the sign-flip test
    (:func:`nonzero_studentized`).

    Per column (shape ``(m,)``): ``t_obs`` the observed t of the ``k`` non-zero values,
    ``means`` and ``se`` their mean and standard error, ``share`` ``k / n`` (the mean of
    all ``n`` differences is ``share * means``); ``tstar`` ``(B, m)`` the studentized
    statistics of their bootstrap resamples (each drawn among the ``k`` non-zero values
    only). A column with no non-zero value (constant 0) gets 0 throughout; one with a
    single non-zero value ``t_obs = +-inf`` and ``tstar`` 0 (no spread to studentize by:
    the bootstrap-t's p is then its floor and the sign-flip test's p decides).
    """

    t_obs: FloatArray
    means: FloatArray
    se: FloatArray
    share: FloatArray
    tstar: FloatArray


def nonzero_studentized(D: FloatArray, *, n_resamples: int, seed: int, backend: Backend
                        ) -> NonZeroT:
    """The equal-tailed bootstrap-t of each column of ``D`` (``(n, m)``) over its non-zero
    values only: the second test of :data:`evalkit.stats.methods.BOTH`, conditioned on
    the ties as its sign-flip test is (a zero has no sign, so the sign-flip distribution
    of the sum is that of the ``k`` non-zero values alone).

    Under H0 the mean of all ``n`` differences is 0 exactly when the mean of the ``k``
    non-zero ones is, so the test studentizes the non-zero mean (standard error with
    divisor ``k - 1``) and resamples the ``k`` non-zero values among themselves
    (:func:`evalkit.stats._kernels.bootstrap_sums` on them, the same seed): given which
    cases tied, the answer is the bootstrap-t of the non-zero values alone, as if the
    ties had been dropped. Columns with the same zeros share their resamples (columns
    without a zero: the bootstrap of all ``n`` values). Source of the bootstrap-t:
    Efron and Tibshirani (1993), ch. 12; the conditioning on ties is the sign-flip
    test's (Fisher 1935; Pratt, JASA 54, 1959, on zeros in signed tests).
    """
    n, m = D.shape
    B = n_resamples
    t_obs, means, se = np.zeros(m), np.zeros(m), np.zeros(m)
    share = np.zeros(m)
    tstar = np.zeros((B, m))
    live = D != 0.0
    groups: dict[bytes, list[int]] = {}
    for j in range(m):
        groups.setdefault(np.packbits(live[:, j]).tobytes(), []).append(j)
    for cols in groups.values():
        rows = live[:, cols[0]]
        k = int(np.count_nonzero(rows))
        if k == 0:
            continue
        sub = D[rows][:, cols] if k < n else D[:, cols]
        mo = column_moments(np.ascontiguousarray(sub))
        t_obs[cols], means[cols], se[cols] = mo.t_obs, mo.means, mo.se
        share[cols] = k / n
        if k < 2:  # one value has no spread: t = +-inf, t* = 0, the sign-flip p stands
            continue
        sums, sq = bootstrap_sums(mo.centred, B, seed, want_squares=True, backend=backend)
        assert sq is not None
        dev = np.divide(sums, k, out=sums)
        for c, j in enumerate(cols):
            tstar[:, j] = studentized_stats(dev[:, c], sq[:, c], k, float(mo.var[c]),
                                            float(mo.btols[c]))
    return NonZeroT(t_obs, means, se, share, tstar)
