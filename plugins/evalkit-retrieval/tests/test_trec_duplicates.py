"""A document listed twice for one query of a TREC run file, as trec_eval treats it:
refused in a query the qrels judge (trec_eval 10.0: ``duplicate docs``, exit 4), read once
in a query they do not judge (trec_eval never reads that ranking, and scores the rest).

Expected values: trec_eval 10.0 (built from shared/tools/trec_eval-10.0.tar.gz) on the
same files: ``trec_eval -m map dq dr`` printed ``map all 1.0000`` and exited 0 for the
run with the duplicate in the unjudged q9; with q9 judged (``q9 0 y 0`` added to the
qrels) it printed ``duplicate docs x`` and exited 4.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from evalkit_retrieval.trec import DuplicateLineError, load_run
from typer.testing import CliRunner

from evalkit import evaluate_run
from evalkit.cli.app import app

RUN = "q1 Q0 d1 1 2 s\nq9 Q0 x 1 2 s\nq9 Q0 x 2 1 s\n"


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    (tmp_path / "dq").write_text("q1 0 d1 1\n")
    (tmp_path / "dq9").write_text("q1 0 d1 1\nq9 0 y 0\n")
    (tmp_path / "dr").write_text(RUN)
    return tmp_path


def test_a_duplicate_in_an_unjudged_query_is_ignored_as_trec_eval_ignores_it(
        files: Path) -> None:
    result = evaluate_run(files / "dr", files / "dq", ["ap"])
    assert [r.query_id for r in result.per_query] == ["q1"]
    assert result.mean("ap") == 1.0  # trec_eval: map all 1.0000, exit 0
    assert result.header["notes"]["unjudged_ignored_ids"] == ["q9"]
    proc = CliRunner().invoke(app, ["eval", str(files / "dr"), "--qrels", str(files / "dq"),
                                    "-m", "map", "-f", "trec"])
    assert proc.exit_code == 0, proc.stderr
    assert proc.stdout == "map                   \tall\t1.0000\n"


def test_a_duplicate_in_a_judged_query_is_refused_saying_trec_eval_refuses_it(
        files: Path) -> None:
    with pytest.raises(DuplicateLineError) as err:
        evaluate_run(files / "dr", files / "dq9", ["ap"])
    assert (err.value.line, err.value.qid, err.value.docid) == (3, "q9", "x")
    assert str(err.value) == (
        f"{files / 'dr'}:3: document 'x' is listed again for query 'q9' (first on line 2). "
        "A run may rank each document once per query; trec_eval stops on this file with "
        "'duplicate docs' too, as the qrels judge this query. Keep one line per (query, "
        "document)")


def test_without_qrels_every_duplicate_is_refused_and_the_message_says_when_trec_eval_does(
        files: Path) -> None:
    with pytest.raises(DuplicateLineError, match=r"dr:3: .*\(trec_eval stops with 'duplicate "
                       r"docs' when the qrels judge the query\)"):
        load_run(files / "dr")
    run = load_run(files / "dr", judged={"q1"})
    assert {q: list(r) for q, r in run.rankings.items()} == {"q1": ["d1"], "q9": ["x"]}
