"""Each column's mean, spread and observed t: what every paired test of
:mod:`evalkit.stats.engine` reads first (:func:`column_moments`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.bootstrap import tie_tolerance
from evalkit.stats.intervals import safe_ratio

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Moments:
    """Each column's mean, spread and observed t, shape ``(m,)`` each.

    ``centred`` (``(n, m)``) is ``D - mean`` with exact zeros in constant columns;
    ``tols`` the tie tolerances of :func:`evalkit.stats.bootstrap.tie_tolerance` of the
    sign-flip means, ``btols`` those of the bootstrap means (terms drawn with
    replacement from ``centred``).
    """

    n: int
    constant: NDArray[np.bool_]
    means: FloatArray
    centred: FloatArray
    var: FloatArray
    se: FloatArray
    t_obs: FloatArray
    tols: FloatArray
    btols: FloatArray


def fsum_cols(x: FloatArray) -> FloatArray:
    """The exact sum (``math.fsum``) of each column of ``x`` (``(n, m)`` -> ``(m,)``)."""
    return np.array([math.fsum(x[:, j].tolist()) for j in range(x.shape[1])])


def column_moments(D: FloatArray) -> Moments:
    """Means (exact sums), variances (``n - 1`` divisor), standard errors and observed
    t statistics of the columns of ``D`` (``(n, m)``); constant columns get variance 0."""
    n, m = D.shape
    constant = np.all(D[0:1, :] == D, axis=0)
    means = np.where(constant, D[0, :], fsum_cols(D) / n)
    centred = np.where(constant[None, :], 0.0, D - means[None, :])
    sq = fsum_cols(centred * centred)
    var = sq / (n - 1) if n > 1 else np.zeros(m)
    var = np.where(constant, 0.0, var)
    se = np.sqrt(var / n)
    t_obs = safe_ratio(means, se, 0.0)
    tols = np.array([tie_tolerance(D[:, j]) for j in range(m)])
    btols = np.array([tie_tolerance(centred[:, j], resampled=True) for j in range(m)])
    return Moments(n, constant, means, centred, var, se, t_obs, tols, btols)
