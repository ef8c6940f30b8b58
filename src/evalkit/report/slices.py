"""A comparison on one slice of the cases: the records ``evalkit compare --by tag`` adds
to a :class:`~evalkit.comparison.Comparison` (``Comparison.slices``), which a
:class:`~evalkit.report.Report` carries (``Report.slices``), and the table every reporter
prints from them.

They sit on the report floor, as :class:`~evalkit.report.pooled.PooledEffect` does: the
comparison builds them, the reporters render them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from evalkit.report.formatting import decimal, interval, p_cell, signed


def _clean(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _opt(x: Any, open_end: float) -> float:
    return open_end if x is None else float(x)


def open_ends(n_queries: int, ci_low: float | None, ci_high: float | None) -> list[str]:
    """The ends of a comparison's interval that are unbounded, ``"low"`` and/or
    ``"high"`` (the JSON's ``ci_unbounded``): those that are None or infinite when a test
    ran (``n_queries >= 2``); none when no test was possible, whose ends were not
    computed."""
    if n_queries < 2:
        return []
    return [end for end, v in (("low", ci_low), ("high", ci_high))
            if v is None or not math.isfinite(v)]


@dataclass(frozen=True)
class SliceEffect:
    """One (slice, metric, candidate) comparison: the runs restricted to the slice's cases.

    Attributes:
        slice: the slice's name (a tag).
        metric: the metric.
        baseline, candidate: the two runs' names.
        n_queries: the slice's paired cases.
        baseline_mean, candidate_mean: the runs' means over those cases (NaN when not
            defined).
        diff: the mean difference, candidate minus baseline, over those cases.
        ci_low, ci_high: its interval, confidence ``1 - alpha`` (infinite: open).
        p_value: the test's raw p on the slice.
        p_adjusted: adjusted over every slice, metric and candidate (``correction``), or
            None without correction.
        significant: the verdict, by the rule of the overall rows (adjusted p below
            alpha; the degenerate-input rule on equal differences).
        wins, ties, losses: cases where the candidate is better, equal, worse.
        method: the test that ran; ``ci_method`` its interval.
        higher_is_better: the metric's polarity (None: unknown).
        alpha: the significance level.
        p_note: ``"n too small"`` when the degenerate-input rule overrides a small p
            (:func:`evalkit.report.comparison_rows.p_note_for`), else None.
        n_resamples: ``B`` of a resampling test, for the p's floor; None otherwise.
        warnings: the test's notes on this slice.
    """

    slice: str
    metric: str
    baseline: str
    candidate: str
    n_queries: int
    baseline_mean: float
    candidate_mean: float
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    p_adjusted: float | None
    significant: bool
    wins: int
    ties: int
    losses: int
    method: str
    ci_method: str | None
    higher_is_better: bool | None
    alpha: float
    p_note: str | None = None
    n_resamples: int | None = None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values (open interval ends and NaN means are None;
        :meth:`from_dict` reads them back)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        for key in ("baseline_mean", "candidate_mean", "ci_low", "ci_high"):
            out[key] = _clean(out[key])
        out["ci_unbounded"] = open_ends(self.n_queries, self.ci_low, self.ci_high)
        if self.n_queries < 2:  # no test was possible: no p (p_note says so)
            out["p_value"] = out["p_adjusted"] = None
        out["warnings"] = list(self.warnings)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], correction: str = "holm") -> SliceEffect:
        """The inverse of :meth:`to_dict` (``correction``: the document's, which says
        whether a slice without a test had an adjusted p)."""
        hib = data.get("higher_is_better")
        res = data.get("n_resamples")
        untested = int(data["n_queries"]) < 2
        p_value = 1.0 if untested and data.get("p_value") is None else float(data["p_value"])
        p_adj = data.get("p_adjusted")
        if p_adj is None and untested and correction != "none":
            p_adj = 1.0
        # with ci_unbounded, a null end it does not list was not computed
        unbounded = data.get("ci_unbounded")
        low_open = -math.inf if unbounded is None or "low" in unbounded else math.nan
        high_open = math.inf if unbounded is None or "high" in unbounded else math.nan
        return cls(
            slice=str(data["slice"]), metric=str(data["metric"]),
            baseline=str(data["baseline"]), candidate=str(data["candidate"]),
            n_queries=int(data["n_queries"]),
            baseline_mean=_opt(data.get("baseline_mean"), math.nan),
            candidate_mean=_opt(data.get("candidate_mean"), math.nan),
            diff=float(data["diff"]), ci_low=_opt(data.get("ci_low"), low_open),
            ci_high=_opt(data.get("ci_high"), high_open), p_value=p_value,
            p_adjusted=None if p_adj is None else float(p_adj),
            significant=bool(data["significant"]), wins=int(data["wins"]),
            ties=int(data["ties"]), losses=int(data["losses"]), method=str(data["method"]),
            ci_method=None if data.get("ci_method") is None else str(data["ci_method"]),
            higher_is_better=None if hib is None else bool(hib), alpha=float(data["alpha"]),
            p_note=None if data.get("p_note") is None else str(data["p_note"]),
            n_resamples=None if res is None else int(res),
            warnings=tuple(str(w) for w in data.get("warnings") or ()))

    def p_display(self, adjusted: bool = False) -> str:
        """The p (or adjusted p) as a table cell, or :attr:`p_note` in its place."""
        p = self.p_adjusted if adjusted else self.p_value
        if self.p_note and p is not None:
            return self.p_note
        return p_cell(p, self.n_resamples)

    @property
    def verdict(self) -> str:
        """``"candidate better"``, ``"baseline better"`` (``"higher"`` / ``"lower"``
        when the polarity is unknown) or ``"no significant difference"``."""
        if not self.significant:
            return "no significant difference"
        up = self.diff > 0
        if self.higher_is_better is None:
            return "candidate higher" if up else "candidate lower"
        return "candidate better" if up == self.higher_is_better else "baseline better"


def slice_cells(slices: Sequence[SliceEffect], correction: str | None
                ) -> tuple[list[str], list[list[str]]]:
    """``(headers, cells)`` of the slice table: a line per slice, metric and candidate
    (the candidate column only when there are several) with the slice's cases, both
    means, the difference, its interval, p (and adjusted p, headed by ``correction``),
    wins/ties/losses, the verdict and the test that ran on the slice (``method``: with
    ``auto`` a skewed slice runs ``randomization+bootstrap-t``, whatever the overall
    rows ran)."""
    alpha = slices[0].alpha if slices else 0.05
    several = len({(s.candidate, s.baseline) for s in slices}) > 1
    adjusted = any(s.p_adjusted is not None for s in slices)
    headers = ["slice", "metric"] + (["candidate"] if several else []) + [
        "n", "baseline", "candidate mean" if several else "candidate", "diff",
        f"{100 * (1 - alpha):g}% CI", "p"]
    if adjusted:
        headers.append(f"p ({correction or 'adjusted'})")
    headers += ["W/T/L", "verdict", "test"]
    cells: list[list[str]] = []
    for s in slices:
        line = [s.slice, s.metric] + ([s.candidate] if several else []) + [
            str(s.n_queries), decimal(s.baseline_mean), decimal(s.candidate_mean),
            signed(s.diff), interval(s.ci_low, s.ci_high), s.p_display()]
        if adjusted:
            line.append(s.p_display(adjusted=True))
        line += [f"{s.wins}/{s.ties}/{s.losses}", s.verdict, s.method]
        cells.append(line)
    return headers, cells


def slice_family_size(slices: Sequence[SliceEffect]) -> int:
    """The hypotheses a slice table's p-values were adjusted over: its rows on at least 2
    cases (a slice of one case has no test, so it is not one of Holm's or BH's ``m``:
    :func:`evalkit.stats.compare_slices`)."""
    return sum(1 for s in slices if s.n_queries >= 2)


def slice_sizes(slices: Sequence[SliceEffect]) -> dict[str, int]:
    """``{slice: cases}``, slices in order."""
    return {s.slice: s.n_queries for s in slices}


__all__ = ["SliceEffect", "slice_cells", "slice_family_size", "slice_sizes"]
