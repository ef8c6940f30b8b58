"""The gate's floors count each test's p on its strongest evidence (every case differing
alike: :func:`evalkit.stats.methods.strongest_evidence_p`): the t-test of a 0/1 metric,
which has no floor on varied differences, answers equal differences by the exact
sign-flip p ``2/2**n``, so on 5 cases it fails when 4 regressed (p = 0.0161, scipy) but
not when all 5 did (0.0625). Such a check is an error (exit 2), as the sign-flip test's
on too few cases is, and the gate's verdict never turns from fail to pass as more cases
regress. Reference values: scipy.stats.ttest_1samp and binomtest."""

from __future__ import annotations

import pytest
from scipy import stats as sps

from evalkit.data.results import QueryResult, RunResult
from evalkit.gate import evaluate_gate
from evalkit.gate.checks import CheckSpec
from evalkit.gate.verdicts import GateReport
from evalkit.plugins.default import use_registry
from evalkit.stats import paired_test
from evalkit.stats.methods import METHODS, smallest_p, strongest_evidence_p


def _runs(n: int, regressed: int, extra: int = 0) -> tuple[RunResult, RunResult]:
    """A baseline right on ``n + extra`` cases and a candidate wrong on the first
    ``regressed``."""
    base = RunResult("base", [QueryResult(f"c{i}", [], {"em": 1.0}) for i in range(n + extra)])
    cand = RunResult("cand", [QueryResult(f"c{i}", [], {"em": 0.0 if i < regressed else 1.0})
                              for i in range(n + extra)])
    return base, cand


def _gate(checks: list[CheckSpec], base: RunResult, cand: RunResult,
          clusters: dict[str, str] | None = None) -> GateReport:
    with use_registry(plugins=False) as reg:
        reg.register_metric("em", higher_is_better=True, value_type="binary")(
            lambda r, c: 0.0)
        return evaluate_gate(checks, cand, base, clusters=clusters)


def _scoped(n: int, cid: str = "em_check", start: int = 0) -> CheckSpec:
    return CheckSpec(cid, "em", vs_baseline="no_significant_regression",
                     scope=tuple(f"c{i}" for i in range(start, start + n)))


def test_a_t_test_that_every_case_regressing_cannot_fail_is_an_error() -> None:
    # 4 of 5 regressed: the t-test's p is scipy's; all 5: the exact sign-flip p 2/2**5
    want4 = float(sps.ttest_1samp([-1, -1, -1, -1, 0], 0.0).pvalue)
    assert want4 == pytest.approx(0.0161, abs=1e-4)
    want5 = float(sps.binomtest(5, 5, 0.5).pvalue)
    assert want5 == 0.0625
    for regressed, want in ((4, want4), (5, want5)):
        report = _gate([_scoped(5)], *_runs(5, regressed))
        (r,) = report.results
        assert r.comparison is not None and r.comparison.method == "t-test"
        assert r.comparison.p_value == pytest.approx(want, rel=1e-9)
        assert r.verdict == "error" and r.not_judged and report.exit_code == 2
        assert "cannot fail when every case differs alike" in r.message
        (note,) = report.notes
        assert "t-test takes the exact sign-flip p of equal differences" in note
        assert "with 5 cases is 0.0625" in note and "6 cases or more" in note
    report = _gate([_scoped(3)], *_runs(3, 3))
    assert report.results[0].verdict == "error" and report.exit_code == 2


def test_six_cases_can_fail_when_every_one_regressed() -> None:
    report = _gate([_scoped(6)], *_runs(6, 6))
    (r,) = report.results
    assert r.comparison is not None
    assert r.comparison.p_value == pytest.approx(sps.binomtest(6, 6, 0.5).pvalue)  # 2/64
    assert r.verdict == "fail" and report.exit_code == 1 and not report.notes


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7, 8])
def test_more_regressions_never_turn_a_fail_into_a_pass(n: int) -> None:
    verdicts = [_gate([_scoped(n)], *_runs(n, k)).results[0].verdict for k in range(n + 1)]
    seen_fail = False
    for v in verdicts:
        assert not (seen_fail and v == "pass"), verdicts
        seen_fail = seen_fail or v == "fail"
    if n <= 5:  # the exact sign-flip p 2/2**n of every case regressed is >= 0.05
        assert set(verdicts) == {"error"}
    else:
        assert verdicts[-1] == "fail"


def test_holm_families_of_binary_checks() -> None:
    # two checks on 6 cases, all 12 cases regressed: each p is 2/64, Holm-adjusted
    # 0.0625 >= 0.05 whatever the other does, on every case regressed: both errors
    base, cand = _runs(12, 12)
    report = _gate([_scoped(6, "a"), _scoped(6, "b", 6)], base, cand)
    assert [r.verdict for r in report.results] == ["error", "error"]
    assert [r.comparison.p_adjusted for r in report.results if r.comparison
            ] == pytest.approx([2 * 2 / 2**6] * 2)
    assert report.exit_code == 2
    (note,) = report.notes
    assert "after Holm's correction" in note and "7 cases or more" in note
    assert report.summary() == ("gate error: 0 passed, 0 failed, 0 warned, 2 errors "
                                "(not judged) (exit 2)")
    # 7 cases each: 2/128 at rank 1 and 2 are below 0.025 and 0.05: both fail
    base, cand = _runs(14, 14)
    report = _gate([_scoped(7, "a"), _scoped(7, "b", 7)], base, cand)
    assert [r.verdict for r in report.results] == ["fail", "fail"]
    # beside a check on 40 cases (its floor far below), a 6-case check can fail alone
    # (rank 2: 1 x 2/64 < 0.05), so it is judged
    base, cand = _runs(40, 40)
    report = _gate([CheckSpec("all", "em", vs_baseline="no_significant_regression"),
                    _scoped(6, "six")], base, cand)
    assert [r.verdict for r in report.results] == ["fail", "fail"]


def test_clustered_binary_checks_count_clusters() -> None:
    # 6 cases in 3 clusters: the cluster t-test on 3 equal cluster differences takes
    # 2/2**3 = 0.25, so the check cannot fail when every case regressed
    base, cand = _runs(6, 6)
    clusters = {f"c{i}": f"k{i // 2}" for i in range(6)}
    report = _gate([CheckSpec("all", "em", vs_baseline="no_significant_regression")],
                   base, cand, clusters=clusters)
    (r,) = report.results
    assert r.comparison is not None and r.comparison.n_clusters == 3
    assert r.comparison.p_value == pytest.approx(sps.binomtest(3, 3, 0.5).pvalue)
    assert r.verdict == "error" and report.exit_code == 2
    assert any("with 3 clusters is 0.25" in n for n in report.notes)


@pytest.mark.parametrize("method", [m for m in METHODS if m != "auto"])
@pytest.mark.parametrize("n", [2, 3, 5, 6, 10, 16, 17, 40])
def test_the_strongest_evidence_p_is_what_each_test_gives_equal_differences(
        method: str, n: int) -> None:
    b = 200
    base = {f"q{i}": 0.0 for i in range(n)}
    cand = {f"q{i}": 0.3 for i in range(n)}
    got = paired_test(cand, base, "m", method=method, n_resamples=b, seed=1)
    exact = n <= 16
    want = strongest_evidence_p(method, n, b, "two-sided", method == "randomization" and exact)
    # the test's own p on equal differences is no larger than the value counted...
    assert got.p_value <= want + 1e-15
    # ...and that value is the larger of the sign-flip p on them and the test's floor
    sign_flip = float(sps.binomtest(n, n, 0.5).pvalue) if exact else max(
        float(sps.binomtest(n, n, 0.5).pvalue), 1 / (b + 1))
    equal = 1 / (b + 1) if method == "bootstrap" else sign_flip
    assert got.p_value == pytest.approx(equal, rel=1e-12)
    assert want == pytest.approx(max(equal, smallest_p(
        method, n, b, "two-sided", method == "randomization" and exact)), rel=1e-12)


def test_the_summary_counts_each_check_once() -> None:
    base, cand = _runs(6, 6)
    report = _gate([_scoped(3, "a"), _scoped(3, "b", 3),
                    CheckSpec("unknown", "no_such_metric", op=">=", threshold=0.5)],
                   base, cand)
    assert [r.verdict for r in report.results] == ["error"] * 3
    assert [r.not_judged for r in report.results] == [True, True, False]
    assert report.summary() == ("gate error: 0 passed, 0 failed, 0 warned, 3 errors "
                                "(2 of them not judged) (exit 2)")


def test_an_aggregate_check_on_few_cases_keeps_the_bootstraps_floor() -> None:
    # the bootstrap over case ids of an aggregate: 3 cases all shifted alike give
    # p = 1/(B+1) (every resample shifts alike), so the check can fail and does
    base = RunResult("base", [QueryResult(f"c{i}", [], {"em": 1.0}) for i in range(3)])
    cand = RunResult("cand", [QueryResult(f"c{i}", [], {"em": 0.0}) for i in range(3)])
    with use_registry(plugins=False) as reg:
        reg.register_aggregate("em_mean", higher_is_better=True)(
            lambda rows: sum(r.metrics["em"] for r in rows) / len(rows))
        report = evaluate_gate([CheckSpec("agg", "em_mean",
                                          vs_baseline="no_significant_regression")],
                               cand, base, n_resamples=999)
    (r,) = report.results
    assert r.comparison is not None and r.comparison.method == "bootstrap over case ids"
    assert r.comparison.p_value == pytest.approx(1 / 1000)
    assert r.verdict == "fail" and report.exit_code == 1
