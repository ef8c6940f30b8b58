"""The statistics of pairwise verdicts: per pair of systems, wins, losses, ties, flips, a
win rate with its interval and a paired test over cases, Holm's correction across pairs;
with three or more systems, Bradley-Terry strengths (:mod:`evalkit_judge.bradley_terry`).

One **comparison** is a case, a sample number and a pair of systems (X, Y), judged twice:
X's answer shown first, then Y's. Its score for X (1 a win, 0 a loss, 1/2 a tie) is the
verdict both orders agree on; when the verdict changes with the order (a **flip**, the
judge's position bias) it is resolved by ``flips``:

* ``"tie"`` (default): a flipped comparison is a tie (1/2), the rule of MT-bench's
  pairwise judge (Zheng et al., "Judging LLM-as-a-judge", NeurIPS 2023);
* ``"average"``: the mean of the two orders' scores (a win and a tie give 3/4);
* ``"drop"``: left out.

``ties``: ``"half"`` (default) counts a tie as half a win; ``"drop"`` leaves ties out, so
the win rate is over decisive comparisons only. The **case** is the unit: a case's score
is the mean over its samples' kept comparisons (sample i of X paired with sample i of Y),
the win rate is the mean of the case scores, and the interval and the test are over cases.

* Test: the kernel's paired test (:func:`evalkit.stats.paired_test`, default "auto") of
  X's case scores against Y's (``s`` against ``1 - s``: differences ``d = 2 s - 1``), so
  H0 is a win rate of 1/2; p-values are Holm-adjusted across the pairs
  (:func:`evalkit.stats.holm`).
* Interval: **the same test's own interval**, the one that inverts it
  (``PairedTestResult.ci_low/ci_high`` of the mean of ``d``: the inversion of the
  sign-flip test, the Student t interval, the bootstrap-t...), mapped to the win rate by
  ``w = (1 + d) / 2``; the sign-flip and t tests are invariant to that affine map, so it
  is the set of win rates ``w0`` the test of ``s - w0`` does not reject. It therefore
  excludes 1/2 exactly when ``p < alpha`` (before Holm's correction; the kernel's
  documented exception is ``method="bootstrap"``, the percentile bootstrap, whose
  interval is not its test's inversion). With the t-test it is
  ``scipy.stats.ttest_1samp(s, 0.5).confidence_interval()``; with 0/1 case scores the
  exact sign-flip test's p is the two-sided binomial (sign) test's,
  ``scipy.stats.binomtest(k, n).pvalue`` (tests check both). No interval (NaN) when the
  test is not run (fewer than two cases).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

FLIP_RULES: tuple[str, ...] = ("tie", "average", "drop")
TIE_RULES: tuple[str, ...] = ("half", "drop")

_SCORE_FIRST = {"A": 1.0, "B": 0.0, "tie": 0.5}  # X's score when X is shown first (A)


@dataclass(frozen=True)
class Outcome:
    """One comparison resolved: X's score (``None`` when dropped) and whether it flipped."""

    score: float | None
    flipped: bool


def resolve(first: str, second: str, *, flips: str = "tie", ties: str = "half") -> Outcome:
    """The outcome for X of one comparison.

    Args:
        first: the verdict with X's answer shown first (``"A"`` is X).
        second: the verdict with Y's answer shown first (``"A"`` is Y).
        flips: :data:`FLIP_RULES`; ties: :data:`TIE_RULES` (module docstring).

    Raises:
        ValueError: an unknown verdict or rule.
    """
    check_rules(flips, ties)
    if first not in _SCORE_FIRST or second not in _SCORE_FIRST:
        raise ValueError(f"verdicts must be 'A', 'B' or 'tie', got {first!r}, {second!r}")
    x_first, x_second = _SCORE_FIRST[first], 1.0 - _SCORE_FIRST[second]
    flipped = x_first != x_second
    score: float | None = x_first
    if flipped:
        score = {"tie": 0.5, "average": (x_first + x_second) / 2.0, "drop": None}[flips]
    if score == 0.5 and ties == "drop":
        score = None
    return Outcome(score, flipped)


def check_rules(flips: str, ties: str) -> None:
    """Raises ValueError naming the allowed values of an unknown ``flips`` or ``ties``."""
    if flips not in FLIP_RULES:
        raise ValueError(f"flips must be one of {', '.join(FLIP_RULES)}, got {flips!r}")
    if ties not in TIE_RULES:
        raise ValueError(f"ties must be one of {', '.join(TIE_RULES)}, got {ties!r}")


@dataclass
class PairStats:
    """The statistics of one pair of systems (``a`` against ``b``; "win" is ``a``'s).

    Attributes:
        a, b: the systems' names.
        comparisons: (case, sample) comparisons judged in both orders.
        wins, losses, ties: comparisons whose resolved score for ``a`` is above, below
            or at 1/2 (flipped ones under the ``flips`` rule; dropped ones not counted).
        flipped: comparisons whose verdict changed with the order.
        flip_rate: ``flipped / comparisons`` (position bias; NaN without comparisons).
        n_cases: cases with at least one kept comparison (the unit of interval and test).
        win_rate: mean over those cases of ``a``'s case score (NaN without cases).
        ci_low, ci_high: the paired test's own interval of ``win_rate`` (its
            inversion, confidence ``1 - alpha``, not adjusted for the other pairs); NaN
            when the test is not run.
        p_value: the paired test's two-sided p (H0: win rate 1/2); ``None`` when not run.
        p_adjusted: Holm-adjusted across the pairs.
        significant: ``p_adjusted < alpha``.
        method: the test the kernel ran.
        ci_method: the kernel's name of its interval (``"inversion"``, ``"t"``,
            ``"bootstrap-t"``, ...; :data:`evalkit.stats.CI_OF_METHOD`).
        case_scores: ``{case id: a's score}``.
    """

    a: str
    b: str
    comparisons: int = 0
    wins: int = 0
    losses: int = 0
    ties: int = 0
    flipped: int = 0
    flip_rate: float = math.nan
    n_cases: int = 0
    win_rate: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    p_value: float | None = None
    p_adjusted: float | None = None
    significant: bool = False
    method: str | None = None
    ci_method: str | None = None
    case_scores: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: NaN and an infinity (an interval unbounded on that side) are written
        as ``None``."""
        def num(x: float | None) -> float | None:
            return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else x

        return {"a": self.a, "b": self.b, "comparisons": self.comparisons,
                "wins": self.wins, "losses": self.losses, "ties": self.ties,
                "flipped": self.flipped, "flip_rate": num(self.flip_rate),
                "n_cases": self.n_cases, "win_rate": num(self.win_rate),
                "ci_low": num(self.ci_low), "ci_high": num(self.ci_high),
                "p_value": self.p_value, "p_adjusted": self.p_adjusted,
                "significant": self.significant, "method": self.method,
                "ci_method": self.ci_method, "case_scores": dict(self.case_scores)}


def pair_stats(a: str, b: str, verdicts: Mapping[tuple[str, int | None], tuple[str, str]],
               *, flips: str = "tie", ties: str = "half") -> PairStats:
    """The counts and win rate of ``a`` against ``b`` (the test and its interval:
    :func:`paired_tests`).

    Args:
        verdicts: ``{(case id, sample): (verdict with a first, verdict with b first)}``.
        flips, ties: the rules (module docstring).
    """
    out = PairStats(a, b)
    per_case: dict[str, list[float]] = {}
    for (case, _sample), (first, second) in verdicts.items():
        outcome = resolve(first, second, flips=flips, ties=ties)
        out.comparisons += 1
        out.flipped += outcome.flipped
        if outcome.score is None:
            per_case.setdefault(case, [])
            continue
        if outcome.score > 0.5:
            out.wins += 1
        elif outcome.score < 0.5:
            out.losses += 1
        else:
            out.ties += 1
        per_case.setdefault(case, []).append(outcome.score)
    if out.comparisons:
        out.flip_rate = out.flipped / out.comparisons
    out.case_scores = {c: math.fsum(s) / len(s) for c, s in per_case.items() if s}
    out.n_cases = len(out.case_scores)
    if out.n_cases:
        out.win_rate = math.fsum(out.case_scores.values()) / out.n_cases
    return out


def paired_tests(pairs: Sequence[PairStats], *, alpha: float = 0.05, method: str = "auto",
               n_resamples: int = 10_000, seed: int = 42) -> None:
    """Run the paired test of every pair with at least two cases (in place), take its
    own interval of the win rate (module docstring), and adjust the p-values with Holm's
    method across those pairs.

    Raises:
        ValueError: an unknown ``method`` (the kernel's message).
    """
    from evalkit.stats import holm, paired_test

    tested: list[PairStats] = []
    for pair in pairs:
        if pair.n_cases < 2:
            continue
        a = dict(pair.case_scores)
        b = {c: 1.0 - s for c, s in a.items()}
        result = paired_test(a, b, f"{pair.a} vs {pair.b}", method=method, alpha=alpha,
                             n_resamples=n_resamples, seed=seed)
        pair.p_value, pair.method = float(result.p_value), result.method
        # the mean of d = 2 s - 1 is 2 w - 1: the interval of w is (1 + d) / 2
        pair.ci_low = (1.0 + float(result.ci_low)) / 2.0
        pair.ci_high = (1.0 + float(result.ci_high)) / 2.0
        pair.ci_method = result.ci_method
        tested.append(pair)
    if tested:
        for pair, adjusted in zip(tested, holm([p.p_value or 1.0 for p in tested]),
                                  strict=True):
            pair.p_adjusted = float(adjusted)
            pair.significant = adjusted < alpha


def case_win_matrix(systems: Sequence[str], pairs: Sequence[PairStats]
                    ) -> tuple[list[str], Any]:
    """``(case ids, array (n, m, m))``: per case, ``[i, j]`` system i's score against j
    (its wins over j, a tie half each); 0 where the pair has no kept comparison of the
    case. The input of :func:`evalkit_judge.bradley_terry.bootstrap`."""
    import numpy as np

    index = {s: i for i, s in enumerate(systems)}
    cases = sorted({c for p in pairs for c in p.case_scores})
    row = {c: k for k, c in enumerate(cases)}
    out = np.zeros((len(cases), len(systems), len(systems)))
    for pair in pairs:
        i, j = index[pair.a], index[pair.b]
        for case, score in pair.case_scores.items():
            out[row[case], i, j] = score
            out[row[case], j, i] = 1.0 - score
    return cases, out
