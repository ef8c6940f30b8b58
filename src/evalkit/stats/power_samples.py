"""Planning n cases x K samples per case, from a pilot with K >= 2 in both runs.

With K samples per case reduced by the mean, one per-case difference has variance
``Var_K = between + (w_A + w_B) / K`` (:mod:`evalkit.stats.spread`: between-case variance
and the mean within-case variances of one sample of each system, both estimated from
the pilot). The paired t-test's minimum detectable effect at n cases is then
:func:`evalkit.stats.power.minimum_detectable_effect` with ``sd = sqrt(Var_K)`` (the
noncentral t; Cohen 1988, ch. 2), so n and K trade off through ``Var_K / n``: doubling
K shrinks only the within part, doubling n shrinks both.

**Enough samples.** The MDE at fixed n is proportional to ``sqrt(Var_K)``, and never
falls below its value with unlimited samples, ``sqrt(between)``. :func:`enough_samples`
is the smallest K whose MDE is within ``tolerance`` (default 5%) of that floor:
``K* = ceil((w_A + w_B) / (between * ((1 + tolerance)^2 - 1)))``; it is the same at
every n. Beyond K*, more cases help and more samples barely do. With no between-case
variance (``between = 0``) there is no such K: more samples always help.

Miller (2024, the section on power analysis) makes the same trade-off with normal (z)
intervals; the t-based MDE here matches the default gate and compare tests better at
small n.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evalkit.stats.power import check_n, minimum_detectable_effect
from evalkit.stats.spread import WithinCaseSpread

__all__ = ["DEFAULT_PLAN_SAMPLES", "ENOUGH_TOLERANCE", "SamplesDetectable",
           "enough_samples", "samples_mde", "samples_table"]

#: The Ks planned for when none are named (the pilot's K is added).
DEFAULT_PLAN_SAMPLES = (1, 2, 5, 10, 20)
#: How close to the unlimited-samples MDE counts as "more samples stop helping".
ENOUGH_TOLERANCE = 0.05


@dataclass(frozen=True)
class SamplesDetectable:
    """The minimum detectable effect at ``n`` cases and ``k`` samples per case in both
    runs; ``sd_diff`` is the projected sd of one per-case difference."""

    n: int
    k: int
    sd_diff: float
    mde: float


def samples_mde(spread: WithinCaseSpread, n: int, k: int, alpha: float = 0.05,
                power: float = 0.8, alternative: str = "two-sided") -> float:
    """The paired t-test's minimum detectable effect at ``n`` cases x ``k`` samples.

    Raises:
        ValueError: ``k`` not an integer >= 1, ``n`` not an integer >= 2, a projected sd
            of 0 (the pilot's differences have no spread), or bad
            ``alpha``/``power``/``alternative``.
    """
    sd = math.sqrt(spread.var_at(check_n(k, "k", least=1)))
    if sd <= 0:
        raise ValueError("the pilot's per-case differences have no spread; nothing to plan")
    return minimum_detectable_effect(n, sd, alpha, power, alternative)


def enough_samples(spread: WithinCaseSpread, tolerance: float = ENOUGH_TOLERANCE
                   ) -> int | None:
    """The smallest K whose MDE is within ``tolerance`` of the MDE with unlimited samples
    (module docstring); None when the pilot shows no between-case variance.

    Raises:
        ValueError: ``tolerance`` not positive.
    """
    if not tolerance > 0:
        raise ValueError(f"tolerance must be positive, got {tolerance!r}")
    within = spread.within_baseline + spread.within_candidate
    if within <= 0:
        return 1
    if spread.between_var <= 0:
        return None
    bound = within / (spread.between_var * ((1.0 + tolerance) ** 2 - 1.0))
    k = max(1, math.ceil(bound - 1e-9))
    while k > 1 and math.sqrt(spread.var_at(k - 1) / spread.between_var) <= 1 + tolerance:
        k -= 1  # rounding of the bound
    return k


def samples_table(spread: WithinCaseSpread, ns: Sequence[int], ks: Sequence[int],
                  alpha: float = 0.05, power: float = 0.8,
                  alternative: str = "two-sided") -> list[SamplesDetectable]:
    """:class:`SamplesDetectable` for every (n, k), n-major, in the order given."""
    return [SamplesDetectable(n, k, math.sqrt(spread.var_at(k)),
                              samples_mde(spread, n, k, alpha, power, alternative))
            for n in ns for k in ks]
