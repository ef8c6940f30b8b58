"""Prediction-powered intervals for the mean of a judge-graded metric (PPI++).

A judge grades every case; humans label a random subset. Prediction-powered inference
(Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, "Prediction-powered inference", Science
382, 2023) estimates the *human* mean from both, with an interval that stays valid
however biased the judge is. PPI++ (Angelopoulos, Duchi & Zrnic, "PPI++: Efficient
Prediction-Powered Inference", 2024, arXiv:2311.01453) weights the judge by a tuning
parameter ``lambda`` so that the interval is never (asymptotically) wider than the one
from the human labels alone.

With ``Y`` the ``n`` human labels, ``f`` the judge's grades on those cases and ``f~`` the
judge's grades on the ``N`` other (unlabelled) cases:

* the estimate is ``theta = lambda * mean(f~) + mean(Y - lambda * f)``;
* its standard error is ``sqrt(var0(lambda * f~) / N + var0(Y - lambda * f) / n)``
  (``var0``: the variance with divisor ``n``, as ``numpy.std`` by default) and the
  interval ``theta -+ z_{1-alpha/2} * se`` (normal quantile);
* the power-tuned ``lambda`` (PPI++ Example 6.1 / eq. for the mean, in the form that
  ppi_py 0.2's ``_calc_lam_glm`` computes) is
  ``lambda = cov_n(Y, f) / ((1 + n / N) * var_{n+N}(f, f~))``, where ``cov_n`` divides by
  ``n`` and ``var_{n+N}`` is the sample variance (divisor ``n + N - 1``) of all the
  judge's grades, labelled and unlabelled together, clipped to ``[0, 1]``.
  ``lambda = 1`` is classic PPI; ``lambda = 0`` is the human labels alone.

The paired difference of two systems graded by one judge on the same cases, with one
shared labelled subset, is the PPI mean of the per-case differences ``Y_a - Y_b`` with
predictions ``f_a - f_b`` (:func:`ppi_paired_difference`).

:func:`labels_needed` plans how many human labels a target interval width needs, given a
pilot (the analogue of :func:`evalkit.stats.plan_from_pilot`).

**Pass/fail labels.** When every human label is 0 or 1 and every judge grade lies in
[0, 1] (or ``binary=True``), the normal interval above fails at small label counts: with
no fail among the labels, ``cov_n(Y, f) = 0``, so ``lambda = 0`` and the labels' variance
is 0, and the interval has width 0 (a 95% interval covered 63% of the time with 20 labels
and P(fail) = 0.05). The interval (not the estimate) is then computed with pseudo-labels
added to the labelled part, each graded by the judge's mean on the labelled cases (so they
add label variance and no judge-label covariance), with weights:

* a mean of 0/1 labels: ``z^2/2`` pseudo-labels of 0 and ``z^2/2`` of 1 (Agresti & Coull,
  "Approximate is better than 'exact' for interval estimation of binomial proportions",
  The American Statistician 52, 1998), ``z = z_{1-alpha/2}``;
* a difference of 0/1 labels (values -1, 0, 1): half a pseudo-case in each cell of the
  paired 2 x 2 table, i.e. 1/2 of +1, 1/2 of -1 and 1 of 0 (Agresti & Min, "Simple
  improved confidence intervals for comparing matched proportions", Statistics in
  Medicine 24, 2005).

With ``W`` the pseudo-labels' total weight, ``rbar`` and ``var_w`` the weighted mean and
variance (divisor ``n + W``) of the rectifier ``Y - lambda * f`` over the labelled and
pseudo cases, the interval is ``c -+ z * sqrt(var0(lambda * f~) / N + var_w / (n + W))``
with centre ``c = lambda * mean(f~) + rbar``, clipped to the labels' range ([0, 1], or
[-1, 1] for a difference); ``lambda`` is tuned on the real labels as above. With
``lambda = 0`` this is exactly the Agresti-Coull interval of the labels. Other labels
whose rectifier does not vary (every label equal, with ``lambda = 0``) have no variance to
estimate: :class:`DegenerateLabelsError` refuses them instead of a zero-width interval.

May import: nothing of evalkit (numpy and scipy).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


class PPIError(ValueError):
    """Inputs a prediction-powered interval cannot be computed from."""


class DegenerateLabelsError(PPIError):
    """Labels that are not pass/fail and whose rectifier ``Y - lambda * f`` does not vary
    (every label equal, or every labelled difference equal): the interval's variance
    cannot be estimated from them, and a zero-width interval would claim certainty."""


#: Below this many human labels the normal interval is far too narrow: its variances
#: divide by ``n`` and its quantile is the normal one, so with the judge unused (lambda
#: 0) and normal labels a 95% interval covers 90% of the time at 10 labels, 85% at 5, 75%
#: at 3 and 60% at 2 (``P(|T_{n-1}| <= 1.96 sqrt((n - 1) / n))``). For pass/fail labels
#: the same bound applies to the events: the rarer of pass and fail among the labels (a
#: mean), or the labelled cases where the two systems' labels differ (a difference).
MIN_LABELS = 10

#: :attr:`PPIResult.adjustment` of a mean of pass/fail labels.
AGRESTI_COULL = "agresti-coull"
#: :attr:`PPIResult.adjustment` of a difference of pass/fail labels.
AGRESTI_MIN = "agresti-min"


def adjustment_text(adjustment: str | None) -> str:
    """How a report names an adjusted interval: ``", Agresti-Coull-adjusted for pass/fail
    labels"`` (or ``Agresti-Min``), or ``""`` when not adjusted."""
    if adjustment is None:
        return ""
    name = "Agresti-Min" if adjustment == AGRESTI_MIN else "Agresti-Coull"
    return f", {name}-adjusted for pass/fail labels"


def few_labels_note(n_labels: int, confidence: float = 0.95, events: int | None = None,
                    adjustment: str | None = None) -> str | None:
    """Why an interval on ``n_labels`` human labels is not to be trusted, or None from
    :data:`MIN_LABELS` labels on and, for pass/fail labels (``events`` given: the rarer
    of pass and fail among them, or the labelled cases where two systems' labels differ),
    from :data:`MIN_LABELS` events on."""
    pct = round(confidence * 100)
    if n_labels < MIN_LABELS:
        return (f"only {n_labels} human labels: the PPI++ interval is a large-sample "
                f"(normal) interval, far narrower than its {pct:d}% claims with "
                f"fewer than {MIN_LABELS} labels (and its p-value far too small); label more "
                "cases")
    if events is None or events >= MIN_LABELS:
        return None
    if adjustment == AGRESTI_MIN:
        what = (f"only {events} of the {n_labels} labelled cases have the two systems' "
                "pass/fail labels differing")
    else:
        what = (f"only {events} of the {n_labels} pass/fail human labels are the rarer "
                "outcome")
    return (f"{what}: with fewer than {MIN_LABELS} such cases the PPI++ interval (adjusted "
            f"for pass/fail labels) is approximate, not exactly {pct:d}%; label more cases")


@dataclass(frozen=True)
class PPIResult:
    """A prediction-powered estimate of a human mean.

    Attributes:
        estimate: the PPI++ point estimate of the human mean (metric units).
        ci_low, ci_high: the two-sided normal interval (module docstring).
        se: its standard error.
        lam: the ``lambda`` used (power-tuned and clipped to [0, 1] unless given).
        n_labels: ``n``, the human labels it rests on.
        n_unlabelled: ``N``, the judge-only cases.
        confidence: ``1 - alpha``.
        judge_mean: the judge's mean over all ``n + N`` cases (for comparison).
        labels_mean: the mean of the ``n`` human labels.
        adjustment: how the interval of pass/fail labels was adjusted
            (:data:`AGRESTI_COULL`, :data:`AGRESTI_MIN`; module docstring), or None.
        events: for pass/fail labels, the rarer of pass and fail among the labels (a
            mean) or the labelled cases whose two labels differ (a difference); else None.
        center: the interval's centre before clipping (``estimate`` unless adjusted); the
            p-value tests against it.
    """

    estimate: float
    ci_low: float
    ci_high: float
    se: float
    lam: float
    n_labels: int
    n_unlabelled: int
    confidence: float
    judge_mean: float
    labels_mean: float
    adjustment: str | None = None
    events: int | None = None
    center: float | None = None

    @property
    def width(self) -> float:
        """``ci_high - ci_low``."""
        return self.ci_high - self.ci_low

    @property
    def note(self) -> str | None:
        """Why the interval is not to be trusted (:func:`few_labels_note`: fewer than
        :data:`MIN_LABELS` labels, or pass/fail labels with fewer than :data:`MIN_LABELS`
        events), or None."""
        return few_labels_note(self.n_labels, self.confidence, self.events, self.adjustment)

    def p_value(self, null: float = 0.0) -> float:
        """The two-sided normal p-value of ``estimate = null``:
        ``2 * Phi(-|estimate - null| / se)``, the interval's own test: with the
        ``lambda`` the estimate used (power-tuned and clipped to [0, 1]). ppi_py's
        ``ppi_mean_pval`` is the same test with ``lambda`` tuned but not clipped, so the
        two agree when the tuned ``lambda`` lies in (0, 1), and ``ppi_mean_pval(...,
        lam=result.lam)`` is this p always; ``0`` or ``1`` when ``se`` is 0. An adjusted
        interval (pass/fail labels) tests against its own centre :attr:`center`, so the
        p is below ``alpha`` exactly when the interval excludes ``null``."""
        from scipy.special import ndtr

        gap = abs((self.estimate if self.center is None else self.center) - null)
        if self.se == 0.0:
            return 1.0 if gap == 0.0 else 0.0
        return float(2.0 * ndtr(-gap / self.se))

    def to_dict(self) -> dict[str, float | int | str]:
        """A JSON-ready dict, naming the interval (``"interval": "ppi++"``); an adjusted
        interval adds ``adjustment``, ``events`` and ``center``."""
        extra: dict[str, float | int | str] = {}
        if self.adjustment is not None:
            extra = {"adjustment": self.adjustment, "events": int(self.events or 0),
                     "center": float(self.estimate if self.center is None
                                     else self.center)}
        return extra | {
            "interval": "ppi++", "estimate": self.estimate, "ci_low": self.ci_low,
            "ci_high": self.ci_high, "se": self.se, "lambda": self.lam,
            "n_labels": self.n_labels, "n_unlabelled": self.n_unlabelled,
            "confidence": self.confidence, "judge_mean": self.judge_mean,
            "labels_mean": self.labels_mean,
        }


def _vector(x: Sequence[float] | FloatArray, what: str) -> FloatArray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise PPIError(f"{what} must be a flat sequence of numbers")
    if not np.isfinite(a).all():
        raise PPIError(f"{what} must be finite numbers")
    return a


def _checked(
    labels: Sequence[float] | FloatArray,
    judge_labelled: Sequence[float] | FloatArray,
    judge_unlabelled: Sequence[float] | FloatArray,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    y = _vector(labels, "human labels")
    f = _vector(judge_labelled, "judge grades of the labelled cases")
    u = _vector(judge_unlabelled, "judge grades of the unlabelled cases")
    if y.shape != f.shape:
        raise PPIError(f"{y.size} human labels but {f.size} judge grades of the labelled "
                       "cases; give one grade per label")
    if y.size < 2:
        raise PPIError(f"a prediction-powered interval needs at least 2 human labels, got "
                       f"{y.size}")
    if u.size < 1:
        raise PPIError("a prediction-powered interval needs unlabelled cases graded by the "
                       "judge; with every case labelled, use the labels' own interval")
    return y, f, u


def power_tuning_lambda(
    labels: Sequence[float] | FloatArray,
    judge_labelled: Sequence[float] | FloatArray,
    judge_unlabelled: Sequence[float] | FloatArray,
) -> float:
    """PPI++'s power-tuned ``lambda`` for a mean, clipped to ``[0, 1]`` (module
    docstring): ``cov_n(Y, f) / ((1 + n/N) * var_{n+N}(f))``; 0 when the judge's grades do
    not vary.

    Raises:
        PPIError: lengths differ, fewer than 2 labels, no unlabelled case, a value not
            finite.
    """
    y, f, u = _checked(labels, judge_labelled, judge_unlabelled)
    n, big_n = y.size, u.size
    cov = float(((y - y.mean()) * (f - f.mean())).sum()) / n
    var = float(np.var(np.concatenate([f, u]), ddof=1))
    if var == 0.0:
        return 0.0
    return float(min(1.0, max(0.0, cov / ((1.0 + n / big_n) * var))))


def _is_pass_fail(labels: FloatArray, *grades: FloatArray) -> bool:
    """Every label 0 or 1 and every judge grade in [0, 1]."""
    return bool(np.isin(labels, (0.0, 1.0)).all()) and all(
        bool(((g >= 0.0) & (g <= 1.0)).all()) for g in grades)


def _check_alpha_lam(alpha: float, lam: float | None) -> None:
    if not 0.0 < alpha < 1.0:
        raise PPIError(f"alpha must lie in (0, 1), got {alpha!r}")
    if lam is not None and (isinstance(lam, bool) or not isinstance(lam, numbers.Real)
                            or not math.isfinite(lam)):
        raise PPIError(f"lam must be a finite number (1: classic PPI, 0: labels only) or "
                       f"None (tuned), got {lam!r}")


def _interval(y: FloatArray, f: FloatArray, u: FloatArray, alpha: float, lam: float | None,
              adjustment: str | None, events: int | None, what: str) -> PPIResult:
    """The PPI++ result of checked inputs (module docstring); ``adjustment``: the
    pseudo-labels of pass/fail labels, or None (the plain PPI++ interval, refused when
    the rectifier does not vary)."""
    from scipy.special import ndtri

    if lam is None:
        lam = power_tuning_lambda(y, f, u)
    n, big_n = y.size, u.size
    z = float(ndtri(1 - alpha / 2))
    rect = y - lam * f
    estimate = float(lam * u.mean() + rect.mean())
    judged = float(lam * lam * np.var(u)) / big_n
    if adjustment is None:
        scale = float(np.abs(rect).max())
        if float(np.ptp(rect)) <= 1e-12 * scale:
            same = (f"the {n} {what} are all {float(y[0]):g}" if float(np.ptp(y)) == 0.0
                    else f"the {n} {what} minus lambda ({lam:g}) times the judge's grades "
                    f"are all {float(rect[0]):g}")
            raise DegenerateLabelsError(
                f"{same}: the PPI++ interval's variance cannot be estimated from them (it "
                "would have width 0, a false certainty); label more cases, until the labels "
                "vary")
        se = math.sqrt(judged + float(np.var(rect)) / n)
        center, low, high = estimate, estimate - z * se, estimate + z * se
    else:
        pseudo: tuple[tuple[float, float], ...]  # (pseudo-label, weight)
        if adjustment == AGRESTI_COULL:
            pseudo, bounds = ((0.0, z * z / 2), (1.0, z * z / 2)), (0.0, 1.0)
        else:
            pseudo, bounds = ((1.0, 0.5), (-1.0, 0.5), (0.0, 1.0)), (-1.0, 1.0)
        values = np.array([v for v, _ in pseudo]) - lam * float(f.mean())
        weights = np.array([w for _, w in pseudo])
        total = n + float(weights.sum())
        rbar = (float(rect.sum()) + float((weights * values).sum())) / total
        var_w = (float(((rect - rbar) ** 2).sum())
                 + float((weights * (values - rbar) ** 2).sum())) / total
        se = math.sqrt(judged + var_w / total)
        center = float(lam * u.mean() + rbar)
        low, high = max(bounds[0], center - z * se), min(bounds[1], center + z * se)
    return PPIResult(
        estimate=estimate, ci_low=low, ci_high=high, se=se,
        lam=float(lam), n_labels=n, n_unlabelled=big_n, confidence=1 - alpha,
        judge_mean=float(np.concatenate([f, u]).mean()), labels_mean=float(y.mean()),
        adjustment=adjustment, events=events,
        center=None if adjustment is None else center,
    )


def ppi_mean(
    labels: Sequence[float] | FloatArray,
    judge_labelled: Sequence[float] | FloatArray,
    judge_unlabelled: Sequence[float] | FloatArray,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
    binary: bool | None = None,
) -> PPIResult:
    """The PPI++ estimate and interval of the human mean (module docstring).

    Args:
        labels: the human labels ``Y`` (length ``n``).
        judge_labelled: the judge's grades ``f`` of the same cases, in the same order.
        judge_unlabelled: the judge's grades of the ``N`` cases without a label.
        alpha: 1 - confidence of the two-sided interval.
        lam: a fixed ``lambda`` (1: classic PPI, 0: labels only); ``None`` tunes it.
        binary: whether the labels are pass/fail (0/1), whose interval is the
            Agresti-Coull-adjusted one (module docstring); ``None``: when every label is
            0 or 1 and every judge grade lies in [0, 1].

    Raises:
        PPIError: lengths differ, fewer than 2 labels, no unlabelled case, a value not
            finite, ``alpha`` outside (0, 1), ``lam`` not a finite number, or
            ``binary=True`` with a label other than 0 and 1.
        DegenerateLabelsError: labels not pass/fail whose rectifier does not vary (every
            label equal): no interval can be estimated.
    """
    _check_alpha_lam(alpha, lam)
    y, f, u = _checked(labels, judge_labelled, judge_unlabelled)
    if binary is None:
        binary = _is_pass_fail(y, f, u)
    elif binary and not bool(np.isin(y, (0.0, 1.0)).all()):
        raise PPIError("binary=True but a human label is neither 0 nor 1")
    if not binary:
        return _interval(y, f, u, alpha, lam, None, None, "human labels")
    passes = int(y.sum())
    return _interval(y, f, u, alpha, lam, AGRESTI_COULL, min(passes, y.size - passes),
                     "human labels")


def ppi_paired_difference(
    labels_a: Sequence[float] | FloatArray,
    labels_b: Sequence[float] | FloatArray,
    judge_labelled_a: Sequence[float] | FloatArray,
    judge_labelled_b: Sequence[float] | FloatArray,
    judge_unlabelled_a: Sequence[float] | FloatArray,
    judge_unlabelled_b: Sequence[float] | FloatArray,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
    binary: bool | None = None,
) -> PPIResult:
    """The PPI++ interval of the mean human difference ``a - b`` between two systems
    graded by one judge on the same cases, with the labelled subset shared: the PPI
    mean of ``Y_a - Y_b`` with predictions ``f_a - f_b`` (each argument in one case
    order). Pass/fail labels (``binary``; ``None``: both systems' labels 0 or 1 and every
    judge grade in [0, 1]) get the Agresti-Min-adjusted interval (module docstring).

    Raises:
        PPIError: as :func:`ppi_mean`, or the two systems' sequences differ in length.
        DegenerateLabelsError: labels not pass/fail whose labelled differences minus
            ``lambda`` times the judge's all agree (every labelled difference equal).
    """
    _check_alpha_lam(alpha, lam)
    pairs = ((labels_a, labels_b, "human labels"),
             (judge_labelled_a, judge_labelled_b, "judge grades of the labelled cases"),
             (judge_unlabelled_a, judge_unlabelled_b, "judge grades of the unlabelled cases"))
    sides: list[tuple[FloatArray, FloatArray]] = []
    for a, b, what in pairs:
        va, vb = _vector(a, what), _vector(b, what)
        if va.shape != vb.shape:
            raise PPIError(f"{what}: {va.size} for system a but {vb.size} for system b; the "
                           "difference pairs the same cases")
        sides.append((va, vb))
    y, f, u = _checked(*(va - vb for va, vb in sides))
    if binary is None:
        binary = all(_is_pass_fail(sides[0][i], sides[1][i], sides[2][i]) for i in (0, 1))
    elif binary and not all(bool(np.isin(x, (0.0, 1.0)).all()) for x in sides[0]):
        raise PPIError("binary=True but a human label is neither 0 nor 1")
    what = "labelled differences a - b"
    if not binary:
        return _interval(y, f, u, alpha, lam, None, None, what)
    return _interval(y, f, u, alpha, lam, AGRESTI_MIN, int(np.count_nonzero(y)), what)


def labels_only_interval(
    labels: Sequence[float] | FloatArray, alpha: float = 0.05
) -> tuple[float, float, float]:
    """``(mean, low, high)``: the normal interval of the human labels alone,
    ``mean -+ z * sd0 / sqrt(n)`` (``sd0`` with divisor ``n``; PPI++ with ``lambda = 0``,
    as ppi_py's ``classical`` baseline uses).

    Raises:
        PPIError: fewer than 2 labels or a value not finite.
    """
    from scipy.special import ndtri

    y = _vector(labels, "human labels")
    if y.size < 2:
        raise PPIError(f"an interval needs at least 2 labels, got {y.size}")
    mean = float(y.mean())
    half = float(ndtri(1 - alpha / 2)) * float(y.std()) / math.sqrt(y.size)
    return mean, mean - half, mean + half


@dataclass(frozen=True)
class LabelPlan:
    """How many human labels a target PPI++ interval width needs.

    Attributes:
        n_labels: the smallest ``n`` whose planned width is at most the target, or
            ``None`` when even labelling every case does not reach it.
        width: the planned width at ``n_labels`` (at the largest ``n`` when ``None``).
        labels_only_n: the labels a labels-only interval would need for the same width.
        target_width, n_cases, confidence: as asked.
    """

    n_labels: int | None
    width: float
    labels_only_n: int
    target_width: float
    n_cases: int
    confidence: float


def planned_width(var_y: float, var_f: float, cov: float, n: int, n_unlabelled: int,
                  alpha: float = 0.05) -> float:
    """The PPI++ interval width with ``n`` labels and ``N`` unlabelled cases, for
    population variances ``var_y`` (labels), ``var_f`` (judge) and covariance ``cov``:
    ``2 z sqrt(lambda^2 var_f / N + (var_y - 2 lambda cov + lambda^2 var_f) / n)`` with
    ``lambda = cov / ((1 + n/N) var_f)`` clipped to [0, 1] (module docstring)."""
    from scipy.special import ndtri

    lam = 0.0 if var_f <= 0 else min(1.0, max(0.0, cov / ((1 + n / n_unlabelled) * var_f)))
    var = lam * lam * var_f / n_unlabelled + \
        max(0.0, var_y - 2 * lam * cov + lam * lam * var_f) / n
    return 2.0 * float(ndtri(1 - alpha / 2)) * math.sqrt(var)


def labels_needed(
    pilot_labels: Sequence[float] | FloatArray,
    pilot_judge: Sequence[float] | FloatArray,
    judge_all: Sequence[float] | FloatArray,
    target_width: float,
    *,
    alpha: float = 0.05,
) -> LabelPlan:
    """How many of the ``len(judge_all)`` cases humans must label for a PPI++ interval
    no wider than ``target_width``, from a pilot of labelled cases.

    The pilot gives ``var(Y)``, ``cov(Y, f)`` (divisor ``n``) and ``judge_all`` gives
    ``var(f)``; each ``n`` from 2 up is tried with ``N = len(judge_all) - n`` unlabelled
    cases and the width of :func:`planned_width` (normal approximation, the variances
    taken as known).

    Raises:
        PPIError: fewer than 2 pilot pairs, lengths differ, fewer than 3 cases, a value
            not finite, or a target width that is not positive.
    """
    from scipy.special import ndtri

    y = _vector(pilot_labels, "pilot labels")
    f = _vector(pilot_judge, "pilot judge grades")
    every = _vector(judge_all, "judge grades of every case")
    if y.shape != f.shape or y.size < 2:
        raise PPIError("the pilot needs at least 2 cases with both a label and a judge grade")
    if every.size < 3:
        raise PPIError("planning needs the judge's grades of at least 3 cases")
    if not target_width > 0:
        raise PPIError(f"the target width must be positive, got {target_width!r}")
    var_y = float(y.var())
    cov = float(((y - y.mean()) * (f - f.mean())).mean())
    var_f = float(every.var(ddof=1))
    total = every.size
    z = float(ndtri(1 - alpha / 2))
    labels_only_n = max(2, math.ceil((2 * z) ** 2 * var_y / target_width ** 2))
    width = math.inf
    for n in range(2, total):
        width = planned_width(var_y, var_f, cov, n, total - n, alpha)
        if width <= target_width:
            return LabelPlan(n, width, labels_only_n, target_width, total, 1 - alpha)
    return LabelPlan(None, width, labels_only_n, target_width, total, 1 - alpha)


__all__ = [
    "AGRESTI_COULL",
    "AGRESTI_MIN",
    "MIN_LABELS",
    "DegenerateLabelsError",
    "LabelPlan",
    "PPIError",
    "PPIResult",
    "adjustment_text",
    "few_labels_note",
    "labels_needed",
    "labels_only_interval",
    "planned_width",
    "power_tuning_lambda",
    "ppi_mean",
    "ppi_paired_difference",
]
