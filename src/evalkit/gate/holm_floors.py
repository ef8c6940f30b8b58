"""Which blocking baseline checks of the gate's Holm family cannot fail, whatever the data
or on their strongest evidence: each test's floor (the smallest p it can give with its
cases or clusters and ``B`` resamples on the strongest evidence, every case differing
alike: :func:`evalkit.stats.methods.strongest_evidence_p`) bounds the Holm-adjusted p it
can reach (:func:`evalkit.stats.multiple.holm_smallest_adjusted`); a check whose bound is
at least its alpha judges nothing, or judges the worst regression milder than a partial
one, and the gate makes it an error (:func:`evalkit.gate.evaluate.evaluate_gate`).

The floor counted for a check is the largest of those of every test it may end up using:
the gate's per-case test is "auto" (:func:`evalkit.stats.methods.resolve_method`), which
on a metric not declared binary, and with clusters on every metric, runs the sign-flip
test or, on skewed differences, the sign-flip test with the bootstrap-t
(:data:`evalkit.stats.methods.BOTH`); every test but
the bootstrap answers equal differences by the exact sign-flip p (``2/2**n``), so the
t-test of a 0/1 metric, whose p has no floor on varied differences, counts that one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evalkit.gate.check_verdicts import BaselineComparison

#: What a check that cannot fail whatever the data is (its note's lead, the error's reason).
WHATEVER = "cannot fail whatever the data"
#: What a check that can fail only on evidence weaker than its strongest is.
STRONGEST = "cannot fail when every case differs alike (every case regressed)"


@dataclass(frozen=True)
class CheckFloor:
    """Why one blocking baseline check cannot fail.

    Attributes:
        lead: :data:`WHATEVER`, or :data:`STRONGEST` when it can fail only on varied
            differences (the t-test's) but not on equal ones, its strongest evidence.
        why: the cause and the fix that can help
            (:func:`evalkit.stats.multiple.holm_check_floor_note`).
    """

    lead: str
    why: str


def _floor(c: BaselineComparison, n: int, b: int, strongest: bool) -> float:
    """The floor of ``c``'s test on ``n`` units with ``b`` resamples: its smallest p on
    any data (:func:`evalkit.stats.methods.smallest_p`), or with ``strongest`` on equal
    differences too (:func:`evalkit.stats.methods.strongest_evidence_p`); the larger
    over the tests "auto" may run on the metric (the sign-flip test, also with the
    bootstrap-t). A PPI++ p is a normal p (no floor); an aggregate's bootstrap over case
    ids (:data:`evalkit.gate.baseline_checks.AGGREGATE_METHOD`) has the bootstrap's,
    ``1/(B+1)``, equal shifts included."""
    from evalkit.gate.baseline_checks import AGGREGATE_METHOD, PPI_METHOD
    from evalkit.stats._kernels import EXACT_MAX_N
    from evalkit.stats.methods import BOTH, smallest_p, strongest_evidence_p

    if c.method == PPI_METHOD:
        return 0.0
    floor_of = strongest_evidence_p if strongest else smallest_p
    methods = ("bootstrap",) if c.method == AGGREGATE_METHOD else (
        (c.method,) if c.method not in ("randomization", BOTH) else ("randomization", BOTH))
    return max(floor_of(m, n, b, "two-sided", m == "randomization" and n <= EXACT_MAX_N)
               for m in methods)


def _floors_of(comparisons: Sequence[BaselineComparison], strongest: bool = True
               ) -> Callable[[int, int | None, int | None], list[float]]:
    """``(B, n, only) -> each comparison's floor`` with ``B`` resamples (:func:`_floor`),
    every one (or only comparison ``only``) had it ``n`` cases (clusters) when ``n`` is
    given."""

    def floors(b: int, n: int | None = None, only: int | None = None) -> list[float]:
        units = [(n if n and only in (None, i) else None) or c.n_clusters or c.n_cases
                 for i, c in enumerate(comparisons)]
        return [_floor(c, k, b, strongest) for c, k in zip(comparisons, units, strict=True)]
    return floors


def _alike(comparisons: Sequence[BaselineComparison], n_resamples: int,
           indices: Sequence[int]) -> str:
    """The sentence saying that the tests of ``indices`` take the exact sign-flip p on
    equal differences, and why that p counts as their floor; "" when it raises none."""
    floors = _floors_of(comparisons, strongest=False)(n_resamples, None, None)
    alike = _floors_of(comparisons)(n_resamples, None, None)
    raised = sorted({comparisons[i].method for i in indices if alike[i] > floors[i]})
    if not raised:
        return ""
    return (f"when every case differs alike (every case regressed) the {' and '.join(raised)} "
            "takes the exact sign-flip p of equal differences, 2/2**n (they have no "
            "variance), its strongest evidence; a check that this evidence cannot fail "
            "would pass the worst regression while failing milder ones, so that p counts "
            "as its floor: ")


def holm_floor(comparisons: Sequence[BaselineComparison], n_resamples: int) -> str | None:
    """Why no blocking baseline check can fail, when Holm's correction over them makes
    that certain whatever the data, or on their strongest evidence (each test's floor,
    :func:`_floor`, times their number is at least every check's alpha), naming the
    fewest resamples with which one can (:func:`evalkit.stats.multiple.holm_floor_note`);
    else None."""
    if not comparisons:
        return None
    from evalkit.stats.multiple import holm_floor_note

    floors = _floors_of(comparisons)
    sizes = {c.n_clusters or c.n_cases for c in comparisons}
    note = holm_floor_note(
        lambda b: floors(b, None, None), max(c.alpha for c in comparisons), n_resamples,
        floors_with_n=(lambda n: floors(n_resamples, n, None)) if len(sizes) == 1 else None,
        n_units=next(iter(sizes)) if len(sizes) == 1 else None,
        unit="clusters" if any(c.n_clusters for c in comparisons) else "cases",
        fewer_tests="put fewer blocking baseline checks in the family")
    if note is None:
        return None
    return _alike(comparisons, n_resamples, range(len(comparisons))) + note


def family_floors(comparisons: Sequence[BaselineComparison], n_resamples: int
                  ) -> tuple[list[float], list[CheckFloor | None]]:
    """Each blocking baseline check's Holm-adjusted p and why it cannot fail
    (:func:`holm_check_floors`), same order as ``comparisons``. A check on fewer than 2
    cases has no test (p 1): it cannot be rejected, so it is not counted in Holm's ``m``
    (its adjusted p is 1, as :func:`evalkit.stats.compare_slices` does for such a slice),
    and its floor is judged alone (it cannot fail: the gate does not judge it)."""
    from evalkit.stats.multiple import holm

    tested = [i for i, c in enumerate(comparisons) if c.n_cases >= 2]
    adjusted = [1.0] * len(comparisons)
    for i, p in zip(tested, holm([comparisons[i].p_value for i in tested]), strict=True):
        adjusted[i] = float(p)
    floors = [None if i in tested else holm_check_floors([c], n_resamples)[0]
              for i, c in enumerate(comparisons)]
    for i, why in zip(tested, holm_check_floors([comparisons[i] for i in tested],
                                                n_resamples), strict=True):
        floors[i] = why
    return adjusted, floors


def holm_check_floors(comparisons: Sequence[BaselineComparison], n_resamples: int
                      ) -> list[CheckFloor | None]:
    """For each blocking baseline check of the Holm family, why it cannot fail (its
    smallest attainable Holm-adjusted p, given every check's floor, is at least its own
    alpha: :func:`evalkit.stats.multiple.holm_check_floor_note`), whatever the data or
    on its strongest evidence, else None; same order as ``comparisons``. A check scoped
    to 3 cases (exact floor 0.25) cannot fail even alone; two checks on 6 cases (floor
    0.031) cannot beside a third whatever that one does (their best Holm-adjusted p is
    2 x 0.031); a t-test of a 0/1 metric on 5 cases fails when 4 of them regressed
    (p = 0.016) but not when all 5 did (p = 2/2**5 = 0.0625), so it cannot fail on its
    strongest evidence."""
    from evalkit.stats.multiple import holm_check_floor_note

    sizes = {c.n_clusters or c.n_cases for c in comparisons}
    unit = "clusters" if any(c.n_clusters for c in comparisons) else "cases"

    def note(i: int, strongest: bool) -> str | None:
        floors = _floors_of(comparisons, strongest)
        only = None if len(sizes) == 1 else i
        return holm_check_floor_note(
            lambda b: floors(b, None, None), i, comparisons[i].alpha, n_resamples,
            floors_with_n=lambda n: floors(n_resamples, n, only),
            n_units=comparisons[i].n_clusters or comparisons[i].n_cases, unit=unit)

    out: list[CheckFloor | None] = []
    for i in range(len(comparisons)):
        why = note(i, True)
        if why is None:
            out.append(None)
        elif note(i, False) is not None:
            out.append(CheckFloor(WHATEVER, why))
        else:
            out.append(CheckFloor(STRONGEST, _alike(comparisons, n_resamples, [i]) + why))
    return out
