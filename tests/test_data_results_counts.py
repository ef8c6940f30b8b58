"""``RunResult``'s per-query counts (``num_rel``, ``num_ret``, ``num_rel_ret``): kept in
each row's ``counts``, summarised by :meth:`~evalkit.data.results.RunResult.summary` as
trec_eval's ``all`` line does (the sum over the queries: 1500 and 561 for ``num_ret`` and
``num_rel`` of trec_eval's own test run, its ``out.test``; the mean for ``rbp_resid``,
whose record says so); asked for as a metric (:meth:`mean`, :meth:`scores`) they are
refused with a message that says so and how to read them, as are the run's columns
(:func:`~evalkit.data.run_views.run_columns`) given a count as a metric."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit import evaluate_run
from evalkit.data.results import CountNotMetricError

TREC_EVAL_TEST = (Path(__file__).resolve().parents[1] / "plugins" / "evalkit-retrieval" / "tests"
                  / "data")


def small(tmp_path: Path) -> tuple[Path, Path]:
    run = tmp_path / "x.run"
    run.write_text("q1 Q0 d1 1 2.0 sysA\nq1 Q0 d2 2 1.0 sysA\nq2 Q0 d3 1 1.0 sysA\n"
                   "q2 Q0 d1 2 0.5 sysA\n")
    qrels = tmp_path / "x.qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d3 1\nq2 0 d3 1\n")
    return run, qrels


def test_mean_of_a_count_says_it_is_one_and_how_to_read_it(tmp_path: Path) -> None:
    r = evaluate_run(*small(tmp_path), ["num_rel"])
    with pytest.raises(CountNotMetricError) as info:
        r.mean("num_rel")
    assert str(info.value) == (
        "run 'sysA': 'num_rel' is a per-query count, not a metric: its summary is the total "
        "over the queries, as trec_eval's 'all' line gives it (3 here). Read it with "
        "run.summary('num_rel'), each query's with run.per_query[i].counts['num_rel'] (or "
        "the 'num_rel' column of run.to_pandas())")
    assert isinstance(info.value, KeyError)
    with pytest.raises(CountNotMetricError, match=r"'num_ret' is a per-query count.*\(4 "
                       r"here\)"):
        r.scores("num_ret")
    assert (r.summary("num_rel"), r.summary("num_ret"), r.summary("num_rel_ret")) == (3, 4, 2)


def test_summary_of_a_metric_a_mean_count_or_an_unknown_name(tmp_path: Path) -> None:
    r = evaluate_run(*small(tmp_path), ["ndcg", "num_rel", "rbp_resid"])
    assert r.summary("ndcg") == r.mean("ndcg") and r.summary("nDCG") == r.mean("ndcg")
    resid = [q.counts["rbp_resid"] for q in r.per_query]
    assert r.summary("rbp_resid") == pytest.approx(sum(resid) / len(resid))
    with pytest.raises(CountNotMetricError, match=r"'rbp_resid' is a per-query count, not a "
                       r"metric: its summary is the mean over the queries"):
        r.mean("rbp_resid")
    with pytest.raises(KeyError, match=r"no metric or count 'nope' on query 'q1' \(it has: "
                       r"ndcg, num_rel, num_rel_ret, num_ret, rbp_resid\)"):
        r.summary("nope")


def test_summary_of_a_count_is_trec_evals_all_line() -> None:
    r = evaluate_run(TREC_EVAL_TEST / "results.test", TREC_EVAL_TEST / "qrels.test",
                     ["num_ret", "num_rel", "num_rel_ret"])
    expected = {}
    for line in (TREC_EVAL_TEST / "out.test").read_text().splitlines():
        name, qid, value = line.split()
        if qid == "all" and name in ("num_ret", "num_rel", "num_rel_ret"):
            expected[name] = float(value)
    assert expected["num_ret"] == 1500 and expected["num_rel"] == 561
    assert {n: r.summary(n) for n in expected} == expected


def test_columns_refuse_a_count_named_as_a_metric(tmp_path: Path) -> None:
    from evalkit.data.run_views import run_columns

    r = evaluate_run(*small(tmp_path), ["ndcg", "num_rel"])
    assert list(run_columns(r, ["ndcg"], ["num_rel"])) == [
        "qid", "ndcg", "num_rel", "error", "latency_ms"]
    with pytest.raises(ValueError, match=r"run 'sysA': 'num_rel' is a per-query count; name "
                       r"it in counts="):
        run_columns(r, ["num_rel"], [])
    with pytest.raises(ValueError, match=r"run 'sysA': 'ndcg' is a metric; name it in "
                       r"metrics="):
        run_columns(r, [], ["ndcg"])
