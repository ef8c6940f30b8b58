"""The main job (examples/vaswani/main.py) and the README that describes it.

The example's numbers are checked against pytrec_eval run on the TREC files it writes; the
README must open with the two commands for a fresh machine, and its Python block must run.
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "vaswani"
README = REPO / "README.md"

MAIN_JOB = (
    "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt && "
    ".venv/bin/python examples/vaswani/main.py"
)
TESTS = (
    "python3 -m venv .venv && .venv/bin/pip install -r requirements-dev.txt && "
    ".venv/bin/python -m pytest"
)
TREC = {"ap": "map", "ndcg@10": "ndcg_cut_10", "precision@10": "P_10",
        "recall@100": "recall_100", "rr": "recip_rank"}


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("vaswani-out")
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE / "main.py"), "--out", str(out), "--resamples", "2000"],
        capture_output=True, text=True, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return out, proc.stdout


def test_main_job_writes_runs_and_artifacts(job: tuple[Path, str]) -> None:
    out, stdout = job
    for name in ("run.bm25.txt", "run.tfidf.txt", "bm25.jsonl", "tfidf.jsonl"):
        assert (out / name).is_file()
    assert "93 queries scored, 0 unjudged run topics ignored, 0 judged queries missing" in stdout
    # and the comparison's HTML report, with the queries' text from query-text.trec
    report = (out / "report.html").read_text(encoding="utf-8")
    assert f"wrote {out / 'report.html'}" in stdout and report.startswith("<!DOCTYPE html>")
    assert "MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS" in report


def test_main_job_table_agrees_with_pytrec_eval(job: tuple[Path, str]) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    out, stdout = job
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in (EXAMPLE / "data" / "qrels").read_text().splitlines():
        q, _, d, rel = line.split()
        qrels[q][d] = int(rel)
    measures = {"map", "ndcg_cut.10", "P.10", "recall.100", "recip_rank"}
    means: dict[str, dict[str, float]] = {}
    for system in ("bm25", "tfidf"):
        run: dict[str, dict[str, float]] = defaultdict(dict)
        for parts in (ln.split() for ln in (out / f"run.{system}.txt").read_text().splitlines()):
            run[parts[0]][parts[2]] = float(parts[4])
        res = pytrec_eval.RelevanceEvaluator(dict(qrels), measures).evaluate(dict(run))
        assert len(res) == 93
        means[system] = {m: statistics.fmean(res[q][t] for q in res) for m, t in TREC.items()}
    rows = {}
    for line in stdout.splitlines():
        parts = line.replace("< ", "<").split()  # "< 0.001" is one cell
        if parts and parts[0] in TREC:
            rows[parts[0]] = parts
    assert set(rows) == set(TREC)
    for metric, parts in rows.items():
        tfidf, bm25, diff = float(parts[1]), float(parts[2]), float(parts[3])
        assert tfidf == pytest.approx(means["tfidf"][metric], abs=5e-5)
        assert bm25 == pytest.approx(means["bm25"][metric], abs=5e-5)
        assert diff == pytest.approx(means["bm25"][metric] - means["tfidf"][metric], abs=1e-4)
        low, high = float(parts[4].strip("[,")), float(parts[5].strip("]"))
        assert low <= diff <= high
        assert parts[7] == ("yes" if low > 0 or high < 0 else "no")
        # at B = 2000 the smallest bootstrap p is 1/2001 = 0.0004998: it prints as "< 0.001",
        # never as a value such as 0.0005
        assert parts[6] == "<0.001" or 0.001 <= float(parts[6]) <= 1
        wins, ties, losses = (int(x) for x in parts[8].split("/"))
        assert wins + ties + losses == 93
    # AP's difference lies about 7 standard errors from 0 (pytrec_eval's per-query values
    # give the spread), so no resample of the centred null reaches it: p is at the floor
    assert rows["ap"][6] == "<0.001"


def test_main_job_writes_the_readme_latex_table(job: tuple[Path, str]) -> None:
    """out/table.tex holds the README's LaTeX table (at the job's 2,000 resamples), with
    the means the job printed (which the test above checks against pytrec_eval)."""
    out, stdout = job
    tex = (out / "table.tex").read_text(encoding="utf-8")
    assert f"wrote {out / 'table.tex'}" in stdout
    block = re.search(r"```latex\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert block is not None
    published = block.group(1).replace("10,000 resamples", "2,000 resamples")
    lines = [ln for ln in tex.splitlines() if not ln.startswith("%")]
    assert "\n".join(lines).strip() == published.strip()
    printed = {}
    for line in stdout.splitlines():
        parts = line.split()
        if parts and parts[0] in TREC:
            printed[parts[0]] = (parts[1], parts[2])  # tfidf, bm25
    rows = {ln.split(" & ")[0].strip(): ln for ln in lines if ln.strip().startswith(("tfidf",
                                                                                  "bm25"))}
    cells = {name: [c.strip().removeprefix(r"\textbf{").split("}")[0]
                    for c in row.rstrip(" \\").split(" & ")[1:]]
             for name, row in rows.items()}
    assert cells["tfidf"] == [printed[m][0] for m in TREC]
    assert cells["bm25"] == [printed[m][1] for m in TREC]


def test_readme_opens_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first_block is not None
    commands = [ln for ln in first_block.group(1).splitlines() if ln and not ln.startswith("#")]
    assert commands == [MAIN_JOB, TESTS]
    assert text.index("```bash") < text.index("## ")  # before any section
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert '-m venv "$VENV" && "$VENV/bin/pip" install -r requirements-dev.txt && ' \
           '"$VENV/bin/python" -m pytest' in ci


def test_readme_python_runs(job: tuple[Path, str], tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    out, _ = job
    text = README.read_text(encoding="utf-8")
    quick = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    code = quick.replace("examples/vaswani/out/", f"{out}/").replace(
        "examples/vaswani/data/", f"{EXAMPLE / 'data'}/")
    monkeypatch.chdir(tmp_path)
    glb: dict[str, object] = {}
    exec(compile(code, "<README quick API>", "exec"), glb)
    assert (tmp_path / "bm25.jsonl").is_file()
