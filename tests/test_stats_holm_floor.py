"""Holm's correction with a p floor: with B resamples no p goes below 1/(B+1), so Holm
over m tests can reject nothing once (B + 1) <= m / alpha; the library, ``evalkit
compare`` and the gate say so and name the fewest resamples that can reject.

The boundary is worked out by hand: with B = 1,000 and alpha = 0.05, 50 tests can reject
(50/1001 = 0.04995 < 0.05) and 51 cannot (51/1001 = 0.05095); 51 tests need
B + 1 > 51/0.05 = 1,020, so B = 1,020.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.results import QueryResult, RunResult
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec
from evalkit.plugins.default import use_registry
from evalkit.stats import compare_runs, holm
from evalkit.stats.multiple import holm_floor_note


def mc(count: int, numerator: int = 1) -> Callable[[int], list[float]]:
    """``count`` Monte Carlo tests whose floor is ``numerator / (B + 1)``."""
    return lambda b: [numerator / (b + 1)] * count


def test_the_boundary_by_hand() -> None:
    assert min(holm([1 / 1001] * 50)) < 0.05 <= min(holm([1 / 1001] * 51))
    assert holm_floor_note(mc(50), 0.05, 1000) is None
    note = holm_floor_note(mc(51), 0.05, 1000)
    assert note is not None
    assert "51 tests" in note and "B = 1,020 is the fewest" in note
    assert "--resamples 1020" in note and "n_resamples=1020" in note
    # and B = 1,020 is enough, 1,019 is not: 51/1021 < 0.05 <= 51/1020
    assert min(holm([1 / 1021] * 51)) < 0.05 <= min(holm([1 / 1020] * 51))
    assert holm_floor_note(mc(51), 0.05, 1020) is None


def test_the_two_sided_bootstrap_t_floor_is_twice_as_high() -> None:
    # 2/(B+1): 30 tests at B = 1,000 need B + 1 > 2 * 30 / 0.05 = 1,200
    note = holm_floor_note(mc(30, 2), 0.05, 1000)
    assert note is not None and "B = 1,200 is the fewest" in note


def test_a_test_without_a_floor_can_always_reject() -> None:
    assert holm_floor_note(lambda b: [1 / (b + 1)] * 80 + [0.0], 0.05, 1000) is None


def test_exact_enumeration_floors_do_not_move_with_b() -> None:
    note = holm_floor_note(lambda b: [2 / 2**8] * 7, 0.05, 1000)  # 7 * 2/256 = 0.055
    assert note is not None and "more resamples do not change that" in note
    assert "is the fewest" not in note


def _runs(n_metrics: int, n: int = 40) -> tuple[RunResult, RunResult, list[str]]:
    names = [f"m{j}" for j in range(n_metrics)]
    base = RunResult("base", [QueryResult(f"q{i}", [], dict.fromkeys(names, 0.0))
                              for i in range(n)])
    # every candidate value above the baseline: each test's p is at its floor
    cand = RunResult("cand", [QueryResult(f"q{i}", [], {m: 0.5 + 0.01 * i for m in names})
                              for i in range(n)])
    return base, cand, names


def test_compare_runs_notes_the_floor() -> None:
    base, cand, names = _runs(51)
    fam = compare_runs(base, [cand], names, method="randomization", n_resamples=1000)
    assert all(r.p_value == 1 / 1001 and not r.significant_adjusted for r in fam.results)
    assert any("B = 1,020 is the fewest" in n for n in fam.notes)
    ok = compare_runs(base, [cand], names, method="randomization", n_resamples=1020)
    assert all(r.significant_adjusted for r in ok.results)
    assert not any("Holm" in n for n in ok.notes)
    # other corrections have no such floor
    bh = compare_runs(base, [cand], names, method="randomization", n_resamples=1000,
                      correction="bh")
    assert not any("Holm" in n for n in bh.notes)


def test_evalkit_compare_warns(tmp_path: Path) -> None:
    base, cand, names = _runs(51)
    a, b = base.save(tmp_path / "base.jsonl"), cand.save(tmp_path / "cand.jsonl")
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "--test", "randomization",
                                   "-B", "1000", "-m", ",".join(names)])
    assert res.exit_code == 0, res.output
    assert "warning: no test can be significant after Holm's correction" in res.output
    assert "--resamples 1020" in res.output


@pytest.mark.parametrize(("checks", "warned"), [(5, False), (6, True)])
def test_the_gate_notes_the_floor(checks: int, warned: bool) -> None:
    # B = 200: the gate's "auto" test of a metric not declared binary may be the
    # sign-flip test with the bootstrap-t (on skewed differences), whose floor is
    # 2/(B+1): 5 checks can fail (10/201 < 0.05), 6 cannot (12/201 = 0.0597)
    base, cand, names = _runs(checks)
    with use_registry(plugins=False) as reg:
        for m in names:
            reg.register_metric(m, higher_is_better=False)(lambda r, c: 0.0)
        report = evaluate_gate(
            [CheckSpec(f"c_{m}", m, vs_baseline="no_significant_regression") for m in names],
            cand, base, n_resamples=200)
    assert any("Holm" in n for n in report.notes) == warned
    # 5 checks find the regression; 6 could not fail whatever the data, so none of them
    # passes: each is an error and the gate exits 2, never 0 on a check that judged nothing
    assert report.exit_code == (2 if warned else 1)
    if warned:
        assert any("B = 240 is the fewest" in n for n in report.notes)  # 12/241 < 0.05
        assert all(r.verdict == "error" and "cannot fail whatever the data" in r.message
                   and "cannot fail whatever the data" in r.detail() for r in report.results)


def _few(n: int, names: list[str]) -> tuple[RunResult, RunResult]:
    base = RunResult("base", [QueryResult(f"q{i}", [], dict.fromkeys(names, 0.0))
                              for i in range(n)])
    cand = RunResult("cand", [QueryResult(f"q{i}", [], {m: 0.5 + 0.01 * i for m in names})
                              for i in range(n)])
    return base, cand


def test_one_test_on_too_few_queries_names_the_queries_not_a_correction() -> None:
    # n = 5: the exact two-sided floor 2/2**5 = 0.0625 >= 0.05 even uncorrected;
    # n = 6 gives 2/64 = 0.031 < 0.05
    base, cand = _few(5, ["rr"])
    fam = compare_runs(base, [cand], ["rr"], method="randomization")
    (note,) = [n for n in fam.notes if "significant" in n]
    assert "whatever the correction" in note and "with 5 queries is 0.0625" in note
    assert "a test can reject with 6 queries or more" in note
    assert "'bh'" not in note and "fewer metrics" not in note and "1 tests" not in note
    # five tests: Holm needs 5 * 2/2**n < 0.05, n = 8 (5 * 2/256 = 0.039)
    names = ["a", "b", "c", "d", "e"]
    base, cand = _few(5, names)
    (note,) = [n for n in compare_runs(base, [cand], names, method="randomization").notes
               if "significant" in n]
    assert "6 queries or more (8 or more with Holm's correction over 5 tests)" in note


def test_holm_floor_over_queries_that_one_test_could_reject_with() -> None:
    # n = 7: 2/128 = 0.0156 < 0.05 alone; 4 tests: 4 * 0.0156 = 0.0625 >= 0.05; with
    # n = 8, 4 * 2/256 = 0.031
    names = ["a", "b", "c", "d"]
    base, cand = _few(7, names)
    (note,) = [n for n in compare_runs(base, [cand], names, method="randomization").notes
               if "significant" in n]
    assert "4 tests at alpha = 0.05 need a raw p below 0.0125" in note
    assert "use correction 'bh'" in note and "use 8 queries or more" in note


def test_one_test_is_one_test() -> None:
    note = holm_floor_note(mc(1), 0.05, 10)  # 1/11 >= 0.05; 1/21 < 0.05: B = 20
    assert note is not None and "Holm" not in note and "tests" not in note
    assert "the smallest p this test can give with B = 10 resamples is 0.0909" in note
    assert "B = 20 is the fewest" in note
    note = holm_floor_note(mc(2), 0.05, 10)
    assert note is not None and "2 tests at alpha" in note and "these tests" in note


def test_evalkit_compare_on_five_queries_says_the_queries_are_too_few(tmp_path: Path) -> None:
    base, cand = _few(5, ["rr"])
    a, b = base.save(tmp_path / "base.jsonl"), cand.save(tmp_path / "cand.jsonl")
    res = CliRunner().invoke(app, ["compare", str(a), str(b), "-m", "rr"])
    assert res.exit_code == 0, res.output
    assert "the queries are too few: a test can reject with 6 queries or more" in res.output
    assert "'bh'" not in res.output


def test_the_gate_on_five_cases_says_the_cases_are_too_few() -> None:
    base, cand = _few(5, ["m0"])
    with use_registry(plugins=False) as reg:
        reg.register_metric("m0", higher_is_better=False)(lambda r, c: 0.0)
        report = evaluate_gate(
            [CheckSpec("c_m0", "m0", vs_baseline="no_significant_regression")], cand, base,
            n_resamples=100)
    assert report.exit_code == 2
    (note,) = [n for n in report.notes if "significant" in n]
    assert "with 5 cases is 0.0625" in note and "a test can reject with 6 cases or more" in note
    assert "'bh'" not in note and "fewest that can reject" not in note


def test_the_gate_never_suggests_a_correction_it_does_not_have() -> None:
    # 6 cases: one exact test can reach 2/2**6 = 0.031 < 0.05, two under Holm cannot
    # (0.0625) whatever B: the gate, which corrects by Holm only, says to check fewer
    names = ["m0", "m1"]
    base, cand = _few(6, names)
    with use_registry(plugins=False) as reg:
        for m in names:
            reg.register_metric(m, higher_is_better=False)(lambda r, c: 0.0)
        report = evaluate_gate(
            [CheckSpec(f"c_{m}", m, vs_baseline="no_significant_regression") for m in names],
            cand, base)
    assert report.exit_code == 2
    (note,) = [n for n in report.notes if "significant" in n]
    assert "put fewer blocking baseline checks in the family" in note
    assert "'bh'" not in note and "metrics or pairs" not in note
