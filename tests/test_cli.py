"""The command line: eval and compare against values obtained independently.

Ground truth: trec_eval 10.0's own output for the Vaswani BM25 run
(examples/vaswani/data/expected), and pytrec_eval (trec_eval's code) for runs the tests
derive from it. Errors must print one line, no traceback, and exit non-zero.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import statistics
import subprocess
import sys
from collections import defaultdict
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from evalkit.cli.app import app

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "examples" / "vaswani" / "data"
RUN = DATA / "runs" / "run.vaswani.bm25.txt"
QRELS = DATA / "qrels"
EXPECTED = DATA / "expected" / "trec_eval-10.0.all_trec.q.bm25.txt"

# evalkit metric -> trec_eval measure
TREC = {
    "ap": "map", "ndcg@10": "ndcg_cut_10", "precision@10": "P_10", "recall@100": "recall_100",
    "rr": "recip_rank", "ndcg": "ndcg", "success@10": "success_10", "r_precision": "Rprec",
    "precision@5": "P_5", "recall@1000": "recall_1000", "ap@100": "map_cut_100",
}

runner = CliRunner()


def invoke(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args])


def ok(*args: str | Path) -> Result:
    res = invoke(*args)
    assert res.exit_code == 0, res.output
    return res


@pytest.fixture(scope="module")
def expected() -> dict[str, dict[str, str]]:
    """trec_eval's output: ``{qid or 'all': {measure: text}}``."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for line in EXPECTED.read_text().splitlines():
        measure, qid, value = line.split("\t")
        out[qid][measure.strip()] = value
    return out


def run_lines() -> list[list[str]]:
    return [line.split() for line in RUN.read_text().splitlines()]


def write_run(path: Path, rows: list[list[str]]) -> Path:
    path.write_text("".join(" ".join(r) + "\n" for r in rows))
    return path


def pytrec_per_query(run_path: Path, measures: set[str]) -> dict[str, dict[str, float]]:
    """Per-query values from pytrec_eval, with judged queries the run lacks scored 0."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in QRELS.read_text().splitlines():
        q, _, d, rel = line.split()
        qrels[q][d] = int(rel)
    run: dict[str, dict[str, float]] = defaultdict(dict)
    for parts in (line.split() for line in run_path.read_text().splitlines()):
        run[parts[0]][parts[2]] = float(parts[4])
    res: dict[str, dict[str, float]] = pytrec_eval.RelevanceEvaluator(
        dict(qrels), measures).evaluate(dict(run))
    zero = dict.fromkeys(next(iter(res.values())), 0.0)
    return {q: res.get(q, zero) for q in qrels}


# --------------------------------------------------------------------------- basics
def test_version() -> None:
    res = ok("--version")
    version = metadata.version("paired-evalkit-core")
    assert res.stdout == f"evalkit {version} (paired-evalkit-core)\n"


def test_no_arguments_shows_help() -> None:
    res = invoke()
    assert "eval" in res.output and "compare" in res.output


@pytest.mark.parametrize("argv", [["--help"], ["eval", "--help"], ["compare", "--help"],
                                  ["power", "--help"]])
def test_help_imports_nothing_heavy(argv: list[str]) -> None:
    code = (
        "import sys\n"
        "from evalkit.cli import main\n"
        f"sys.argv = ['evalkit', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ['numpy', 'scipy', 'httpx', 'anthropic', 'evalkit_retrieval', 'pluggy']\n"
        "print('HEAVY', [m for m in heavy if m in sys.modules])\n"
    )
    # the first `evalkit --help` may discover the plugins to list their commands (and
    # keeps the list); it is the later ones that start fast
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout
    # `evalkit eval` is the retrieval plugin's command: its help discovers the plugins
    # (pluggy) and imports that plugin, and nothing heavier
    own = {"evalkit_retrieval", "pluggy"} if argv[0] == "eval" else set()
    heavy = ast.literal_eval(out.rpartition("HEAVY ")[2].strip())
    assert set(heavy) - own == set(), out


# --------------------------------------------------------------------------- eval
def test_eval_trec_format_reproduces_trec_eval_lines() -> None:
    metrics = ",".join(TREC)
    res = ok("eval", RUN, "--qrels", QRELS, "-m", metrics, "--format", "trec", "--per-query")
    ours = res.stdout.splitlines()
    theirs = set(EXPECTED.read_text().splitlines())
    missing = [line for line in ours if line not in theirs]
    assert not missing, missing[:10]
    # every query block (3 counts + the measures) and the summary block
    assert len(ours) == 93 * (3 + len(TREC)) + 5 + len(TREC)
    assert ours[0].startswith("num_ret               \t1\t")
    summary = [line for line in ours if "\tall\t" in line]
    assert summary[:2] == ["runid                 \tall\tbm25", "num_q                 \tall\t93"]
    assert all(line.split("\t")[0].strip() in {"runid", "num_q", "num_ret", "num_rel",
                                               "num_rel_ret", *TREC.values()}
               for line in ours)


def test_eval_trec_format_without_per_query_prints_only_the_summary(
    expected: dict[str, dict[str, str]],
) -> None:
    res = ok("eval", RUN, "--qrels", QRELS, "-f", "trec")
    lines = res.stdout.splitlines()
    assert all("\tall\t" in line for line in lines)
    values = {line.split("\t")[0].strip(): line.split("\t")[2] for line in lines}
    # no -m: trec_eval's own default set, "official" (not evalkit's ndcg@10, recall@100)
    for measure in ("map", "gm_map", "Rprec", "bpref", "P_10", "recip_rank",
                    "iprec_at_recall_0.50", "num_ret", "num_rel", "num_rel_ret", "num_q"):
        assert values[measure] == expected["all"][measure]
    assert "ndcg_cut_10" not in values and "recall_100" not in values


def test_eval_json_matches_trec_eval(expected: dict[str, dict[str, str]]) -> None:
    res = ok("eval", RUN, "--qrels", QRELS, "--json", "--per-query")
    doc = json.loads(res.stdout)
    assert doc["num_queries"] == 93
    assert doc["unjudged_ignored"] == 0 and doc["missing_count"] == 0
    assert doc["missing"] == "zero"
    assert doc["metrics"] == ["ap", "ndcg@10", "precision@10", "recall@100", "rr"]
    for m, value in doc["means"].items():
        assert value == pytest.approx(float(expected["all"][TREC[m]]), abs=5e-5)
    assert len(doc["per_query"]) == 93
    for row in doc["per_query"]:
        for m, value in row["metrics"].items():
            assert value == pytest.approx(float(expected[row["id"]][TREC[m]]), abs=5e-5)
        assert row["counts"]["num_rel"] == int(expected[row["id"]]["num_rel"])


def test_eval_table_shows_means_and_counts(expected: dict[str, dict[str, str]]) -> None:
    res = ok("eval", RUN, "--qrels", QRELS, "-m", "AP", "-m", "nDCG@10")
    out = res.stdout
    assert expected["all"]["map"] in out and expected["all"]["ndcg_cut_10"] in out
    assert "93 queries evaluated" in out
    assert "0 run topics without judgments ignored" in out
    assert "0 judged queries missing from the run" in out


def test_eval_reports_unjudged_topics_and_missing_queries(
    tmp_path: Path, expected: dict[str, dict[str, str]]
) -> None:
    rows = [r for r in run_lines() if r[0] != "1"]
    rows += [["999", "Q0", "42", "1", "3.0", "bm25"], ["998", "Q0", "42", "1", "3.0", "bm25"]]
    run = write_run(tmp_path / "partial.txt", rows)

    doc = json.loads(ok("eval", run, "--qrels", QRELS, "-m", "ap", "--json", "-q").stdout)
    assert doc["unjudged_ignored"] == 2 and doc["unjudged_ignored_ids"] == ["998", "999"]
    assert doc["missing_count"] == 1 and doc["missing_ids"] == ["1"]
    assert doc["num_queries"] == 93
    zero = {r["id"]: r["metrics"]["ap"] for r in doc["per_query"]}
    assert zero["1"] == 0.0
    others = [float(expected[q]["map"]) for q in expected if q not in ("1", "all")]
    assert doc["means"]["ap"] == pytest.approx(math.fsum(others) / 93, abs=1e-3)

    skipped = json.loads(ok("eval", run, "--qrels", QRELS, "-m", "ap", "--json",
                            "--missing", "skip").stdout)
    assert skipped["num_queries"] == 92 and skipped["missing"] == "skip"
    assert skipped["missing_count"] == 1
    assert skipped["means"]["ap"] == pytest.approx(math.fsum(others) / 92, abs=1e-3)

    table = ok("eval", run, "--qrels", QRELS, "-m", "ap").stdout
    assert "2 run topics without judgments ignored" in table
    assert "1 judged query missing from the run (scored 0)" in table


def test_eval_depth_limit_and_relevance_level(expected: dict[str, dict[str, str]]) -> None:
    # with only the first 10 documents scored, recall@100 is recall@10
    doc = json.loads(ok("eval", RUN, "--qrels", QRELS, "-m", "recall@100", "-M", "10",
                        "--json", "-q").stdout)
    for row in doc["per_query"]:
        assert row["metrics"]["recall@100"] == pytest.approx(
            float(expected[row["id"]]["recall_10"]), abs=5e-5)
    assert doc["depth"] == 10
    # every Vaswani label is 1: at relevance level 2 nothing is relevant
    doc = json.loads(ok("eval", RUN, "--qrels", QRELS, "-m", "ap", "-l", "2", "--json").stdout)
    assert doc["means"]["ap"] == 0.0 and doc["relevance_level"] == 2


def test_eval_save_writes_an_artifact_that_eval_reads_back(
    tmp_path: Path, expected: dict[str, dict[str, str]]
) -> None:
    art = tmp_path / "bm25.jsonl"
    ok("eval", RUN, "--qrels", QRELS, "--save", art, "-m", "ap,ndcg@10")
    header = json.loads(art.read_text().splitlines()[0])
    assert header["type"] == "header"
    assert header["qrels"]["sha256"] == hashlib.sha256(QRELS.read_bytes()).hexdigest()
    doc = json.loads(ok("eval", art, "--json").stdout)
    assert doc["means"]["ap"] == pytest.approx(float(expected["all"]["map"]), abs=5e-5)
    assert set(doc["means"]) == {"ap", "ndcg@10"}
    # an artifact is not re-scored: options that contradict it are refused
    res = invoke("eval", art, "-M", "5")
    assert res.exit_code == 2 and "depth" in res.stderr


# --------------------------------------------------------------------------- compare
@pytest.fixture(scope="module")
def candidate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The BM25 run with each query's top 10 scores reversed (same documents, new order)."""
    by_q: dict[str, list[list[str]]] = defaultdict(list)
    for r in run_lines():
        by_q[r[0]].append(r)
    rows: list[list[str]] = []
    for q, lines in by_q.items():
        ranked = sorted(lines, key=lambda r: (float(r[4]), r[2]), reverse=True)
        top = ranked[:10]
        scores = [r[4] for r in top]
        for r, s in zip(top, reversed(scores), strict=True):
            rows.append([q, "Q0", r[2], "0", s, "flipped"])
        rows += [[q, "Q0", r[2], "0", r[4], "flipped"] for r in ranked[10:]]
    return write_run(tmp_path_factory.mktemp("runs") / "flipped.txt", rows)


def _compare_json(*args: str | Path) -> dict[str, Any]:
    return json.loads(ok("compare", *args, "--json").stdout)  # type: ignore[no-any-return]


def _independent(candidate: Path, expected: dict[str, dict[str, str]], measure: str
                 ) -> tuple[list[float], list[float]]:
    """Baseline (trec_eval) and candidate (pytrec_eval) per-query values, in qrels order."""
    cand = pytrec_per_query(candidate, {measure.replace("ndcg_cut_10", "ndcg_cut.10")
                                        .replace("P_10", "P.10")})
    ids = sorted(q for q in expected if q != "all")
    return [float(expected[q][measure]) for q in ids], [cand[q][measure] for q in ids]


def test_compare_matches_independent_values(
    candidate: Path, expected: dict[str, dict[str, str]]
) -> None:
    doc = _compare_json(RUN, candidate, "--qrels", QRELS, "-m", "ap", "-m", "P@10",
                        "-m", "ndcg@10")
    assert doc["baseline"]["name"] == "bm25" and doc["candidates"][0]["name"] == "flipped"
    assert doc["method"] == "auto" and doc["correction"] == "holm"
    scipy_stats = pytest.importorskip("scipy.stats")
    # none of the three metrics is a 0/1 metric, so auto ran the sign-flip test, joined
    # by the bootstrap-t where the differences' skewness |G1| (scipy) is at least 1
    assert doc["family_size"] == 3
    rows = {c["metric"]: c for c in doc["comparisons"]}
    for metric, measure in (("ap", "map"), ("precision@10", "P_10"),
                            ("ndcg@10", "ndcg_cut_10")):
        base, cand = _independent(candidate, expected, measure)
        d = [y - x for x, y in zip(base, cand, strict=True)]
        skewed = len(set(d)) > 1 and abs(float(scipy_stats.skew(d, bias=False))) >= 1.0
        assert rows[metric]["method"] == (
            "randomization+bootstrap-t" if skewed else "randomization"), metric
    assert set(doc["methods_used"]) <= {"randomization", "randomization+bootstrap-t"}
    assert set(rows) == {"ap", "precision@10", "ndcg@10"}
    for metric, measure in (("ap", "map"), ("precision@10", "P_10"),
                            ("ndcg@10", "ndcg_cut_10")):
        c = rows[metric]
        base, cand = _independent(candidate, expected, measure)
        diffs = [y - x for x, y in zip(base, cand, strict=True)]
        assert c["n_queries"] == 93
        assert c["baseline_mean"] == pytest.approx(float(expected["all"][measure]), abs=5e-5)
        assert c["candidate_mean"] == pytest.approx(statistics.fmean(cand), abs=1e-4)
        assert c["diff"] == pytest.approx(statistics.fmean(diffs), abs=1e-4)
        assert c["wins"] == sum(d > 1e-4 for d in diffs)
        assert c["losses"] == sum(d < -1e-4 for d in diffs)
        assert c["wins"] + c["ties"] + c["losses"] == 93
        assert c["ci_low"] <= c["diff"] <= c["ci_high"]
        assert 1 / 10_001 <= c["p_value"] <= c["p_adjusted"] <= 1
        assert c["significant"] == (c["p_adjusted"] < 0.05)
    # Holm over the family, computed by hand from the raw p-values
    raw = sorted((c["p_value"], m) for m, c in rows.items())
    running = 0.0
    for i, (p, m) in enumerate(raw):
        running = max(running, min(1.0, (len(raw) - i) * p))
        assert rows[m]["p_adjusted"] == pytest.approx(running, rel=1e-12)
    # the same ten documents in another order: P@10 cannot move
    p10 = rows["precision@10"]
    assert (p10["diff"], p10["ci_low"], p10["ci_high"]) == (0.0, 0.0, 0.0)
    assert p10["ties"] == 93 and p10["p_value"] == 1.0 and not p10["significant"]
    # putting the top 10 upside down hurts nDCG@10 on most queries, significantly
    assert rows["ndcg@10"]["diff"] < 0 and rows["ndcg@10"]["significant"]


def test_compare_t_test_matches_scipy(
    candidate: Path, expected: dict[str, dict[str, str]]
) -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    doc = _compare_json(RUN, candidate, "--qrels", QRELS, "-m", "ap", "--test", "t-test",
                        "--correction", "none")
    (c,) = doc["comparisons"]
    base, cand = _independent(candidate, expected, "map")
    diffs = [y - x for x, y in zip(base, cand, strict=True)]
    ref = scipy_stats.ttest_rel(cand, base)
    assert c["p_value"] == pytest.approx(float(ref.pvalue), rel=1e-3)
    half = float(scipy_stats.t.ppf(0.975, 92)) * statistics.stdev(diffs) / math.sqrt(93)
    assert c["ci_low"] == pytest.approx(statistics.fmean(diffs) - half, abs=2e-4)
    assert c["ci_high"] == pytest.approx(statistics.fmean(diffs) + half, abs=2e-4)
    assert c["p_adjusted"] is None and c["significant"] == (c["p_value"] < 0.05)


def test_compare_seed_bootstrap(candidate: Path) -> None:
    doc = _compare_json(RUN, candidate, "--qrels", QRELS, "-m", "P@10,ndcg@10",
                        "--test", "bootstrap", "--correction", "none")
    p10, ndcg = doc["comparisons"]
    assert (p10["ci_low"], p10["ci_high"], p10["p_value"]) == (0.0, 0.0, 1.0)
    assert not p10["significant"]
    # no resample is as extreme as the observed shift: the seed's floor 1 / (B + 1)
    assert ndcg["p_value"] == pytest.approx(1 / 10_001) and ndcg["significant"]
    assert ndcg["ci_high"] < 0


def test_compare_run_with_itself() -> None:
    doc = _compare_json(RUN, RUN, "--qrels", QRELS, "-m", "ap")
    (c,) = doc["comparisons"]
    assert c["diff"] == 0.0 and c["ties"] == 93 and not c["significant"]
    assert c["p_value"] == 1.0 and c["p_adjusted"] == 1.0
    assert doc["candidates"][0]["name"] != doc["baseline"]["name"]  # names kept distinct


def test_compare_top_lists_the_queries_that_moved_most(
    candidate: Path, expected: dict[str, dict[str, str]]
) -> None:
    doc = _compare_json(RUN, candidate, "--qrels", QRELS, "-m", "ndcg@10", "--top", "3")
    (c,) = doc["comparisons"]
    cand = pytrec_per_query(candidate, {"ndcg_cut_10"})
    diffs = {q: cand[q]["ndcg_cut_10"] - float(v["ndcg_cut_10"])
             for q, v in expected.items() if q != "all"}
    down = sorted((d, q) for q, d in diffs.items() if d < -1e-4)[:3]
    assert [m["id"] for m in c["top_losses"]] == [q for _, q in down]
    up = sorted(((-d, q) for q, d in diffs.items() if d > 1e-4))[:3]
    assert [m["id"] for m in c["top_gains"]] == [q for _, q in up]
    for m in c["top_losses"]:
        assert m["diff"] == pytest.approx(diffs[m["id"]], abs=1e-4)

    table = ok("compare", RUN, candidate, "--qrels", QRELS, "-m", "ndcg@10", "--top", "3").stdout
    assert "queries that moved most" in table
    for _, q in down:
        assert f" {q} " in table


def test_compare_table(candidate: Path, expected: dict[str, dict[str, str]]) -> None:
    out = ok("compare", RUN, candidate, "--qrels", QRELS, "-m", "ap").stdout
    assert "baseline bm25" in out and "candidate flipped" in out
    assert expected["all"]["map"] in out
    assert "95% CI" in out and "W/T/L" in out


def test_compare_artifacts(tmp_path: Path, candidate: Path) -> None:
    base_art, cand_art = tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    ok("eval", RUN, "--qrels", QRELS, "-m", "ap,ndcg@10", "--save", base_art)
    ok("eval", candidate, "--qrels", QRELS, "-m", "ap,ndcg@10,rr", "--save", cand_art)
    from_runs = _compare_json(RUN, candidate, "--qrels", QRELS, "-m", "ap,ndcg@10")
    from_artifacts = _compare_json(base_art, cand_art)  # the metrics both hold
    mixed = _compare_json(base_art, candidate, "--qrels", QRELS)
    for doc in (from_artifacts, mixed):
        assert [c["metric"] for c in doc["comparisons"]] == ["ap", "ndcg@10"]
        for a, b in zip(doc["comparisons"], from_runs["comparisons"], strict=True):
            for key in ("diff", "ci_low", "ci_high", "p_value", "p_adjusted", "wins", "ties",
                        "losses"):
                assert a[key] == b[key]


def test_compare_several_candidates(candidate: Path) -> None:
    doc = _compare_json(RUN, candidate, RUN, "--qrels", QRELS, "-m", "ap,ndcg@10")
    assert len(doc["candidates"]) == 2 and doc["family_size"] == 4
    names = [c["name"] for c in doc["candidates"]]
    assert [(c["metric"], c["candidate"]) for c in doc["comparisons"]] == [
        ("ap", names[0]), ("ap", names[1]), ("ndcg@10", names[0]), ("ndcg@10", names[1])]
    assert doc["comparisons"][1]["diff"] == 0.0
    pairs = _compare_json(RUN, candidate, RUN, "--qrels", QRELS, "-m", "ap", "--all-pairs")
    assert [(c["candidate"], c["baseline"]) for c in pairs["comparisons"]] == [
        (names[0], "bm25"), (names[1], "bm25"), (names[1], names[0])]
    table = ok("compare", RUN, candidate, RUN, "--qrels", QRELS, "-m", "ap").stdout
    assert "p (Holm)" in table and "adjusted by Holm over 2 tests" in table


def test_compare_choices_mirror_the_stats_api() -> None:
    from evalkit import stats
    from evalkit.cli import compare_cmd
    from evalkit.stats.multiple import CORRECTIONS

    assert {m.value for m in compare_cmd.Method} == set(stats.METHODS)
    assert {m.value for m in compare_cmd.CIMethod} == set(stats.CI_METHODS)
    assert {m.value for m in compare_cmd.Correction} == set(CORRECTIONS)
    assert compare_cmd.DEFAULT_METHOD.value == stats.DEFAULT_METHOD


def test_compare_refuses_artifacts_evaluated_differently(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    ok("eval", RUN, "--qrels", QRELS, "-m", "ap", "--save", a)
    ok("eval", RUN, "--qrels", QRELS, "-m", "ap", "-M", "100", "--save", b)
    other_qrels = tmp_path / "qrels"
    other_qrels.write_text("".join(line + "\n" for line in QRELS.read_text().splitlines()[1:]))
    ok("eval", RUN, "--qrels", other_qrels, "-m", "ap", "--save", c)

    res = invoke("compare", a, b)
    assert res.exit_code == 2 and "depth differs" in res.stderr
    assert "Traceback" not in res.output
    res = invoke("compare", a, c)
    assert res.exit_code == 2 and "qrels differ" in res.stderr
    # a TREC run scored against other qrels than an artifact's is refused too
    res = invoke("compare", a, RUN, "--qrels", other_qrels)
    assert res.exit_code == 2 and "qrels" in res.stderr


# --------------------------------------------------------------------------- errors
def _fails_cleanly(res: Result, *needles: str) -> None:
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert res.stderr.startswith("error: ")
    for needle in needles:
        assert needle in res.stderr, res.stderr


def test_errors_missing_file(tmp_path: Path) -> None:
    _fails_cleanly(invoke("eval", tmp_path / "nope.txt", "--qrels", QRELS), "nope.txt")
    _fails_cleanly(invoke("eval", RUN, "--qrels", tmp_path / "nope"), "nope")
    _fails_cleanly(invoke("compare", RUN, tmp_path / "nope.txt", "--qrels", QRELS), "nope.txt")


def test_errors_unknown_metric() -> None:
    _fails_cleanly(invoke("eval", RUN, "--qrels", QRELS, "-m", "bogus@10"), "bogus@10")
    _fails_cleanly(invoke("compare", RUN, RUN, "--qrels", QRELS, "-m", "bogus"), "bogus")


def test_errors_malformed_run_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 4817 1 15.49 bm25\n1 Q0 8582\n")
    _fails_cleanly(invoke("eval", bad, "--qrels", QRELS), "bad.txt")
    dup = tmp_path / "dup.txt"
    dup.write_text("1 Q0 4817 1 15.49 bm25\n1 Q0 4817 2 15.00 bm25\n")
    _fails_cleanly(invoke("eval", dup, "--qrels", QRELS), "4817")
    bad_qrels = tmp_path / "qrels"
    bad_qrels.write_text("1 0 1239 1\n1 0 1502\n")
    _fails_cleanly(invoke("eval", RUN, "--qrels", bad_qrels), "qrels")
    binary = tmp_path / "run.bin"
    binary.write_bytes(b"\xff\xfe\x00\x81" * 64)
    _fails_cleanly(invoke("eval", binary, "--qrels", QRELS), "run.bin")


def test_errors_malformed_artifact(tmp_path: Path) -> None:
    art = tmp_path / "broken.jsonl"
    art.write_text('{"type": "header", "schema_version": 1, "name": "x"}\n{not json\n')
    _fails_cleanly(invoke("eval", art), "broken.jsonl:2")


def test_errors_usage() -> None:
    _fails_cleanly(invoke("eval", RUN), "--qrels")
    _fails_cleanly(invoke("compare", RUN, "--qrels", QRELS), "candidate")
    _fails_cleanly(invoke("eval", RUN, "--qrels", QRELS, "--json", "--format", "trec"), "--json")
    _fails_cleanly(invoke("compare", RUN, RUN, "--qrels", QRELS, "--alpha", "2"), "alpha")


def test_errors_through_the_installed_script(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("evalkit")
    if not exe.exists():
        pytest.skip("the evalkit script is not installed next to this interpreter")
    proc = subprocess.run([str(exe), "eval", str(tmp_path / "missing.txt"), "--qrels",
                           str(QRELS)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1


# --------------------------------------------------------------------------- power
def test_power_from_sd_matches_published_sample_sizes() -> None:
    # paired (one-sample) t-test, two-sided alpha 0.05, power 0.8: Cohen (1988) and
    # G*Power give n = 15, 34 and 199 for standardized effects 0.8, 0.5 and 0.2
    doc = json.loads(ok("power", "--sd", "1", "-e", "0.8", "-e", "0.5", "-e", "0.2",
                        "-n", "34", "--json").stdout)
    (plan,) = doc["plans"]
    assert [x["n_required"] for x in plan["needed"]] == [15, 34, 199]
    scipy_stats = pytest.importorskip("scipy.stats")
    tc = float(scipy_stats.t.ppf(0.975, 33))
    nc = 0.5 * math.sqrt(34)
    power_34 = 1 - float(scipy_stats.nct.cdf(tc, 33, nc)) + float(scipy_stats.nct.cdf(-tc, 33, nc))
    assert plan["needed"][1]["power_at_n"] == pytest.approx(power_34, abs=1e-6)
    (mde,) = plan["detectable"]
    assert mde["n"] == 34 and 0.48 < mde["mde"] < 0.5  # 34 queries reach 80% just under 0.5
    # the sd scales the effect: half the sd, half the detectable difference
    half = json.loads(ok("power", "--sd", "0.5", "-n", "34", "--json").stdout)
    assert half["plans"][0]["detectable"][0]["mde"] == pytest.approx(mde["mde"] / 2, rel=1e-6)


def test_power_from_a_pilot(candidate: Path, expected: dict[str, dict[str, str]]) -> None:
    doc = json.loads(ok("power", RUN, candidate, "--qrels", QRELS, "-m", "ap", "-n", "150",
                        "--trials", "500", "--json").stdout)
    (plan,) = doc["plans"]
    base, cand = _independent(candidate, expected, "map")
    diffs = [y - x for x, y in zip(base, cand, strict=True)]
    assert plan["n_pilot"] == 93 and plan["metric"] == "ap"
    assert plan["mean_diff"] == pytest.approx(statistics.fmean(diffs), abs=1e-4)
    assert plan["sd_diff"] == pytest.approx(statistics.stdev(diffs), rel=1e-3)
    (d,) = plan["detectable"]
    from_sd = json.loads(ok("power", "--sd", repr(plan["sd_diff"]), "-n", "150",
                            "--json").stdout)
    assert d["mde"] == pytest.approx(from_sd["plans"][0]["detectable"][0]["mde"], rel=1e-9)
    # simulated from the pilot's own differences, the power at the t approximation's MDE
    # is that of the test compare runs (sign-flip with its skew guard): near the target,
    # within 0.15 of it (0.904 at 500 trials on these AP differences)
    assert doc["test"] == "auto" and doc["primary"] == "simulated"
    assert abs(d["simulated_power"] - 0.8) < 0.15, d["simulated_power"]
    table = ok("power", RUN, candidate, "--qrels", QRELS, "-m", "ap", "--no-simulate").stdout
    assert "minimum detectable effect" in table and "93" in table


@pytest.mark.parametrize("n", ["80", "100", "200"])
def test_power_at_common_sizes(n: str) -> None:
    doc = json.loads(ok("power", "--sd", "1", "-n", n, "--json").stdout)
    mde = doc["plans"][0]["detectable"][0]["mde"]
    # 80% power two-sided at alpha 0.05 needs about (1.96 + 0.84) / sqrt(n) sds
    assert mde == pytest.approx(2.8 / math.sqrt(int(n)), rel=0.02)


@pytest.mark.parametrize(("args", "message"), [
    (["--sd", "0.1", "-e", "0"], "error: --effect 0: a difference of 0 cannot be detected at "
     "any number of queries; give the smallest true difference worth detecting, e.g. -e 0.02"),
    (["--sd", "0.1", "-e", "0.02", "-e", "0"], "error: --effect 0: a difference of 0 cannot"),
    (["--sd", "0.1", "-e", "-0.01", "--alternative", "greater"],
     "error: --effect -0.01 points against --alternative greater, which tests for a positive "
     "difference (candidate - baseline); give a positive effect, or use --alternative "
     "two-sided"),
    (["--sd", "0.1", "-e", "0.01", "--alternative", "less"],
     "error: --effect 0.01 points against --alternative less, which tests for a negative "
     "difference"),
    ([str(RUN), str(RUN), "--qrels", str(QRELS), "-e", "0"], "error: --effect 0: a difference"),
])
def test_power_refuses_an_effect_it_cannot_plan_for(args: list[str], message: str) -> None:
    res = invoke("power", *args)
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.startswith(message) and res.stderr.count("\n") == 1, res.stderr


def test_power_shows_small_figures_with_their_digits() -> None:
    res = ok("power", "--sd", "0.1", "-n", "100000000", "-e", "1e-5")
    rows = {line.split()[0]: line.split() for line in res.stdout.splitlines()}
    # at n = 1e8 the noncentral t is the normal: mde = (z_0.975 + z_0.8) sd / sqrt(n)
    z = statistics.NormalDist()
    mde = (z.inv_cdf(0.975) + z.inv_cdf(0.8)) * 0.1 / 1e4
    assert rows["100000000"] == ["100000000", f"{mde:.4g}"] and "e-05" in f"{mde:.4g}"
    power = z.cdf(1e-5 / 1e-5 - z.inv_cdf(0.975)) + z.cdf(-1 - z.inv_cdf(0.975))
    assert rows["+1e-05"] == ["+1e-05", "n/a", f"{100 * power:.1f}%"]
    assert "0.0000" not in res.stdout
    # figures from 0.001 up keep four decimals
    usual = ok("power", "--sd", "0.1", "-n", "50", "-e", "0.02").stdout
    assert any(line.split()[:1] == ["+0.0200"] for line in usual.splitlines())


@pytest.mark.parametrize(("x", "signed", "text"), [
    (0.0404, False, "0.0404"), (0.02, True, "+0.0200"), (0.001, False, "0.0010"),
    (2.8016e-05, False, "2.802e-05"), (-4e-07, True, "-4e-07"), (1e-05, True, "+1e-05"),
    (0.0, True, "+0.0000"), (float("nan"), False, "NaN"), (float("inf"), True, "+inf"),
])
def test_planning_figures_keep_small_values(x: float, signed: bool, text: str) -> None:
    from evalkit.report.formatting import figure

    assert figure(x, signed=signed) == text


def test_power_usage_errors() -> None:
    _fails_cleanly(invoke("power"), "--sd")
    _fails_cleanly(invoke("power", "--sd", "1"), "-n")
    _fails_cleanly(invoke("power", "--sd", "1", "-n", "10", "--power", "0.01"), "--power")
    _fails_cleanly(invoke("power", RUN, "--qrels", QRELS), "two runs")


def test_the_installed_script_leaves_complete_output_and_artifact(tmp_path: Path) -> None:
    """The script skips the interpreter's final garbage collection (``gc.freeze()``):
    what it printed to a pipe and the artifact it saved are still complete."""
    exe = Path(sys.executable).with_name("evalkit")
    if not exe.exists():
        pytest.skip("the evalkit script is not installed next to this interpreter")
    saved = tmp_path / "bm25.jsonl"
    proc = subprocess.run([str(exe), "eval", str(RUN), "--qrels", str(QRELS), "--json",
                           "-m", "ap", "--per-query", "--save", str(saved)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    lines = saved.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines[1:-1]]
    assert json.loads(lines[0])["type"] == "header"
    assert json.loads(lines[-1]) == {"type": "trailer", "rows": 93,
                                     "sha256": json.loads(lines[-1])["sha256"]}
    assert len(rows) == 93  # the Vaswani queries judged in the qrels (see examples/vaswani)
    assert printed  # the whole JSON document arrived


def test_an_output_that_is_also_an_input_is_refused_before_any_work(tmp_path: Path) -> None:
    """--save, --report and --to never overwrite a file the command reads (the qrels, a
    run, the checks), however the path is spelt; the input is left as it was."""
    import shutil

    gate = Path(__file__).resolve().parents[1] / "examples" / "gate"
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels"
    checks, base = tmp_path / "checks.yaml", tmp_path / "base.jsonl"
    for src, dst in [(RUN, run), (QRELS, qrels), (gate / "checks.yaml", checks),
                     (gate / "baseline.jsonl", base)]:
        shutil.copyfile(src, dst)
    (tmp_path / "link").symlink_to(qrels)
    before = {p: p.read_bytes() for p in (run, qrels, checks, base)}
    attempts = [
        (("eval", run, "--qrels", qrels, "--save", qrels), "--save"),
        (("eval", run, "--qrels", qrels, "--save", tmp_path / "link"), "--save"),
        (("eval", run, "--qrels", qrels, "--save", tmp_path / "." / "run.txt"), "--save"),
        (("compare", run, run, "--qrels", qrels, "--report", f"markdown:{run}"), "--report"),
        (("gate", "-c", checks, "--run", base, "--report", f"json:{checks}"), "--report"),
        (("baseline", "promote", base, "--to", base, "--force"), "--to"),
    ]
    same = invoke("compare", run, run, "--qrels", qrels, "--report", f"junit:{tmp_path / 'r'}",
                  "--report", f"json:{tmp_path / '.' / 'r'}")
    _fails_cleanly(same, "write the same file")
    assert not (tmp_path / "r").exists()
    for args, option in attempts:
        _fails_cleanly(invoke(*args), option, "is also an input of this command",
                       "Choose another path")
    assert {p: p.read_bytes() for p in before} == before


def test_a_non_finite_value_in_an_artifact_is_a_failed_metric_never_a_nan_token(
        tmp_path: Path) -> None:
    """JSON has no NaN: a hand-made artifact holding one reads it as that metric's error
    on its row, so no output carries a bare NaN token that strict parsers refuse."""
    art = tmp_path / "nan.jsonl"
    art.write_text('{"type": "header", "schema_version": 1, "name": "x", "kind": "run"}\n'
                   '{"type": "row", "id": "q1", "metrics": {"ap": NaN}}\n'
                   '{"type": "row", "id": "q2", "metrics": {"ap": 0.5}}\n')
    res = runner.invoke(app, ["eval", str(art), "--json", "-m", "ap", "--per-query"])
    assert res.exit_code == 2 and "NaN" not in res.stdout
    assert "case 'q1' failed: the value is nan, not a finite number (read as an error)" in \
        " ".join(res.output.split())
