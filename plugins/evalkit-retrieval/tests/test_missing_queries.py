"""Judged queries missing from the run: the Python API scores them on an empty ranking,
by each measure's definition (trec_eval's C formulas with nothing retrieved), and
``evalkit eval --format trec -c`` prints what trec_eval 10.0 ``-c`` prints, which scores
them on a one-document ranking and resets five names. Expected values: trec_eval 10.0's
output stored in ``data/missing`` (commands in its README, no binary needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from evalkit_retrieval.trec import load_qrels
from evalkit_retrieval.trec_names import expand
from evalkit_retrieval.trec_output import trec_lines
from typer.testing import CliRunner

from evalkit import evaluate_run
from evalkit.cli.app import app
from evalkit.core.metric_names import split_measure_args

DATA = Path(__file__).parent / "data" / "missing"
QRELS, RUN = DATA / "qrels.missing", DATA / "run.missing"
PIECES = ["all_trec", "utility.1,-1,-1,0", "rbp_resid.p=0.5", "relstring.5", "P.3",
          "ndcg.1=3,2=1", "set_F.0.5", "Rprec_mult.0.5", "unj.2", "11pt_avg..25",
          "iprec_at_recall..1", "success.1", "map_cut.3", "relative_P.3", "ndcg_cut.3",
          "rbp.p=0.5"]
MISSING = {"2", "3", "4"}


def _args(pieces: list[str]) -> list[str]:
    return [a for p in pieces for a in ("-m", p)]


def _cli(*args: str) -> list[str]:
    res = CliRunner().invoke(app, ["eval", "--format", "trec", *args])
    assert res.exit_code == 0, res.output
    return [line for line in res.stdout.splitlines() if "\t" in line]


def _api_lines(pieces: list[str], run: Any) -> list[str]:
    """The Python API's per-query values (missing="zero"), in trec_eval's layout."""
    req = expand(split_measure_args(pieces))
    result = evaluate_run(run, QRELS, req.names, missing="zero")
    return [line for line in trec_lines(
        result, req.names, per_query=True, labels=req.labels, relstring_len=req.relstring,
        judgments=load_qrels(QRELS), complete=False, header=req.header)
        if "\tall\t" not in line]


@pytest.mark.parametrize(("pieces", "expected"), [
    (PIECES, "out.missing.empty"), (["utility.0,0,-1,2"], "out.missing.empty.utility")])
def test_missing_query_scores_as_an_empty_ranking_by_each_definition(
        pieces: list[str], expected: str) -> None:
    theirs = [line for line in (DATA / expected).read_text().splitlines()
              if "\tall\t" not in line]
    as_file = _api_lines(pieces, RUN)
    as_mapping = _api_lines(pieces, {"1": {"d3": 3.0, "d9": 2.0, "d1": 1.0}, "2": {}})
    assert as_mapping == as_file  # listed with no document = missing
    checked = 0
    for mine, ref in zip(as_file, theirs, strict=True):
        label, qid, value = ref.split("\t")
        if "nan" in value:  # 0 / 0 in m_iprec_at_recall.c on an empty ranking
            assert mine == f"{label}\t{qid}\t0.0000"
            continue
        assert mine == ref
        checked += qid in MISSING
    assert checked >= len(theirs) / 2


def test_utility_of_an_empty_ranking_is_not_zero() -> None:
    """p3 * R - p4 * R, not 0: dropping a query must not beat answering it wrongly."""
    res = evaluate_run({"1": {"d3": 3.0}, "2": {"x": 1.0}, "4": {}}, QRELS,
                       ["utility(coefficients=(0,0,-1,0))", "utility"], missing="zero")
    values = {r.query_id: r.metrics for r in res.per_query}
    assert values["2"]["utility(coefficients=(0,0,-1,0))"] == -2.0  # R = 2, x not relevant
    assert values["3"]["utility(coefficients=(0,0,-1,0))"] == 0.0  # R = 0, missing
    assert values["4"]["utility(coefficients=(0,0,-1,0))"] == -2.0  # empty ranking
    assert values["4"]["utility"] == 0.0  # the default coefficients (1, -1, 0, 0)


@pytest.mark.parametrize(("args", "expected"), [
    (_args(PIECES), "out.missing.c"),
    (_args(["utility.0,0,-1,2"]), "out.missing.c.utility"),
    (["-l2", *_args(["relstring", "utility.2,-1,0.5,0.25", "rbp_resid.p=0.8", "utility"])],
     "out.missing.c.l2"),
])
def test_format_trec_c_equals_trec_eval_on_missing_queries(
        args: list[str], expected: str, tmp_path: Path) -> None:
    theirs = (DATA / expected).read_text().splitlines()
    assert _cli("-c", "-q", *args, "--qrels", str(QRELS), str(RUN)) == theirs
    saved = tmp_path / "run.jsonl"
    res = CliRunner().invoke(app, ["eval", "--format", "trec", "-c", *args, "--qrels",
                                   str(QRELS), str(RUN), "--save", str(saved)])
    assert res.exit_code == 0, res.output
    # an artifact: with its qrels, and without them (R from its num_rel count)
    assert _cli("-c", "-q", *args, "--qrels", str(QRELS), str(saved)) == theirs
    if "relstring" not in " ".join(args):
        assert _cli("-c", "-q", *args, str(saved)) == theirs
