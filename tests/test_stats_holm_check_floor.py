"""Each check's own floor inside a Holm family: the smallest Holm-adjusted p a test can
reach whatever the data (:func:`evalkit.stats.multiple.holm_smallest_adjusted`), proven
against brute force (every p-vector on a grid of attainable values, Holm's step-down
computed here by its definition), and the gate's use of it: a blocking baseline check
that cannot fail is an error (exit 2) even when another check of its family can fail.
"""

from __future__ import annotations

import itertools

import pytest

from evalkit.data.results import QueryResult, RunResult
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec
from evalkit.plugins.default import use_registry
from evalkit.stats.multiple import holm_check_floor_note, holm_smallest_adjusted


def _holm_by_definition(p: tuple[float, ...]) -> list[float]:
    """Holm (1979): rank k (1-based, ascending p) gets min(1, max_{j<=k} (m-j+1) p_(j))."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    for k in range(1, m + 1):
        out[order[k - 1]] = min(1.0, max((m - j + 1) * p[order[j - 1]] for j in range(1, k + 1)))
    return out


def _brute(floors: tuple[float, ...]) -> list[float]:
    grid = sorted({*floors, 1.0, *(f * 1.5 for f in floors)})
    choices = [[g for g in grid if g >= f and g <= 1.0] for f in floors]
    best = [1.0] * len(floors)
    for p in itertools.product(*choices):
        for i, a in enumerate(_holm_by_definition(p)):
            best[i] = min(best[i], a)
    return best


VALUES = (0.004, 0.01, 0.0156, 0.03125, 0.05, 0.0625, 0.25)


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_smallest_adjusted_p_matches_brute_force(m: int) -> None:
    values = VALUES if m < 4 else VALUES[1:6]
    for floors in itertools.product(values, repeat=m):
        got = holm_smallest_adjusted(floors)
        want = _brute(floors)
        assert got == pytest.approx(want, abs=1e-15), floors


def test_worked_examples() -> None:
    # two checks on 6 cases (exact floor 2/64) beside one that can reach 0.001: each of
    # the two reaches at best 2 * 0.03125 = 0.0625 (rank 2 behind the 0.001 one)
    assert holm_smallest_adjusted([0.03125, 0.03125, 0.001]) == pytest.approx(
        [0.0625, 0.0625, 0.003])
    # a check scoped to 3 cases (floor 0.25) cannot fail even alone
    assert holm_smallest_adjusted([0.25, 0.001]) == pytest.approx([0.25, 0.002])


def test_the_note_for_one_check() -> None:
    floors = [0.03125, 0.03125, 0.001]
    note = holm_check_floor_note(lambda b: floors, 0, 0.05, 1000, n_units=6)
    assert note is not None
    assert "after Holm's correction over 3 tests" in note
    assert "smallest Holm-adjusted p is 0.0625" in note
    assert holm_check_floor_note(lambda b: floors, 2, 0.05, 1000) is None
    few = holm_check_floor_note(lambda b: [0.25, 0.001], 0, 0.05, 1000, n_units=3,
                                floors_with_n=lambda n: [2 / 2 ** n, 0.001])
    assert few is not None and "with 3 cases is 0.25" in few
    assert "its cases are too few: a test can reject with 6 cases or more" in few


def _runs(n: int) -> tuple[RunResult, RunResult]:
    base = RunResult("base", [QueryResult(f"q{i}", [], {"m": 0.0}) for i in range(n)])
    cand = RunResult("cand", [QueryResult(f"q{i}", [], {"m": 0.5 + 0.01 * i})
                              for i in range(n)])
    return base, cand


def test_the_gate_errs_on_a_check_that_cannot_fail_beside_one_that_can() -> None:
    # every case regressed; 'few' is scoped to 3 cases (exact floor 0.25), 'all' covers
    # 12: before, the family could reject (all), so 'few' passed though it cannot fail
    base, cand = _runs(12)
    with use_registry(plugins=False) as reg:
        reg.register_metric("m", higher_is_better=False)(lambda r, c: 0.0)
        report = evaluate_gate(
            [CheckSpec("all", "m", vs_baseline="no_significant_regression"),
             CheckSpec("few", "m", vs_baseline="no_significant_regression",
                       scope=("q0", "q1", "q2"))],
            cand, base, n_resamples=1000)
    by_id = {r.check.id: r for r in report.results}
    assert by_id["all"].verdict == "fail"
    few = by_id["few"]
    assert few.verdict == "error" and few.not_judged
    assert "cannot fail whatever the data" in few.message
    assert report.exit_code == 2
    (note,) = [n for n in report.notes if "'few'" in n]
    assert "with 3 cases is 0.25" in note and "'all'" not in note


def test_the_gate_errs_on_checks_that_holm_alone_keeps_from_failing() -> None:
    # two checks scoped to 6 cases each (floor 2/64 = 0.031, below alpha alone) beside one
    # on 12 (floor 2/4096): each of the two reaches at best 2 x 0.031 = 0.0625 >= 0.05
    base, cand = _runs(12)
    six = tuple(f"q{i}" for i in range(6))
    with use_registry(plugins=False) as reg:
        reg.register_metric("m", higher_is_better=False)(lambda r, c: 0.0)
        report = evaluate_gate(
            [CheckSpec("all", "m", vs_baseline="no_significant_regression"),
             CheckSpec("a6", "m", vs_baseline="no_significant_regression", scope=six),
             CheckSpec("b6", "m", vs_baseline="no_significant_regression", scope=six)],
            cand, base, n_resamples=1000)
    assert [r.verdict for r in report.results] == ["fail", "error", "error"]
    assert report.exit_code == 2
    for check in ("a6", "b6"):
        (note,) = [n for n in report.notes if f"'{check}'" in n]
        assert "after Holm's correction over 3 tests" in note
        assert "smallest Holm-adjusted p is 0.0625" in note
