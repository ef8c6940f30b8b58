"""``evalkit compare --report FORMAT:PATH``: the gate's reporters render a comparison.

The runs are the two Vaswani systems that examples/vaswani/main.py builds into a temporary
directory. The expected numbers are computed here from the artifacts' per-query rows with
scipy (``ttest_rel`` and the t quantile for ``--test t-test``) and Holm's step-down rule
written out by hand, never taken from evalkit.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from evalkit.cli.app import app

REPO = Path(__file__).resolve().parents[1]
VASWANI = REPO / "examples" / "vaswani"
QRELS = VASWANI / "data" / "qrels"
METRICS = ["ap", "ndcg@10", "precision@10"]

runner = CliRunner()


def invoke(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args])


@dataclass(frozen=True)
class Runs:
    tfidf: Path  # run artifact of the baseline
    bm25: Path  # run artifact of the candidate
    trec_bm25: Path  # the candidate's TREC run file


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    out = tmp_path_factory.mktemp("vaswani")
    proc = subprocess.run(
        [sys.executable, str(VASWANI / "main.py"), "--out", str(out), "--resamples", "200"],
        capture_output=True, text=True, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    return Runs(out / "tfidf.jsonl", out / "bm25.jsonl", out / "run.bm25.txt")


def per_query(artifact: Path, metric: str) -> dict[str, float]:
    """``{query id: value}`` read straight from the artifact's JSON Lines rows."""
    out: dict[str, float] = {}
    for line in artifact.read_text().splitlines():
        doc = json.loads(line)
        if doc.get("type") == "row":
            out[str(doc["id"])] = float(doc["metrics"][metric])
    return out


@dataclass(frozen=True)
class Expected:
    """A paired t-test of candidate - baseline, computed with scipy."""

    base_mean: float
    cand_mean: float
    diff: float
    ci_low: float
    ci_high: float
    p: float
    n: int
    p_holm: float = math.nan


def t_test(base: Path, cand: Path, metric: str, alpha: float = 0.05) -> Expected:
    scipy_stats = pytest.importorskip("scipy.stats")
    b, c = per_query(base, metric), per_query(cand, metric)
    assert b.keys() == c.keys()
    ids = sorted(b)
    xs, ys = [b[q] for q in ids], [c[q] for q in ids]
    diffs = [y - x for x, y in zip(xs, ys, strict=True)]
    n = len(diffs)
    half = (float(scipy_stats.t.ppf(1 - alpha / 2, n - 1)) * statistics.stdev(diffs)
            / math.sqrt(n))
    mean = statistics.fmean(diffs)
    p = float(scipy_stats.ttest_rel(ys, xs).pvalue)
    return Expected(statistics.fmean(xs), statistics.fmean(ys), mean, mean - half,
                    mean + half, p, n)


def holm(found: dict[str, Expected]) -> dict[str, Expected]:
    """Holm's step-down adjustment over the whole family, by hand."""
    order = sorted(found, key=lambda k: found[k].p)
    out: dict[str, Expected] = {}
    running = 0.0
    for i, key in enumerate(order):
        running = max(running, min(1.0, (len(order) - i) * found[key].p))
        e = found[key]
        out[key] = Expected(e.base_mean, e.cand_mean, e.diff, e.ci_low, e.ci_high, e.p, e.n,
                            running)
    return out


def p_text(p: float) -> str:
    """How a table shows an analytic p: four decimals, or ``< 0.0001`` below that."""
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def status(e: Expected, alpha: float = 0.05) -> str:
    if e.p_holm < alpha and e.diff != 0:
        return "bm25 better" if e.diff > 0 else "tfidf better"
    return "no significant difference"


def test_compare_writes_junit_markdown_and_json_reports(runs: Runs, tmp_path: Path) -> None:
    xml_path, md_path, json_path = (tmp_path / "r" / "compare.xml", tmp_path / "compare.md",
                                    tmp_path / "compare.json")
    res = invoke("compare", runs.tfidf, runs.bm25, "-m", ",".join(METRICS),
                 "--test", "t-test", "--report", f"junit:{xml_path}",
                 "--report", f"markdown:{md_path}", "--report", f"json:{json_path}")
    assert res.exit_code == 0, res.output
    assert "W/T/L" in res.stdout  # no report on stdout: the table stays there
    want = holm({m: t_test(runs.tfidf, runs.bm25, m) for m in METRICS})
    # on these runs every metric improves clearly, so each row's verdict is known
    assert {status(e) for e in want.values()} == {"bm25 better"}

    doc = json.loads(json_path.read_text())
    assert (doc["kind"], doc["subject"], doc["reference"]) == ("compare", "bm25", "tfidf")
    assert doc["exit_code"] is None
    assert [r["name"] for r in doc["rows"]] == METRICS
    for row in doc["rows"]:
        e = want[row["metric"]]
        assert row["value"] == pytest.approx(e.cand_mean, abs=1e-12)
        assert row["reference_value"] == pytest.approx(e.base_mean, abs=1e-12)
        assert row["difference"] == pytest.approx(e.diff, abs=1e-12)
        assert row["ci_low"] == pytest.approx(e.ci_low, abs=1e-9)
        assert row["ci_high"] == pytest.approx(e.ci_high, abs=1e-9)
        assert row["p_value"] == pytest.approx(e.p, rel=1e-6)
        assert row["p_adjusted"] == pytest.approx(e.p_holm, rel=1e-6)
        assert row["confidence"] == pytest.approx(0.95)
        assert row["status"] == status(e)
        assert row["coverage"] == f"{e.n} queries"
    # the JSON report embeds the same comparison that --json prints
    plain = invoke("compare", runs.tfidf, runs.bm25, "-m", ",".join(METRICS),
                   "--test", "t-test", "--json")
    assert plain.exit_code == 0, plain.output
    assert doc["data"]["comparisons"] == json.loads(plain.stdout)["comparisons"]

    root = ET.fromstring(xml_path.read_text())
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "0", "0")
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == METRICS
    for case in cases:
        e = want[str(case.get("name"))]
        out = case.findtext("system-out") or ""
        assert f"= {e.diff:+.4f}, 95% CI [{e.ci_low:+.4f}, {e.ci_high:+.4f}]" in out
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert props["status"] == status(e) and props["coverage"] == f"{e.n} queries"

    md = md_path.read_text()
    # the adjusted p's column names the correction (Holm is compare's default)
    assert "| metric | bm25 | tfidf | difference | CI | p | p (Holm) | result | n |" in md
    for m, e in want.items():
        line = (f"| {m} | {e.cand_mean:.4f} | {e.base_mean:.4f} | {e.diff:+.4f} | "
                f"[{e.ci_low:+.4f}, {e.ci_high:+.4f}] | {p_text(e.p)} | {p_text(e.p_holm)} | "
                f"{status(e)} | {e.n} queries |")
        assert line in md, md
        # each detail is named once by its metric, and says which correction adjusted p
        detail = (f"- `{m}`: bm25 minus tfidf = {e.diff:+.4f}, 95% CI [{e.ci_low:+.4f}, "
                  f"{e.ci_high:+.4f}], p {'< 0.0001' if e.p < 1e-4 else f'= {e.p:.4f}'}, "
                  "adjusted by Holm: p ")
        assert detail in md, md


def test_a_report_on_stdout_sends_the_table_to_stderr(runs: Runs) -> None:
    res = invoke("compare", runs.tfidf, runs.bm25, "-m", "ap", "--test", "t-test",
                 "--correction", "none", "--alpha", "0.1", "--report", "json:-")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)  # stdout holds the report and nothing else
    assert "W/T/L" in res.stderr and "W/T/L" not in res.stdout
    e = t_test(runs.tfidf, runs.bm25, "ap", alpha=0.1)
    (row,) = doc["rows"]
    assert row["confidence"] == pytest.approx(0.9)
    assert row["ci_low"] == pytest.approx(e.ci_low, abs=1e-9)
    assert row["ci_high"] == pytest.approx(e.ci_high, abs=1e-9)
    assert row["p_value"] == pytest.approx(e.p, rel=1e-6)
    assert row["p_adjusted"] is None
    assert "90% CI" in row["detail"]


def test_all_pairs_report_names_each_pair(runs: Runs, tmp_path: Path) -> None:
    path = tmp_path / "pairs.json"
    res = invoke("compare", runs.tfidf, runs.bm25, runs.trec_bm25, "--qrels", QRELS,
                 "-m", "ap", "--test", "t-test", "--correction", "none", "--all-pairs",
                 "--report", f"json:{path}")
    assert res.exit_code == 0, res.output
    rows = {r["name"]: r for r in json.loads(path.read_text())["rows"]}
    # the TREC file scores like bm25.jsonl and is renamed after its file stem
    assert set(rows) == {"ap (bm25 vs tfidf)", "ap (run.bm25 vs tfidf)",
                         "ap (run.bm25 vs bm25)"}
    e = t_test(runs.tfidf, runs.bm25, "ap")
    for name in ("ap (bm25 vs tfidf)", "ap (run.bm25 vs tfidf)"):
        assert rows[name]["difference"] == pytest.approx(e.diff, abs=1e-12)
        assert rows[name]["reference_value"] == pytest.approx(e.base_mean, abs=1e-12)
        assert rows[name]["p_value"] == pytest.approx(e.p, rel=1e-6)
    same = rows["ap (run.bm25 vs bm25)"]
    assert same["difference"] == 0.0 and same["status"] == "no significant difference"
    assert "run.bm25 minus bm25" in same["detail"]


@pytest.mark.parametrize(("reports", "message"), [
    (["xml:out.xml"], "unknown reporter 'xml'"),
    (["junit"], "expected FORMAT:PATH"),
    (["junit:-", "json:-"], "both write to standard output"),
])
def test_bad_report_targets_are_refused_before_any_work(
    runs: Runs, tmp_path: Path, reports: list[str], message: str
) -> None:
    args: list[Any] = ["compare", runs.tfidf, runs.bm25, "-m", "ap"]
    for r in reports:
        args += ["--report", r]
    res = invoke(*args)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and message in res.stderr
    assert res.stdout == ""  # refused before the comparison ran


def test_json_and_a_report_on_stdout_are_refused(runs: Runs) -> None:
    res = invoke("compare", runs.tfidf, runs.bm25, "-m", "ap", "--json",
                 "--report", "markdown:-")
    assert res.exit_code == 2
    assert "--json and --report markdown:-" in res.stderr


def skewed_notes(base: Path, cand: Path, metrics: list[str]) -> dict[str, str]:
    """``{metric: note}`` for the metrics whose differences are skewed enough (|G1| > 1 at
    n < 100) for the t-test note, G1 (adjusted Fisher-Pearson) from scipy."""
    scipy_stats = pytest.importorskip("scipy.stats")
    out: dict[str, str] = {}
    for m in metrics:
        b, c = per_query(base, m), per_query(cand, m)
        g1 = float(scipy_stats.skew([c[q] - b[q] for q in b], bias=False))
        if abs(g1) > 1 and len(b) < 100:
            out[m] = (f"differences are skewed (G1 = {g1:.2f}); at this n the t-test's error "
                      "rate can drift from alpha")
    return out


def test_each_note_names_its_metric_and_pair_once(runs: Runs, tmp_path: Path) -> None:
    metrics = ["ap", "ndcg@10", "rr"]
    md_path = tmp_path / "compare.md"
    # the TREC file scores exactly like bm25.jsonl: its notes repeat word for word
    res = invoke("compare", runs.tfidf, runs.bm25, runs.trec_bm25, "--qrels", QRELS,
                 "-m", ",".join(metrics), "--test", "t-test", "--report", f"markdown:{md_path}")
    assert res.exit_code == 0, res.output
    want = skewed_notes(runs.tfidf, runs.bm25, metrics)
    assert want  # the data hold at least one skewed metric, or the test tests nothing
    notes = [line for line in res.stdout.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: {m} (bm25 vs tfidf); {m} (run.bm25 vs tfidf): {text}"
                     for m, text in want.items()]
    # the report carries the same labelled notes
    md = md_path.read_text()
    for m, text in want.items():
        assert f"> {m} (bm25 vs tfidf); {m} (run.bm25 vs tfidf): {text}" in md


def test_the_adjusted_p_column_names_the_correction(runs: Runs) -> None:
    for correction, label in (("holm", "Holm"), ("bh", "Benjamini-Hochberg")):
        res = invoke("compare", runs.tfidf, runs.bm25, "-m", "ap,rr", "--test", "t-test",
                     "--correction", correction, "--report", "markdown:-")
        assert res.exit_code == 0, res.output
        assert "| metric | bm25 | tfidf | difference | CI | p | p (" + label + ") |" in res.stdout
        assert "p (adjusted)" not in res.stdout
        for m in ("ap", "rr"):
            e = t_test(runs.tfidf, runs.bm25, m)
            assert f"- `{m}`: bm25 minus tfidf = {e.diff:+.4f}, 95% CI" in res.stdout
            assert f"adjusted by {label}: p" in res.stdout
            assert f"`{m}`: {m}:" not in res.stdout  # the metric is named once
    plain = invoke("compare", runs.tfidf, runs.bm25, "-m", "ap", "--test", "t-test",
                   "--correction", "none", "--report", "json:-")
    doc = json.loads(plain.stdout)
    assert doc["correction"] is None and doc["rows"][0]["p_adjusted"] is None
    assert "adjusted" not in doc["rows"][0]["detail"]


def test_a_report_of_stats_results_names_their_correction(runs: Runs) -> None:
    from evalkit.data.results import RunResult
    from evalkit.report.comparison_rows import report_from_comparison
    from evalkit.report.markdown import render_markdown
    from evalkit.stats import compare_runs

    base, cand = RunResult.load(runs.tfidf), RunResult.load(runs.bm25)
    family = compare_runs(base, [cand], ["ap", "rr"], method="t-test", correction="bh")
    report = report_from_comparison(family.results)
    assert report.correction == "Benjamini-Hochberg"
    assert "| p (Benjamini-Hochberg) |" in render_markdown(report)


def test_the_markdown_report_has_wins_ties_losses_and_the_movers(runs: Runs, tmp_path: Path
                                                                ) -> None:
    md_path, xml_path = tmp_path / "compare.md", tmp_path / "compare.xml"
    res = invoke("compare", runs.tfidf, runs.bm25, "-m", "ap,ndcg@10", "--top", "2",
                 "--test", "t-test", "--report", f"markdown:{md_path}",
                 "--report", f"junit:{xml_path}")
    assert res.exit_code == 0, res.output
    md = md_path.read_text()
    assert "| metric | bm25 | tfidf | difference | CI | p | p (Holm) | result | n | W/T/L |" in md
    root = ET.fromstring(xml_path.read_text())
    for m in ("ap", "ndcg@10"):
        b, c = per_query(runs.tfidf, m), per_query(runs.bm25, m)
        d = {q: c[q] - b[q] for q in b}
        wins, losses = sum(x > 1e-12 for x in d.values()), sum(x < -1e-12 for x in d.values())
        wtl = f"{wins}/{len(d) - wins - losses}/{losses}"
        assert re.search(rf"^\| {re.escape(m)} \|.*\| 93 queries \| {wtl} \|$", md, re.M), md
        assert f"**Queries that moved most: `{m}`**" in md
        for label, q in (("up", sorted(d, key=lambda q: (-d[q], q))[0]),
                         ("down", sorted(d, key=lambda q: (d[q], q))[0])):
            line = f"| {label} | {q} | {b[q]:.4f} | {c[q]:.4f} | {d[q]:+.4f} |"
            assert line in md, md
        case = next(x for x in root.iter("testcase") if x.get("name") == m)
        props = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert props["wins/ties/losses"] == wtl
        assert f"wins/ties/losses (candidate better/equal/worse): {wtl}" in (
            case.findtext("system-out") or "")
