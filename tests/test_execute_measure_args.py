"""trec_eval's defaults on the command line: ``evalkit eval RUN -f trec`` without ``-m``
prints what ``trec_eval`` prints without ``-m`` (its ``official`` set): checked line for
line against trec_eval 10.0's own output (plugins/evalkit-retrieval/tests/data/out.test,
made by the real binary); ``evalkit compare -m all_trec`` compares the set's non-count
measures and names the counts it left out."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from evalkit.execute.measure_args import comparable_names

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "plugins" / "evalkit-retrieval" / "tests" / "data"
VASWANI = REPO / "examples" / "vaswani" / "data"
COUNTS = ["num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "rbp_resid"]


def _evalkit(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_trec_format_without_m_is_trec_evals_default_output() -> None:
    proc = _evalkit("eval", DATA / "results.test", "--qrels", DATA / "qrels.test", "-f",
                    "trec", "--missing", "skip")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == (DATA / "out.test").read_text().splitlines()


def test_table_format_keeps_evalkits_defaults() -> None:
    proc = _evalkit("eval", VASWANI / "runs" / "run.vaswani.bm25.txt", "--qrels",
                    VASWANI / "qrels")
    assert proc.returncode == 0, proc.stderr
    assert "ndcg@10" in proc.stdout and "gm_map" not in proc.stdout


def test_all_trec_leaves_out_its_counts() -> None:
    names, left = comparable_names(["all_trec"])
    assert left == COUNTS
    assert "ap" in names and "gm_map" in names and not set(COUNTS) & set(names)
    assert comparable_names(["all_trec", "num_ret"])[1] == COUNTS[1:]  # named: kept
    assert comparable_names(["ap", "ndcg@10"]) == (["ap", "ndcg@10"], [])


def test_compare_all_trec_runs_and_says_what_it_left_out() -> None:
    run = VASWANI / "runs" / "run.vaswani.bm25.txt"
    proc = _evalkit("compare", run, run, "--qrels", VASWANI / "qrels", "-m", "official",
                    "-B", "100", "--json")
    assert proc.returncode == 0, proc.stderr
    assert ("left out of the comparison, as counts are reported (evalkit eval), not "
            "compared: num_ret, num_rel, num_rel_ret") in proc.stderr
    assert '"metric": "gm_map"' in proc.stdout
    proc = _evalkit("compare", run, run, "--qrels", VASWANI / "qrels", "-m", "num_ret")
    assert proc.returncode == 2 and "num_ret: a per-query count" in proc.stderr
