"""evaluate(): concurrency bound, rows keyed by id, errors never scored, artifact, resume,
rescore."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from evalkit.core.registry import RegistryError
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import ArtifactError, RunResult
from evalkit.data.rows import CaseResult
from evalkit.data.targets import CallableTarget, TargetResponse
from evalkit.execute.rescore import rescore
from evalkit.execute.target_runner import ResumeError, evaluate
from evalkit.plugins.default import use_registry

RANKING = {"q1": ["d1", "x", "d2"], "q2": ["y", "d3"], "q3": ["z"], "q4": ["d4"]}
EXPECTED = {"q1": ["d1", "d2"], "q2": ["d3"], "q3": ["d5"], "q4": ["d4"]}


def goldens() -> GoldenSet:
    return GoldenSet(GoldenCase(q, f"query {q}", expected=e, relevant=frozenset(e),
                                relevance={d: 1 for d in e}) for q, e in EXPECTED.items())


def write_goldens(path: Path, ids: dict[str, list[str]] = EXPECTED) -> Path:
    path.write_text("".join(json.dumps({"id": q, "query": f"query {q}", "expected": e}) + "\n"
                            for q, e in ids.items()))
    return path


class Recorder:
    """A ranker that records which cases it was called on."""

    def __init__(self, fail: set[str] | None = None, delay: float = 0.0) -> None:
        self.calls: list[str] = []
        self.fail = fail or set()
        self.delay = delay
        self.lock = threading.Lock()

    def __call__(self, case: GoldenCase) -> list[str]:
        with self.lock:
            self.calls.append(case.id)
        if self.delay:
            time.sleep(self.delay)
        if case.id in self.fail:
            raise ConnectionError(f"service down for {case.id}")
        return RANKING[case.id]


def test_retrieval_metrics_score_target_rows_from_expected_ids() -> None:
    run = evaluate(CallableTarget(Recorder(), name="sys"), goldens(),
                   ["recall@2", "ndcg@10"], progress=False)
    # hand values: q1 hits d1 at 1 of {d1,d2} -> recall@2 0.5; q2 d3 at rank 2 -> 1.0;
    # q3 none -> 0; q4 d4 at 1 -> 1
    assert run.scores("recall@2") == {"q1": 0.5, "q2": 1.0, "q3": 0.0, "q4": 1.0}
    # q1: DCG = 1 + 1/log2(4) = 1.5, IDCG = 1 + 1/log2(3)
    ndcg_q1 = 1.5 / (1 + 1 / 1.584962500721156)
    assert run.scores("ndcg@10")["q1"] == pytest.approx(ndcg_q1, abs=1e-12)
    assert run.scores("ndcg@10")["q2"] == pytest.approx(1 / 1.584962500721156, abs=1e-12)
    assert run.header["status"] == "complete" and run.header["errors"] == 0
    assert all(isinstance(r, CaseResult) for r in run.per_query)
    assert run.ids() == ["q1", "q2", "q3", "q4"]  # golden order, whatever completion order


def test_concurrency_is_bounded_and_used() -> None:
    active = 0
    peak = 0
    lock = threading.Lock()

    def slow(case: GoldenCase) -> list[str]:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.02)
        with lock:
            active -= 1
        return [case.id]

    gs = GoldenSet(GoldenCase(f"c{i}", "q") for i in range(40))
    run = evaluate(CallableTarget(slow), gs, aggregates=["latency_p50"], max_concurrency=4,
                   progress=False)
    assert peak == 4
    assert len(run.per_query) == 40
    assert run.header["aggregates"]["latency_p50"] >= 20.0


def test_rows_are_keyed_by_id_whatever_the_completion_order() -> None:
    def reversed_speed(case: GoldenCase) -> list[str]:
        time.sleep(0.01 * (5 - int(case.id[1:])))
        return [case.id]

    gs = GoldenSet(GoldenCase(f"c{i}", "q", relevant=frozenset({f"c{i}"})) for i in range(5))
    run = evaluate(CallableTarget(reversed_speed), gs, ["recall@1"], max_concurrency=5,
                   progress=False)
    assert run.ids() == [f"c{i}" for i in range(5)]
    assert [r.retrieved for r in run.per_query] == [[f"c{i}"] for i in range(5)]


def test_a_failing_case_is_an_error_row_and_the_run_is_incomplete() -> None:
    run = evaluate(CallableTarget(Recorder(fail={"q2"}), name="sys"), goldens(),
                   ["recall@2"], ["latency_mean"], progress=False)
    row = {r.query_id: r for r in run.per_query}["q2"]
    assert row.response is None and row.metrics == {}
    assert row.error == "target 'sys' failed on case 'q2': service down for q2"
    assert run.header["status"] == "incomplete"
    assert run.header["errors"] == 1 and run.header["error_ids"] == ["q2"]
    assert run.header["aggregates"] == {}
    with pytest.raises(KeyError, match="case 'q2' errored"):
        run.scores("recall@2")
    with pytest.raises(KeyError, match="case 'q2' errored"):
        run.mean("recall@2")


def test_a_target_returning_the_wrong_type_or_raising_anything() -> None:
    class Odd:
        name = "odd"

        def invoke(self, case: GoldenCase) -> Any:
            if case.id == "q1":
                return ["not", "a", "response"]
            raise KeyError("nope")

    run = evaluate(Odd(), goldens(), progress=False)
    errors = {r.query_id: r.error for r in run.per_query}
    assert errors["q1"] == ("target 'odd' returned list for case 'q1'; invoke() must return "
                            "a TargetResponse")
    assert errors["q2"] == "target 'odd' failed on case 'q2': KeyError: 'nope'"


def test_a_failing_metric_keeps_the_response_and_is_recorded_on_that_metric() -> None:
    # schema 2: errors are per metric; the row keeps its response and its
    # other metrics, and the run stays complete
    with use_registry() as reg:

        @reg.register_metric("picky", higher_is_better=True)
        def picky(response: TargetResponse, case: GoldenCase) -> float:
            if case.id == "q3":
                raise ValueError("cannot judge q3")
            return 1.0

        run = evaluate(CallableTarget(Recorder()), goldens(), ["picky"], progress=False)
        row = {r.query_id: r for r in run.per_query}["q3"]
        assert row.response is not None and list(row.response.ranked_ids) == ["z"]
        assert row.error is None and "picky" not in row.metrics
        assert row.metric_errors == {"picky": "metric 'picky' failed on case 'q3': cannot judge q3"}
        assert run.header["status"] == "complete"
        assert run.header["metric_errors"] == {"picky": 1}
        assert run.header["metric_error_ids"] == {"picky": ["q3"]}


def test_names_are_checked_before_any_call() -> None:
    rec = Recorder()
    with pytest.raises(RegistryError, match="unknown metric 'nope@3'"):
        evaluate(CallableTarget(rec), goldens(), ["nope@3"], progress=False)
    with pytest.raises(RegistryError, match="'latency_p95' is a whole-run aggregate"):
        evaluate(CallableTarget(rec), goldens(), ["latency_p95"], progress=False)
    with pytest.raises(RegistryError, match="'recall@2' is a per-case metric"):
        evaluate(CallableTarget(rec), goldens(), [], ["recall@2"], progress=False)
    with pytest.raises(ValueError, match="max_concurrency must be a positive integer"):
        evaluate(CallableTarget(rec), goldens(), max_concurrency=0, progress=False)
    assert rec.calls == []


def test_undefined_aggregate_is_reported_not_zero() -> None:
    run = evaluate(CallableTarget(lambda c: "a text answer", name="llm"), goldens(),
                   aggregates=["entropy", "latency_p99"], progress=False)
    assert run.header["status"] == "complete"
    assert "entropy" not in run.header["aggregates"]
    assert "no row has ranked ids" in run.header["aggregate_errors"]["entropy"]
    assert run.header["aggregates"]["latency_p99"] >= 0.0


# ------------------------------------------------------------------ artifact
def test_artifact_round_trips_through_run_result_load(tmp_path: Path) -> None:
    art = tmp_path / "runs" / "sys.jsonl"
    run = evaluate(CallableTarget(Recorder(fail={"q3"}), name="sys"), goldens(),
                   ["recall@2"], artifact=art, progress=False)
    back = RunResult.load(art)
    assert back.ids() == ["q1", "q2", "q3", "q4"]
    assert back.header["status"] == "incomplete" and back.header["kind"] == "target"
    rows = {r.query_id: r for r in back.per_query}
    assert isinstance(rows["q1"], CaseResult)
    assert rows["q1"].metrics == run.per_query[0].metrics == {"recall@2": 0.5}
    assert list(rows["q1"].response.ranked_ids) == ["d1", "x", "d2"]  # type: ignore[union-attr]
    assert rows["q3"].response is None and "service down for q3" in str(rows["q3"].error)
    assert rows["q1"].latency_ms is not None
    assert not (tmp_path / "runs" / "sys.jsonl.tmp").exists()


def test_existing_artifact_is_not_overwritten_by_accident(tmp_path: Path) -> None:
    art = tmp_path / "a.jsonl"
    evaluate(CallableTarget(Recorder()), goldens(), ["recall@2"], artifact=art, progress=False)
    with pytest.raises(FileExistsError, match="already exists; resume it"):
        evaluate(CallableTarget(Recorder()), goldens(), ["recall@2"], artifact=art,
                 progress=False)
    run = evaluate(CallableTarget(Recorder()), goldens(), ["recall@2"], artifact=art,
                   overwrite=True, progress=False)
    assert run.header["status"] == "complete"


def _row_lines(art: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in art.read_text().splitlines()[1:]]
    return [x for x in lines if x["type"] == "row"]  # not the trailer


def test_resume_calls_only_missing_and_errored_cases(tmp_path: Path) -> None:
    art = tmp_path / "a.jsonl"
    ranker = Recorder(fail={"q2"})
    first = CallableTarget(ranker, name="sys")
    evaluate(first, goldens(), ["recall@2"], artifact=art, progress=False)
    assert sorted(ranker.calls) == ["q1", "q2", "q3", "q4"]
    ranker.calls.clear()
    ranker.fail.clear()
    run = evaluate(first, goldens(), ["recall@2"], artifact=art, resume=True, progress=False)
    assert ranker.calls == ["q2"]  # only the errored case is called again
    assert run.header["status"] == "complete" and run.header["resumed"] == 1
    assert run.scores("recall@2") == {"q1": 0.5, "q2": 1.0, "q3": 0.0, "q4": 1.0}
    assert [r["id"] for r in _row_lines(art)] == ["q1", "q2", "q3", "q4"]
    ranker.calls.clear()
    evaluate(first, goldens(), ["recall@2"], artifact=art, resume=True, progress=False)
    assert ranker.calls == []  # a complete run resumes to itself


def test_resume_tolerates_a_truncated_last_line_and_load_marks_it_incomplete(
        tmp_path: Path) -> None:
    art = tmp_path / "a.jsonl"
    ranker = Recorder()
    target = CallableTarget(ranker, name="sys")
    evaluate(target, goldens(), ["recall@2"], artifact=art, progress=False)
    lines = art.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["status"] = "running"
    # as if killed while writing q3's line: q1, q2 complete, q3 cut in the middle
    art.write_text(json.dumps(header) + "\n" + lines[1] + lines[2] + lines[3][:25])
    # schema 2: an unfinished file (no trailer) is read with its cut line dropped, and
    # fails coverage, so nothing can pass on it
    cut = RunResult.load(art)
    assert cut.ids() == ["q1", "q2"] and cut.integrity is not None
    assert cut.integrity.cut_line == 4
    cov = cut.coverage()
    assert not cov.complete and cov.missing == ("q3", "q4")
    assert "line 4 was cut mid-line" in cov.message()
    ranker.calls.clear()
    run = evaluate(target, goldens(), ["recall@2"], artifact=art, resume=True, progress=False)
    assert sorted(ranker.calls) == ["q3", "q4"]
    assert run.header["status"] == "complete"
    assert RunResult.load(art).ids() == ["q1", "q2", "q3", "q4"]


def test_resume_refuses_a_malformed_line_in_the_middle(tmp_path: Path) -> None:
    art = tmp_path / "a.jsonl"
    target = CallableTarget(Recorder(), name="sys")
    evaluate(target, goldens(), ["recall@2"], artifact=art, progress=False)
    lines = art.read_text().splitlines(keepends=True)
    art.write_text(lines[0] + "{broken\n" + "".join(lines[2:]))
    with pytest.raises(ArtifactError, match=r"a.jsonl:2: not valid JSON.*only a truncated "
                       "last line is tolerated"):
        evaluate(target, goldens(), ["recall@2"], artifact=art, resume=True, progress=False)


def test_resume_refuses_changed_config_saying_what_changed(tmp_path: Path) -> None:
    art = tmp_path / "a.jsonl"
    target = CallableTarget(Recorder(fail={"q4"}), name="sys")
    evaluate(target, goldens(), ["recall@2"], ["latency_p50"], artifact=art, progress=False)
    with pytest.raises(ResumeError) as info:
        evaluate(target, goldens(), ["recall@3"], ["latency_p50"], artifact=art, resume=True,
                 progress=False)
    assert "config metrics: ['recall@2'] -> ['recall@3']" in str(info.value)
    other = CallableTarget(Recorder(), name="other")
    with pytest.raises(ResumeError, match=r"config target.name: 'sys' -> 'other'"):
        evaluate(other, goldens(), ["recall@2"], ["latency_p50"], artifact=art, resume=True,
                 progress=False)
    with pytest.raises(ResumeError, match=r"config aggregates: \['latency_p50'\] -> \[\]"):
        evaluate(target, goldens(), ["recall@2"], artifact=art, resume=True, progress=False)


def test_resume_refuses_a_changed_golden_set_saying_which_cases(tmp_path: Path) -> None:
    art = tmp_path / "a.jsonl"
    gfile = write_goldens(tmp_path / "g.jsonl")
    target = CallableTarget(Recorder(fail={"q4"}), name="sys")
    evaluate(target, gfile, ["recall@2"], artifact=art, progress=False)
    changed = dict(EXPECTED)
    changed["q2"] = ["d9"]
    del changed["q3"]
    changed["q5"] = ["d5"]
    write_goldens(gfile, changed)
    with pytest.raises(ResumeError) as info:
        evaluate(target, gfile, ["recall@2"], artifact=art, resume=True, progress=False)
    msg = str(info.value)
    assert "golden set: added 1 case(s) ('q5'); removed 1 case(s) ('q3'); " \
           "changed 1 case(s) ('q2')" in msg


def test_resume_of_a_missing_artifact_starts_a_new_run(tmp_path: Path) -> None:
    art = tmp_path / "new.jsonl"
    run = evaluate(CallableTarget(Recorder()), goldens(), ["recall@2"], artifact=art,
                   resume=True, progress=False)
    assert run.header["status"] == "complete" and "resumed" not in run.header


# ------------------------------------------------------------------ rescore
def test_rescore_recomputes_from_stored_responses(tmp_path: Path) -> None:
    art = tmp_path / "a.jsonl"
    gfile = write_goldens(tmp_path / "g.jsonl")
    ranker = Recorder(fail={"q4"})
    evaluate(CallableTarget(ranker, name="sys"), gfile, ["recall@2"], artifact=art,
             progress=False)
    ranker.calls.clear()
    out = tmp_path / "rescored.jsonl"
    run = rescore(art, ["recall@1", "ndcg@10"], ["max_item_share"], output=out)
    assert ranker.calls == []  # the target is never called
    rows = {r.query_id: r for r in run.per_query}
    assert rows["q1"].metrics["recall@1"] == 0.5
    assert rows["q2"].metrics["recall@1"] == 0.0
    assert rows["q4"].error is not None and rows["q4"].response is None
    assert run.header["status"] == "incomplete"
    # the metric not named keeps its stored values
    assert run.header["config"]["metrics"] == ["recall@2", "recall@1", "ndcg@10"]
    assert run.header["rescored"]["previous_metrics"] == ["recall@2"]
    assert run.header["rescored"]["kept_metrics"] == ["recall@2"]
    stored = {r.query_id: r.metrics for r in RunResult.load(art).per_query}
    assert {q: rows[q].metrics.get("recall@2") for q in stored} == \
        {q: m.get("recall@2") for q, m in stored.items()}
    assert rows["q1"].metrics["recall@2"] is not None
    assert RunResult.load(out).header["metrics"].keys() == {"recall@2", "recall@1", "ndcg@10"}
    assert json.loads(art.read_text().splitlines()[0])["config"]["metrics"] == ["recall@2"]


def test_rescore_in_place_with_changed_expectations(tmp_path: Path) -> None:
    art = tmp_path / "a.jsonl"
    gfile = write_goldens(tmp_path / "g.jsonl")
    evaluate(CallableTarget(Recorder(), name="sys"), gfile, ["recall@2"], ["max_item_share"],
             artifact=art, progress=False)
    fixed = dict(EXPECTED)
    fixed["q3"] = ["z"]  # the golden was wrong; the stored response was right
    write_goldens(gfile, fixed)
    run = rescore(art, ["recall@2"])
    assert run.scores("recall@2")["q3"] == 1.0
    assert run.header["rescored"]["goldens_changed"] == ["q3"]
    assert run.header["aggregates"] == {"max_item_share": 0.25}
    assert RunResult.load(art).scores("recall@2")["q3"] == 1.0


def test_rescore_refuses_precomputed_runs_and_unknown_cases(tmp_path: Path) -> None:
    from evalkit.data.results import QueryResult

    plain = RunResult("p", [QueryResult("q1", ["d1"], {"m": 1.0})], header={})
    with pytest.raises(ArtifactError, match="not a target run"):
        rescore(plain, ["recall@1"])
    art = tmp_path / "a.jsonl"
    evaluate(CallableTarget(Recorder()), goldens(), ["recall@2"], artifact=art, progress=False)
    fewer = GoldenSet([GoldenCase("q1", "x")])
    with pytest.raises(ArtifactError, match=r"case 'q2' of run .* is not in the golden set"):
        rescore(art, ["recall@1"], goldens=fewer)


def test_progress_bar_shows_count_rate_eta_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    gs = GoldenSet(GoldenCase(f"c{i}", "q") for i in range(12))

    def ranker(case: GoldenCase) -> list[str]:
        time.sleep(0.005)
        if case.id == "c3":
            raise RuntimeError("down")
        return ["a"]

    evaluate(CallableTarget(ranker, name="demo"), gs, max_concurrency=2, progress=True)
    err = capsys.readouterr().err
    assert "demo" in err and "12/12" in err and "cases/s" in err and "ETA" in err
    assert "1 errored" in err
    evaluate(CallableTarget(ranker, name="quiet"), gs, progress=None)  # not a terminal
    assert capsys.readouterr().err == ""
