"""``evalkit compare --collections FILE``: several collections, one pooled difference.

The collections are the two Vaswani systems of examples/vaswani/main.py cut into three
parts by query id (examples/vaswani/split_collections.py), each with its own qrels and
TREC run files. Each collection's effect is checked against ``evalkit compare`` on the
same files (mean and standard deviation of its per-query differences, by numpy), and the
pooled numbers against DerSimonian-Laird's formulas written out here; statsmodels'
values are the reference of tests/test_stats_meta.py.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner, Result

import evalkit
from evalkit.cli.app import app
from evalkit.comparison.records import ComparisonError

REPO = Path(__file__).resolve().parents[1]
VASWANI = REPO / "examples" / "vaswani"
runner = CliRunner()


def invoke(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The collections file of the three Vaswani parts."""
    out = tmp_path_factory.mktemp("vaswani")
    for script, extra in (("main.py", ["--resamples", "200", "--no-report"]),
                          ("split_collections.py", [])):
        proc = subprocess.run([sys.executable, str(VASWANI / script), "--out", str(out),
                               *extra], capture_output=True, text=True, cwd=REPO)
        assert proc.returncode == 0, proc.stderr
    return out / "collections.yaml"


def naive_dl(y: list[float], se: list[float]) -> dict[str, float]:
    """DerSimonian and Laird (1986), eq. 8-9, with a normal interval."""
    w = [1 / s**2 for s in se]
    fe = sum(wi * yi for wi, yi in zip(w, y, strict=True)) / sum(w)
    q = sum(wi * (yi - fe) ** 2 for wi, yi in zip(w, y, strict=True))
    c = sum(w) - sum(wi**2 for wi in w) / sum(w)
    tau2 = max(0.0, (q - (len(y) - 1)) / c)
    wr = [1 / (s**2 + tau2) for s in se]
    mu = sum(wi * yi for wi, yi in zip(wr, y, strict=True)) / sum(wr)
    sd = 1 / math.sqrt(sum(wr))
    return {"estimate": mu, "std_error": sd, "tau2": tau2, "q": q,
            "ci_low": mu - 1.959963984540054 * sd, "p_value": 2 * stats.norm.sf(abs(mu / sd))}


def test_each_collection_is_compare_and_the_pool_is_dersimonian_laird(suite: Path) -> None:
    res = invoke("compare", "--collections", suite, "-m", "ap,ndcg@10", "--tau2", "dl",
                 "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["type"] == "meta_comparison" and doc["metrics"] == ["ap", "ndcg@10"]
    assert [c["name"] for c in doc["collections"]] == ["q1-31", "q32-62", "q63-93"]
    for result in doc["results"]:
        y, se = [], []
        for row in result["collections"]:
            part = suite.parent / "collections" / row["collection"]
            c = evalkit.compare(part / "run.tfidf.txt", part / "run.bm25.txt",
                                qrels=part / "qrels", metrics=[result["metric"]],
                                method="t-test").get(result["metric"])
            d = np.array(c.differences)
            assert row["n_queries"] == d.size == 31
            assert row["effect"] == pytest.approx(float(d.mean()), rel=1e-12)
            assert row["std_error"] == pytest.approx(float(d.std(ddof=1)) / math.sqrt(31))
            assert (row["baseline"], row["candidate"]) == ("tfidf", "bm25")
            y.append(row["effect"])
            se.append(row["std_error"])
        expected = naive_dl(y, se)
        for key, value in expected.items():
            assert result[key] == pytest.approx(value, rel=1e-10, abs=1e-300), key
        assert result["method"] == "dl" and result["interval"] == "z"
    holm = sorted(r["p_value"] for r in doc["results"])
    assert sorted(r["p_adjusted"] for r in doc["results"]) == pytest.approx(
        [min(1, 2 * holm[0]), max(min(1, 2 * holm[0]), holm[1])])


def test_the_table_shows_every_collection_and_the_heterogeneity(suite: Path) -> None:
    res = invoke("compare", "--collections", suite, "-m", "ap")
    assert res.exit_code == 0, res.output
    doc = json.loads(invoke("compare", "--collections", suite, "-m", "ap", "--json").stdout)
    pooled = doc["results"][0]
    out = res.stdout
    assert "Paule-Mandel tau^2, normal (z) interval" in out
    for row in pooled["collections"]:
        line = next(ln for ln in out.splitlines() if ln.startswith(row["collection"] + " "))
        assert f"{row['effect']:+.4f}" in line and f"{100 * row['weight']:.1f}%" in line
    line = next(ln for ln in out.splitlines() if ln.startswith("pooled "))
    assert f"{pooled['estimate']:+.4f}" in line and f"[{pooled['ci_low']:+.4f}," in line
    assert f"Q = {pooled['q']:.2f} on 2 df" in out
    assert sum(r["weight"] for r in pooled["collections"]) == pytest.approx(1.0)


def test_the_reports_carry_the_pooled_rows(suite: Path, tmp_path: Path) -> None:
    res = invoke("compare", "--collections", suite, "-m", "ap,ndcg@10", "--hartung-knapp",
                 "--report", f"json:{tmp_path / 'r.json'}",
                 "--report", f"markdown:{tmp_path / 'r.md'}",
                 "--report", f"latex:{tmp_path / 'r.tex'}",
                 "--report", f"junit:{tmp_path / 'r.xml'}",
                 "--report", f"html:{tmp_path / 'r.html'}",
                 "--report", "console:-")
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "r.json").read_text())
    data = report["data"]
    assert report["pooled"] == data["results"] and data["settings"]["hartung_knapp"]
    for p in data["results"]:
        assert p["interval"] == "hartung-knapp" and p["df"] == 2
        row = next(r for r in report["rows"] if r["metric"] == p["metric"])
        assert row["difference"] == p["estimate"] and row["ci_low"] == p["ci_low"]
    md = (tmp_path / "r.md").read_text()
    assert "| q32-62 | level 1 | 31 |" in md and "**`ndcg@10` by collection**" in md
    tex = (tmp_path / "r.tex").read_text()
    assert r"\label{tab:evalkit-collections}" in tex and "Hartung-Knapp" in tex
    assert tex.count(r"\\") == 5 and "q1-31 & level 1 & 31 &" in tex
    assert 'tests="2"' in (tmp_path / "r.xml").read_text()
    # the HTML report (evalkit-report-html) shows the pooled rows as a comparison's
    assert "bm25 better" in (tmp_path / "r.html").read_text(encoding="utf-8")
    # console:- is the report on standard output; the table then goes to standard error
    assert res.stdout.startswith("evalkit compare --collections: bm25 vs tfidf")
    assert "pooled" in res.stderr


@pytest.mark.parametrize(("text", "message"), [
    ("collections:\n  - name: a\n    baseline: x.txt\n", ":2: collection 1 ('a'): key "
     "'candidate' is missing"),
    ("collections:\n  - name: a\n    baseline: x\n    candidate: y\n    qrel: z\n",
     ":5: collection 1 ('a'): unknown key 'qrel' (did you mean 'qrels'?)"),
    ("collections:\n  - {name: a, baseline: x, candidate: y}\n"
     "  - {name: a, baseline: x, candidate: z}\n",
     ": collection 2: the name 'a' is used twice (also collection 1); give each its own "
     "name (lines 2 and 3)"),
    ("collections: []\n", ":1: 'collections' is empty"),
    ("collection:\n  - name: a\n", ":1: unknown key 'collection' (did you mean "
     "'collections'?)"),
    ("", ": empty file"),
    ('collections:\n  - {name: "a\\e[31m", baseline: x, candidate: y}\n',
     ":2: collection 1: the collection name 'a\\x1b[31m' holds a control character"),
    ("collections:\n  - name: a\n    baseline: [x\n", ":4: not valid YAML"),
    ('{"collections": [{"name": "a", "baseline": 3, "candidate": "y"}]}',
     ":1: collection 1 ('a'): key 'baseline' must be a non-empty text (a path), got 3"),
    ("collections:\n  - {name: a, baseline: x, candidate: y, relevance_level: 0}\n",
     ":2: collection 1 ('a'): key 'relevance_level' must be a whole number of at least 1 "
     "(trec_eval -l), got 0"),
    ("collections:\n  - {name: a, baseline: x, candidate: y, depth: '10'}\n",
     ":2: collection 1 ('a'): key 'depth' must be a whole number of at least 1 "
     "(trec_eval -M), got '10'"),
    ("collections:\n  - {name: a, baseline: x, candidate: y, missing: drop}\n",
     ":2: collection 1 ('a'): key 'missing' must be one of zero, skip, refuse, got 'drop'"),
    ("collections:\n  - {name: a, baseline: x, candidate: y, relevance: 2}\n",
     ":2: collection 1 ('a'): unknown key 'relevance' (did you mean 'relevance_level'?)"),
])
def test_a_bad_collections_file_is_one_line_naming_file_and_line(
        tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    res = invoke("compare", "--collections", path)
    assert res.exit_code == 2, res.output
    assert res.stderr == f"error: {path}{message}" + res.stderr.split(message, 1)[1]
    assert "Traceback" not in res.output and len(res.stderr.strip().splitlines()) == 1


def test_a_missing_run_names_its_collection(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text("collections:\n  - {name: covid, baseline: a.txt, candidate: b.txt, "
                    "qrels: q.txt}\n", encoding="utf-8")
    res = invoke("compare", "--collections", path)
    assert res.exit_code == 2
    assert res.stderr == f"error: collection 'covid': run {tmp_path / 'a.txt'}: no such file\n"


@pytest.mark.parametrize(("args", "message"), [
    (["--test", "t-test"], "--test does not go with --collections"),
    (["--seed", "1"], "--seed does not go with --collections: nothing is resampled"),
    (["--qrels", "q"], "--qrels does not go with --collections: each collection names"),
    (["--correction", "westfall-young"], "westfall-young needs resamples"),
    (["a.txt"], "give the runs (BASELINE CANDIDATE...) or --collections FILE, not both"),
])
def test_options_that_do_not_go_with_collections_are_refused(
        suite: Path, args: list[str], message: str) -> None:
    res = invoke("compare", "--collections", suite, *args)
    assert res.exit_code == 2 and message in res.stderr, res.output


def test_pooling_options_need_collections(suite: Path) -> None:
    part = suite.parent / "collections" / "q1-31"
    for extra in (["--tau2", "dl"], ["--hartung-knapp"]):
        res = invoke("compare", part / "run.tfidf.txt", part / "run.bm25.txt", "--qrels",
                     part / "qrels", *extra)
        assert res.exit_code == 2
        assert f"{extra[0]} goes with --collections FILE" in res.stderr
    res = invoke("compare")
    assert res.exit_code == 2 and "a baseline and at least one candidate" in res.stderr


def test_the_documented_example_prints_what_the_docs_show(suite: Path) -> None:
    doc = (REPO / "docs" / "comparison.md").read_text(encoding="utf-8")
    command = "$ evalkit compare --collections examples/vaswani/out/collections.yaml -m ap"
    block = doc.split(command, 1)[1].split("```", 1)[0]
    res = invoke(*command.split()[2:4], suite, "-m", "ap")
    assert res.exit_code == 0, res.output
    shown = [re.sub(r"\s+$", "", ln) for ln in block.strip("\n").splitlines()]
    printed = [re.sub(r"\s+$", "", ln) for ln in res.stdout.strip("\n").splitlines()]
    assert printed == shown


def _py_example(doc: str) -> str:
    return str(next(b for b in re.findall(r"```python\n(.*?)```", doc, re.S)
                    if "meta_compare(" in b))


def test_the_docs_say_what_to_run_before_the_python_example() -> None:
    doc = (REPO / "docs" / "comparison.md").read_text(encoding="utf-8")
    before = doc.split(_py_example(doc), 1)[0].rsplit("\n\n", 3)[-3:]
    said = " ".join(before)
    assert "examples/vaswani/main.py" in said and "split_collections.py" in said


def test_the_python_example_of_the_docs_prints_its_comments(
        suite: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = (REPO / "docs" / "comparison.md").read_text(encoding="utf-8")
    code = _py_example(doc)
    namespace: dict[str, Any] = {}
    exec(compile(code.replace("examples/vaswani/out/", f"{suite.parent}/"), "docs", "exec"),
         namespace)
    shown = [ln.removeprefix("# ") for ln in code.splitlines() if ln.startswith("# ")]
    assert capsys.readouterr().out.splitlines() == shown


def test_unreadable_qrels_name_their_collection(tmp_path: Path) -> None:
    """qrels that cannot be read (a malformed file, an irds: id whose files are not on
    the machine) are prefixed ``collection 'name':`` as every other collection error."""
    run_file = VASWANI / "data" / "runs" / "run.vaswani.bm25.txt"
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 0 d1 high\n", encoding="utf-8")
    for qrels, said in ((bad, f"{bad}:1: the relevance label 'high'"),
                        ("irds:vaswani", "irds:vaswani: ")):
        path = tmp_path / "suite.yaml"
        path.write_text(f"collections:\n  - {{name: vas, baseline: {run_file}, candidate: "
                        f"{run_file}, qrels: '{qrels}'}}\n", encoding="utf-8")
        proc = subprocess.run(
            [sys.executable, "-c", "from evalkit.cli import main; main()", "compare",
             "--collections", str(path), "-m", "ap"], capture_output=True, text=True,
            timeout=120, env={**os.environ,
                              "IR_DATASETS_HOME": str(tmp_path / "irds")})
        assert proc.returncode == 2, proc.stdout
        assert proc.stderr.startswith(f"error: collection 'vas': {said}"), proc.stderr


TREC_DATA = REPO / "plugins" / "evalkit-retrieval" / "tests" / "data"


def _trec_eval_map(name: str) -> dict[str, float]:
    """trec_eval 10.0's per-query and ``all`` map of a stored output (README there)."""
    out: dict[str, float] = {}
    for line in (TREC_DATA / name).read_text(encoding="utf-8").splitlines():
        measure, qid, value = line.split()
        if measure == "map":
            out[qid] = float(value)
    return out


def _rotated(src: Path, folder: Path, k: int) -> Path:
    """A TREC run file of its own holding ``src``'s lines rotated by ``k`` (the same
    ranking, other bytes): one file, or a byte copy, in two collections is refused as the
    same evidence, and these tests score one pair of runs at several settings."""
    lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
    out = folder / f"rotated{k}" / src.name  # the same name: the run is named after it
    out.parent.mkdir(exist_ok=True)
    out.write_text("".join(lines[k:] + lines[:k]), encoding="utf-8")
    return out


def test_each_collection_scores_at_its_own_settings_and_the_table_says_which(
        tmp_path: Path) -> None:
    """A collection's relevance_level and depth keys score its runs as trec_eval's -l and
    -M do: the means and per-query differences are trec_eval 10.0's stored values."""
    suite = tmp_path / "suite.yaml"
    test2, trunc2 = (_rotated(TREC_DATA / n, tmp_path, 1) for n in ("results.test",
                                                                    "results.trunc"))
    trunc3 = _rotated(TREC_DATA / "results.trunc", tmp_path, 2)
    suite.write_text(
        "collections:\n"
        f"  - {{name: l1, baseline: {TREC_DATA / 'results.test'}, "
        f"candidate: {TREC_DATA / 'results.trunc'}, qrels: {TREC_DATA / 'qrels.test'}}}\n"
        f"  - {{name: l2, baseline: {test2}, "
        f"candidate: {trunc2}, qrels: {TREC_DATA / 'qrels.rel_level'},"
        " relevance_level: 2}\n"
        f"  - {{name: m100, baseline: {trunc3}, "
        f"candidate: {trunc3}, qrels: {TREC_DATA / 'qrels.test'}, "
        "depth: 100}\n", encoding="utf-8")
    # m100's runs are one file: its effect is 0 with no variance, refused; it is checked
    # on its own below, and l1/l2 are pooled
    res = invoke("compare", "--collections", suite, "-m", "ap", "--json")
    assert res.exit_code == 2 and "collection 'm100', ap:" in res.stderr, res.output
    text = suite.read_text(encoding="utf-8").splitlines()
    suite.write_text("\n".join(text[:3]) + "\n", encoding="utf-8")
    res = invoke("compare", "--collections", suite, "-m", "ap", "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    refs = {"l1": (_trec_eval_map("out.test.aq"), _trec_eval_map("out.test.aqc")),
            "l2": (_trec_eval_map("out.test.aql"), _trec_eval_map("out.test.aqcl2"))}
    rows = {r["collection"]: r for r in doc["results"][0]["collections"]}
    for name, (base, cand) in refs.items():
        row = rows[name]
        assert row["baseline_mean"] == pytest.approx(base["all"], abs=5e-5)
        assert row["candidate_mean"] == pytest.approx(cand["all"], abs=5e-5)
        diffs = [cand[q] - base[q] for q in ("301", "302", "303")]
        assert row["effect"] == pytest.approx(float(np.mean(diffs)), abs=1e-4)
        assert row["std_error"] == pytest.approx(
            float(np.std(diffs, ddof=1) / math.sqrt(3)), abs=1e-4)
    assert rows["l1"]["scoring"] == "level 1" and rows["l2"]["scoring"] == "level 2"
    infos = {c["name"]: c["scoring"] for c in doc["collections"]}
    assert infos == {"l1": {"relevance_level": 1, "depth": None, "missing": "zero"},
                     "l2": {"relevance_level": 2, "depth": None, "missing": "zero"}}
    assert ("the collections were scored with different settings (level 1: 'l1'; "
            "level 2: 'l2')") in doc["warnings"][0]
    # the tables say which level each row used
    res = invoke("compare", "--collections", suite, "-m", "ap",
                 "--report", f"markdown:{tmp_path / 'r.md'}",
                 "--report", f"latex:{tmp_path / 'r.tex'}")
    assert res.exit_code == 0, res.output
    assert re.search(r"^l2\s+level 2\s+3\s", res.stdout, re.M), res.stdout
    assert "collection l2: baseline STANDARD, candidate results, 3 queries, scored at " \
        "level 2" in res.stdout
    assert "warning: the collections were scored with different settings" in res.stderr
    assert "| l1 | level 1 | 3 |" in (tmp_path / "r.md").read_text(encoding="utf-8")
    tex = (tmp_path / "r.tex").read_text(encoding="utf-8")
    assert "Collection & Scored & $n$ & AP" in tex and "l2 & level 2 & 3 &" in tex
    # depth: the candidate scored at -M 100 is trec_eval -M100's
    m = evalkit.meta_compare(
        {"m100": (TREC_DATA / "results.test", TREC_DATA / "results.trunc",
                  TREC_DATA / "qrels.test")}, metrics=["ap"], scoring={"m100": {"depth": 100}})
    row = m.get("ap").collections[0]
    assert row.candidate_mean == pytest.approx(_trec_eval_map("out.test.aqcM")["all"],
                                               abs=5e-5)
    assert row.scoring == "level 1, depth 100"
    assert dict(m.collections[0].scoring) == {"relevance_level": 1, "depth": 100,
                                              "missing": "zero"}


def test_a_collections_key_replaces_the_option_for_its_collection_only(
        tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "collections:\n"
        f"  - {{name: a, baseline: {TREC_DATA / 'results.test'}, "
        f"candidate: {TREC_DATA / 'results.trunc'}, qrels: {TREC_DATA / 'qrels.test'},"
        " relevance_level: 1}\n"
        f"  - {{name: b, baseline: {_rotated(TREC_DATA / 'results.test', tmp_path, 1)}, "
        f"candidate: {_rotated(TREC_DATA / 'results.trunc', tmp_path, 1)}, "
        f"qrels: {TREC_DATA / 'qrels.rel_level'}}}\n",
        encoding="utf-8")
    doc = json.loads(invoke("compare", "--collections", suite, "-m", "ap", "-l", "2",
                            "--json").stdout)
    assert [c["scoring"]["relevance_level"] for c in doc["collections"]] == [1, 2]
    b = doc["results"][0]["collections"][1]
    assert b["baseline_mean"] == pytest.approx(_trec_eval_map("out.test.aql")["all"],
                                               abs=5e-5)


@pytest.mark.parametrize(("scoring", "message"), [
    ({"zz": {"depth": 3}}, "scoring names collection 'zz', which is not among"),
    ({"a": {"alpha": 3}}, "collection 'a': scoring setting 'alpha' is not one of "
     "relevance_level, depth, missing"),
])
def test_meta_compare_refuses_scoring_it_cannot_apply(
        scoring: dict[str, Any], message: str) -> None:
    pair = (TREC_DATA / "results.test", TREC_DATA / "results.trunc", TREC_DATA / "qrels.test")
    with pytest.raises(ComparisonError, match=re.escape(message)):
        evalkit.meta_compare({"a": pair}, metrics=["ap"], scoring=scoring)


def _same_evidence(part: Path, folder: Path, how: str) -> tuple[Path, ...]:
    """A second collection that is ``part`` (baseline, candidate, qrels) again: the same
    paths, links to them, byte copies, or runs written otherwise (rotated lines) that
    score as the same rows."""
    files = tuple(part / n for n in ("run.tfidf.txt", "run.bm25.txt", "qrels"))
    if how == "same path":
        return files
    out = folder / how.replace(" ", "-")
    out.mkdir()
    for f in files:
        if how == "symlink":
            (out / f.name).symlink_to(f)
        elif how == "byte copy":
            (out / f.name).write_bytes(f.read_bytes())
        else:  # "rewritten"
            (out / f.name).write_bytes(f.read_bytes()) if f.name == "qrels" else \
                _rotated(f, out, 1).rename(out / f.name)
    return tuple(out / f.name for f in files)


HOWS = {"same path": "are the same file", "symlink": "are the same file",
        "byte copy": "are byte-identical copies",
        "rewritten": "are one run ('tfidf': the same header name, start and "
                     "end times and rows)"}


@pytest.mark.parametrize("how", list(HOWS))
def test_a_collection_listed_twice_is_refused_as_the_same_evidence(
        suite: Path, tmp_path: Path, how: str) -> None:
    part = suite.parent / "collections" / "q1-31"
    other = suite.parent / "collections" / "q32-62"
    again = _same_evidence(part, tmp_path, how)
    rows = [("one", tuple(part / n for n in ("run.tfidf.txt", "run.bm25.txt", "qrels"))),
            ("other", tuple(other / n for n in ("run.tfidf.txt", "run.bm25.txt", "qrels"))),
            ("one-again", again)]
    path = tmp_path / "dup.yaml"
    path.write_text("collections:\n" + "".join(
        f"  - {{name: {n}, baseline: {b}, candidate: {c}, qrels: {q}}}\n"
        for n, (b, c, q) in rows), encoding="utf-8")
    res = invoke("compare", "--collections", path, "-m", "ap")
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(f"error: {path}:4: collections 'one' and 'one-again' are "
                                 "the same evidence: "), res.stderr
    assert HOWS[how] in res.stderr and "(also line 2)" in res.stderr
    assert "Traceback" not in res.output and not res.stdout
    with pytest.raises(ComparisonError, match=r"^collections 'one' and 'one-again' are the "
                       r"same evidence: .*" + re.escape(HOWS[how])):
        evalkit.meta_compare({n: (b, c, q) for n, (b, c, q) in rows}, metrics=["ap"])
    # without the copy, the two genuinely different collections are pooled
    path.write_text("collections:\n" + "".join(
        f"  - {{name: {n}, baseline: {b}, candidate: {c}, qrels: {q}}}\n"
        for n, (b, c, q) in rows[:2]), encoding="utf-8")
    res = invoke("compare", "--collections", path, "-m", "ap", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["results"][0]["k"] == 2


def test_one_baseline_file_in_two_collections_is_refused(suite: Path) -> None:
    parts = suite.parent / "collections"
    base = parts / "q1-31" / "run.tfidf.txt"
    with pytest.raises(ComparisonError, match="'a' and 'b' are the same evidence"):
        evalkit.meta_compare({"a": (base, parts / "q1-31" / "run.bm25.txt", parts / "q1-31"
                                    / "qrels"),
                              "b": (base, parts / "q32-62" / "run.bm25.txt", parts / "q32-62"
                                    / "qrels")}, metrics=["ap"])


