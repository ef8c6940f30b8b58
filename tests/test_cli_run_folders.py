"""``evalkit eval DIR_OR_GLOB ... --save-dir`` and ``evalkit compare --baseline RUN
DIR_OR_GLOB``: every run of a folder scored in one process, one artifact each, one summary;
a bad file named and left out, the others scored, exit 2 at the end.

The means are trec_eval 10.0's for the bundled Vaswani BM25 run (map 0.2132, P_10 0.2817:
``examples/vaswani/data/expected/trec_eval-10.0.all_trec.q.bm25.txt``).
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
VASWANI = Path(__file__).resolve().parents[1] / "examples" / "vaswani" / "data"
QRELS = VASWANI / "qrels"


def evalkit(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture()
def runs(tmp_path: Path) -> Path:
    folder = tmp_path / "runs"
    folder.mkdir()
    data = (VASWANI / "runs" / "run.vaswani.bm25.txt").read_bytes()
    (folder / "a.txt").write_bytes(data)
    (folder / "copy.txt.gz").write_bytes(gzip.compress(data))
    (folder / "broken.txt").write_text("1 Q0 d1 1 high bm25\n")
    return folder


def test_eval_scores_every_run_of_a_folder_and_names_the_bad_one(runs: Path,
                                                                 tmp_path: Path) -> None:
    out = tmp_path / "artifacts"
    done = evalkit("eval", runs, "--qrels", QRELS, "-m", "ap,P@10", "--save-dir", out,
                   "--format", "json", cwd=tmp_path)
    assert done.returncode == 2
    assert f"error: {runs / 'broken.txt'}:1:" in done.stderr
    assert done.stderr.strip().endswith(f"1 of 3 runs failed: {runs / 'broken.txt'}")
    summary = json.loads(done.stdout)
    # the failed file is in the list too, in its place, with its error (sorted paths)
    assert [r.get("run") for r in summary] == ["bm25", None, "copy.txt"]
    failed = summary.pop(1)
    assert set(failed) == {"source", "error"}
    assert failed["source"] == str(runs / "broken.txt")
    assert failed["error"].startswith(f"{runs / 'broken.txt'}:1: ")
    assert [r["run"] for r in summary] == ["bm25", "copy.txt"]  # the tag, then unique
    for row in summary:
        assert row["queries"] == 93
        assert round(row["means"]["ap"], 4) == 0.2132
        assert round(row["means"]["precision@10"], 4) == 0.2817
    assert sorted(p.name for p in out.iterdir()) == ["bm25.jsonl", "copy.txt.jsonl"]
    table = evalkit("eval", runs, "--qrels", QRELS, "-m", "ap", cwd=tmp_path)
    assert table.returncode == 2
    assert f"not scored: {runs / 'broken.txt'}:1: " in table.stdout  # the table names it
    again = evalkit("eval", str(out / "*.jsonl"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "bm25" in again.stdout and "0.2132" in again.stdout


def test_options_of_one_run_are_refused_with_several(runs: Path, tmp_path: Path) -> None:
    done = evalkit("eval", runs, "--qrels", QRELS, "--save", "x.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("error: --save: for one run")


def test_compare_a_baseline_with_every_run_of_a_folder(runs: Path, tmp_path: Path) -> None:
    baseline = runs / "a.txt"
    done = evalkit("compare", "--baseline", baseline, runs, "--qrels", QRELS, "-m", "ap",
                   "-B", "200", "--format", "json", cwd=tmp_path)
    assert done.returncode == 2
    assert f"{runs / 'broken.txt'}:1:" in done.stderr and "left out" in done.stderr
    result = json.loads(done.stdout)
    assert result["baseline"]["name"] == "bm25"
    assert [r["name"] for r in result["candidates"]] == ["copy.txt"]  # the baseline left out
