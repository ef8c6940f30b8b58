"""Result types of the paired statistics.

:class:`BootstrapResult` is :func:`evalkit.stats.paired_bootstrap`'s result, with the
generator's name and seed as provenance; :class:`PairedTestResult` extends it for every method of
:func:`evalkit.stats.paired_test`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from evalkit.stats.numeric import json_ready, value_text

if TYPE_CHECKING:
    from evalkit.stats.histogram import Histogram


def format_p_value(p: float, n_resamples: int | None = None, digits: int = 4) -> str:
    """Human-readable p-value: ``"p = 0.0123"`` or, at or below the resolution of a
    resampling test, ``"p < 0.001"`` — never ``"p = 0.0000"``.

    Args:
        p: the p-value, in ``(0, 1]``.
        n_resamples: ``B`` of a resampling test (its smallest reportable p is
            ``1 / (B + 1)``), or None.
        digits: decimals shown.

    Raises:
        ValueError: ``p`` is NaN or outside ``[0, 1]`` (no p-value to show).
    """
    if not 0.0 <= p <= 1.0:  # also False for NaN
        raise ValueError(f"p-value must be in [0, 1], got {value_text(p)}")
    floor = 1.0 / (n_resamples + 1) if n_resamples else 0.0
    shown = 10.0**-digits
    if n_resamples and p <= floor * (1 + 1e-9):
        # the smallest power of ten strictly above the floor
        bound = 10.0 ** math.ceil(math.log10(floor))
        if bound <= floor:
            bound *= 10
        return f"p < {bound:g}"
    if p < shown:
        return f"p < {shown:g}"
    return f"p = {p:.{digits}f}"


#: What a p-value is shown as when the test could not find anything at this n
#: (:func:`p_note_for`).
N_TOO_SMALL = "n too small"
#: The fewest paired queries with which the exact two-sided sign-flip test can give
#: p < 0.05: all n differences of one sign give p = 2 / 2**n, 0.03125 at n = 6.
MIN_N_FOR_P05 = 6


def p_note_for(degenerate: str | None, significant: bool, p_value: float, alpha: float,
               n: int | None = None) -> str | None:
    """:data:`N_TOO_SMALL` when fewer than 2 queries are paired (``n``: no paired test is
    possible), or when the degenerate-input rule (docs/statistics.md: every per-query
    difference equal, ``degenerate="constant"``; or, for the bootstrap, too few queries
    for any exact paired test to reject, ``degenerate="small-n"``) made a test "not
    significant" although its p is below ``alpha`` (the paired bootstrap gives
    ``1/(B+1)`` to one query, to five equal differences, and to two positive ones, which
    the sign-flip test cannot find significant); else None.
    Reporters print the note instead of a p that reads as significant."""
    if n is not None and n < 2:
        return N_TOO_SMALL
    if degenerate and not significant and p_value < alpha:
        return N_TOO_SMALL
    return None


@dataclass(frozen=True, kw_only=True)
class BootstrapResult:
    """Outcome of :func:`evalkit.stats.paired_bootstrap`.

    Attributes:
        observed: mean over queries of ``a - b`` (equal to ``mean(a) - mean(b)``), in
            the metric's units.
        ci_low, ci_high: the percentile 95% confidence interval of the mean difference.
        p_value: two-sided p of the centred null, in ``[1/(B+1), 1]``.
        significant: whether the interval excludes 0; for degenerate input (every
            difference equal up to rounding, n = 1 included) the documented rule of
            :mod:`evalkit.stats.degenerate` instead: never for n <= 5 or c = 0, as
            :func:`~evalkit.stats.paired_test` decides from n = 6 on; and never for
            n <= 5 whatever the differences (``degenerate="small-n"``): no exact paired
            test can reject there.
        metric, name_a, name_b: what was compared.
        n_queries: number of paired queries.
        n_resamples: ``B``.
        seed: the generator's seed (the drawn one when None was passed).
        generator: the generator's name (see :mod:`evalkit.stats._rng`).
        degenerate: which degenerate-input rule applied (``"constant"``; ``"small-n"``:
            too few queries for any exact paired test to reject,
            :func:`evalkit.stats.bootstrap.small_n_note`), or None.
        note: why ``significant`` is what it is, for degenerate input; else None.
    """

    observed: float
    ci_low: float
    ci_high: float
    p_value: float
    significant: bool
    metric: str
    name_a: str
    name_b: str
    n_queries: int
    n_resamples: int
    seed: int | None = None
    generator: str | None = None
    degenerate: str | None = None
    note: str | None = None

    def p_display(self) -> str:
        """The p-value as text (see :func:`format_p_value`), or ``"n too small"`` when it
        would read as significant beside a "not significant" verdict, or when fewer than 2
        queries are paired (:func:`p_note_for`), as every report prints it."""
        alpha = float(getattr(self, "alpha", 0.05))
        note = p_note_for(self.degenerate, self.significant, self.p_value, alpha,
                          self.n_queries)
        return note or format_p_value(self.p_value, self.n_resamples or None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: nested values included, tuples as lists, and infinite
        values (unbounded interval ends, d_z of constant differences) as None."""
        return json_ready(asdict(self))  # type: ignore[no-any-return]


@dataclass(frozen=True)
class EffectSizes:
    """Descriptive effect sizes of the per-query differences ``d = a - b``.

    Attributes:
        mean_diff: mean of ``d`` (metric units).
        sd_diff: sample standard deviation of ``d`` (``n - 1`` denominator; 0 for n = 1).
        standardized: ``mean_diff / sd_diff`` (Cohen's d_z); 0 when every difference is
            0, ``+-inf`` when the differences are equal and non-zero.
        wins, ties, losses: queries with ``d > 0``, ``d == 0``, ``d < 0``, on the
            snapped differences (:func:`evalkit.stats.pairing.snap_differences`).
        skewness: adjusted Fisher-Pearson sample skewness G1 of ``d`` (Joanes and Gill,
            1998); 0 when ``sd_diff`` is 0 or n < 3.
        skewness_warning: why the skewness should not be trusted, or None.
    """

    mean_diff: float
    sd_diff: float
    standardized: float
    wins: int
    ties: int
    losses: int
    skewness: float
    skewness_warning: str | None = None


@dataclass(frozen=True, kw_only=True)
class PairedTestResult(BootstrapResult):
    """Outcome of :func:`evalkit.stats.paired_test`: :class:`BootstrapResult`'s fields plus
    the method.

    ``significant`` means ``p_value < alpha``. For one-sided alternatives the interval
    is one-sided (the open end is ``+-inf``). ``p_adjusted`` and ``correction`` are set
    when the result is part of a family (:func:`evalkit.stats.compare_runs`).

    Attributes:
        method: "bootstrap-t", "bootstrap", "randomization" or "t-test".
        ci_method: "bootstrap-t", "percentile", "bca", "inversion" or "t".
        alpha: significance level; the interval has confidence ``1 - alpha``.
        alternative: "two-sided", "greater" (a > b) or "less".
        exact: the p-value comes from complete enumeration (randomization, n <= 16).
        degenerate: which degenerate-input rule applied ("constant", "n=1"; "small-n"
            for the bootstrap on too few queries, as :class:`BootstrapResult`), or None.
        effect: :class:`EffectSizes`.
        warnings: notes for the reader (small n, skewness, degenerate input).
        p_adjusted: multiplicity-adjusted p, or None.
        correction: "holm", "bh", "westfall-young" or None.
        distribution: the binned null or resampling distribution of the test's statistic
            (:class:`evalkit.stats.histogram.Histogram`), when
            :func:`evalkit.stats.compare_runs` was asked for it (``distribution_bins``);
            None otherwise and for the t-test.
        n_clusters: the number of clusters ``G`` the inference rests on when the cases
            were clustered (``paired_test(..., clusters=...)``), else None.
        effective_clusters: their effective number ``G*`` (Carter, Schnepel and
            Steigerwald 2017; :func:`evalkit.stats.clusters.effective_clusters`), ``G``
            for equal sizes and less for unequal ones; None when not clustered.
    """

    method: str
    ci_method: str
    alpha: float = 0.05
    alternative: str = "two-sided"
    exact: bool = False
    effect: EffectSizes | None = None
    warnings: tuple[str, ...] = field(default_factory=tuple)
    p_adjusted: float | None = None
    correction: str | None = None
    distribution: Histogram | None = None
    n_clusters: int | None = None
    effective_clusters: float | None = None

    @property
    def significant_adjusted(self) -> bool:
        """``p_adjusted < alpha`` (falls back to the raw p when not adjusted)."""
        p = self.p_value if self.p_adjusted is None else self.p_adjusted
        return p < self.alpha
