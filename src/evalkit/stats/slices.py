"""Slices: the same comparison on each named subset of the cases, adjusted as one family.

A slice is a name and the case ids it holds (a tag of the golden cases, ``evalkit compare
--by tag``). :func:`compare_slices` runs :func:`evalkit.stats.compare_runs` on each slice's
cases alone, with the same method, seed and resamples, so a slice's result is exactly
the comparison of the runs restricted to its cases; then it adjusts every raw p of every
slice, metric and pair together (slices x metrics x pairs hypotheses: Holm by default,
or Benjamini-Hochberg, or none). A slice of one case has no test (p 1): it cannot be
rejected, so its hypotheses are left out of the family's size ``m``. Westfall-Young's
min-P is refused: it needs the hypotheses' resampled p-values on one shared set of
cases, and slices are different sets.

A slice too small for any verdict is said so (:func:`small_slice_note`): by the
degenerate-input rule (docs/statistics.md), ``n`` equal differences are significant only
when the exact sign-flip test's smallest p, ``2**(1 - n)`` two-sided, is below alpha
(n >= 6 at alpha = 0.05).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalkit.io.error_messages import quoted
from evalkit.stats.degenerate import constant_p_floor
from evalkit.stats.family import PairedTestFamily, compare_runs, correction_floor_note
from evalkit.stats.multiple import benjamini_hochberg, holm
from evalkit.stats.pairing import RunLike, run_name

#: The corrections a slice family can be adjusted by.
SLICE_CORRECTIONS: tuple[str, ...] = ("holm", "bh", "none")


@dataclass(frozen=True)
class SliceFamily:
    """The answer of :func:`compare_slices`.

    Attributes:
        slices: ``{slice name: its PairedTestFamily}`` in the order given; each result's
            ``p_adjusted`` is adjusted over every slice's results together and its
            ``correction`` names how. A slice none of whose cases the runs hold is left
            out (``notes`` says so).
        correction: ``"holm"``, ``"bh"`` or ``"none"``.
        family_size: the hypotheses adjusted together: slices x metrics x pairs, less
            those on a slice of fewer than 2 cases (no test is possible there: their p
            and adjusted p are 1, and they are not counted in Holm's or BH's ``m``).
        notes: slices left out, slices too small for any verdict, tagged cases the runs
            lack, and Holm's floor (:func:`evalkit.stats.family.correction_floor_note`).
    """

    slices: Mapping[str, PairedTestFamily]
    correction: str
    family_size: int
    notes: tuple[str, ...] = ()

    def sizes(self) -> dict[str, int]:
        """``{slice: paired cases}``."""
        return {name: len(f.query_ids) for name, f in self.slices.items()}


class _Restricted:
    """A run's per-case values of each metric, on some of its cases only."""

    def __init__(self, run: RunLike, name: str, keep: set[str]) -> None:
        self.name = name
        self._run = run
        self._keep = keep

    def scores(self, metric: str) -> dict[str, float]:
        run = self._run
        values: Mapping[str, Any] = run if isinstance(run, Mapping) else run.scores(metric)
        return {str(k): v for k, v in values.items() if str(k) in self._keep}


def _case_ids(run: RunLike, metric: str) -> set[str]:
    values = run if isinstance(run, Mapping) else run.scores(metric)
    return {str(k) for k in values}


def small_slice_note(name: str, n: int, alpha: float, n_resamples: int,
                     two_sided: bool) -> str | None:
    """A note when slice ``name``'s ``n`` cases are too few for the degenerate-input rule
    to find even ``n`` equal differences significant at ``alpha`` (the exact sign-flip
    test's smallest p, :func:`evalkit.stats.degenerate.constant_p_floor`, is at least
    alpha); None otherwise."""
    if constant_p_floor(n, n_resamples, two_sided) < alpha:
        return None
    need = next(k for k in range(n + 1, 64)
                if constant_p_floor(k, n_resamples, two_sided) < alpha)
    return (f"slice {quoted(name)} has {n} case{'s' if n != 1 else ''}, fewer than {need}: even "
            f"{'its' if n != 1 else 'one'} difference{'s' if n != 1 else ''} all equal "
            f"could not be significant at alpha = {alpha:g} (the degenerate-input rule of "
            "docs/statistics.md), so read its rows as description, not as a test")


def compare_slices(
    baseline: RunLike,
    candidates: Sequence[RunLike],
    metrics: str | Sequence[str],
    slices: Mapping[str, Sequence[str]],
    *,
    correction: str = "holm",
    alpha: float = 0.05,
    alternative: str = "two-sided",
    n_resamples: int = 10_000,
    **options: Any,
) -> SliceFamily:
    """Compare candidates with a baseline on each slice of the cases.

    Args:
        baseline, candidates, metrics: as in :func:`evalkit.stats.compare_runs`; every
            run must cover the same cases (restrict incomplete runs first).
        slices: ``{slice name: case ids}``, e.g. each tag's cases; ids the runs do not
            hold are left out of the slice (and noted).
        correction: ``"holm"`` (default), ``"bh"`` or ``"none"``, over every slice,
            metric and pair together.
        alpha, alternative, n_resamples: as in :func:`evalkit.stats.compare_runs`.
        options: the other arguments of :func:`evalkit.stats.compare_runs` (``method``,
            ``ci``, ``seed``, ``all_pairs``, ``backend``, ``distribution_bins``,
            ``value_types``); every slice is run with the same ones.

    Returns:
        :class:`SliceFamily`: per slice, what ``compare_runs`` gives on the runs
        restricted to that slice's cases, with ``p_adjusted`` over the whole family.

    Raises:
        ValueError: ``correction`` is ``"westfall-young"`` or unknown; no slice; no slice
            shares a case with the runs; and everything :func:`compare_runs` raises.
    """
    if correction not in SLICE_CORRECTIONS:
        why = (" (min-P needs every hypothesis on one shared set of cases, and slices are "
               "different sets)" if correction == "westfall-young" else "")
        raise ValueError(f"correction {correction!r} cannot adjust slices{why}; choose one "
                         f"of {', '.join(SLICE_CORRECTIONS)}")
    if not slices:
        raise ValueError("no slice to compare: no case carries a tag")
    runs = [baseline, *candidates]
    names = [run_name(r, f"run{i}") for i, r in enumerate(runs)]
    first = [metrics] if isinstance(metrics, str) else list(metrics)
    held = _case_ids(baseline, first[0]) if first else set()
    notes: list[str] = []
    families: dict[str, PairedTestFamily] = {}
    for name, ids in slices.items():
        keep = {str(i) for i in ids} & held
        lacking = len({str(i) for i in ids} - held)
        if lacking:
            notes.append(f"slice {quoted(name)}: {lacking} tagged case(s) are not in the runs "
                         "and are left out")
        if not keep:
            notes.append(f"slice {quoted(name)}: none of its cases is in the runs; not compared")
            continue
        restricted = [_Restricted(r, n, keep) for r, n in zip(runs, names, strict=True)]
        families[name] = compare_runs(
            restricted[0], restricted[1:], metrics, correction="none", alpha=alpha,
            alternative=alternative, n_resamples=n_resamples, **options)
        small = small_slice_note(name, len(keep), alpha, n_resamples,
                                 alternative == "two-sided")
        if small:
            notes.append(small)
    if not families:
        raise ValueError("no slice shares a case with the runs; nothing to compare")
    raw = [r.p_value for f in families.values() for r in f.results]
    # a hypothesis on fewer than 2 cases has no test (its p is 1 by convention): it cannot
    # be rejected, so it is not one of the family's m (as multipletests over the p-values
    # that exist); its adjusted p stays 1
    testable = [r.n_queries >= 2 for f in families.values() for r in f.results]
    tested = [p for p, ok in zip(raw, testable, strict=True) if ok]
    adjusted_tested = iter(holm(tested) if correction == "holm" else
                           benjamini_hochberg(tested) if correction == "bh" else tested)
    adjusted = [next(adjusted_tested) if ok else p
                for p, ok in zip(raw, testable, strict=True)]
    out: dict[str, PairedTestFamily] = {}
    at = 0
    for name, fam in families.items():
        results = tuple(dataclasses.replace(r, p_adjusted=float(adjusted[at + j]),
                                            correction=correction)
                        for j, r in enumerate(fam.results))
        at += len(results)
        out[name] = dataclasses.replace(fam, results=results, correction=correction,
                                        family_size=len(tested))
    every = [r for f in out.values() for r in f.results if r.n_queries >= 2]
    floor = correction_floor_note(every, correction, alpha, n_resamples)
    if floor:
        notes.append(f"slices: {floor}")
    return SliceFamily(out, correction, len(tested), tuple(notes))


__all__ = ["SLICE_CORRECTIONS", "SliceFamily", "compare_slices", "small_slice_note"]
