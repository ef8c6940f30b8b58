"""A query or case with no ranked ids is never scored 0 in silence: in a precomputed run
(a mapping or DataFrame with an empty ranking) it scores 0 as pytrec_eval scores it, and
the header's notes count it so that ``evalkit eval`` says so (table, trec and JSON); in a
target run (a call that answered an empty ranking) ``evalkit run`` and ``evalkit eval``
name the cases in a note."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from evalkit import evaluate_run

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
RUN = {"q1": {}, "q2": {"d2": 1.0}}
QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}}


def test_an_empty_ranking_scores_0_and_is_counted() -> None:
    """As pytrec_eval scores it (handed case C16: q1 0.0, q2 1.0, mean 0.5): the query is
    in the run; the notes count it, so that it is not a silent 0."""
    zero = evaluate_run(RUN, QRELS, ["ap"])
    assert zero.scores("ap") == {"q1": 0.0, "q2": 1.0} and zero.mean("ap") == 0.5
    assert zero.header["notes"]["empty_rankings"] == 1
    assert zero.header["notes"]["empty_ranking_ids"] == ["q1"]
    assert zero.header["notes"]["missing_scored_zero"] == 0
    assert evaluate_run(RUN, QRELS, ["ap"], missing="skip").ids() == ["q1", "q2"]
    assert "empty_rankings" not in evaluate_run({"q1": {"d1": 1.0}}, {"q1": {"d1": 1}},
                                                ["ap"]).header["notes"]


def test_eval_says_so(tmp_path: Path) -> None:
    evaluate_run(RUN, QRELS, ["ap"]).save(tmp_path / "r.jsonl")
    for fmt in ("table", "trec"):
        proc = subprocess.run([*EVALKIT, "eval", "r.jsonl", "--format", fmt], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0
        said = proc.stdout if fmt == "table" else proc.stderr
        assert "1 judged query with an empty ranking ('q1'; scored 0)" in said
    proc = subprocess.run([*EVALKIT, "eval", "r.jsonl", "--json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert '"empty_rankings": 1' in proc.stdout


def test_a_target_that_answers_nothing_is_named(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(
        '{"id": "c1", "query": "q1", "expected": ["a"]}\n'
        '{"id": "c2", "query": "q2", "expected": ["a"]}\n')
    (tmp_path / "tgt.py").write_text(
        "from evalkit import CallableTarget\n"
        "def make():\n"
        "    return CallableTarget(lambda q: [] if '2' in str(getattr(q, 'query', q)) "
        "else ['a'], name='t')\n")
    (tmp_path / "evalkit.yaml").write_text(
        "name: t\ngoldens: cases.jsonl\ntarget:\n  factory: tgt:make\n"
        "metrics: [recall@1]\noutput: out/t.jsonl\n")
    note = ("note: 1 of 2 case(s) answered with no ranked ids ('c2'): retrieval metrics "
            "score an empty ranking 0")
    run = subprocess.run([*EVALKIT, "run", "--no-progress"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and note in run.stdout.splitlines()
    ev = subprocess.run([*EVALKIT, "eval", "out/t.jsonl"], cwd=tmp_path,
                        capture_output=True, text=True, timeout=60)
    assert ev.returncode == 0 and note in ev.stderr.splitlines()
    assert "0.5000" in ev.stdout  # recall@1: 1 for c1, 0 for c2
