"""The handed failure cases (../shared/cases/handed.jsonl) for metrics and TREC loading.

Each test carries the case's inputs and expected values as literals. Where a case offers a
choice of convention, trec_eval's is taken (see docs/metrics.md). Every metric value is
checked on both scoring paths: the per-case function and the vectorised batch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import pytest
from evalkit_retrieval.ranking import rank_mapping
from evalkit_retrieval.trec import TrecFormatError, load_qrels, load_run, parse_qrels, parse_run

from evalkit import GoldenCase, RankedRun, TargetResponse, evaluate_run, run
from evalkit.core.specs import MetricSpec
from evalkit.execute.case_needs import UnjudgedCasesError
from evalkit.execute.scoring import MetricError, score_cases
from evalkit.plugins.default import resolve

TOL = 1e-6  # the cases print six decimals
TOL4 = 0.5e-4  # where a case gives four decimals (trec_eval's print precision)


def write(tmp_path: Path, name: str, lines: list[str] | str) -> Path:
    path = tmp_path / name
    text = lines if isinstance(lines, str) else "".join(line + "\n" for line in lines)
    path.write_bytes(text.encode("utf-8"))
    return path


def metric_spec(name: str) -> MetricSpec:
    spec = resolve(name)
    assert isinstance(spec, MetricSpec)
    return spec


def both_paths(ranked: list[str], judgments: Mapping[str, int], metric: str,
               relevance_level: int = 1) -> float:
    """The metric on one ranking by the per-case function and by the batch path (the
    record's own ``prepare``/``batch``: the scoring entry points refuse a case without
    judgments before any metric sees it, which C07 checks separately)."""
    spec = metric_spec(metric)
    case = GoldenCase.from_judgments("q", judgments, relevance_level=relevance_level)
    response = TargetResponse(ranked_ids=ranked)
    per_case = spec.fn(response, case)
    assert spec.prepare is not None and spec.batch is not None
    (batch,) = spec.batch(spec.prepare([response], [case]))
    if judgments:
        assert batch == score_cases([response], [case], [spec])[0][spec.name]
    assert per_case == pytest.approx(batch, abs=1e-12)
    return float(batch)


# --------------------------------------------------------------------------- C01
C01_QRELS = ["q1 0 doc1 1", "q1 0 doc2 0", "q1 0 doc3 0"]
C01_RUN = ["q1 Q0 doc1 1 0.5 sysA", "q1 Q0 doc2 2 0.5 sysA", "q1 Q0 doc3 3 0.5 sysA"]
C01_SHUFFLED = ["q1 Q0 doc3 3 0.5 sysA", "q1 Q0 doc1 1 0.5 sysA", "q1 Q0 doc2 2 0.5 sysA"]
C01_EXPECTED = {"mrr": 0.333333, "map": 0.333333, "ndcg": 0.5, "precision@1": 0.0,
                "precision@3": 0.333333}


@pytest.mark.parametrize("run_lines", [C01_RUN, C01_SHUFFLED], ids=["file", "shuffled"])
def test_c01_ties_broken_by_doc_id_descending(tmp_path: Path, run_lines: list[str]) -> None:
    qrels = write(tmp_path, "qrels", C01_QRELS)
    result = evaluate_run(write(tmp_path, "run", run_lines), qrels, list(C01_EXPECTED))
    assert result.per_query[0].retrieved == ["doc3", "doc2", "doc1"]
    for metric, value in C01_EXPECTED.items():
        assert result.mean(resolve(metric).name) == pytest.approx(value, abs=TOL)


def test_c01_same_rule_for_mappings_and_every_metric() -> None:
    scores = {"doc1": 0.5, "doc2": 0.5, "doc3": 0.5}
    assert rank_mapping(scores) == ["doc3", "doc2", "doc1"]
    assert rank_mapping(dict(reversed(list(scores.items())))) == ["doc3", "doc2", "doc1"]
    judged = {"doc1": 1, "doc2": 0, "doc3": 0}
    for metric, value in C01_EXPECTED.items():
        assert both_paths(rank_mapping(scores), judged, metric) == pytest.approx(value, abs=TOL)
    result = evaluate_run({"q1": scores}, {"q1": judged}, list(C01_EXPECTED))
    for metric, value in C01_EXPECTED.items():
        assert result.mean(resolve(metric).name) == pytest.approx(value, abs=TOL)


# --------------------------------------------------------------------------- C03
C03_QRELS = ["q1 0 d1 1", "q1 0 d2 1"]
C03_RUN = ["q1 Q0 d1 1 0.9 sysA", "q1 Q0 d1 2 0.8 sysA", "q1 Q0 d2 3 0.7 sysA"]


def test_c03_run_with_a_duplicate_document_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "run.txt", C03_RUN)
    with pytest.raises(TrecFormatError) as err:
        load_run(path)
    message = str(err.value)
    assert "'d1'" in message and "'q1'" in message
    assert f"{path}:2" in message and "line 1" in message and "duplicate docs" in message
    with pytest.raises(TrecFormatError):
        evaluate_run(path, write(tmp_path, "qrels", C03_QRELS), ["recall@3"])


@pytest.mark.parametrize("metric", ["recall@3", "precision@3", "ndcg@3", "ndcg", "ap", "rr",
                                    "ap@3", "rr@3", "success@3", "r_precision", "num_ret",
                                    "num_rel", "num_rel_ret"])
def test_c03_every_metric_refuses_a_ranking_with_a_duplicate(metric: str) -> None:
    spec = metric_spec(metric)
    case = GoldenCase.from_judgments("q1", {"d1": 1, "d2": 1})
    response = TargetResponse(ranked_ids=["d1", "d1", "d2"])
    with pytest.raises(ValueError, match="'d1'"):
        spec.fn(response, case)
    with pytest.raises(MetricError, match=r"case 'q1'.*'d1'"):
        score_cases([response], [case], [spec])


def test_c03_duplicates_refused_from_ranked_runs_and_retrievers() -> None:
    ranked = RankedRun(name="sysA", rankings={"q1": ["d1", "d1", "d2"]})
    with pytest.raises(MetricError, match=r"'q1'.*'d1'"):
        evaluate_run(ranked, {"q1": {"d1": 1, "d2": 1}}, ["recall@3"])

    class Query:
        id = "q1"

    with pytest.raises(ValueError, match=r"'d1'.*'q1'"):
        run("sysA", lambda q: ["d1", "d1", "d2"], [Query()], {"q1": {"d1", "d2"}},
            ["recall@3"])


def test_c03_the_deduplicated_run_scores_as_trec_eval(tmp_path: Path) -> None:
    deduped = write(tmp_path, "run", ["q1 Q0 d1 1 0.9 sysA", "q1 Q0 d2 3 0.7 sysA"])
    result = evaluate_run(deduped, write(tmp_path, "qrels", C03_QRELS),
                          ["recall@3", "precision@3", "ndcg@3"])
    row = result.per_query[0].metrics
    assert row == pytest.approx({"recall@3": 1.0, "precision@3": 0.666667, "ndcg@3": 1.0},
                                abs=TOL)


# --------------------------------------------------------------------------- C04
def test_c04_identical_duplicate_qrels_rows_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels", ["q1 0 d1 1", "q1 0 d1 1", "q1 0 d2 0"])
    with pytest.raises(TrecFormatError) as err:
        load_qrels(path)
    message = str(err.value)
    assert f"{path}:2" in message and "'d1'" in message and "'q1'" in message
    assert "first on line 1" in message and "duplicate docs" in message


def test_c04_conflicting_duplicate_qrels_rows_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "qrels", ["q1 0 d1 1", "q1 0 d1 2", "q1 0 d2 0"])
    with pytest.raises(TrecFormatError, match=r"another label \(1 on line 1, 2 here\)"):
        load_qrels(path)


def test_c04_duplicates_in_mapping_qrels_are_refused() -> None:
    with pytest.raises(ValueError, match="'d1' twice"):
        evaluate_run({"q1": {"d1": 0.9}}, {"q1": ["d1", "d1"]}, ["map"])


def test_c04_collapsed_values_as_trec_eval_would_give(tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels", ["q1 0 d1 1", "q1 0 d2 0"])
    run_file = write(tmp_path, "run", ["q1 Q0 d1 1 0.9 sysA", "q1 Q0 d2 2 0.5 sysA"])
    result = evaluate_run(run_file, qrels, ["recall@10", "map", "ndcg"])
    assert result.per_query[0].metrics == pytest.approx(
        {"recall@10": 1.0, "ap": 1.0, "ndcg": 1.0}, abs=TOL)


# --------------------------------------------------------------------------- C05
def test_c05_missing_query_scores_zero_by_default(tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels", ["q1 0 d1 1", "q2 0 d2 1"])
    run_file = write(tmp_path, "run", ["q1 Q0 d1 1 1.0 sysA"])
    result = evaluate_run(run_file, qrels, ["map", "mrr"])
    assert result.mean("ap") == pytest.approx(0.5, abs=TOL)
    assert result.mean("rr") == pytest.approx(0.5, abs=TOL)
    assert result.scores("ap") == {"q1": 1.0, "q2": 0.0}
    notes = result.header["notes"]
    assert notes["num_queries"] == 2
    assert notes["missing_scored_zero"] == 1 and notes["missing_ids"] == ["q2"]
    assert result.header["missing"] == "zero"


def test_c05_skipping_is_explicit_and_counted(tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels", ["q1 0 d1 1", "q2 0 d2 1"])
    run_file = write(tmp_path, "run", ["q1 Q0 d1 1 1.0 sysA"])
    result = evaluate_run(run_file, qrels, ["map"], missing="skip")
    assert result.mean("ap") == pytest.approx(1.0, abs=TOL)
    assert result.header["notes"]["missing_skipped"] == 1
    assert result.header["notes"]["num_queries"] == 1


# --------------------------------------------------------------------------- C07
def test_c07_query_without_relevant_documents_scores_zero(tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels", ["q1 0 d1 1", "q2 0 d2 0"])
    run_file = write(tmp_path, "run", ["q1 Q0 d1 1 1.0 sysA", "q2 Q0 d2 1 1.0 sysA"])
    metrics = ["map", "mrr", "ndcg", "recall@10", "precision@1"]
    result = evaluate_run(run_file, qrels, metrics)
    names = [resolve(m).name for m in metrics]
    by_id = {row.query_id: row.metrics for row in result.per_query}
    assert by_id["q1"] == pytest.approx(dict.fromkeys(names, 1.0), abs=TOL)
    assert by_id["q2"] == pytest.approx(dict.fromkeys(names, 0.0), abs=TOL)
    for name in names:
        assert result.mean(name) == pytest.approx(0.5, abs=TOL)
    assert result.header["notes"]["num_queries"] == 2
    for metric in metrics:  # both paths, and other metrics too
        assert both_paths(["d2"], {"d2": 0}, metric) == 0.0
    for metric in ["r_precision", "success@1", "ap@5", "rr@5", "ndcg@5"]:
        assert both_paths(["d2"], {"d2": 0}, metric) == 0.0
        assert both_paths([], {}, metric) == 0.0
    # a query with no judgments at all (pytrec_eval's empty qrels dict) is never dropped
    # in silence nor averaged in as 0: it is refused, named
    with pytest.raises(UnjudgedCasesError, match="'q2'"):
        evaluate_run(run_file, {"q1": {"d1": 1}, "q2": {}}, metrics)


# --------------------------------------------------------------------------- C08
C08_QRELS = ["q1 0 d1 -1", "q1 0 d2 1", "q1 0 d3 2", "q1 0 d4 0"]
C08_RUN = ["q1 Q0 d1 1 0.9 sysA", "q1 Q0 d2 2 0.8 sysA", "q1 Q0 d3 3 0.7 sysA"]
C08_EXPECTED = {"ndcg": 0.6199, "ndcg@3": 0.6199, "precision@1": 0.0, "mrr": 0.5,
                "recall@3": 1.0, "map": 0.5833}


def test_c08_zero_and_negative_labels_are_not_relevant(tmp_path: Path) -> None:
    result = evaluate_run(write(tmp_path, "run", C08_RUN), write(tmp_path, "qrels", C08_QRELS),
                          [*C08_EXPECTED, "num_relevant"])
    row = result.per_query[0]
    for metric, value in C08_EXPECTED.items():
        assert row.metrics[resolve(metric).name] == pytest.approx(value, abs=TOL4)
    assert row.counts["num_rel"] == 2
    assert row.counts["num_ret"] == 3 and row.counts["num_rel_ret"] == 2
    judged = {"d1": -1, "d2": 1, "d3": 2, "d4": 0}
    for metric, value in C08_EXPECTED.items():
        assert both_paths(["d1", "d2", "d3"], judged, metric) == pytest.approx(value, abs=TOL4)
    assert both_paths(["d1", "d2", "d3"], judged, "num_relevant") == 2


def test_c08_loader_keeps_negative_labels(tmp_path: Path) -> None:
    assert load_qrels(write(tmp_path, "qrels", C08_QRELS)) == {
        "q1": {"d1": -1, "d2": 1, "d3": 2, "d4": 0}}


# --------------------------------------------------------------------------- C10
def test_c10_ndcg_at_k_ideal_is_cut_at_k_not_at_the_list_length() -> None:
    judged = dict.fromkeys(["d1", "d2", "d3", "d4", "d5"], 1)
    assert both_paths(["d1"], judged, "ndcg@3") == pytest.approx(0.4693, abs=TOL4)
    assert both_paths(["d1"], judged, "ndcg@5") == pytest.approx(0.3392, abs=TOL4)
    assert both_paths(["d1"], judged, "ndcg") == pytest.approx(0.3392, abs=TOL4)


# --------------------------------------------------------------------------- C11
def test_c11_denominators_when_fewer_than_k_are_retrieved(tmp_path: Path) -> None:
    expected = {"precision@3": 0.333333, "precision@5": 0.2, "recall@3": 0.2,
                "recall@5": 0.2, "hit_rate@5": 1.0, "mrr": 1.0}
    judged = dict.fromkeys(["d1", "d2", "d3", "d4", "d5"], 1)
    for metric, value in expected.items():
        assert both_paths(["d1"], judged, metric) == pytest.approx(value, abs=TOL)
    qrels = write(tmp_path, "qrels", [f"q1 0 d{i} 1" for i in range(1, 6)])
    result = evaluate_run(write(tmp_path, "run", ["q1 Q0 d1 1 1.0 sysA"]), qrels,
                          list(expected))
    for metric, value in expected.items():
        assert result.mean(resolve(metric).name) == pytest.approx(value, abs=TOL)


# --------------------------------------------------------------------------- C14
C14_QRELS = "\ufeffq1\t0\td1\t1\r\nq1 0  d2   0\r\n"
C14_RUN = "q1 Q0 d1 1 2.0 sysA\r\nq1\tQ0\td2\t2\t1.0\tsysA\r\n\r\n"


def test_c14_bom_crlf_tabs_and_blank_lines(tmp_path: Path) -> None:
    qrels_path = write(tmp_path, "qrels", C14_QRELS)
    run_path = write(tmp_path, "run", C14_RUN)
    assert load_qrels(qrels_path) == {"q1": {"d1": 1, "d2": 0}}
    ranked = load_run(run_path)
    assert ranked.rankings == {"q1": ["d1", "d2"]}
    assert ranked.name == "sysA"
    result = evaluate_run(run_path, qrels_path, ["mrr", "num_relevant"])
    assert result.mean("rr") == 1.0
    assert result.header["notes"]["num_queries"] == 1
    assert result.per_query[0].counts["num_rel"] == 1


def test_c14_same_result_from_the_careful_reader() -> None:
    # a non-ASCII byte elsewhere in the file sends it through the line-by-line reader
    qrels = (C14_QRELS + "q9 0 d\u00e9 0\n").encode("utf-8")
    run_bytes = ("# r\u00e9sum\u00e9\n" + C14_RUN).encode("utf-8")
    assert parse_qrels(qrels)["q1"] == {"d1": 1, "d2": 0}
    parsed = parse_run(run_bytes)
    assert parsed.meta["parser"] == "careful"
    assert parsed.rankings == {"q1": ["d1", "d2"]}


# --------------------------------------------------------------------------- C16
C16_QRELS = ["q1 0 d1 1", "q2 0 d2 1"]


def test_c16_empty_run_file_is_a_clear_error(tmp_path: Path) -> None:
    empty = write(tmp_path, "run.txt", "")
    with pytest.raises(TrecFormatError, match="no data lines"):
        evaluate_run(empty, write(tmp_path, "qrels", C16_QRELS), ["map", "mrr"])
    only_comments = write(tmp_path, "comments.txt", "# nothing here\n\n   \n")
    with pytest.raises(TrecFormatError, match=r"comments\.txt: the run file has no data"):
        load_run(only_comments)


def test_c16_run_sharing_no_query_with_the_qrels(tmp_path: Path) -> None:
    qrels = write(tmp_path, "qrels", C16_QRELS)
    with pytest.warns(UserWarning, match=r"^none of the run's topics appears in "
                      rf"{re.escape(str(qrels))}; every query scores 0\. Are these the "
                      r"right files\?$") as told:
        result = evaluate_run(write(tmp_path, "run", ["q9 Q0 d1 1 1.0 sysA"]), qrels,
                              ["map", "mrr"])
    assert told[0].filename == __file__  # points at the caller, not inside evalkit
    from evalkit.execute.run_evaluator import NoJudgedQueryWarning

    assert told[0].category is NoJudgedQueryWarning
    assert result.mean("ap") == 0.0 and result.mean("rr") == 0.0
    notes = result.header["notes"]
    assert notes["num_queries"] == 2
    assert notes["unjudged_ignored"] == 1 and notes["unjudged_ignored_ids"] == ["q9"]
    assert notes["missing_scored_zero"] == 2 and notes["missing_ids"] == ["q1", "q2"]


def test_c16_the_python_api_warns_as_the_command_line_does(tmp_path: Path) -> None:
    """An empty run mapping, or one whose topics are not judged, warns with the sentence
    `evalkit eval` prints (the file, or "the qrels" for a mapping); with
    missing="skip" nothing is evaluated, and the warning says so. A run sharing a query
    with the qrels warns nothing."""
    import warnings

    qrels = write(tmp_path, "qrels", C16_QRELS)
    for given in ({}, {"zz": {"d1": 1.0}}):
        with pytest.warns(UserWarning, match=rf"appears in {re.escape(str(qrels))}; every "
                          "query scores 0"):
            assert evaluate_run(given, qrels, ["ap"]).mean("ap") == 0.0
    with pytest.warns(UserWarning, match="appears in the qrels; no query was evaluated"):
        evaluate_run({"zz": {"d1": 1.0}}, {"q1": {"d1": 1}}, ["ap"], missing="skip")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate_run({"q1": {"d1": 1.0}}, qrels, ["ap"])
    from typer.testing import CliRunner

    from evalkit.cli.app import app

    run_file = write(tmp_path, "run", ["q9 Q0 d1 1 1.0 sysA"])
    for command in (["eval", run_file, "--qrels", qrels, "-m", "ap"],
                    ["compare", run_file, run_file, "--qrels", qrels, "-m", "ap"]):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the commands tell it in their own lines
            out = CliRunner().invoke(app, [str(a) for a in command])
        assert "Traceback" not in out.output and "UserWarning" not in out.stderr
    assert out.exit_code in (0, 2)


def test_c16_a_query_with_an_empty_result_list() -> None:
    result = evaluate_run({"q1": {}, "q2": {"d2": 1.0}}, {"q1": {"d1": 1}, "q2": {"d2": 1}},
                          ["map", "mrr"])
    assert result.scores("ap") == {"q1": 0.0, "q2": 1.0}
    assert result.scores("rr") == {"q1": 0.0, "q2": 1.0}
    assert result.mean("ap") == 0.5 and result.mean("rr") == 0.5
    assert result.header["notes"]["missing_scored_zero"] == 0  # q1 was there, empty
