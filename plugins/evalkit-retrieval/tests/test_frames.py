"""DataFrames: runs and qrels in PyTerrier's shape, and ``to_pandas()``.

A DataFrame run must score exactly as the TREC file it was read from (the frames are built
here from the files' lines with plain Python, their rows shuffled and the rank column
scrambled, since trec_eval ignores it); the values are checked against trec_eval 10.0's
own per-query output for the bundled BM25 run, and the comparison against the README's
published table. Frames must be refused where the TREC loader refuses the same fault.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from evalkit_retrieval.frames import FrameFormatError, run_from_frame

import evalkit
from evalkit.data.results import RunResult

REPO = Path(__file__).resolve().parents[3]
VASWANI = REPO / "examples" / "vaswani"
QRELS = VASWANI / "data" / "qrels"
BM25 = VASWANI / "data" / "runs" / "run.vaswani.bm25.txt"
EXPECTED = VASWANI / "data" / "expected" / "trec_eval-10.0.all_trec.q.bm25.txt"
TREC = {"ap": "map", "ndcg@10": "ndcg_cut_10", "precision@10": "P_10", "rr": "recip_rank"}


def trec_eval_per_query() -> dict[str, dict[str, float]]:
    """``{measure: {qid: value}}`` from trec_eval's -q output (four decimals)."""
    out: dict[str, dict[str, float]] = {}
    for line in EXPECTED.read_text().splitlines():
        name, qid, value = line.split()
        if qid != "all" and name in (*TREC.values(), "num_ret", "num_rel"):
            out.setdefault(name, {})[qid] = float(value)
    return out


def run_frame(path: Path, seed: int = 0) -> pd.DataFrame:
    """The TREC run as PyTerrier's frame, rows shuffled, ranks scrambled."""
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    random.Random(seed).shuffle(rows)
    ranks = list(range(len(rows)))
    random.Random(seed + 1).shuffle(ranks)
    return pd.DataFrame({"qid": [r[0] for r in rows], "docid": range(len(rows)),
                         "docno": [r[2] for r in rows], "rank": ranks,
                         "score": [float(r[4]) for r in rows]})


def qrels_frame(path: Path = QRELS) -> pd.DataFrame:
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    return pd.DataFrame({"qid": [r[0] for r in rows], "docno": [r[2] for r in rows],
                         "label": [int(r[3]) for r in rows]})


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The main job's two TREC runs and artifacts (no report)."""
    out = tmp_path_factory.mktemp("vaswani")
    proc = subprocess.run([sys.executable, str(VASWANI / "main.py"), "--out", str(out),
                           "--no-report"], capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    return out


# ------------------------------------------------------------------ frames as inputs
def test_a_run_frame_scores_as_its_trec_file_and_as_trec_eval() -> None:
    metrics = list(TREC)
    from_file = evalkit.evaluate_run(BM25, QRELS, metrics)
    from_frame = evalkit.evaluate_run(run_frame(BM25), qrels_frame(), metrics, name="bm25")
    assert from_frame.ids() == from_file.ids() and len(from_frame.per_query) == 93
    for m in metrics:
        assert from_frame.scores(m) == from_file.scores(m)  # exactly
        expected = trec_eval_per_query()[TREC[m]]
        got = from_frame.scores(m)
        assert set(got) == set(expected)
        assert all(abs(got[q] - expected[q]) <= 5e-5 for q in got), m
    counts = {r.query_id: r.counts["num_ret"] for r in from_frame.per_query}
    assert counts == {q: int(v) for q, v in trec_eval_per_query()["num_ret"].items()}
    assert from_frame.header["qrels"]["path"] is None and from_frame.name == "bm25"


def test_ties_are_broken_by_docno_descending_as_in_a_trec_file(tmp_path: Path) -> None:
    # d3 scores highest; d1, d2 and d10 tie: trec_eval orders them by docno descending, as
    # strings: d2, d10, d1. The relevant d1 is then at rank 4 (RR = 1/4), d10 at rank 3
    lines = ["q1 Q0 d1 1 1.0 t", "q1 Q0 d10 2 1.0 t", "q1 Q0 d2 3 1.0 t",
             "q1 Q0 d3 4 2.0 t"]
    (tmp_path / "run").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d10 0\n")
    frame = pd.DataFrame({"qid": ["q1"] * 4, "docno": ["d1", "d10", "d2", "d3"],
                          "score": [1.0, 1.0, 1.0, 2.0]})
    qrels = pd.DataFrame({"qid": ["q1", "q1"], "docno": ["d1", "d10"], "label": [1, 0]})
    via_frame = evalkit.evaluate_run(frame, qrels, ["rr", "precision@3"])
    via_file = evalkit.evaluate_run(tmp_path / "run", tmp_path / "qrels", ["rr", "precision@3"])
    assert via_frame.per_query[0].retrieved == ["d3", "d2", "d10", "d1"]
    assert via_file.per_query[0].retrieved == via_frame.per_query[0].retrieved
    assert via_frame.scores("rr") == via_file.scores("rr") == {"q1": 0.25}
    assert via_frame.scores("precision@3") == {"q1": 0.0}


def test_integer_ids_are_text_and_a_name_column_names_the_run() -> None:
    frame = pd.DataFrame({"qid": [1, 1, 2], "docno": [10, 11, 10], "score": [2, 1, 5],
                          "name": ["sys"] * 3})
    qrels = pd.DataFrame({"qid": [1, 2], "docno": ["11", "10"], "label": [1, 2]})
    r = evalkit.evaluate_run(frame, qrels, ["rr"])
    assert r.name == "sys" and r.scores("rr") == {"1": 0.5, "2": 1.0}


def refusal(frame: pd.DataFrame, qrels: pd.DataFrame | None = None) -> str:
    with pytest.raises(FrameFormatError) as info:
        evalkit.evaluate_run(frame, qrels if qrels is not None else qrels_frame(), ["ap"])
    return str(info.value)


def trec_refusal(tmp_path: Path, run_text: str) -> str:
    (tmp_path / "run.txt").write_text(run_text)
    with pytest.raises(ValueError) as info:
        evalkit.evaluate_run(tmp_path / "run.txt", QRELS, ["ap"])
    return str(info.value)


def test_frames_are_refused_where_trec_files_are(tmp_path: Path) -> None:
    base = {"qid": ["1", "1", "2"], "docno": ["a", "b", "a"], "score": [3.0, 2.0, 1.0]}
    # a document listed twice for one query
    dup = pd.DataFrame({**base, "docno": ["a", "a", "a"]}, index=[10, 11, 12])
    message = refusal(dup)
    assert "row 11" in message and "'a' is listed again for query '1'" in message
    assert "first in row 10" in message and "duplicate docs" in message
    assert "listed again" in trec_refusal(tmp_path, "1 Q0 a 1 3 t\n1 Q0 a 2 2 t\n")
    # a score that is NaN (an infinite one ranks, as in trec_eval: see test_ranking.py)
    message = refusal(pd.DataFrame({**base, "score": [3.0, float("nan"), 1.0]}))
    assert "row 1" in message and "is NaN (or missing)" in message
    assert "not a number (NaN)" in trec_refusal(tmp_path, "1 Q0 a 1 nan t\n")
    ranked = run_from_frame(pd.DataFrame({**base, "score": [-float("inf"), 2.0, 1.0]}))
    assert list(ranked.rankings["1"]) == ["b", "a"]
    message = refusal(pd.DataFrame({**base, "score": [3.0, "x", 1.0]}))
    assert "score column holds object values, not numbers ('x' in row 1)" in message
    # missing columns (a TREC line with too few fields)
    message = refusal(pd.DataFrame({"qid": ["1"], "docid": ["a"], "score": [1.0]}))
    assert "no column 'docno'" in message and "it has: qid, docid, score" in message
    assert "expected at least 6 fields" in trec_refusal(tmp_path, "1 Q0 a 1 3\n")
    assert "has no rows" in refusal(pd.DataFrame({"qid": [], "docno": [], "score": []}))
    # ids: missing, or floats that would never match
    message = refusal(pd.DataFrame({**base, "docno": ["a", None, "b"]}))
    assert "row 1 has no docno" in message
    message = refusal(pd.DataFrame({**base, "qid": [1.0, 1.0, 2.0]}))
    assert "'qid' column holds floats" in message and "astype" in message
    # several runs in one frame
    message = refusal(pd.DataFrame({**base, "name": ["x", "y", "x"]}))
    assert "holds 2 runs in its 'name' column ('x', 'y')" in message


def test_qrels_frames_are_refused_where_qrels_files_are() -> None:
    run = pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1.0]})
    q = {"qid": ["1", "1"], "docno": ["a", "b"], "label": [1, 0]}
    message = refusal(run, pd.DataFrame({**q, "docno": ["a", "a"]}))
    assert "judged with another label (1 in row 0, 0 here)" in message
    message = refusal(run, pd.DataFrame({**q, "label": [1.5, 0]}))
    assert "the relevance label 1.5" in message and "not an integer" in message
    message = refusal(run, pd.DataFrame({**q, "label": [float("nan"), 0]}))
    assert "the relevance label nan" in message
    assert "no column 'label'" in refusal(run, pd.DataFrame({"qid": ["1"], "docno": ["a"],
                                                              "relevance": [1]}))
    # integral floats and integer text are labels, as in a mapping or a TREC file
    ok = evalkit.evaluate_run(run, pd.DataFrame({**q, "label": [1.0, "0"]}), ["ap"])
    assert ok.scores("ap") == {"1": 1.0}


def test_compare_takes_frames_and_gives_the_trec_files_numbers(runs: Path) -> None:
    """The README's published comparison, from frames and from the files."""
    tfidf, bm25 = run_frame(runs / "run.tfidf.txt", 3), run_frame(runs / "run.bm25.txt", 4)
    tfidf["name"], bm25["name"] = "tfidf", "bm25"
    metrics = ["ap", "ndcg@10"]
    from_frames = evalkit.compare(tfidf, bm25, qrels=qrels_frame(), metrics=metrics)
    from_files = evalkit.compare(runs / "run.tfidf.txt", runs / "run.bm25.txt", qrels=QRELS,
                                 metrics=metrics)
    for a, b in zip(from_frames, from_files, strict=True):
        assert (a.metric, a.baseline, a.candidate) == (b.metric, b.baseline, b.candidate)
        assert (a.baseline_mean, a.candidate_mean, a.diff, a.p_value, a.p_adjusted) == (
            b.baseline_mean, b.candidate_mean, b.diff, b.p_value, b.p_adjusted)
        assert a.differences == b.differences
    ap = from_frames.get("ap")
    # README: ap 0.1587 0.2177 +0.0590 [+0.0434, +0.0774] 0.0002 0.0002 yes 80/1/12
    assert (f"{ap.baseline_mean:.4f}", f"{ap.candidate_mean:.4f}", f"{ap.diff:+.4f}") == (
        "0.1587", "0.2177", "+0.0590")
    assert (ap.wins, ap.ties, ap.losses) == (80, 1, 12)
    assert from_frames.baseline.provenance["kind"] == "frame"
    with pytest.raises(ValueError, match="scored against qrels"):
        evalkit.compare(tfidf, bm25)


# ------------------------------------------------------------------ frames as outputs
def test_run_to_pandas_one_row_per_query(runs: Path) -> None:
    run = RunResult.load(runs / "bm25.jsonl")
    df = run.to_pandas()
    assert list(df.columns) == ["qid", "ap", "ndcg@10", "precision@10", "recall@100", "rr",
                                "num_rel", "num_rel_ret", "num_ret", "error", "latency_ms"]
    # the artifact keeps trec_eval's text order ("1", "10", "11", ...); the frame lists
    # the queries in natural order
    assert run.ids()[:3] == ["1", "10", "11"]
    assert len(df) == 93 and df["qid"].tolist() == [str(q) for q in range(1, 94)]
    rows = [json.loads(line) for line in (runs / "bm25.jsonl").read_text().splitlines()]
    stored = {r["id"]: r for r in rows if r.get("type") == "row"}
    for qid, ap, num_ret in zip(df["qid"], df["ap"], df["num_ret"], strict=True):
        assert ap == stored[qid]["metrics"]["ap"] and num_ret == stored[qid]["counts"]["num_ret"]
    assert f"{df['ap'].mean():.4f}" == "0.2177"  # the README's mean
    assert df["error"].isna().all() and df["latency_ms"].isna().all()
    assert str(df["ap"].dtype) == "float64"


def test_a_target_runs_frame_has_errors_and_latencies() -> None:
    from evalkit.data.rows import CaseResult

    rows = [CaseResult("c1", None, {"hit": 1.0}, latency_ms=12.5),
            CaseResult("c2", None, {}, error="timeout after 30 s", latency_ms=30000.0)]
    df = RunResult("target", rows).to_pandas()
    assert df.to_dict("list") == {"qid": ["c1", "c2"], "hit": [1.0, pytest.approx(float("nan"),
                                                                                  nan_ok=True)],
                                  "error": [None, "timeout after 30 s"],
                                  "latency_ms": [12.5, 30000.0]}


def test_comparison_to_pandas_wide_and_long(runs: Path) -> None:
    c = evalkit.compare(runs / "tfidf.jsonl", runs / "bm25.jsonl", metrics=["ap", "ndcg@10"])
    wide = c.to_pandas()
    assert len(wide) == 2 and list(wide["metric"]) == ["ap", "ndcg@10"]
    for row, r in zip(wide.to_dict("records"), c, strict=True):
        assert row["diff"] == r.diff and row["p_adjusted"] == r.p_adjusted
        assert (row["wins"], row["ties"], row["losses"]) == (r.wins, r.ties, r.losses)
        assert row["candidate"] == "bm25" and row["baseline"] == "tfidf"
    assert [wide.loc[0, k] for k in ("wins", "ties", "losses")] == [80, 1, 12]  # README
    long = c.to_pandas(long=True)
    assert list(long.columns) == ["qid", "system", "metric", "value"] and len(long) == 2 * 2 * 93
    means = long.groupby(["system", "metric"])["value"].mean()
    assert f"{means['tfidf', 'ap']:.4f}" == "0.1587" and f"{means['bm25', 'ndcg@10']:.4f}" \
        == "0.3645"
    bm25 = RunResult.load(runs / "bm25.jsonl").scores("ap")
    sub = long[(long.system == "bm25") & (long.metric == "ap")]
    assert dict(zip(sub.qid, sub.value, strict=True)) == bm25


def test_gate_to_pandas_and_the_notebook_views(runs: Path) -> None:
    cand, base = RunResult.load(runs / "bm25.jsonl"), RunResult.load(runs / "tfidf.jsonl")
    checks = [evalkit.CheckSpec("ap<floor>", "ap", op=">=", threshold=0.3),
              evalkit.CheckSpec("no_regress", "ndcg@10", vs_baseline="no_significant_regression",
                                alpha=0.05)]
    gate = evalkit.evaluate_gate(checks, cand, baseline=base)
    df = gate.to_pandas()
    assert df["check"].tolist() == ["ap<floor>", "no_regress"]
    assert df["verdict"].tolist() == ["fail", "pass"]  # 0.2177 < 0.3; bm25 improved
    first, second = df.to_dict("records")
    assert f"{first['observed']:.4f}" == "0.2177" and first["threshold"] == 0.3
    assert f"{second['difference']:+.4f}" == "+0.1157" and pd.isna(first["p_value"])
    html = gate._repr_html_()
    assert "ap&lt;floor&gt;" in html and "<script" not in html and "<table>" in html
    cand.name = "bm25 <i>"
    view = cand._repr_html_()
    assert "run bm25 &lt;i&gt;" in view and ">0.2177<" in view and "93 of 93" in view
    c = evalkit.compare(runs / "tfidf.jsonl", runs / "bm25.jsonl", metrics=["ap"])
    view = c._repr_html_()
    for cell in ("0.1587", "0.2177", "+0.0590", "80/1/12", "p (Holm)", "bm25 better"):
        assert f">{cell}<" in view, cell


# ------------------------------------------------------------------ without pandas
BLOCK = "import sys; sys.modules['pandas'] = None; sys.modules['pyarrow'] = None\n"


def without_pandas(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCK + code], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)


def test_without_the_extra_to_pandas_names_it_and_csv_still_works(tmp_path: Path) -> None:
    proc = without_pandas(
        "from evalkit import RunResult, QueryResult\n"
        "from evalkit.tables.frames import MissingExtraError\n"
        "try:\n"
        "    RunResult('r', [QueryResult('q', [], {'ap': 1.0})]).to_pandas()\n"
        "except MissingExtraError as exc:\n"
        "    print('refused:', exc)\n", tmp_path)
    assert "refused: to_pandas() needs pandas" in proc.stdout, proc.stderr
    assert "pip install 'paired-evalkit[pandas]'" in proc.stdout
    cli = ("from evalkit.cli import main\n"
           f"sys.argv = ['evalkit', 'eval', {str(BM25)!r}, '--qrels', {str(QRELS)!r}, "
           "'-m', 'ap,P@10', {extra}]\n"
           "main()\n")
    proc = without_pandas(cli.replace("{extra}", "'--parquet', 'q.parquet'"), tmp_path)
    assert proc.returncode == 2 and not (tmp_path / "q.parquet").exists()
    assert "--parquet needs pandas" in proc.stderr and "paired-evalkit[pandas]" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = without_pandas(cli.replace("{extra}", "'--per-query', '--csv', 'q.csv'"), tmp_path)
    assert proc.returncode == 0, proc.stderr
    import csv

    with (tmp_path / "q.csv").open(newline="") as fh:
        table = list(csv.DictReader(fh))
    assert list(table[0]) == ["qid", "ap", "precision@10", "error", "latency_ms"]
    expected = trec_eval_per_query()
    assert len(table) == 93
    for row in table:
        assert abs(float(row["ap"]) - expected["map"][row["qid"]]) <= 5e-5
        assert abs(float(row["precision@10"]) - expected["P_10"][row["qid"]]) <= 5e-5
        assert row["error"] == "" and row["latency_ms"] == ""


def test_eval_parquet_and_csv_hold_the_same_table(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from evalkit.cli.app import app

    res = CliRunner().invoke(app, ["eval", str(BM25), "--qrels", str(QRELS), "-m",
                                   "ndcg@10,num_rel", "--csv", str(tmp_path / "t.csv"),
                                   "--parquet", str(tmp_path / "t.parquet")])
    assert res.exit_code == 0, res.output
    parquet = pd.read_parquet(tmp_path / "t.parquet")
    csv_ = pd.read_csv(tmp_path / "t.csv", dtype={"qid": str})
    assert list(parquet.columns) == ["qid", "ndcg@10", "num_rel", "error", "latency_ms"]
    assert parquet["qid"].tolist() == csv_["qid"].tolist()
    assert parquet["ndcg@10"].tolist() == csv_["ndcg@10"].tolist()  # repr: exact round trip
    expected = trec_eval_per_query()
    assert dict(zip(parquet.qid, parquet.num_rel, strict=True)) == {
        q: int(v) for q, v in expected["num_rel"].items()}
    res = CliRunner().invoke(app, ["eval", str(BM25), "--qrels", str(QRELS),
                                   "--csv", str(tmp_path / "x"), "--parquet",
                                   str(tmp_path / "x")])
    assert res.exit_code == 2 and "both name" in res.output


def test_frames_and_csv_list_a_runs_queries_in_its_order(tmp_path: Path) -> None:
    from evalkit.data.rows import QueryResult
    from evalkit.data.run_views import run_columns
    from evalkit.report.tables import csv_text

    # a TREC run: stored in text order, listed in natural order
    run_file, qrels = tmp_path / "run.txt", tmp_path / "qrels"
    ids = ["q10", "2", "q2", "100", "10", "1", "q1"]
    run_file.write_text("".join(f"{q} Q0 d1 1 1.0 t\n" for q in ids))
    qrels.write_text("".join(f"{q} 0 d1 1\n" for q in ids))
    trec = evalkit.evaluate_run(run_file, qrels, ["ap"])
    natural = ["1", "2", "10", "100", "q1", "q2", "q10"]
    assert trec.to_pandas()["qid"].tolist() == natural
    assert [line.split(",")[0] for line in csv_text(run_columns(trec)).splitlines()[1:]] == (
        natural)
    # a run in an order of its own (a golden set's) keeps it
    own = RunResult("r", [QueryResult(q, [], {"ap": 1.0}) for q in ids])
    assert own.to_pandas()["qid"].tolist() == ids
    long = evalkit.compare(trec, trec, metrics=["ap"], n_resamples=200).to_pandas(long=True)
    assert long["qid"].tolist() == natural * 2


def test_parquet_is_written_like_every_output(tmp_path: Path) -> None:
    from evalkit.data.rows import QueryResult
    from evalkit.data.run_views import write_parquet

    run = RunResult("r", [QueryResult("q1", [], {"ap": 0.25})])
    target = tmp_path / "real" / "table.parquet"
    target.parent.mkdir()
    target.write_bytes(b"old")
    link = tmp_path / "table.parquet"
    link.symlink_to(target)
    write_parquet(run, link)
    assert link.is_symlink()  # followed, not renamed over
    assert pd.read_parquet(target)[["qid", "ap"]].values.tolist() == [["q1", 0.25]]
    write_parquet(run, tmp_path / "a" / "b" / "t.parquet")  # missing folders made
    assert pd.read_parquet(tmp_path / "a" / "b" / "t.parquet")["qid"].tolist() == ["q1"]
