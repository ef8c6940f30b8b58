"""What the rows are called: a target run's rows are golden cases, a TREC run's queries.
``evalkit eval`` and ``evalkit compare`` say "cases" for target runs and "queries" for TREC
runs; the note about cases answered with no ranked ids is printed only when a retrieval
metric is in the run (a text-only run has no ranking to score 0; the retrieval case is
tests/test_empty_rankings.py's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from evalkit.data.coverage import empty_answers_line
from evalkit.data.results import RunResult

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
REPO = Path(__file__).resolve().parents[1]
VASWANI = REPO / "examples" / "vaswani" / "data"


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def _project(tmp: Path, metrics: str, answer_expr: str) -> None:
    (tmp / "cases.jsonl").write_text(
        '{"id": "c1", "query": "q1", "expected": "yes"}\n'
        '{"id": "c2", "query": "q2", "expected": "no"}\n'
        '{"id": "c3", "query": "q3", "expected": "maybe"}\n')
    (tmp / "tgt.py").write_text(
        "from evalkit import CallableTarget\n"
        "def make(good=True):\n"
        f"    return CallableTarget(lambda q: {answer_expr}, name='t')\n")
    for name, good in (("a", "True"), ("b", "False")):
        (tmp / f"{name}.yaml").write_text(
            f"name: {name}\ngoldens: cases.jsonl\ntarget:\n  factory: tgt:make\n"
            f"  kwargs: {{good: {good}}}\nmetrics: [{metrics}]\noutput: out/{name}.jsonl\n")


def test_text_only_run_has_no_empty_ranking_note_and_says_cases(tmp_path: Path) -> None:
    # c2 answers "" (no text, no ranked ids); the metric is a text metric
    _project(tmp_path, "exact_match", "'' if '2' in str(getattr(q, 'query', q)) else 'yes'")
    for name in ("a", "b"):
        proc = _run(tmp_path, "run", f"{name}.yaml", "--no-progress")
        assert proc.returncode == 0, proc.stderr
        assert "no ranked ids" not in proc.stdout + proc.stderr
    run = RunResult.load(tmp_path / "out" / "a.jsonl")
    assert run.row_nouns == ("case", "cases")
    assert empty_answers_line(run) is None
    ev = _run(tmp_path, "eval", "out/a.jsonl")
    assert ev.returncode == 0, ev.stderr
    assert "no ranked ids" not in ev.stdout + ev.stderr
    assert "3 cases evaluated" in ev.stdout
    cmp = _run(tmp_path, "compare", "out/a.jsonl", "out/b.jsonl", "-m", "exact_match",
               "--report", "markdown:cmp.md")
    assert cmp.returncode == 0, cmp.stderr
    assert "3 cases paired by id" in cmp.stdout
    assert "W/T/L: cases where" in cmp.stdout
    assert not [ln for ln in cmp.stdout.splitlines()
                if "queries" in ln and not ln.startswith("note:")]  # the statistics' notes
    assert "| 3 cases |" in (tmp_path / "cmp.md").read_text()


def test_trec_runs_say_queries(tmp_path: Path) -> None:
    run = VASWANI / "runs" / "run.vaswani.bm25.txt"
    cmp = _run(REPO, "compare", str(run), str(run), "--qrels", str(VASWANI / "qrels"),
               "-m", "ap", "--resamples", "100")
    assert cmp.returncode == 0, cmp.stderr
    assert "93 queries paired by id" in cmp.stdout
    assert "W/T/L: queries where" in cmp.stdout
