"""Running until the answer is known: an anytime-valid comparison against a baseline
during a run (``evaluate(..., until_decided=UntilDecided(...))``, ``evalkit run
--until-decided --baseline RUN``).

The cases (or, with clusters, the clusters) are called in a uniformly random order fixed
by a seed (:func:`evalkit.stats.sequential.random_order`). After every batch of rows
the runner hands over, :meth:`SequentialMonitor.update` takes the **longest prefix of
that order whose units are all complete** (every sample of every case answered and
scored by the metric), never whichever cases happened to finish first, and computes the
PrPl-EB confidence sequence, without replacement from the golden set's ``N`` units, of
the mean paired difference ``candidate - baseline`` (:mod:`evalkit.stats.sequential`).
The rule is checked as rows arrive, and the cases start no further ahead of it than
the run's ``max_concurrency``: case ``i`` of the order starts only once the rows of
every case before ``i - max_concurrency + 1`` are taken and checked
(:mod:`evalkit.execute.dispatch_window`), so the cases called do not depend on the
target's speed beyond those in flight. The run stops taking new cases when the
interval excludes 0 (``"differs"``) or lies inside ``[-margin, margin]``
(``"equivalent"``); the calls in flight finish and are written, and their rows extend
the prefix. A case whose call or metric failed holds the prefix where it is: the run then
goes on to the end of the order (a case never drops out of the sample because it failed).

With repeated samples the unit is the case (its samples reduced as the run reduces
them); with clusters (``clusters=True``: the ``cluster`` of each golden case) the unit is
the cluster, whose value is ``f_g = (G / N) S_g`` (``S_g`` the sum of its cases'
differences: the mean of the ``f_g`` over all ``G`` clusters is the mean difference per
case, :mod:`evalkit.stats.clusters`), bounded by ``r G max(n_g) / N``, which the
golden set fixes before any call.

The header records the settings in ``config["until_decided"]`` (so a resume with other
settings is refused, and a resume continues the same order and sequence) and the outcome
in ``header["sequential"]``: whether the run stopped early, why, after how many units,
and the last interval.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.core.specs import MetricSpec
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.samples import parse_reduce
from evalkit.execute.samples import RowKey, sample_numbers
from evalkit.stats.declared_values import declared_range
from evalkit.stats.numeric import finite_real
from evalkit.stats.sequential import (
    ConfidenceSequence,
    Decision,
    decide,
    paired_confidence_sequence,
    random_order,
)

__all__ = ["DEFAULT_ALPHA", "SequentialError", "SequentialMonitor", "UntilDecided",
           "sequential_monitor"]

#: The sequence's miscoverage level unless told otherwise.
DEFAULT_ALPHA = 0.05
#: The method, as the header names it.
METHOD = ("PrPl-EB confidence sequence without replacement (Waudby-Smith and Ramdas, "
          "JRSS-B 2024, Theorem 2 and Section 6), truncation 1/2")


class SequentialError(ValueError):
    """``until_decided`` cannot run: no baseline values for some case, a metric with no
    declared range, clusters without a cluster on every case, a bad setting."""


@dataclass(frozen=True)
class UntilDecided:
    """The settings of a run that stops when its comparison is decided.

    Attributes:
        baseline: the baseline run (a :class:`RunResult` or an artifact path) on the same
            golden set: every case needs its value of ``metric``.
        metric: the metric compared (a per-case metric of the run with a declared range,
            :attr:`MetricSpec.bounds`); ``None``: the run's only metric, or, when the run
            has several, the one metric of ``gate_metrics``.
        margin: stop as equivalent once the interval lies inside ``[-margin, margin]``
            (``None``: only a difference stops the run).
        seed: fixes the random order of the cases (recorded in the header).
        alpha: the sequence covers the mean difference at every look with probability
            ``1 - alpha``.
        clusters: take the golden cases' ``cluster`` as the unit.
        gate_metrics: the metrics of the gate's ``vs_baseline`` checks (``evalkit run``
            reads them from the checks file the eval config names), which ``metric=None``
            falls back on; ``None``: no checks file known.
        gate_source: where ``gate_metrics`` came from (the checks file), for messages.
    """

    baseline: RunResult | str | Path
    metric: str | None = None
    margin: float | None = None
    seed: int = 0
    alpha: float = DEFAULT_ALPHA
    clusters: bool = False
    gate_metrics: tuple[str, ...] | None = None
    gate_source: str | None = None


@dataclass
class _Unit:
    ids: tuple[str, ...]


class SequentialMonitor:
    """The order, the prefix and the sequence of one run (see the module docstring)."""

    def __init__(self, settings: UntilDecided, metric: str, bounds: tuple[float, float],
                 baseline: Mapping[str, float], baseline_name: str, units: list[_Unit],
                 n_cases: int, epochs: int, reduce: str) -> None:
        self.settings, self.metric, self.bounds = settings, metric, bounds
        self.baseline, self.baseline_name = baseline, baseline_name
        self._baseline_sha256: str | None = None  # of ``baseline``, on the first record
        self.order = [units[i] for i in random_order(len(units), settings.seed)]
        self.n_cases, self.epochs = n_cases, epochs
        self._reduce = parse_reduce(reduce)
        g = len(units)
        largest = max((len(u.ids) for u in units), default=1)
        self._scale = g / n_cases if settings.clusters else 1.0
        self.radius = (bounds[1] - bounds[0]) * (self._scale * largest
                                                 if settings.clusters else 1.0)
        self.differences: list[float] = []
        self._case_total = 0.0  # the sum of the used cases' differences
        self.cs: ConfidenceSequence | None = None
        self.decision: Decision = "undecided"
        #: the units after which the rule decided (the first look whose interval
        #: decides; the running intersection keeps it decided), ``None`` before
        self.decided_at: int | None = None
        self.blocked: str | None = None

    def case_order(self) -> list[str]:
        """Every case id in the order the run calls them."""
        return [cid for unit in self.order for cid in unit.ids]

    def config(self) -> dict[str, Any]:
        """What ``config["until_decided"]`` records (a resume must match it)."""
        s = self.settings
        return {"metric": self.metric, "seed": s.seed, "alpha": s.alpha, "margin": s.margin,
                "unit": "cluster" if s.clusters else "case", "baseline": self.baseline_name}

    def _value(self, case_id: str, results: Mapping[RowKey, CaseResult]) -> float | None:
        values: list[float] = []
        for s in sample_numbers(self.epochs):
            row = results.get((case_id, s))
            if row is None or row.response is None or self.metric not in row.metrics:
                return None
            values.append(float(row.metrics[self.metric]))
        return values[0] if self.epochs == 1 else self._reduce(values)

    def update(self, results: Mapping[RowKey, CaseResult]) -> Decision:
        """Extend the prefix with the units now complete in ``results`` and decide."""
        grown = False
        while len(self.differences) < len(self.order):
            unit = self.order[len(self.differences)]
            values = [self._value(cid, results) for cid in unit.ids]
            missing = next((cid for cid, v in zip(unit.ids, values, strict=True)
                            if v is None), None)
            if missing is not None:
                self.blocked = self._why_blocked(missing, results)
                break
            for cid, v in zip(unit.ids, values, strict=True):
                self._require_in_range(cid, v)
            total = sum(v - self.baseline[cid] for cid, v in zip(unit.ids, values,
                                                                  strict=True)
                        if v is not None)
            self._case_total += total
            self.differences.append(total * self._scale if self.settings.clusters
                                    else total)
            grown = True
        if len(self.differences) == len(self.order):
            self.blocked = None
        if grown:
            before = self.cs.n if self.cs is not None else 0
            self.cs = paired_confidence_sequence(
                self.differences, self.radius, alpha=self.settings.alpha,
                population=len(self.order))
            self.decision = decide(self.cs.last, self.settings.margin)
            if self.decided:  # the first look of this update at which the rule decided
                self.decided_at = next(
                    t for t in range(before + 1, self.cs.n + 1)
                    if decide((self.cs.lower[t - 1], self.cs.upper[t - 1]),
                              self.settings.margin) != "undecided")
        return self.decision

    def _require_in_range(self, case_id: str, value: float | None) -> None:
        """Raise :class:`SequentialError` naming the metric, the case and the run (this
        one or the baseline) when a value lies outside the declared range (a run's own
        values are checked when scored; a baseline's may come from another definition)."""
        lo, hi = self.bounds
        for whose, v in (("this run", value),
                         (f"the baseline {self.baseline_name!r}", self.baseline.get(case_id))):
            if v is not None and not lo <= v <= hi:
                raise SequentialError(
                    f"metric {self.metric}: {whose} has {float(v)!r} for case {case_id!r}, "
                    f"outside [{lo:g}, {hi:g}], the range the metric declares; the "
                    "declared range is wrong or the runs were scored by another "
                    "definition, and a range read from the data would void the sequence's "
                    "guarantee")

    def _why_blocked(self, case_id: str, results: Mapping[RowKey, CaseResult]
                     ) -> str | None:
        """Why case ``case_id`` holds the prefix: its call or metric failed (else it is
        simply not done yet: ``None``)."""
        for s in sample_numbers(self.epochs):
            row = results.get((case_id, s))
            if row is not None and row.response is None:
                return f"the call of case {case_id!r} failed"
            if row is not None and self.metric in row.metric_errors:
                return f"metric {self.metric} failed on case {case_id!r}"
        return None

    @property
    def decided(self) -> bool:
        """Whether the sequence has decided (``differs`` or ``equivalent``)."""
        return self.decision != "undecided"

    def record(self, header: dict[str, Any], called: int | None = None) -> dict[str, Any]:
        """``header["sequential"]``: the settings, whether the run stopped early (the
        sequence decided before every case was called: ``called``, the cases with a
        row, is fewer than the golden set's), why (``reason``: ``"differs"``,
        ``"equivalent"``, or ``"exhausted"``: the order ran out undecided), the units
        the sequence used and its last interval, and ``decided_at``, the units after
        which it decided (``cases_at_decision`` cases; ``None`` while undecided): the
        cases called beyond them were in flight, or allowed to start, when it decided
        (at most ``max_concurrency`` - 1 of them:
        :mod:`evalkit.execute.dispatch_window`), and their rows extend ``used``."""
        used = len(self.differences)
        low, high = self.cs.last if self.cs is not None else (-math.inf, math.inf)
        cases_used = sum(len(u.ids) for u in self.order[:used])
        mean = self._case_total / cases_used if cases_used else None
        stopped = self.decided and (called if called is not None else cases_used) \
            < self.n_cases
        reason = self.decision if self.decided else "exhausted"
        record = {
            **self.config(), "method": METHOD, "bounds": list(self.bounds),
            "radius": self.radius, "units": len(self.order),
            "used": used, "cases_used": cases_used,
            "cases_called": called if called is not None else cases_used,
            "stopped_early": stopped, "reason": reason, "decision": self.decision,
            "decided_at": self.decided_at,
            "cases_at_decision": None if self.decided_at is None else sum(
                len(u.ids) for u in self.order[:self.decided_at]),
            "interval": [_finite(low), _finite(high)], "mean_difference": mean,
        }
        if self.blocked is not None:
            record["blocked"] = self.blocked
        if self._baseline_sha256 is None:
            from evalkit.data.coverage import sequential_baseline_sha256

            self._baseline_sha256 = sequential_baseline_sha256(self.baseline)
        record["baseline_sha256"] = self._baseline_sha256
        header["sequential"] = record
        return record


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def sequential_monitor(settings: UntilDecided, gset: GoldenSet, specs: Sequence[MetricSpec],
                       epochs: int, reduce: str) -> SequentialMonitor:
    """The monitor of a run of ``gset`` scored by ``specs``, checked before any call.

    Raises:
        SequentialError: the metric is not one of the run's, declares no range, the
            baseline lacks a case's value (or is not a readable artifact), a case has no
            cluster, ``margin`` or ``alpha`` out of range.
    """
    if settings.margin is not None and (
            (margin := finite_real(settings.margin)) is None or margin <= 0):
        raise SequentialError(f"margin must be a positive number, got {settings.margin!r}")
    if isinstance(settings.alpha, bool) or not 0 < settings.alpha < 1:
        raise SequentialError(f"alpha must be between 0 and 1, got {settings.alpha!r}")
    spec = _metric(settings, specs)
    bounds = declared_range(spec)
    if bounds is None:
        raise SequentialError(
            f"metric {spec.name} declares no range (MetricSpec.bounds), and the sequence "
            "needs one: register it with bounds=(lo, hi); a range read from the data "
            "would void the guarantee")
    lo, hi = float(bounds[0]), float(bounds[1])
    baseline, name = _baseline_values(settings.baseline, spec.name, gset)
    units = _units(gset, settings.clusters)
    return SequentialMonitor(settings, spec.name, (lo, hi), baseline, name, units, len(gset),
                             epochs, reduce)


def _metric(settings: UntilDecided, specs: Sequence[MetricSpec]) -> MetricSpec:
    """The metric compared: ``settings.metric``; without it the run's only metric, else
    the one metric of the gate's ``vs_baseline`` checks."""
    per_case = [s for s in specs if s.kind == "metric"]
    have = ", ".join(s.name for s in per_case) or "none"
    name = settings.metric
    if name is not None:
        spec = _find(name, per_case)
        if spec is None:
            from evalkit.core.metric_lookup import suggestion

            hint = suggestion(name, [s.name for s in per_case])
            raise SequentialError(f"--metric {name}: not a metric of this run{hint} (it "
                                  f"has {have}); add it to the run's metrics")
        return spec
    if len(per_case) == 1:
        return per_case[0]
    gate = settings.gate_metrics
    where = settings.gate_source or "the checks"
    named = list(dict.fromkeys(
        (s.name if (s := _find(m, per_case)) is not None else m) for m in gate or ()))
    if len(named) == 1:
        spec = _find(named[0], per_case)
        if spec is None:
            raise SequentialError(
                f"the gate's vs_baseline check in {where} compares {named[0]}, which is not "
                f"a metric of this run (it has {have}); add it to the run's metrics, or "
                "pass --metric NAME")
        return spec
    why = ("the eval config names no checks file whose vs_baseline check would name it"
           if gate is None else f"{where} has no vs_baseline check to take it from"
           if not named else f"{where} has vs_baseline checks on {len(named)} metrics "
           f"({', '.join(named)})")
    raise SequentialError(
        "until_decided needs the metric to compare (--metric NAME): the run has "
        f"{len(per_case)} metrics ({have}), and {why}")


def _find(name: str, per_case: Sequence[MetricSpec]) -> MetricSpec | None:
    """The metric of ``per_case`` that ``name`` (a name, alias or registry name) means."""
    from evalkit.core.registry import RegistryError
    from evalkit.plugins.default import default_registry

    try:
        wanted = default_registry().resolve(name).name
    except RegistryError:
        wanted = name
    return next((s for s in per_case if s.name in (name, wanted) or name in s.aliases),
                None)


def _baseline_values(baseline: RunResult | str | Path, metric: str, gset: GoldenSet
                     ) -> tuple[dict[str, float], str]:
    if isinstance(baseline, RunResult):
        run, where = baseline, baseline.name
    else:
        from evalkit.data.results import ArtifactError

        try:
            run = RunResult.load(baseline)
        except (OSError, ArtifactError, ValueError) as exc:
            raise SequentialError(f"--baseline {baseline}: {exc}") from None
        where = str(baseline)
    from evalkit.data.coverage import sequential_baseline_values

    values = sequential_baseline_values(run.per_query, metric)
    lacking = [c.id for c in gset if c.id not in values]
    if lacking:
        shown = ", ".join(repr(i) for i in lacking[:5])
        raise SequentialError(
            f"--baseline {where}: {len(lacking)} case(s) of the golden set have no value "
            f"of {metric} in the baseline ({shown}{', ...' if len(lacking) > 5 else ''}); "
            "the baseline must be a run of the same golden set scored with that metric")
    return values, where


def _units(gset: GoldenSet, clusters: bool) -> list[_Unit]:
    if not clusters:
        return [_Unit((c.id,)) for c in gset]
    groups: dict[Hashable, list[str]] = {}
    lacking: list[str] = []
    for case in gset:
        cluster = getattr(case, "cluster", None)
        if cluster is None:
            lacking.append(case.id)
            continue
        groups.setdefault(cluster, []).append(case.id)
    if lacking:
        raise SequentialError(
            f"clusters: {len(lacking)} case(s) name no cluster ({', '.join(map(repr, lacking[:5]))}"
            f"{', ...' if len(lacking) > 5 else ''}); give every golden case a cluster: "
            "(a case alone is its own cluster)")
    if len(groups) < 2:
        raise SequentialError("clusters: the golden set holds fewer than two clusters")
    return [_Unit(tuple(ids)) for ids in groups.values()]
