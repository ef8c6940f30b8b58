"""evaluate_gate: verdicts, exit codes, polarity, Holm, aggregates, errors.

Every expected number is worked out in the test itself: means of chosen values, Holm's
step-down by hand, sign-flip p-values by enumerating the sign patterns, bootstraps whose
every resample moves by the same amount (p = 1/(B+1)) or not at all (p = 1).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import evalkit.gate.baseline_checks as gate_mod
from evalkit.core.registry import Registry
from evalkit.data.results import QueryResult, RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import TargetResponse
from evalkit.gate import evaluate_gate, holm
from evalkit.gate.checks import CheckError, CheckSpec, load_checks
from evalkit.plugins.default import use_registry

B = 999  # resamples in these tests: a degenerate bootstrap then has p = 1 / 1000


def _never(response: Any, case: Any) -> float:
    raise AssertionError("gates read stored values; they never rescore")


def _p95(rows: Sequence[Any]) -> float:
    # nearest rank, written out independently of evalkit.execute.aggregates
    values = sorted(float(r.latency_ms) for r in rows)
    return values[math.ceil(0.95 * len(values)) - 1]


@pytest.fixture
def reg() -> Iterator[Registry]:
    with use_registry(plugins=False) as r:
        for name in ("ndcg@10", "recall@100", "recall@10", "ndcg@3"):
            r.register_metric(name, higher_is_better=True)(_never)
        r.register_metric("unsupported_claims", higher_is_better=False)(_never)
        r.register_aggregate("p95_ms", higher_is_better=False)(_p95)
        yield r


def qrun(name: str, values: dict[str, dict[str, float]], **header: Any) -> RunResult:
    return RunResult(name, [QueryResult(q, [], dict(m)) for q, m in values.items()],
                     header=dict(header))


def floor(metric: str, threshold: float, **kw: Any) -> CheckSpec:
    return CheckSpec(kw.pop("id", f"{metric}_floor"), metric, op=">=", threshold=threshold,
                     **kw)


def noreg(metric: str, **kw: Any) -> CheckSpec:
    return CheckSpec(kw.pop("id", f"{metric}_noreg"), metric,
                     vs_baseline="no_significant_regression", **kw)


# ------------------------------------------------------------------ handed case C30
C30_YAML = """\
checks:
  - id: ndcg_floor
    metric: ndcg@10
    op: ">="
    threshold: 0.50
  - id: recall_floor
    metric: recall@100
    op: ">="
    threshold: 0.80
"""

C30_VARIANTS: dict[str, tuple[dict[str, float], int, str]] = {
    # variant: (results, exit code, verdict of ndcg_floor)
    "pass": ({"ndcg@10": 0.55, "recall@100": 0.85}, 0, "pass"),
    "fail": ({"ndcg@10": 0.45, "recall@100": 0.85}, 1, "fail"),
    "nan": ({"ndcg@10": float("nan"), "recall@100": 0.85}, 2, "error"),
    "missing_metric": ({"recall@100": 0.85}, 2, "error"),
    "boundary": ({"ndcg@10": 0.5, "recall@100": 0.8}, 0, "pass"),
}


@pytest.mark.parametrize("variant", list(C30_VARIANTS))
def test_c30_every_variant(reg: Registry, tmp_path: Path, variant: str) -> None:
    path = tmp_path / "gates.yaml"
    path.write_text(C30_YAML)
    values, code, verdict = C30_VARIANTS[variant]
    report = evaluate_gate(load_checks(path), qrun(variant, {"q1": values}))
    assert report.exit_code == code
    assert report.results[0].verdict == verdict
    assert report.results[1].verdict == "pass"
    if variant == "fail":
        assert "ndcg@10 0.4500 < 0.5" in report.results[0].message
    if variant == "nan":
        assert "not a finite number" in report.results[0].message
    if variant == "missing_metric":
        assert "missing" in report.results[0].message
        assert "recall@100" in report.results[0].message  # says what the rows do have


def test_threshold_on_per_case_metric_is_the_mean_over_covered_cases(reg: Registry) -> None:
    run = qrun("r", {"a": {"recall@10": 1.0}, "b": {"recall@10": 0.5}, "c": {"recall@10": 0.0},
                     "d": {"recall@10": 0.2}})
    report = evaluate_gate([floor("recall@10", 0.4, id="all"),
                            floor("recall@10", 0.75, id="ab", scope=("a", "b"))], run)
    everything, ab = report.results
    assert everything.observed == pytest.approx((1.0 + 0.5 + 0.0 + 0.2) / 4)  # 0.425
    assert everything.verdict == "pass" and everything.coverage == "4/4 cases"
    assert ab.observed == pytest.approx(0.75) and ab.verdict == "pass"
    assert ab.line() == "ab: pass (2/2 cases)"


def test_le_threshold_and_the_eq_tolerance(reg: Registry) -> None:
    run = qrun("r", {"a": {"unsupported_claims": 0.0}, "b": {"unsupported_claims": 0.0}})
    checks = [CheckSpec("none", "unsupported_claims", op="<=", threshold=0),
              CheckSpec("zero", "unsupported_claims", op="==", threshold=0)]
    assert [r.verdict for r in evaluate_gate(checks, run).results] == ["pass", "pass"]
    run2 = qrun("r", {"a": {"unsupported_claims": 1.0}, "b": {"unsupported_claims": 0.0}})
    assert [r.verdict for r in evaluate_gate(checks, run2).results] == ["fail", "fail"]


def test_aggregate_threshold_is_computed_from_the_rows(reg: Registry) -> None:
    rows = [CaseResult(f"c{i}", TargetResponse(latency_ms=float(i)), {"ndcg@10": 1.0},
                       latency_ms=float(i)) for i in range(1, 21)]
    run = RunResult("r", rows)
    # nearest-rank p95 of 1..20 is the 19th value (ceil(0.95 * 20) = 19)
    checks = [CheckSpec("p95_ok", "p95_ms", op="<=", threshold=19),
              CheckSpec("p95_tight", "p95_ms", op="<=", threshold=18.5, level="warn"),
              CheckSpec("p95_scoped", "p95_ms", op="<=", threshold=3, scope=("c1", "c2", "c3"))]
    report = evaluate_gate(checks, run)
    assert [r.observed for r in report.results] == [19.0, 19.0, 3.0]
    assert [r.verdict for r in report.results] == ["pass", "warn", "pass"]
    assert report.exit_code == 0  # a warn never changes the exit code
    assert report.results[0].metric_kind == "aggregate"


def test_errored_case_is_an_error_never_a_pass(reg: Registry) -> None:
    rows = [CaseResult("a", TargetResponse(), {"ndcg@10": 1.0}),
            CaseResult("b", None, {}, error="target 'svc' failed on case 'b': timeout")]
    run = RunResult("r", rows)
    report = evaluate_gate([floor("ndcg@10", 0.0), floor("ndcg@10", 0.0, id="only_a",
                                                         scope=("a",))], run)
    assert report.results[0].verdict == "error"
    assert "errored" in report.results[0].message and "timeout" in report.results[0].message
    assert report.results[0].coverage == "1/2 cases"
    # a check whose own cases all ran is still not judged on an incomplete run
    only_a = report.results[1]
    assert only_a.verdict == "error" and only_a.coverage == "1/1 cases"
    assert "1 errored case(s) outside this check's cases: b" in only_a.message
    assert report.exit_code == 2


def test_scoped_case_without_a_row_is_an_error(reg: Registry) -> None:
    run = qrun("r", {"a": {"ndcg@3": 1.0}, "b": {"ndcg@3": 1.0}})
    report = evaluate_gate([floor("ndcg@3", 1.0, id="controls_hold", scope=("a", "b", "c"))],
                           run)
    r = report.results[0]
    assert r.verdict == "error" and r.coverage == "2/3 cases" and "c" in r.message
    assert report.exit_code == 2


def test_unknown_metric_and_count_are_errors(reg: Registry) -> None:
    run = qrun("r", {"a": {"ndcg@10": 1.0}})
    report = evaluate_gate([floor("ndgc@10", 0.5)], run)
    assert report.results[0].verdict == "error"
    assert "unknown metric 'ndgc@10'" in report.results[0].message
    assert report.exit_code == 2


def test_a_misspelled_metric_of_the_run_gets_did_you_mean(reg: Registry) -> None:
    # a project's own metric, not registered in this process: the run's rows name it
    run = qrun("r", {"a": {"faithfulness": 0.5, "ndcg@10": 0.2},
                     "b": {"faithfulness": 0.7, "ndcg@10": 0.4}})
    report = evaluate_gate([floor("faithfullness", 0.5), floor("ndcg@3", 0.1)], run)
    misspelled, absent = report.results
    assert misspelled.verdict == absent.verdict == "error"
    assert misspelled.message == ("unknown metric 'faithfullness'; did you mean "
                                  "'faithfulness'? The run's rows have: faithfulness, ndcg@10")
    # registered, but not what the run holds: the run's own spelling is suggested
    assert absent.message == ("metric 'ndcg@3' is missing from run 'r' on 2 of 2 case(s) "
                              "(a, b); the rows have: faithfulness, ndcg@10; did you mean "
                              "'ndcg@10'?")


def test_threshold_on_an_unregistered_metric_the_rows_carry(reg: Registry) -> None:
    run = qrun("r", {"a": {"client_score": 0.25}, "b": {"client_score": 0.75}})
    report = evaluate_gate([floor("client_score", 0.5)], run)
    assert report.results[0].verdict == "pass" and report.results[0].observed == 0.5


def test_warn_level_errors_do_not_change_the_exit_code(reg: Registry) -> None:
    run = qrun("r", {"a": {"ndcg@10": 0.9}})
    report = evaluate_gate([floor("ndcg@10", 0.5), floor("recall@10", 0.5, level="warn")], run)
    assert [r.verdict for r in report.results] == ["pass", "error"]
    assert report.exit_code == 0
    assert "verdict does not change the exit code" in report.results[1].detail()


def test_two_wins_over_one(reg: Registry) -> None:
    run = qrun("r", {"a": {"ndcg@10": 0.1}})
    report = evaluate_gate([floor("ndcg@10", 0.5), floor("recall@10", 0.5)], run)
    assert [r.verdict for r in report.results] == ["fail", "error"]
    assert report.exit_code == 2


def test_empty_or_duplicate_check_lists_are_refused(reg: Registry) -> None:
    run = qrun("r", {"a": {"ndcg@10": 0.1}})
    with pytest.raises(CheckError, match="no checks"):
        evaluate_gate([], run)
    with pytest.raises(CheckError, match="duplicate"):
        evaluate_gate([floor("ndcg@10", 0.5), floor("ndcg@10", 0.6)], run)


# ------------------------------------------------------------------ vs_baseline
IDS = [f"q{i:02d}" for i in range(30)]
BASE_VALUES = {q: (i % 7) / 10 + 0.2 for i, q in enumerate(IDS)}  # 0.2 .. 0.8


def shifted(name: str, metric: str, delta: float) -> RunResult:
    return qrun(name, {q: {metric: v + delta} for q, v in BASE_VALUES.items()})


@pytest.mark.parametrize(
    ("metric", "delta", "verdict", "outcome"),
    [
        ("ndcg@10", -0.1, "fail", "regressed"),          # higher is better, went down
        ("ndcg@10", +0.1, "pass", "improved"),           # significant improvement passes
        ("ndcg@10", 0.0, "pass", "no significant change"),
        ("unsupported_claims", +0.1, "fail", "regressed"),  # lower is better, went up
        ("unsupported_claims", -0.1, "pass", "improved"),
    ],
)
def test_polarity_decides_the_worse_direction(
    reg: Registry, metric: str, delta: float, verdict: str, outcome: str
) -> None:
    base = shifted("base", metric, 0.0)
    cand = shifted("cand", metric, delta)
    report = evaluate_gate([noreg(metric)], cand, base, n_resamples=B)
    r = report.results[0]
    assert r.verdict == verdict
    c = r.comparison
    assert c is not None and c.outcome == outcome
    assert c.difference == pytest.approx(delta)
    assert c.baseline_value == pytest.approx(sum(BASE_VALUES.values()) / 30)
    assert r.observed == pytest.approx(sum(BASE_VALUES.values()) / 30 + delta)
    # the default test is the sign-flip randomization test. Every case moved by exactly
    # delta, so only the all-plus and all-minus sign patterns reach |delta|: p = 2 / 2**30,
    # which a Monte Carlo test with B resamples reports as its floor 1 / (B + 1); with
    # delta = 0 every pattern reaches it (p = 1)
    assert c.method == "randomization"
    assert c.p_value == pytest.approx(1.0 if delta == 0 else 1 / (B + 1))
    assert c.p_adjusted == pytest.approx(c.p_value)  # a family of one
    assert report.exit_code == (1 if verdict == "fail" else 0)


def test_per_case_p_matches_the_exact_sign_flip_test(reg: Registry) -> None:
    import itertools

    diffs = [-0.3, -0.2, -0.25, -0.1, -0.15, 0.05, -0.2, -0.1]
    ids = [f"e{i}" for i in range(len(diffs))]
    base = qrun("base", {q: {"ndcg@10": 0.6} for q in ids})
    cand = qrun("cand", {q: {"ndcg@10": 0.6 + d} for q, d in zip(ids, diffs, strict=True)})
    # all 2**8 sign patterns, enumerated here
    observed = abs(sum(diffs) / 8)
    extreme = sum(
        1 for signs in itertools.product((1, -1), repeat=8)
        if abs(sum(s * d for s, d in zip(signs, diffs, strict=True)) / 8) >= observed - 1e-12
    )
    expected_p = extreme / 256
    assert expected_p < 0.05
    r = evaluate_gate([noreg("ndcg@10")], cand, base).results[0]
    assert r.comparison is not None
    assert r.comparison.p_value == pytest.approx(expected_p)
    assert r.comparison.difference == pytest.approx(sum(diffs) / 8)
    assert r.verdict == "fail"
    # equal differences on 8 cases: p = 2 / 2**8 exactly
    shifted8 = qrun("s8", {q: {"ndcg@10": 0.5} for q in ids})
    r8 = evaluate_gate([noreg("ndcg@10")], shifted8, base).results[0]
    assert r8.comparison is not None and r8.comparison.p_value == pytest.approx(2 / 256)


def test_noise_passes(reg: Registry) -> None:
    base = shifted("base", "ndcg@10", 0.0)
    # half the cases up by 0.05, half down by 0.05: mean difference 0
    cand = qrun("cand", {q: {"ndcg@10": v + (0.05 if i % 2 else -0.05)}
                         for i, (q, v) in enumerate(BASE_VALUES.items())})
    r = evaluate_gate([noreg("ndcg@10")], cand, base, n_resamples=B).results[0]
    assert r.verdict == "pass"
    assert r.comparison is not None and r.comparison.difference == pytest.approx(0.0, abs=1e-12)
    assert r.comparison.p_value > 0.5


def test_aggregate_baseline_uses_a_bootstrap_over_case_ids(reg: Registry) -> None:
    def rows(extra: float) -> list[CaseResult]:
        return [CaseResult(q, TargetResponse(), {"ndcg@10": 1.0}, latency_ms=100 + 10 * i + extra)
                for i, q in enumerate(IDS)]

    base = RunResult("base", rows(0.0))
    slower = RunResult("slower", rows(50.0))
    same = RunResult("same", rows(0.0))
    # p95 of 100, 110, ..., 390 (30 values): rank ceil(28.5) = 29 -> 100 + 10 * 28 = 380
    r = evaluate_gate([noreg("p95_ms")], slower, base, n_resamples=B).results[0]
    assert r.verdict == "fail" and r.metric_kind == "aggregate"
    c = r.comparison
    assert c is not None
    assert (r.observed, c.baseline_value, c.difference) == (430.0, 380.0, 50.0)
    # adding 50 to every case shifts every resample's p95 by exactly 50
    assert c.p_value == pytest.approx(1 / (B + 1))
    assert (c.ci_low, c.ci_high) == (50.0, 50.0)
    assert c.method == "bootstrap over case ids"
    ok = evaluate_gate([noreg("p95_ms")], same, base, n_resamples=B).results[0]
    assert ok.verdict == "pass" and ok.comparison is not None
    assert ok.comparison.p_value == 1.0


def test_holm_by_hand() -> None:
    # sorted: 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> running max 0.06)
    assert holm([0.04, 0.01, 0.03]) == pytest.approx([0.06, 0.03, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_holm_across_blocking_baseline_checks_only(
    reg: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw_p = {"ndcg@10": 0.01, "recall@10": 0.04, "recall@100": 0.03, "ndcg@3": 0.04}

    def fake_test(cand: Any, base: Any, metric: str, alpha: float, n_resamples: int,
                  seed: int, value_type: str | None = None, clusters: Any = None) -> Any:
        return gate_mod._TestOutcome(-0.1, -0.2, -0.01, raw_p[metric], "fake", None)

    monkeypatch.setattr(gate_mod, "_per_case_test", fake_test)
    metrics = ["ndcg@10", "recall@10", "recall@100", "ndcg@3"]
    # 8 cases: each test's p on equal differences, 2/2**8, lets Holm over 3 reject
    base = qrun("base", {q: dict.fromkeys(metrics, 0.5) for q in IDS[:8]})
    cand = qrun("cand", {q: dict.fromkeys(metrics, 0.4) for q in IDS[:8]})
    checks = [noreg("ndcg@10"), noreg("recall@10"), noreg("recall@100"),
              noreg("ndcg@3", level="warn")]
    report = evaluate_gate(checks, cand, base)
    comps = [r.comparison for r in report.results]
    assert all(c is not None for c in comps)
    # the three blocking checks form the family (m = 3); see test_holm_by_hand
    assert [c.p_adjusted for c in comps[:3]] == pytest.approx([0.03, 0.06, 0.06])  # type: ignore[union-attr]
    assert comps[3].p_adjusted is None  # type: ignore[union-attr]
    # each adjusted p against its own alpha (0.05): only ndcg@10 stays significant
    assert [r.verdict for r in report.results] == ["fail", "pass", "pass", "warn"]
    # the warn check is judged on its raw p (0.04 < 0.05)
    assert report.exit_code == 1
    # a check's own alpha: recall@10 with alpha 0.1 fails on its adjusted 0.06
    checks[1] = noreg("recall@10", alpha=0.1)
    report = evaluate_gate(checks, cand, base)
    assert [r.verdict for r in report.results][:3] == ["fail", "fail", "pass"]


def test_baseline_check_without_baseline_is_an_error(reg: Registry) -> None:
    report = evaluate_gate([noreg("ndcg@10")], shifted("c", "ndcg@10", 0.0))
    assert report.results[0].verdict == "error" and "baseline" in report.results[0].message
    assert report.exit_code == 2


def test_baseline_over_different_cases_is_an_error(reg: Registry) -> None:
    base = shifted("base", "ndcg@10", 0.0)
    cand = qrun("cand", {q: {"ndcg@10": v} for q, v in list(BASE_VALUES.items())[:-2]}
                | {"new1": {"ndcg@10": 0.5}})
    scope = tuple(f"q{i:02d}" for i in range(10))  # enough cases for a test that can fail
    report = evaluate_gate([noreg("ndcg@10"), noreg("ndcg@10", id="scoped", scope=scope)],
                           cand, base)
    r = report.results[0]
    assert r.verdict == "error"
    assert "only in the run (new1)" in r.message and "only in the baseline (q28, q29)" in (
        r.message)
    assert report.results[1].verdict == "pass"  # its own cases are in both
    assert report.exit_code == 2


def test_legacy_metric_without_polarity_is_refused_with_how_to_declare(
    reg: Registry,
) -> None:
    from evalkit.execute.run_retriever import METRICS

    METRICS["hits"] = lambda retrieved, relevant, k: 0.0
    base = qrun("base", {q: {"hits@3": 1.0} for q in IDS[:4]})
    cand = qrun("cand", {q: {"hits@3": 1.0} for q in IDS[:4]})
    report = evaluate_gate([noreg("hits@3")], cand, base, n_resamples=B)
    r = report.results[0]
    assert r.verdict == "error"
    assert "no declared polarity" in r.message and "higher_is_better" in r.message
    # a threshold check needs no polarity (op carries the direction)
    assert evaluate_gate([floor("hits@3", 1.0)], base).results[0].verdict == "pass"


def test_nan_in_the_baseline_is_an_error(reg: Registry) -> None:
    base = qrun("base", {"a": {"ndcg@10": float("nan")}, "b": {"ndcg@10": 0.5}})
    cand = qrun("cand", {"a": {"ndcg@10": 0.5}, "b": {"ndcg@10": 0.5}})
    r = evaluate_gate([noreg("ndcg@10")], cand, base, n_resamples=B).results[0]
    assert r.verdict == "error" and "baseline 'base'" in r.message


def test_report_lines(reg: Registry) -> None:
    run = qrun("r", {"a": {"ndcg@3": 1.0}, "b": {"ndcg@3": 1.0}, "c": {"ndcg@3": 1.0}})
    report = evaluate_gate([floor("ndcg@3", 1.0, id="controls_hold", scope=("a", "b", "c"))],
                           run)
    lines = report.lines()
    assert lines[0] == "controls_hold: pass (3/3 cases)"
    assert lines[-1] == "gate passed: 1 passed, 0 failed, 0 warned, 0 errors (exit 0)"


def test_a_raising_aggregate_is_an_error_not_a_crash(reg: Registry) -> None:
    def broken(rows: Sequence[Any]) -> float:
        raise ZeroDivisionError("oops")

    reg.register_aggregate("broken_agg", higher_is_better=True)(broken)
    run = qrun("r", {"a": {"ndcg@10": 1.0}})
    report = evaluate_gate([CheckSpec("b", "broken_agg", op=">=", threshold=0.0),
                            noreg("broken_agg")], run, qrun("b", {"a": {"ndcg@10": 1.0}}),
                           n_resamples=B)
    assert [r.verdict for r in report.results] == ["error", "error"]
    assert "ZeroDivisionError: oops" in report.results[0].message
    assert report.exit_code == 2


def test_an_aggregate_resting_on_some_cases_says_how_many(reg: Registry) -> None:
    """An aggregate with ``rests_on`` (an agreement statistic on the labelled cases)
    words its coverage ``m <word> of k cases``, in threshold and baseline checks and in
    the JSON; a plain aggregate keeps ``k/n cases``."""
    from dataclasses import replace

    from evalkit.core.registry import Provider
    from evalkit.core.specs import AggregateSpec

    def flagged(rows: Sequence[Any], metric: str | None) -> int:
        return sum(1 for r in rows if int(r.case_id[1:]) % 3 == 0)

    spec = AggregateSpec("p95_flagged", _p95, higher_is_better=False, rests_on=flagged,
                         rests_on_word="flagged")
    reg.add(spec, Provider("evalkit.report", "paired-evalkit-core", "test"),
            from_plugin=True)
    rows = [CaseResult(f"c{i}", TargetResponse(), {"ndcg@10": 1.0}, latency_ms=float(i))
            for i in range(1, 21)]
    run, base = RunResult("r", rows), RunResult("b", [replace(r) for r in rows])
    checks = [CheckSpec("flag", "p95_flagged", op="<=", threshold=100),
              noreg("p95_flagged", id="flag_noreg"), CheckSpec("plain", "p95_ms", op="<=",
                                                               threshold=100)]
    report = evaluate_gate(checks, run, base, n_resamples=B)
    assert [r.verdict for r in report.results] == ["pass", "pass", "pass"]
    assert [r.coverage for r in report.results] == [
        "6 flagged of 20 cases", "6 flagged of 20 cases", "20/20 cases"]
    assert report.results[0].line() == "flag: pass (6 flagged of 20 cases)"
    coverage = report.results[0].to_dict()["coverage"]
    assert (coverage["rests_on"], coverage["rests_on_word"]) == (6, "flagged")
    assert "rests_on" not in report.results[2].to_dict()["coverage"]
