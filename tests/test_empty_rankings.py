"""A query or case with no ranked ids is never scored 0 in silence: in a precomputed run
(a mapping or DataFrame with an empty ranking) it is missing from the run, under the
missing policy (counted, skipped or refused, as a TREC file without its lines); in a
target run (a call that answered an empty ranking) ``evalkit run`` and ``evalkit eval``
say which cases, in a note."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evalkit import evaluate_run

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
RUN = {"q1": {}, "q2": {"d2": 1.0}}
QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}}


def test_an_empty_ranking_is_a_missing_query() -> None:
    zero = evaluate_run(RUN, QRELS, ["ap"])
    assert zero.header["notes"]["missing_scored_zero"] == 1
    assert zero.header["notes"]["missing_ids"] == ["q1"]
    assert zero.mean("ap") == 0.5  # q2 ranks its one relevant document first: AP 1
    assert evaluate_run(RUN, QRELS, ["ap"], missing="skip").ids() == ["q2"]
    with pytest.raises(ValueError, match=r"1 judged query is missing from the run \('q1'\)"):
        evaluate_run(RUN, QRELS, ["ap"], missing="refuse")


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
