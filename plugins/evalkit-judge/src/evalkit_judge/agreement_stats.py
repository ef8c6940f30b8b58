"""Agreement between a judge and human labels: kappa, alpha, rho, bias, confusion.

Pure functions over paired values (the judge's grade and the human label of one case):

* :func:`cohen_kappa` — Cohen's kappa, unweighted (Cohen 1960) or with linear or
  quadratic disagreement weights (Cohen 1968, "Weighted kappa", Psychological Bulletin
  70). ``kappa = 1 - sum(w * O) / sum(w * E)`` with ``O`` the observed confusion counts,
  ``E`` the counts expected from the margins (``row total * column total / n``) and
  ``w[i, j]`` = ``i != j`` (unweighted), ``|i - j|`` (linear) or ``(i - j)^2``
  (quadratic), where ``i`` and ``j`` are positions in the sorted list of the values
  either rater used — scikit-learn's ``cohen_kappa_score`` to the letter.
* :func:`krippendorff_alpha` — Krippendorff's alpha for ``m`` coders with missing values
  (Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011):
  ``alpha = 1 - (n - 1) * sum_ck o_ck d_ck / sum_ck n_c n_k d_ck`` over the coincidence
  matrix ``o_ck = sum_u (pairs c-k in unit u) / (m_u - 1)`` of the units with two values
  or more, ``n_c`` its margins and ``n`` their total; the squared difference ``d_ck`` is
  nominal ``c != k``, ordinal ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2``, interval
  ``(c - k)^2`` or ratio ``((c - k) / (c + k))^2``.
* :func:`spearman_rho` — Spearman's rank correlation (average ranks for ties): Pearson's
  correlation of the ranks.
* :func:`mean_bias` — the mean of judge minus human with its Student t interval.
* :func:`confusion_matrix` — counts of (judge value, human value) pairs.
* :func:`agreement_table` — all of them for one metric (an :class:`AgreementTable`).

Values equal up to floating-point rounding are one value in every statistic here: all
the values compared (both raters', every coder's) are first snapped together by
:func:`evalkit.stats.pairing.snap_values`, the rule the paired tests apply to
differences, so a judge's mean over three epochs of 0.1 (``0.10000000000000002``) is the
same category as the human label 0.1. Values apart by more than rounding are unchanged,
so the statistics equal scikit-learn's and the ``krippendorff`` package's on them.

May import: nothing of evalkit but :mod:`evalkit.stats` (numpy and scipy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from evalkit.stats.pairing import snap_values

KappaWeights = Literal["none", "linear", "quadratic"]
AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]
KAPPA_WEIGHTS: tuple[KappaWeights, ...] = ("none", "linear", "quadratic")
ALPHA_LEVELS: tuple[AlphaLevel, ...] = ("nominal", "ordinal", "interval", "ratio")

FloatArray = npt.NDArray[np.float64]


class AgreementError(ValueError):
    """Agreement that cannot be computed (too few pairs, a wrong length, no variation)."""


#: The largest magnitude of a value these statistics compute with: squared differences
#: and their sums stay finite in float64 (a label of 1e300 is refused, not overflowed).
MAX_MAGNITUDE = 1e150


def _refuse_huge(values: FloatArray) -> None:
    """Raise :class:`AgreementError` for a value over :data:`MAX_MAGNITUDE` (NaN, the
    missing value of a reliability table, is let through)."""
    finite = values[np.isfinite(values)]
    if finite.size and float(np.abs(finite).max()) > MAX_MAGNITUDE:
        worst = float(finite[np.argmax(np.abs(finite))])
        raise AgreementError(f"a value of {worst:g} is too large to compute agreement with "
                             f"(at most {MAX_MAGNITUDE:g} in magnitude); labels are grades "
                             "on the judge's scale")


def _pairs(judge: Sequence[float], human: Sequence[float]) -> tuple[FloatArray, FloatArray]:
    a = np.asarray(judge, dtype=np.float64)
    b = np.asarray(human, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise AgreementError(
            f"judge and human values must be two sequences of one length, got {a.shape} "
            f"and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise AgreementError("judge and human values must be finite numbers")
    if a.size == 0:
        raise AgreementError("no labelled cases: agreement needs at least one pair")
    _refuse_huge(np.concatenate([a, b]))
    both = snap_values(np.concatenate([a, b]))  # equal up to rounding: one category
    return both[:a.size], both[a.size:]


def confusion_matrix(
    judge: Sequence[float], human: Sequence[float]
) -> tuple[list[float], list[list[int]]]:
    """``(values, counts)``: the sorted values either side used, and ``counts[i][j]``,
    the number of cases the judge gave ``values[i]`` and the human ``values[j]``.

    Raises:
        AgreementError: lengths differ, a value is not finite, or there is no pair.
    """
    a, b = _pairs(judge, human)
    values = np.unique(np.concatenate([a, b]))
    ia = np.searchsorted(values, a)
    ib = np.searchsorted(values, b)
    counts = np.zeros((values.size, values.size), dtype=np.int64)
    np.add.at(counts, (ia, ib), 1)
    return [float(v) for v in values], counts.tolist()


def cohen_kappa(
    judge: Sequence[float], human: Sequence[float], weights: KappaWeights = "none"
) -> float:
    """Cohen's kappa between two raters (formula and weights: module docstring).

    Returns:
        kappa in ``[-1, 1]``; NaN when the expected disagreement is 0 (both raters used
        one and the same value throughout), as scikit-learn returns.

    Raises:
        AgreementError: lengths differ, a value is not finite, there is no pair, or
            ``weights`` is not one of :data:`KAPPA_WEIGHTS`.
    """
    if weights not in KAPPA_WEIGHTS:
        raise AgreementError(f"weights must be one of {KAPPA_WEIGHTS}, got {weights!r}")
    _, counts = confusion_matrix(judge, human)
    o = np.asarray(counts, dtype=np.float64)
    k = o.shape[0]
    expected = np.outer(o.sum(axis=1), o.sum(axis=0)) / o.sum()
    idx = np.arange(k, dtype=np.float64)
    diff = idx[:, None] - idx[None, :]
    if weights == "none":
        w = (diff != 0).astype(np.float64)
    elif weights == "linear":
        w = np.abs(diff)
    else:
        w = diff ** 2
    denominator = float((w * expected).sum())
    if denominator == 0.0:
        return math.nan
    return 1.0 - float((w * o).sum()) / denominator


def _coincidences(
    data: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """``(values, o)``: the sorted pairable values and the coincidence matrix."""
    m_u = np.sum(~np.isnan(data), axis=0)
    units = data[:, m_u >= 2]
    m_u = m_u[m_u >= 2]
    finite = units[~np.isnan(units)]
    values = np.unique(finite)
    o = np.zeros((values.size, values.size), dtype=np.float64)
    for j in range(units.shape[1]):
        col = units[:, j]
        idx = np.searchsorted(values, col[~np.isnan(col)])
        counts = np.bincount(idx, minlength=values.size).astype(np.float64)
        pairs = np.outer(counts, counts) - np.diag(counts)  # ordered pairs, not self
        o += pairs / (m_u[j] - 1)
    return values, o


def _delta(values: FloatArray, n_c: FloatArray, level: AlphaLevel) -> FloatArray:
    c = values[:, None]
    k = values[None, :]
    if level == "nominal":
        return np.asarray(c != k, dtype=np.float64)
    if level == "interval":
        return np.asarray((c - k) ** 2, dtype=np.float64)
    if level == "ratio":
        total = c + k
        with np.errstate(invalid="ignore", divide="ignore"):
            d = ((c - k) / total) ** 2
        return np.asarray(np.where(total == 0, 0.0, d), dtype=np.float64)
    cum = np.cumsum(n_c)
    # sum_{g=c..k} n_g - (n_c + n_k) / 2, for c <= k (symmetric)
    lo = np.minimum.outer(np.arange(values.size), np.arange(values.size))
    hi = np.maximum.outer(np.arange(values.size), np.arange(values.size))
    between = cum[hi] - cum[lo] + n_c[lo]
    return np.asarray((between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2,
                      dtype=np.float64)


def _table(reliability_data: Any) -> FloatArray:
    if isinstance(reliability_data, np.ndarray):
        return np.asarray(reliability_data, dtype=np.float64)
    return np.array([[math.nan if v is None else float(v) for v in row]
                     for row in reliability_data], dtype=np.float64)


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[float | None]] | npt.ArrayLike,
    level: AlphaLevel = "interval",
) -> float:
    """Krippendorff's alpha of ``m`` coders (rows) over units (columns).

    Args:
        reliability_data: an ``m x N`` table; a missing value is ``None`` or NaN. Units
            with fewer than two values are not pairable and are left out.
        level: ``"nominal"``, ``"ordinal"``, ``"interval"`` or ``"ratio"`` (the
            difference functions of the module docstring).

    Returns:
        alpha (1 is perfect agreement, 0 what chance gives); NaN when every pairable
        value is the same (no expected disagreement).

    Raises:
        AgreementError: not a 2-D table, an unknown level, or fewer than two pairable
            values.
    """
    if level not in ALPHA_LEVELS:
        raise AgreementError(f"level must be one of {ALPHA_LEVELS}, got {level!r}")
    data = _table(reliability_data)
    if data.ndim != 2:
        raise AgreementError("reliability data must be a table: one row per coder")
    if np.isinf(data).any():
        raise AgreementError("reliability data must be finite numbers or missing")
    _refuse_huge(data)
    present = ~np.isnan(data)
    if present.any():  # equal up to rounding: one category (module docstring)
        data = data.copy()
        data[present] = snap_values(data[present])
    values, o = _coincidences(data)
    n_c = o.sum(axis=1)
    n = float(n_c.sum())
    if n < 2:
        raise AgreementError("Krippendorff's alpha needs a unit with two values or more")
    delta = _delta(values, n_c, level)
    expected = float((np.outer(n_c, n_c) * delta).sum())
    if expected == 0.0:
        return math.nan
    return 1.0 - (n - 1.0) * float((o * delta).sum()) / expected


def _ranks(x: FloatArray) -> FloatArray:
    from scipy.stats import rankdata

    return np.asarray(rankdata(x), dtype=np.float64)


def spearman_rho(judge: Sequence[float], human: Sequence[float]) -> float:
    """Spearman's rho: Pearson's correlation of the average ranks (Spearman 1904).

    Returns:
        rho in ``[-1, 1]``; NaN when either side is constant or there are fewer than two
        pairs.

    Raises:
        AgreementError: lengths differ, a value is not finite, or there is no pair.
    """
    a, b = _pairs(judge, human)
    if a.size < 2:
        return math.nan
    ra, rb = _ranks(a), _ranks(b)
    ra -= ra.mean()
    rb -= rb.mean()
    den = math.sqrt(float((ra * ra).sum()) * float((rb * rb).sum()))
    return math.nan if den == 0.0 else float((ra * rb).sum()) / den


@dataclass(frozen=True)
class Bias:
    """The mean of judge minus human with its two-sided Student t interval.

    Attributes:
        mean: mean of ``judge - human`` (in the metric's unit).
        ci_low, ci_high: ``mean -+ t_{1-alpha/2, n-1} * sd / sqrt(n)`` (``sd`` with
            ``n - 1``); NaN with fewer than two pairs, ``mean`` when ``sd`` is 0.
        confidence: ``1 - alpha``.
    """

    mean: float
    ci_low: float
    ci_high: float
    confidence: float


def mean_bias(judge: Sequence[float], human: Sequence[float], alpha: float = 0.05) -> Bias:
    """Mean judge minus human with its t interval (Student 1908; see :class:`Bias`).

    Raises:
        AgreementError: lengths differ, a value is not finite, or there is no pair.
    """
    from scipy.special import stdtrit

    a, b = _pairs(judge, human)
    d = a - b
    mean = float(d.mean())
    if d.size < 2:
        return Bias(mean, math.nan, math.nan, 1 - alpha)
    se = float(d.std(ddof=1)) / math.sqrt(d.size)
    half = float(stdtrit(d.size - 1, 1 - alpha / 2)) * se
    return Bias(mean, mean - half, mean + half, 1 - alpha)


@dataclass(frozen=True)
class AgreementTable:
    """Agreement between a judge and human labels on one metric.

    Attributes:
        metric: the metric's name.
        n: the number of labelled cases that have a judge value (the pairs).
        kappa: Cohen's kappa by weighting, ``{"none", "linear", "quadratic": value}``.
        alpha: Krippendorff's alpha by level, ``{"nominal", "ordinal", "interval": value}``
            (two coders: judge and human).
        spearman: Spearman's rho.
        bias: mean judge minus human with its t interval.
        values, confusion: :func:`confusion_matrix` (rows judge, columns human).
    """

    metric: str
    n: int
    kappa: dict[str, float]
    alpha: dict[str, float]
    spearman: float
    bias: Bias
    values: list[float] = field(default_factory=list)
    confusion: list[list[int]] = field(default_factory=list)
    #: cautions on reading the statistics (:func:`rank_weight_note`)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN as ``None``)."""

        def num(x: float) -> float | None:
            return None if math.isnan(x) else x

        return {
            "metric": self.metric, "n": self.n,
            "cohen_kappa": {k: num(v) for k, v in self.kappa.items()},
            "krippendorff_alpha": {k: num(v) for k, v in self.alpha.items()},
            "spearman_rho": num(self.spearman),
            "bias": {"mean": num(self.bias.mean), "ci_low": num(self.bias.ci_low),
                     "ci_high": num(self.bias.ci_high), "confidence": self.bias.confidence},
            "confusion": {"values": self.values, "counts": self.confusion},
            "notes": list(self.notes),
        }


def rank_weight_note(values: Sequence[float]) -> str | None:
    """A caution when the categories ``values`` (sorted, distinct) are not equally spaced.

    Linear and quadratic kappa weigh a disagreement by how many categories apart the two
    values are (their ranks in ``values``, as scikit-learn's ``cohen_kappa_score`` does),
    not by how far apart they are: with the categories 3, 4, 4.333, 4.667, 5 (a judge's
    mean over three samples) 4 against 4.333 weighs as much as 3 against 4. Krippendorff's
    interval alpha weighs by the values' distance. ``None`` when the gaps are equal up to
    rounding (1e-9 of the range), or there are fewer than three categories.
    """
    if len(values) < 3:
        return None
    gaps = np.diff(np.asarray(values, dtype=np.float64))
    if float(gaps.max() - gaps.min()) <= 1e-9 * float(values[-1] - values[0]):
        return None
    shown = ", ".join(f"{v:g}" for v in values[:8]) + (", ..." if len(values) > 8 else "")
    return (f"the categories ({shown}) are not equally spaced: linear and quadratic kappa "
            "weigh a disagreement by how many categories apart the values are, as "
            "scikit-learn does; the interval alpha weighs it by their distance")


def agreement_table(
    metric: str, judge: Sequence[float], human: Sequence[float], alpha: float = 0.05
) -> AgreementTable:
    """Every agreement statistic of this module for one metric's pairs.

    Raises:
        AgreementError: lengths differ, a value is not finite, or there is no pair.
    """
    a, b = _pairs(judge, human)
    values, counts = confusion_matrix(a.tolist(), b.tolist())
    data = np.vstack([a, b])
    return AgreementTable(
        metric=metric, n=int(a.size),
        kappa={w: cohen_kappa(a.tolist(), b.tolist(), w) for w in KAPPA_WEIGHTS},
        alpha={lvl: krippendorff_alpha(data, lvl) if a.size >= 1 else math.nan
               for lvl in ("nominal", "ordinal", "interval")},
        spearman=spearman_rho(a.tolist(), b.tolist()),
        bias=mean_bias(a.tolist(), b.tolist(), alpha),
        values=values, confusion=counts,
        notes=[note for note in (rank_weight_note(values),) if note is not None],
    )


__all__ = [
    "ALPHA_LEVELS",
    "KAPPA_WEIGHTS",
    "AgreementError",
    "AgreementTable",
    "Bias",
    "agreement_table",
    "cohen_kappa",
    "confusion_matrix",
    "krippendorff_alpha",
    "mean_bias",
    "rank_weight_note",
    "spearman_rho",
]
