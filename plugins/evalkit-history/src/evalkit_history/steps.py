"""A step of a history: a run against the latest earlier run evaluated alike.

Two runs are comparable when their fingerprints agree
(:func:`evalkit.gate.fingerprint.fingerprint_differences`: the same case ids, the same
expected values, that is the same golden set or qrels hash, the same evaluation
settings, the same definition of every metric they share). The step between two
comparable runs is :func:`evalkit.compare` of the earlier (baseline) and the later
(candidate) run over the metrics both hold, with its defaults (the paired test chosen
per metric, Holm's adjustment over the metrics, alpha 0.05, 10,000 resamples, seed 42;
docs/statistics.md): the same numbers ``evalkit compare EARLIER LATER`` prints. It is
computed once, when the later run is added, and stored. Runs that are not comparable
make a *break*, whose reasons are stored instead; they are never differenced. After a
break from the run recorded just before, the step is against the latest earlier run that
is comparable (a history alternating two configurations steps within each), or there is
none (:meth:`evalkit_history.store.History.add` searches).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.data.results import RunResult
    from evalkit.gate.fingerprint import Fingerprint

#: The settings of every step's comparison (``evalkit.compare``'s defaults, written out so
#: that a later change of a default does not change what a stored step means).
STEP_SETTINGS: Mapping[str, Any] = {
    "method": "auto", "correction": "holm", "alpha": 0.05, "n_resamples": 10_000, "seed": 42,
}


@dataclass(frozen=True)
class MetricStep:
    """One metric's change from the previous run.

    Attributes:
        metric: the metric.
        n: the cases paired by id.
        diff: mean of ``later - earlier`` over them (for gm_map and gm_bpref the
            difference of mean logs).
        ci_low, ci_high: its interval at confidence ``1 - alpha`` (None: unbounded).
        p_value: the paired test's p; ``p_adjusted``: Holm-adjusted over the step's
            metrics.
        significant: the adjusted p below alpha.
        method: the test that ran.
        higher_is_better: the metric's polarity (True when it declares none).
    """

    metric: str
    n: int
    diff: float
    ci_low: float | None
    ci_high: float | None
    p_value: float
    p_adjusted: float | None
    significant: bool
    method: str | None
    higher_is_better: bool

    @property
    def direction(self) -> str:
        """``"better"``, ``"worse"`` (a significant step, by the polarity) or ``""``."""
        if not self.significant or self.diff == 0:
            return ""
        return "better" if (self.diff > 0) == self.higher_is_better else "worse"


@dataclass(frozen=True)
class Step:
    """A run against the latest earlier run evaluated alike.

    Attributes:
        previous_id: the id of the run it was compared with: the run recorded just
            before it, or after a break the latest earlier run evaluated alike; when no
            run is comparable, the run recorded just before it (None for the first run).
        comparable: whether a step was computed (against ``previous_id``).
        reasons: why the run recorded just before is not comparable (a break; empty when
            it is).
        metrics: the metrics' changes, when comparable.
        settings: the comparison's settings (:data:`STEP_SETTINGS`), when comparable.
        before_id: the run recorded just before (None: ``previous_id``'s, or the first
            run).
    """

    previous_id: int | None
    comparable: bool
    reasons: tuple[str, ...] = ()
    metrics: tuple[MetricStep, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    before_id: int | None = None

    @property
    def after(self) -> int | None:
        """The id of the run recorded just before (None for the first run)."""
        return self.before_id if self.before_id is not None else self.previous_id

    @property
    def is_break(self) -> bool:
        """Whether the run recorded just before is not comparable with this one."""
        return self.after is not None and bool(self.reasons)

    @property
    def skips(self) -> bool:
        """Whether the step is against an earlier run than the one just before it."""
        return self.comparable and self.previous_id != self.after


def _as_previous(text: str) -> str:
    """A fingerprint difference worded for a history (its "baseline" is the previous run)."""
    return (text.replace("the baseline covers", "the previous run covers")
            .replace("only in the baseline", "only in the previous run")
            .replace("in the baseline", "in the previous run"))


def step_between(previous: RunResult | None, previous_id: int | None,
                 previous_fp: Fingerprint | None, current: RunResult,
                 current_fp: Fingerprint) -> Step:
    """The step from ``previous`` (None: ``current`` is the first run) to ``current``.

    Returns:
        A :class:`Step`: a break naming every reason the runs are not comparable (their
        fingerprints differ, no metric in common, or the comparison refused them), or
        the comparison's difference, interval, p-values and verdict per shared metric.
    """
    if previous is None or previous_fp is None:
        return Step(None, False, ("the first run of the history",))
    from evalkit.comparison import compare
    from evalkit.gate.fingerprint import fingerprint_differences

    names = set(current.metric_names())
    shared = [m for m in previous.metric_names() if m in names]
    reasons = [_as_previous(r) for r in fingerprint_differences(
        previous_fp, current_fp, metrics=shared, baseline_ids=previous.ids(),
        current_ids=current.ids())]
    if not shared:
        reasons.append("the two runs share no metric")
    if reasons:
        return Step(previous_id, False, tuple(reasons))
    try:
        comparison = compare(previous, current, metrics=shared, **STEP_SETTINGS)
    except ValueError as exc:  # ComparisonError is one
        return Step(previous_id, False, (f"the comparison refused them: {exc}",))
    metrics = tuple(
        MetricStep(r.metric, r.n_queries, r.diff, r.ci_low, r.ci_high, r.p_value,
                   r.p_adjusted, r.significant, r.method, r.higher_is_better)
        for r in comparison.results)
    return Step(previous_id, True, (), metrics, dict(STEP_SETTINGS))


__all__ = ["STEP_SETTINGS", "MetricStep", "Step", "step_between"]
