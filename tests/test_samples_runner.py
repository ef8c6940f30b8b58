"""Repeated samples (epochs K): rows keyed by (case, sample), reduction, resume, rescore,
completeness, aggregates over every sample. Expected values are worked by hand below."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import pytest

from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.samples import SampleError, parse_reduce, reduce_samples
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.rescore import rescore
from evalkit.execute.target_runner import ResumeError, evaluate

EXPECTED = {"q1": ["d1", "d2"], "q2": ["d3"], "q3": ["d5"]}
# what the n-th call (0-based) of each case returns; recall@2 worked by hand beside it
ANSWERS = {
    "q1": [["d1", "x"], ["d1", "d2"], ["x", "y"]],  # 0.5, 1.0, 0.0 -> mean 0.5
    "q2": [["d3"], ["d3"], ["y"]],                   # 1, 1, 0 -> mean 2/3
    "q3": [["z"], ["z"], ["z"]],                     # 0, 0, 0 -> mean 0
}
RECALL = {"q1": [0.5, 1.0, 0.0], "q2": [1.0, 1.0, 0.0], "q3": [0.0, 0.0, 0.0]}


def goldens() -> GoldenSet:
    return GoldenSet(GoldenCase(q, f"query {q}", expected=e, relevant=frozenset(e),
                                relevance={d: 1 for d in e}) for q, e in EXPECTED.items())


def write_goldens(path: Path) -> Path:
    path.write_text("".join(json.dumps({"id": q, "query": f"query {q}", "expected": e})
                            + "\n" for q, e in EXPECTED.items()))
    return path


class Sampler:
    """Answers the n-th call of a case with ``ANSWERS[case][n % 3]``; records calls."""

    def __init__(self, fail: set[tuple[str, int]] | None = None) -> None:
        self.calls: Counter[str] = Counter()
        self.fail = fail or set()
        self.lock = threading.Lock()

    def __call__(self, case: GoldenCase) -> TargetResponse:
        with self.lock:
            n = self.calls[case.id]
            self.calls[case.id] += 1
        if (case.id, n) in self.fail:
            raise ConnectionError(f"down for {case.id} call {n}")
        return TargetResponse(ranked_ids=ANSWERS[case.id][n % 3], latency_ms=10.0 * (n + 1))


def run3(fn: Sampler, **kw: object) -> RunResult:
    return evaluate(CallableTarget(fn, name="sys"), goldens(), ["recall@2"],
                    max_concurrency=1, progress=False, epochs=3, **kw)  # type: ignore[arg-type]


def test_each_case_is_answered_k_times_and_reduced_by_the_mean() -> None:
    fn = Sampler()
    run = run3(fn)
    assert fn.calls == {"q1": 3, "q2": 3, "q3": 3}
    assert run.epochs == 3
    assert [(r.case_id, r.sample) for r in run.samples] == [
        (q, s) for q in ("q1", "q2", "q3") for s in range(3)]
    assert {(r.case_id, r.sample): r.metrics["recall@2"] for r in run.samples} == {
        (q, s): RECALL[q][s] for q in RECALL for s in range(3)}
    assert [r.case_id for r in run.per_query] == ["q1", "q2", "q3"]
    assert all(r.sample is None for r in run.per_query)
    assert run.scores("recall@2") == pytest.approx({"q1": 0.5, "q2": 2 / 3, "q3": 0.0})
    assert run.mean("recall@2") == pytest.approx((0.5 + 2 / 3) / 3)
    assert run.header["samples"] == {"epochs": 3, "reduce": "mean"}
    assert run.header["config"]["epochs"] == 3


@pytest.mark.parametrize(("how", "expected"), [
    ("max", {"q1": 1.0, "q2": 1.0, "q3": 0.0}),
    ("min", {"q1": 0.0, "q2": 0.0, "q3": 0.0}),
    ("all", {"q1": 0.0, "q2": 0.0, "q3": 0.0}),
])
def test_reduction_options(how: str, expected: dict[str, float]) -> None:
    run = run3(Sampler(), reduce=how)
    assert run.scores("recall@2") == expected
    assert run.header["samples"]["reduce"] == how


def test_all_with_a_threshold_and_bad_settings() -> None:
    rows = [CaseResult("a", TargetResponse([]), {"m": v}, sample=i)
            for i, v in enumerate([0.6, 0.7, 0.9])]
    rows += [CaseResult("b", TargetResponse([]), {"m": v}, sample=i)
             for i, v in enumerate([0.6, 0.4, 0.9])]
    assert [r.metrics["m"] for r in reduce_samples(rows, "all:0.6")] == [1.0, 0.0]
    assert [r.metrics["m"] for r in reduce_samples(rows, "all:0.95")] == [0.0, 0.0]
    assert parse_reduce("all:0.8").spec == "all:0.8"
    with pytest.raises(SampleError, match="not one of mean, max"):
        parse_reduce("median")
    with pytest.raises(SampleError, match="finite number"):
        parse_reduce("all:high")
    with pytest.raises(SampleError, match="an integer from 1 to 10000"):
        evaluate(CallableTarget(Sampler()), goldens(), ["recall@2"], epochs=0,
                 progress=False)


def test_metric_failure_on_one_sample_fails_the_case_only() -> None:
    rows = [CaseResult("a", TargetResponse([]), {"m": 1.0, "k": 1.0}, sample=0),
            CaseResult("a", TargetResponse([]), {"k": 0.0}, sample=1,
                       metric_errors={"m": "judge down"})]
    (row,) = reduce_samples(rows)
    assert row.metrics == {"k": 0.5}
    assert row.metric_errors == {"m": "sample 1: judge down"}


def test_artifact_stores_every_sample_and_loads_back_reduced(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    run = run3(Sampler(), artifact=art)
    lines = [json.loads(x) for x in art.read_text().splitlines()]
    rows = [x for x in lines if x["type"] == "row"]
    assert [(x["id"], x["sample"]) for x in rows] == [
        (q, s) for q in ("q1", "q2", "q3") for s in range(3)]
    assert lines[-1] == {**lines[-1], "type": "trailer", "rows": 9}
    copy = tmp_path / "copy.jsonl"
    run.save(copy)
    assert copy.read_bytes() == art.read_bytes()
    back = RunResult.load(art)
    assert back.epochs == 3 and len(back.samples) == 9
    assert back.scores("recall@2") == run.scores("recall@2")
    assert back.coverage().complete


def test_one_sample_runs_keep_the_seed_layout(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    run = evaluate(CallableTarget(Sampler(), name="sys"), goldens(), ["recall@2"],
                   progress=False, artifact=art)
    text = art.read_text()
    assert '"sample"' not in text and '"samples"' not in text and "epochs" not in text
    assert run.samples == [] and run.epochs == 1


def test_resume_calls_only_the_missing_samples(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    first = Sampler(fail={("q2", 1)})  # q2's second sample fails
    run = run3(first, artifact=art)
    assert run.header["status"] == "incomplete"
    assert not RunResult.load(art).coverage().complete
    assert run.per_query[1].error is not None and "sample 1" in run.per_query[1].error
    # cut the file back to a running log without q3's last two samples and the trailer
    lines = art.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["status"] = "running"
    kept = [x for x in lines[1:-1] if not (json.loads(x)["id"] == "q3"
                                            and json.loads(x)["sample"] > 0)]
    art.write_text(json.dumps(header) + "\n" + "".join(kept))
    partial = RunResult.load(art).coverage()
    assert not partial.complete
    assert any("2 of 9 (case, sample) pairs have no row" in p for p in partial.problems)
    again = Sampler()
    again.calls.update({"q2": 1, "q3": 1})  # so the answers continue where they were
    resumed = run3(again, artifact=art, resume=True)
    assert again.calls == {"q2": 2, "q3": 3}  # one retried q2 sample, two q3 samples
    assert resumed.header["resume"] == {"kept": 6, "called": 3, "retried": 1,
                                        "rescored": 0}
    assert resumed.header["status"] == "complete"
    assert resumed.scores("recall@2") == pytest.approx({"q1": 0.5, "q2": 2 / 3, "q3": 0.0})
    assert RunResult.load(art).coverage().complete


def test_resume_with_another_k_is_refused(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    run3(Sampler(), artifact=art)
    with pytest.raises(ResumeError, match="epochs"):
        evaluate(CallableTarget(Sampler(), name="sys"), goldens(), ["recall@2"],
                 progress=False, epochs=2, artifact=art, resume=True)


def test_rescore_scores_every_sample_and_reduces_again(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    run3(Sampler(), artifact=art, reduce="max")
    out = rescore(art, ["recall@1"], goldens=write_goldens(tmp_path / "g.jsonl"))
    # recall@1 of q1's samples: d1 (1/2), d1 (1/2), x (0); q2: 1, 1, 0; q3: 0
    assert [r.metrics["recall@1"] for r in out.samples] == [0.5, 0.5, 0, 1, 1, 0, 0, 0, 0]
    assert out.scores("recall@1") == {"q1": 0.5, "q2": 1.0, "q3": 0.0}
    back = RunResult.load(art)
    assert len(back.samples) == 9 and back.scores("recall@1") == out.scores("recall@1")


def test_aggregates_see_every_sample_and_item_shares_count_a_case_once() -> None:
    run = run3(Sampler(), aggregates=["latency_mean", "max_item_share"])
    # latencies 10, 20, 30 ms for each case's samples: mean 20 over 9 calls
    assert run.header["aggregates"]["latency_mean"] == pytest.approx(20.0)
    # items per case, over its samples: q1 {d1, x, d2, y}, q2 {d3, y}, q3 {z}; y is in 2
    # of 3 cases (per row it would be z, in 3 of 9 rows: 1/3)
    assert run.header["aggregates"]["max_item_share"] == pytest.approx(2 / 3)


def test_the_run_dataframe_has_a_row_per_case_or_per_sample() -> None:
    pytest.importorskip("pandas")
    run = run3(Sampler())
    cases = run.to_pandas()
    assert list(cases["qid"]) == ["q1", "q2", "q3"]
    assert list(cases["recall@2"]) == pytest.approx([0.5, 2 / 3, 0.0])
    rows = run.to_pandas(samples=True)
    assert list(rows["sample"]) == [0, 1, 2] * 3
    assert list(rows["recall@2"]) == [v for q in ("q1", "q2", "q3") for v in RECALL[q]]


def test_the_gate_judges_reduced_values_and_counts_every_sample(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evalkit.cli.app import app

    art = tmp_path / "run.jsonl"
    run3(Sampler(), artifact=art)
    checks = tmp_path / "checks.yaml"
    # the reduced mean is (0.5 + 2/3 + 0) / 3 = 0.3889: it passes 0.38 and fails 0.39;
    # the mean over the 9 sample rows would be the same, but n is 3 cases, not 9
    checks.write_text("checks:\n  - id: floor\n    metric: recall@2\n    op: '>='\n"
                      "    threshold: 0.38\n")
    res = CliRunner().invoke(app, ["gate", "--checks", str(checks), "--run", str(art)])
    assert res.exit_code == 0, res.output
    assert "3/3 cases" in res.output
    assert "samples per case: run 'sys' K = 3 (mean)" in res.output
    res = CliRunner().invoke(app, ["eval", str(art)])
    assert "3 cases evaluated (3 samples each, reduced by mean)" in res.output  # target run
    assert "0.3889" in res.output
    checks.write_text(checks.read_text().replace("0.38", "0.39"))
    res = CliRunner().invoke(app, ["gate", "--checks", str(checks), "--run", str(art)])
    assert res.exit_code == 1, res.output
    # a sample missing from the file: coverage fails and the gate refuses (exit 2)
    cut = tmp_path / "cut.jsonl"
    back = RunResult.load(art)
    back.samples = [r for r in back.samples if (r.case_id, r.sample) != ("q2", 2)]
    back.save(cut)
    res = CliRunner().invoke(app, ["gate", "--checks", str(checks), "--run", str(cut)])
    assert res.exit_code == 2, res.output
    assert "case 'q2' sample 2" in res.output


def test_a_gate_aggregate_sees_every_call(tmp_path: Path) -> None:
    from evalkit.gate import evaluate_gate
    from evalkit.gate.checks import CheckSpec

    run = run3(Sampler(), aggregates=["latency_p95"])
    # each case's calls took 10, 20 and 30 ms: p95 over the 9 calls is 30 ms (over the
    # per-case mean latencies it would be 20 ms)
    check = CheckSpec(id="fast", metric="latency_p95", op="<=", threshold=25.0)
    result = evaluate_gate([check], run).results[0]
    assert result.observed == 30.0 and result.verdict == "fail"


def test_the_aggregate_bootstrap_resamples_cases_with_all_their_samples() -> None:
    from evalkit.stats import aggregate_bootstrap
    from evalkit.stats.aggregate import _rows_by_id

    def lat(case: str, ms: float, sample: int | None = None) -> CaseResult:
        return CaseResult(case, TargetResponse([], latency_ms=ms), {}, latency_ms=ms,
                          sample=sample)

    def one(name: str, shift: float) -> RunResult:
        return RunResult(name, [lat(f"c{i}", 10.0 * i + shift * (i % 5)) for i in range(12)])

    def three(name: str, shift: float) -> RunResult:  # K = 3 copies of each call
        rows = [lat(f"c{i}", 10.0 * i + shift * (i % 5), s) for i in range(12)
                for s in range(3)]
        return RunResult(name, reduce_samples(rows), samples=rows)

    from evalkit.execute.aggregates import latency_mean

    assert len(_rows_by_id(three("a", 0), "a")["c0"]) == 3
    single = aggregate_bootstrap(one("a", 3.0), one("b", 0.0), latency_mean, n_resamples=500)
    copies = aggregate_bootstrap(three("a", 3.0), three("b", 0.0), latency_mean,
                                 n_resamples=500)
    # drawing cases (each with its 3 copies) gives the K = 1 figures exactly; drawing the
    # 36 rows one by one would narrow the interval as if there were 36 cases
    assert (copies.observed, copies.ci_low, copies.ci_high, copies.p_value) == pytest.approx(
        (single.observed, single.ci_low, single.ci_high, single.p_value))
    assert copies.n_queries == 12
    assert single.ci_low < single.observed < single.ci_high  # the cases do vary
