"""Within-case spread: how much of the variance of the per-case differences comes from
resampling the systems (K answers per case) rather than from the cases.

Model (Miller, "Adding Error Bars to Evals", 2024, on resampling; the law of total
variance). Case ``i`` of system A has K_A sample scores ``a_ik`` with case mean
``alpha_i`` and within-case variance ``sigma2_A,i``; likewise B. The reduced value is the
mean of the samples, and the per-case difference ``d_i = mean_k a_ik - mean_k b_ik`` has

    Var(d) = Var_i(alpha_i - beta_i) + E_i[sigma2_A,i] / K_A + E_i[sigma2_B,i] / K_B

(between cases + within cases). The estimates:

* ``var_diff``: the sample variance of ``d_i`` (n - 1 denominator);
* ``within_var``: ``mean_i(s2_A,i / K_A,i + s2_B,i / K_B,i)``, with ``s2`` the sample
  variance of a case's samples (K - 1 denominator), an unbiased estimate of the within
  term;
* ``within_share = within_var / var_diff``, clipped to [0, 1] (both are estimates: with
  little between-case spread the ratio can exceed 1);
* ``between_var = max(0, var_diff - within_var)``;
* the standard error of the mean difference with K' samples in both runs,
  ``sqrt((between_var + (w_A + w_B) / K') / n)``, ``w = mean_i s2_i`` (Miller's variance
  of a resampled eval); as K' grows it falls to ``sqrt(between_var / n)``, the floor no
  number of samples goes below.

Where this differs from Miller: per-case K (a case with fewer samples weighs its own
within term), the share is clipped, and the verdict never uses these normal-theory
figures: tests and intervals stay the comparison's own, on the reduced values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = ["SE_SAMPLES", "WithinCaseSpread", "within_case_spread"]

#: The samples per case K' at which the standard error is projected.
SE_SAMPLES = (1, 2, 5, 10, 20)


@dataclass(frozen=True)
class WithinCaseSpread:
    """The within-case spread of a comparison with K >= 2 in both runs.

    Attributes:
        k_baseline, k_candidate: samples per case of each run (the most a case has).
        n: cases paired.
        var_diff: variance of the per-case differences (metric units squared).
        within_var: its part from resampling the systems.
        within_share: ``within_var / var_diff`` in [0, 1] (0 when ``var_diff`` is 0).
        between_var: its part from the cases, ``max(0, var_diff - within_var)``.
        within_baseline, within_candidate: mean within-case variance of one sample of
            each run (``w_B``, ``w_A``).
        se: standard error of the mean difference now, ``sqrt(var_diff / n)``.
        se_by_k: ``((K', standard error with K' samples in both runs), ...)``.
        se_limit: the standard error as K' grows without bound.
    """

    k_baseline: int
    k_candidate: int
    n: int
    var_diff: float
    within_var: float
    within_share: float
    between_var: float
    within_baseline: float
    within_candidate: float
    se: float
    se_by_k: tuple[tuple[int, float], ...]
    se_limit: float

    def se_at(self, k: int) -> float:
        """The standard error of the mean difference with ``k`` samples per case in both
        runs (``k`` >= 1)."""
        return math.sqrt(self.var_at(k) / self.n)

    def var_at(self, k: int) -> float:
        """The variance of one per-case difference with ``k`` samples in both runs."""
        if k < 1:
            raise ValueError(f"samples per case must be >= 1, got {k!r}")
        return self.between_var + (self.within_baseline + self.within_candidate) / k

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["se_by_k"] = {str(k): v for k, v in self.se_by_k}
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WithinCaseSpread:
        """The inverse of :meth:`to_dict`. Raises KeyError or ValueError."""
        by_k = d.get("se_by_k") or {}
        return cls(**{k: d[k] for k in (
            "k_baseline", "k_candidate", "n", "var_diff", "within_var", "within_share",
            "between_var", "within_baseline", "within_candidate", "se", "se_limit")},
            se_by_k=tuple((int(k), float(v)) for k, v in by_k.items()))

    def line(self) -> str:
        """One sentence for people."""
        more = ", ".join(f"{self.se_at(k):.4g} at K = {k}" for k in (
            2 * max(self.k_baseline, self.k_candidate),
            4 * max(self.k_baseline, self.k_candidate)))
        return (f"within-case spread (K = {self.k_baseline} baseline, {self.k_candidate} "
                f"candidate samples per case): {100 * self.within_share:.1f}% of the "
                "variance of the per-case differences comes from resampling the systems; "
                f"standard error of the difference {self.se:.4g} now, {more}, "
                f"{self.se_limit:.4g} with unlimited samples")


def _case_vars(samples: Mapping[str, Sequence[float]], ids: Sequence[str]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(means, sample variances (ddof 1; 0 for one sample), counts)`` per case."""
    means = np.empty(len(ids))
    vars_ = np.empty(len(ids))
    counts = np.empty(len(ids))
    for j, q in enumerate(ids):
        x = np.asarray(samples[q], dtype=np.float64)
        means[j] = x.mean()
        vars_[j] = x.var(ddof=1) if x.size > 1 else 0.0
        counts[j] = x.size
    return means, vars_, counts


def within_case_spread(baseline: Mapping[str, Sequence[float]],
                       candidate: Mapping[str, Sequence[float]],
                       ids: Sequence[str] | None = None) -> WithinCaseSpread:
    """The :class:`WithinCaseSpread` of ``candidate - baseline`` (module docstring).

    Args:
        baseline, candidate: ``{case id: [score of each sample]}``.
        ids: the cases to pair (default: those both hold, sorted).

    Raises:
        ValueError: fewer than 2 paired cases, a case with no sample, or a run whose
            cases have fewer than 2 samples each (no within-case variance to estimate).
    """
    ids = sorted(set(baseline) & set(candidate)) if ids is None else list(ids)
    if len(ids) < 2:
        raise ValueError(f"the within-case spread needs at least 2 paired cases, got "
                         f"{len(ids)}")
    if any(not baseline[q] or not candidate[q] for q in ids):
        raise ValueError("a paired case has no sample")
    mb, vb, kb = _case_vars(baseline, ids)
    ma, va, ka = _case_vars(candidate, ids)
    if kb.max() < 2 or ka.max() < 2:
        raise ValueError("the within-case spread needs K >= 2 samples per case in both runs")
    n = len(ids)
    d = ma - mb
    var_diff = float(d.var(ddof=1))
    within = float(np.mean(va / ka + vb / kb))
    share = 0.0 if var_diff <= 0 else min(1.0, max(0.0, within / var_diff))
    between = max(0.0, var_diff - within)
    w_a, w_b = float(va.mean()), float(vb.mean())
    spread = WithinCaseSpread(
        k_baseline=int(kb.max()), k_candidate=int(ka.max()), n=n, var_diff=var_diff,
        within_var=within, within_share=share, between_var=between, within_baseline=w_b,
        within_candidate=w_a, se=math.sqrt(var_diff / n), se_by_k=(),
        se_limit=math.sqrt(between / n))
    return WithinCaseSpread(**{**asdict(spread), "se_by_k": tuple(
        (k, spread.se_at(k)) for k in SE_SAMPLES)})
