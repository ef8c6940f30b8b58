"""Which blocking baseline checks of the gate's Holm family cannot fail whatever the data:
each test's floor (the smallest p it can give with its cases or clusters and ``B``
resamples: :func:`evalkit.stats.methods.smallest_p`) bounds the Holm-adjusted p it can
reach (:func:`evalkit.stats.multiple.holm_smallest_adjusted`); a check whose bound is at
least its alpha judges nothing, and the gate makes it an error
(:func:`evalkit.gate.evaluate.evaluate_gate`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from evalkit.gate.check_verdicts import BaselineComparison


def _floors_of(comparisons: Sequence[BaselineComparison]
               ) -> Callable[[int, int | None, int | None], list[float]]:
    """``(B, n, only) -> each comparison's smallest attainable p`` with ``B`` resamples
    (:func:`evalkit.stats.methods.smallest_p`), every one (or only comparison ``only``)
    had it ``n`` cases (clusters) when ``n`` is given."""
    from evalkit.stats._kernels import EXACT_MAX_N
    from evalkit.stats.methods import smallest_p

    def floors(b: int, n: int | None = None, only: int | None = None) -> list[float]:
        units = [(n if n and only in (None, i) else None) or c.n_clusters or c.n_cases
                 for i, c in enumerate(comparisons)]
        return [smallest_p(c.method, k, b, "two-sided",
                           c.method == "randomization" and k <= EXACT_MAX_N)
                for c, k in zip(comparisons, units, strict=True)]
    return floors


def holm_floor(comparisons: Sequence[BaselineComparison], n_resamples: int) -> str | None:
    """Why no blocking baseline check can fail, when Holm's correction over them makes
    that certain whatever the data (each test's smallest attainable p times their number
    is at least every check's alpha), naming the fewest resamples with which one can
    (:func:`evalkit.stats.multiple.holm_floor_note`); else None."""
    if not comparisons:
        return None
    from evalkit.stats.multiple import holm_floor_note

    floors = _floors_of(comparisons)
    sizes = {c.n_clusters or c.n_cases for c in comparisons}
    return holm_floor_note(
        lambda b: floors(b, None, None), max(c.alpha for c in comparisons), n_resamples,
        floors_with_n=(lambda n: floors(n_resamples, n, None)) if len(sizes) == 1 else None,
        n_units=next(iter(sizes)) if len(sizes) == 1 else None,
        unit="clusters" if any(c.n_clusters for c in comparisons) else "cases",
        fewer_tests="put fewer blocking baseline checks in the family")


def holm_check_floors(comparisons: Sequence[BaselineComparison], n_resamples: int
                      ) -> list[str | None]:
    """For each blocking baseline check of the Holm family, why it cannot fail whatever
    the data (its smallest attainable Holm-adjusted p, given every check's floor, is at
    least its own alpha: :func:`evalkit.stats.multiple.holm_check_floor_note`), else
    None; same order as ``comparisons``. A check scoped to 3 cases (exact floor 0.25)
    cannot fail even alone; two checks on 6 cases (floor 0.031) cannot beside a third
    whatever that one does (their best Holm-adjusted p is 2 x 0.031)."""
    from evalkit.stats.multiple import holm_check_floor_note

    floors = _floors_of(comparisons)
    sizes = {c.n_clusters or c.n_cases for c in comparisons}
    unit = "clusters" if any(c.n_clusters for c in comparisons) else "cases"
    notes: list[str | None] = []
    for i, c in enumerate(comparisons):
        only = None if len(sizes) == 1 else i
        notes.append(holm_check_floor_note(
            lambda b: floors(b, None, None), i, c.alpha, n_resamples,
            floors_with_n=lambda n, only=only: floors(n_resamples, n, only),  # type: ignore[misc]
            n_units=c.n_clusters or c.n_cases, unit=unit))
    return notes
