"""Effect sizes of per-query differences, reported beside every p-value."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.methods import sample_skewness
from evalkit.stats.numeric import pow2_above
from evalkit.stats.results import EffectSizes

#: Below this many differences the sample skewness is flagged as unreliable
#: (its standard error under normality is about sqrt(6/n), 0.45 at n = 30).
SKEW_MIN_N = 30


def effect_sizes(d: NDArray[np.float64]) -> EffectSizes:
    """Mean difference, Cohen's d_z, wins/ties/losses and skewness of ``d``.

    Args:
        d: per-query differences ``a - b``, shape ``(n,)``, n >= 1, snapped
            (:func:`evalkit.stats.pairing.snap_differences`): a tie is a difference of
            exactly 0, one within rounding of 0 at its query's magnitude.

    Returns:
        :class:`EffectSizes`; never NaN (see its attribute notes for the zero-variance
        conventions). Skewness is the adjusted Fisher-Pearson G1 (Joanes and Gill, "Comparing
        measures of sample skewness and kurtosis", The Statistician 47, 1998).

    Raises:
        ValueError: ``d`` is empty.
    """
    n = int(d.shape[0])
    if n == 0:
        raise ValueError("no differences")
    raw = d
    # on d / 2**k (exact) so that squares neither overflow nor vanish; scaled back below
    scale = pow2_above(float(np.max(np.abs(d))))
    d = d / scale
    mean = math.fsum(d.tolist()) / n
    constant = bool(np.all(d == d[0]))
    if constant:
        mean = float(d[0])
    e = d - mean
    sd = 0.0 if constant or n < 2 else math.sqrt(math.fsum((e * e).tolist()) / (n - 1))
    if sd > 0:
        standardized = mean / sd
    elif mean == 0:
        standardized = 0.0
    else:
        standardized = math.copysign(math.inf, mean)
    wins = int(np.count_nonzero(raw > 0))
    losses = int(np.count_nonzero(raw < 0))
    ties = n - wins - losses
    skew = sample_skewness(d) if sd > 0 else 0.0
    warning = None
    if n < SKEW_MIN_N:
        warning = (
            f"skewness from {n} differences is unreliable (standard error about "
            f"{math.sqrt(6 / max(n, 1)):.2f}); use at least {SKEW_MIN_N}"
        )
    return EffectSizes(
        mean_diff=mean * scale,
        sd_diff=sd * scale,
        standardized=standardized,
        wins=wins,
        ties=ties,
        losses=losses,
        skewness=skew,
        skewness_warning=warning,
    )
