"""``evalkit eval`` on a target-run artifact refuses the scoring options that cannot
apply (its golden set scored it when it ran): ``--qrels``, ``-l``, ``-M`` and
``--missing`` are refused by name rather than ignored; a retrieval artifact checks them
against its header."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evalkit import CallableTarget, GoldenCase, evaluate

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    cases = [GoldenCase(id="c1", query="q1", expected=["a"]),
             GoldenCase(id="c2", query="q2", expected=["b"])]
    evaluate(CallableTarget(lambda q: ["a", "b"], name="t"), cases, metrics=["recall@1"],
             artifact=tmp_path / "t.jsonl")
    (tmp_path / "qrels").write_text("c1 0 a 1\n")
    return tmp_path


@pytest.mark.parametrize(("args", "named"), [
    (["--qrels", "qrels"], "--qrels"),
    (["-l", "2"], "--relevance-level"),
    (["-M", "5", "--missing", "skip"], "--missing, --depth"),
])
def test_scoring_options_on_a_target_run_are_refused(folder: Path, args: list[str],
                                                     named: str) -> None:
    proc = subprocess.run([*EVALKIT, "eval", "t.jsonl", *args], cwd=folder,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: t.jsonl is a target run, scored against its "
                                  f"golden set when it ran: {named} would not change it")
    assert proc.stderr.count("\n") == 1


def test_without_them_it_prints_its_values(folder: Path) -> None:
    proc = subprocess.run([*EVALKIT, "eval", "t.jsonl", "--format", "json"], cwd=folder,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert '"recall@1": 0.5' in proc.stdout  # c1 ranks its answer first, c2 second
