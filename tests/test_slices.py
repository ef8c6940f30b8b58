"""Slices: ``compare(..., by="tag")``, ``evalkit compare --by tag`` and tag-scoped gates.

Each slice's row is checked against :func:`evalkit.stats.paired_test` run on the two
runs' values filtered here to the tag's cases (same method, seed and resamples); the
adjusted p-values against Holm's (1979) step-down rule and Benjamini-Hochberg's step-up
rule written out below; the slice means against numpy on the filtered values. Tags come
from golden files in all three formats and from ``qid<TAB>tag`` files, whose errors name
the file and line.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import evalkit
from evalkit.cli.app import app
from evalkit.comparison import Comparison, ComparisonError
from evalkit.data.case_tags import TagsError, load_tags, tags_from_runs
from evalkit.data.goldens import GoldenError, load_goldens
from evalkit.data.results import QueryResult, RunResult
from evalkit.gate.checks import CheckError, parse_checks
from evalkit.gate.evaluate import evaluate_gate
from evalkit.stats import compare_slices, paired_test

runner = CliRunner()
N = 60
IDS = [f"q{i:02d}" for i in range(N)]
#: three slices, one case in two of them, and a slice of four cases (too few)
TAGS = {q: (["med"] if i % 3 == 0 else ["law"]) + (["hard"] if i < 4 else [])
        for i, q in enumerate(IDS)}


def values(seed: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, 1, N)
    return base, np.clip(base + rng.normal(shift, 0.12, N), 0, 1)


def run(name: str, ap: np.ndarray, ndcg: np.ndarray, ids: list[str] = IDS) -> RunResult:
    return RunResult(name=name, per_query=[
        QueryResult(query_id=q, retrieved=[], metrics={"ap": float(a), "ndcg@10": float(n)})
        for q, a, n in zip(ids, ap, ndcg, strict=True)])


@pytest.fixture(scope="module")
def runs() -> tuple[RunResult, RunResult, RunResult]:
    b_ap, c_ap = values(1, 0.05)
    b_nd, c_nd = values(2, 0.02)
    _, d_ap = values(3, -0.03)
    _, d_nd = values(4, 0.0)
    return run("base", b_ap, b_nd), run("cand", c_ap, c_nd), run("other", d_ap, d_nd)


def holm(p: list[float]) -> list[float]:
    """Holm (1979): sort ascending, p_(j) * (m - j + 1), running maximum, capped at 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (m - j) * p[i]))
        out[i] = running
    return out


def bh(p: list[float]) -> list[float]:
    """Benjamini-Hochberg (1995): p_(j) * m / j, running minimum from the largest."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 1.0
    for j in range(m - 1, -1, -1):
        i = order[j]
        running = min(running, p[i] * m / (j + 1))
        out[i] = running
    return out


@pytest.mark.parametrize("method", ["randomization", "t-test", "bootstrap-t"])
def test_each_slice_is_the_paired_test_on_its_cases(runs: tuple[RunResult, ...],
                                                    method: str) -> None:
    base, cand, other = runs
    c = evalkit.compare(base, cand, other, metrics=["ap", "ndcg@10"], by="tag", tags=TAGS,
                        method=method, n_resamples=2000, seed=7)
    assert {x.slice for x in c.slices} == {"med", "law", "hard"}
    assert len(c.slices) == 3 * 2 * 2 == c.settings.slice_family_size
    for x in c.slices:
        ids = [q for q in IDS if x.slice in TAGS[q]]
        b = {q: v for q, v in base.scores(x.metric).items() if q in ids}
        r = {"cand": cand, "other": other}[x.candidate]
        a = {q: v for q, v in r.scores(x.metric).items() if q in ids}
        ref = paired_test(a, b, x.metric, method=method, n_resamples=2000, seed=7)
        assert x.n_queries == len(ids) == ref.n_queries
        assert x.diff == pytest.approx(np.mean([a[q] - b[q] for q in ids]), abs=1e-12)
        assert x.diff == pytest.approx(ref.observed, abs=1e-15)
        assert x.p_value == pytest.approx(ref.p_value, rel=1e-12)
        assert (x.ci_low, x.ci_high) == pytest.approx((ref.ci_low, ref.ci_high), rel=1e-12)
        assert x.baseline_mean == pytest.approx(np.mean([b[q] for q in ids]), abs=1e-12)
        assert x.candidate_mean == pytest.approx(np.mean([a[q] for q in ids]), abs=1e-12)
    raw = [x.p_value for x in c.slices]
    assert [x.p_adjusted for x in c.slices] == pytest.approx(holm(raw), rel=1e-12)
    assert [x.significant for x in c.slices] == [p < 0.05 for p in holm(raw)]
    # the overall rows are those of the comparison without slices
    plain = evalkit.compare(base, cand, other, metrics=["ap", "ndcg@10"], method=method,
                            n_resamples=2000, seed=7)
    assert [r.p_adjusted for r in c.results] == [r.p_adjusted for r in plain.results]


def test_holm_values_of_a_known_family() -> None:
    # statsmodels.stats.multitest.multipletests(p, method="holm")[1] gives these
    # (0.01*4, max(0.04, 0.02*3), max(0.06, 0.03*2), max(0.06, 0.5)) for this input:
    assert holm([0.01, 0.02, 0.03, 0.5]) == pytest.approx([0.04, 0.06, 0.06, 0.5])


def test_bh_and_none_adjust_the_slice_family(runs: tuple[RunResult, ...]) -> None:
    base, cand, _ = runs
    c = evalkit.compare(base, cand, metrics=["ap"], by="tag", tags=TAGS, correction="bh",
                        n_resamples=1000)
    raw = [x.p_value for x in c.slices]
    assert [x.p_adjusted for x in c.slices] == pytest.approx(bh(raw), rel=1e-12)
    none = evalkit.compare(base, cand, metrics=["ap"], by="tag", tags=TAGS,
                           correction="none", n_resamples=1000)
    assert all(x.p_adjusted is None for x in none.slices)


def test_a_small_slice_is_warned_and_the_family_round_trips(
        runs: tuple[RunResult, ...]) -> None:
    base, cand, _ = runs
    c = evalkit.compare(base, cand, metrics=["ap"], by="tag", tags=TAGS, n_resamples=1000)
    small = [w for w in c.warnings if w.startswith("slice 'hard'")]
    assert small and "4 cases, fewer than 6" in small[0]  # 2**(1-5) < 0.05 <= 2**(1-4)
    doc = c.to_json()
    assert doc["by"] == "tag" and doc["slice_family_size"] == 3
    assert {s["slice"]: s["n_queries"] for s in doc["slices"]} == {
        "med": 20, "law": 40, "hard": 4}
    back = Comparison.from_json(json.dumps(doc))
    assert back.slices == c.slices and back.to_json() == doc
    md = c.to_report()
    assert md.slices == c.slices
    from evalkit.report.markdown import render_markdown

    text = render_markdown(c)
    assert "**By tag**" in text and "| med | ap | 20 |" in text
    # no slices: the JSON keeps its keys
    plain = evalkit.compare(base, cand, metrics=["ap"], n_resamples=1000).to_json()
    assert "slices" not in plain and "by" not in plain


def test_refusals(runs: tuple[RunResult, ...]) -> None:
    base, cand, _ = runs
    with pytest.raises(ComparisonError, match="westfall-young"):
        evalkit.compare(base, cand, by="tag", tags=TAGS, correction="westfall-young")
    with pytest.raises(ComparisonError, match="by='tag'"):
        evalkit.compare(base, cand, tags=TAGS)
    with pytest.raises(ComparisonError, match="not made from a golden set"):
        evalkit.compare(base, cand, by="tag")
    with pytest.raises(ComparisonError, match="slices are made by 'tag'"):
        evalkit.compare(base, cand, by="topic", tags=TAGS)


# ------------------------------------------------------------------- tags in files
def test_golden_tags_in_every_format(tmp_path: Path) -> None:
    (tmp_path / "g.jsonl").write_text(
        '{"id": "a", "query": "x", "tags": ["med", "hard"]}\n'
        '{"id": "b", "query": "y", "tags": "law"}\n{"id": "c", "query": "z"}\n')
    (tmp_path / "g.yaml").write_text(
        "- {id: a, query: x, tags: [med, hard]}\n- {id: b, query: y, tags: [2019, yes]}\n")
    (tmp_path / "g.csv").write_text('id,query,tags\na,x,med; hard\nb,y,law\nc,z,\n')
    j = load_goldens(tmp_path / "g.jsonl")
    assert [c.tags for c in j] == [("med", "hard"), ("law",), ()]
    y = load_goldens(tmp_path / "g.yaml")
    assert [c.tags for c in y] == [("med", "hard"), ("2019", "yes")]  # as written
    c = load_goldens(tmp_path / "g.csv")
    assert [x.tags for x in c] == [("med", "hard"), ("law",), ()]
    assert "tags" not in j.get("a").context
    # a case without tags keeps its digest
    from evalkit.data.cases import GoldenCase
    from evalkit.data.goldens import case_digest

    assert case_digest(j.get("c")) == case_digest(GoldenCase(id="c", query="z"))


@pytest.mark.parametrize(("name", "text", "message"), [
    ("g.jsonl", '{"id": "a", "query": "x"}\n{"id": "b", "query": "y", "tags": [1]}\n',
     "g.jsonl:2: case 'b': a tag must be text, got int 1"),
    ("g.jsonl", '{"id": "a", "query": "x", "tags": ["m", "m"]}\n',
     "g.jsonl:1: case 'a': 'tags' lists 'm' twice"),
    ("g.jsonl", '{"id": "a", "query": "x", "tags": ["a;b"]}\n',
     "g.jsonl:1: case 'a': tag 'a;b' holds ';'"),
    ("g.csv", "id,query,tags\na,x,med;;hard\n", "g.csv:2: case 'a': tag '' is empty"),
    ("g.yaml", "- {id: a, query: x, tags: [' med']}\n", "g.yaml:1: case 'a': "),
])
def test_bad_golden_tags_name_file_and_line(tmp_path: Path, name: str, text: str,
                                            message: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(GoldenError) as err:
        load_goldens(tmp_path / name)
    assert message in str(err.value)


def test_a_tags_file(tmp_path: Path) -> None:
    p = tmp_path / "tags.tsv"
    p.write_text("# qid\ttag\n1\tmed\n1\thard\n\n2\tlaw\n")
    assert load_tags(p) == {"1": ("med", "hard"), "2": ("law",)}


@pytest.mark.parametrize(("text", "message"), [
    ("1\tmed\n2 law\n", "tags.tsv:2: expected 'query id<TAB>tag' (one tab), got 0 tabs"),
    ("1\tmed\tx\n", "tags.tsv:1: expected 'query id<TAB>tag' (one tab), got 2 tabs"),
    ("1\tmed\n1\tmed\n", "tags.tsv:2: query '1' is given tag 'med' twice (first on line 1)"),
    ("1\t\n", "tags.tsv:1: the tag is empty"),
    ("1\ta;b\n", "tags.tsv:1: tag 'a;b' holds ';'"),
    ("# nothing\n", "tags.tsv: no tag"),
])
def test_a_bad_tags_file_names_file_and_line(tmp_path: Path, text: str,
                                             message: str) -> None:
    p = tmp_path / "tags.tsv"
    p.write_text(text)
    with pytest.raises(TagsError) as err:
        load_tags(p)
    assert message in str(err.value)


def test_tags_of_the_golden_set_a_run_records(tmp_path: Path) -> None:
    p = tmp_path / "g.jsonl"
    p.write_text('{"id": "a", "query": "x", "tags": ["med"]}\n{"id": "b", "query": "y"}\n')
    digest = load_goldens(p).digest()
    header = {"goldens": {"path": str(p), "sha256": digest}}
    assert tags_from_runs([header]) == {"a": ("med",), "b": ()}
    assert tags_from_runs([{}]) is None
    p.write_text('{"id": "a", "query": "x", "tags": ["law"]}\n{"id": "b", "query": "y"}\n')
    with pytest.raises(TagsError, match="changed since the runs were made"):
        tags_from_runs([header])


# ---------------------------------------------------------------------------- CLI
def write_trec(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """Two TREC runs over 30 queries of 10 judged documents, a qrels and a tags file."""
    rng = np.random.default_rng(5)
    qrels: list[str] = []
    a: list[str] = []
    b: list[str] = []
    tags: list[str] = []
    for q in range(1, 31):
        rel = set(rng.choice(10, 3, replace=False).tolist())
        qrels += [f"{q} 0 d{d} {int(d in rel)}" for d in range(10)]
        for lines, skill in ((a, 0.5), (b, 1.5)):
            score = {d: rng.normal(skill * (d in rel), 1) for d in range(10)}
            ranked = sorted(score, key=lambda d: -score[d])
            lines += [f"{q} Q0 d{d} {r + 1} {score[d]:.6f} x" for r, d in enumerate(ranked)]
        tags.append(f"{q}\t{'even' if q % 2 == 0 else 'odd'}")
    paths = [tmp_path / n for n in ("qrels", "a.txt", "b.txt", "tags.tsv")]
    for path, lines in zip(paths, (qrels, a, b, tags), strict=True):
        path.write_text("\n".join(lines) + "\n")
    return paths[0], paths[1], paths[2], paths[3]


def test_cli_compare_by_tag_with_a_tags_file(tmp_path: Path) -> None:
    qrels, a, b, tags = write_trec(tmp_path)
    res = runner.invoke(app, ["compare", str(a), str(b), "--qrels", str(qrels), "-m", "ap",
                              "--by", "tag", "--tags", str(tags), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [(s["slice"], s["n_queries"]) for s in doc["slices"]] == [("odd", 15),
                                                                     ("even", 15)]
    table = runner.invoke(app, ["compare", str(a), str(b), "--qrels", str(qrels), "-m",
                                "ap", "--by", "tag", "--tags", str(tags)])
    assert table.exit_code == 0 and "by tag: the comparison on each tag's cases" in \
        table.stdout and "odd" in table.stdout
    for args, message in (
            (["--tags", str(tags)], "add --by tag"),
            (["--by", "tag"], "--tags FILE"),
            (["--by", "tag", "--tags", str(tmp_path / "none.tsv")], "none.tsv"),
            (["--by", "tag", "--tags", str(tags), "--correction", "westfall-young"],
             "--correction holm")):
        bad = runner.invoke(app, ["compare", str(a), str(b), "--qrels", str(qrels),
                                  "-m", "ap", *args])
        assert bad.exit_code == 2, bad.output
        assert message in bad.output and "Traceback" not in bad.output


def test_a_slice_name_reads_the_same_in_its_notes_as_in_its_cell(tmp_path: Path) -> None:
    """A tag holding a backslash and quotes: the console warning, the Markdown note and
    the JSON note name it as the table cell prints it (no repr-style doubled backslash);
    the Markdown cell and note escape it alike."""
    qrels, a, b, tags = write_trec(tmp_path)
    name = 'w,"q"&_%$\\'
    with tags.open("a") as f:
        f.write("".join(f"{q}\t{name}\n" for q in range(1, 5)))
    res = runner.invoke(app, ["compare", str(a), str(b), "--qrels", str(qrels), "-m", "ap",
                              "--by", "tag", "--tags", str(tags),
                              "--report", f"markdown:{tmp_path / 'r.md'}",
                              "--report", f"json:{tmp_path / 'r.json'}"])
    assert res.exit_code == 0, res.output
    assert f"warning: slice '{name}' has 4 cases, fewer than 6" in res.stderr
    assert f"{name} " in res.stdout  # the table cell, as given
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    cell = 'w,"q"&\\_%\\$\\\\'  # the Markdown escapes: _ $ and the backslash
    assert f"| {cell} | ap |" in md and f"> slice '{cell}' has 4 cases" in md
    notes = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["notes"]
    assert any(n.startswith(f"slice '{name}' has 4 cases") for n in notes)


def test_quoted_names_as_a_cell_prints_them() -> None:
    from evalkit.io.error_messages import quoted

    assert quoted("a\\b") == "'a\\b'" and repr("a\\b") == "'a\\\\b'"
    assert quoted("it's") == '"it\'s"' and quoted("plain") == "'plain'"
    assert quoted("a\x1b[2Jb") == "'a\\x1b[2Jb'"  # a control character stays escaped
    assert quoted(3) == "3"


# --------------------------------------------------------------------------- gate
CHECKS = {"checks": [
    {"id": "med", "metric": "ap", "op": ">=", "threshold": 0.1, "scope": {"tags": ["med"]}},
    {"id": "law", "metric": "ap", "op": ">=", "threshold": 0.1, "scope": {"tags": ["law"]}},
]}


def test_a_tag_scope_is_judged_like_an_id_scope(runs: tuple[RunResult, ...]) -> None:
    base = runs[0]
    # the run lacks q01, a 'law' case: that check cannot be judged; 'med' is complete
    lacking = RunResult(name="r", per_query=[r for r in base.per_query if r.query_id != "q01"])
    checks = parse_checks(CHECKS)
    gate = evaluate_gate(checks, lacking, case_tags=TAGS)
    verdicts = {r.check.id: r for r in gate.results}
    assert verdicts["med"].verdict == "pass" and verdicts["med"].coverage == "20/20 cases"
    assert verdicts["law"].verdict == "error" and "no row for 1: q01" in \
        verdicts["law"].message
    assert gate.exit_code == 2
    # the mean is over the tag's cases
    whole = evaluate_gate(checks, base, case_tags=TAGS)
    med = [base.scores("ap")[q] for q in IDS if "med" in TAGS[q]]
    assert whole.results[0].observed == pytest.approx(float(np.mean(med)), abs=1e-12)
    assert whole.exit_code == 0
    # tags unknown, or a tag no case carries: error, never pass
    unknown = evaluate_gate(checks, base)
    assert {r.verdict for r in unknown.results} == {"error"}
    assert "--tags FILE" in unknown.results[0].message
    nobody = evaluate_gate(parse_checks({"checks": [
        {"id": "x", "metric": "ap", "op": ">=", "threshold": 0.1,
         "scope": {"tags": ["zzz"]}}]}), base, case_tags=TAGS)
    assert nobody.results[0].verdict == "error" and "no case carries" in \
        nobody.results[0].message
    assert checks[0].to_dict()["scope"] == {"tags": ["med"]}


@pytest.mark.parametrize(("scope", "message"), [
    ({"tags": []}, "'scope' tags is empty"),
    ({"tag": ["x"]}, "'scope' has the key 'tag'"),
    ({"tags": [1]}, "'scope' tags must be strings"),
    ({"tags": ["x", "x"]}, "names the tag x more than once"),
])
def test_bad_tag_scopes(scope: object, message: str) -> None:
    with pytest.raises(CheckError) as err:
        parse_checks({"checks": [{"id": "c", "metric": "ap", "op": ">=", "threshold": 0.1,
                                  "scope": scope}]})
    assert message in str(err.value)


def test_cli_gate_with_a_tags_file(tmp_path: Path, runs: tuple[RunResult, ...]) -> None:
    path = tmp_path / "run.jsonl"
    RunResult(name="r", per_query=[r for r in runs[0].per_query if r.query_id != "q01"]
              ).save(path)
    (tmp_path / "checks.yaml").write_text(
        "checks:\n  - id: med\n    metric: ap\n    op: \">=\"\n    threshold: 0.1\n"
        "    scope: {tags: [med]}\n  - id: law\n    metric: ap\n    op: \">=\"\n"
        "    threshold: 0.1\n    scope: {tags: [law]}\n")
    (tmp_path / "tags.tsv").write_text(
        "".join(f"{q}\t{t}\n" for q, ts in TAGS.items() for t in ts))
    res = runner.invoke(app, ["gate", "-c", str(tmp_path / "checks.yaml"), "-r", str(path),
                              "--tags", str(tmp_path / "tags.tsv")])
    assert res.exit_code == 2, res.output
    assert "med: pass" in res.output and "law: error" in res.output


def test_a_slice_without_a_test_is_not_counted_in_the_family() -> None:
    # slices of 12, 12, 2 and 1 cases: the 1-case slice has no test (p 1), so Holm and BH
    # adjust the 3 p-values that exist, as statsmodels does over them:
    # multipletests(raw, method="holm")[1] and multipletests(raw, method="fdr_bh")[1]
    # (statsmodels 0.15.0) on the raw p of s1, s2, two give the stored values below
    rng = np.random.default_rng(7)
    cand = {f"q{i}": round(float(0.7 + rng.normal(0, 0.1)), 4) for i in range(40)}
    base = {f"q{i}": 0.5 for i in range(40)}
    sl = {"s1": [f"q{i}" for i in range(12)], "s2": [f"q{i}" for i in range(12, 24)],
          "one": ["q30"], "two": ["q31", "q32"]}
    raw = [7.807116912241593e-07, 0.0002552484221503051, 0.12383544689529208]
    expected = {"holm": [2.3421350736724777e-06, 0.0005104968443006102, 0.12383544689529208],
                "bh": [2.342135073672478e-06, 0.0003828726332254576, 0.12383544689529208]}
    for corr, want in expected.items():
        fam = compare_slices(base, [cand], ["m"], sl, method="t-test", correction=corr)
        assert fam.family_size == 3
        got = {k: f.results[0] for k, f in fam.slices.items()}
        for name, p in zip(("s1", "s2", "two"), raw, strict=True):
            alone = paired_test({q: cand[q] for q in sl[name]},
                                {q: base[q] for q in sl[name]}, "m", method="t-test")
            assert got[name].p_value == pytest.approx(alone.p_value, rel=1e-12)
            assert got[name].p_value == pytest.approx(p, rel=1e-9)
        assert [got[k].p_adjusted for k in ("s1", "s2", "two")] == pytest.approx(want,
                                                                              rel=1e-12)
        assert got["one"].p_value == got["one"].p_adjusted == 1.0
        assert all(f.family_size == 3 for f in fam.slices.values())


def test_the_slice_table_names_the_test_each_slice_ran() -> None:
    from evalkit.report.slices import slice_cells, slice_family_size

    rng = np.random.default_rng(3)
    ids = [f"q{i:02d}" for i in range(40)]
    base = rng.uniform(0.3, 0.6, 40)
    diffs = rng.normal(0.05, 0.05, 40)
    diffs[:8] = [-0.6, 0.02, 0.03, 0.01, 0.02, 0.04, 0.03, 0.02]  # slice 'skewed'
    tags = {q: ["skewed" if i < 8 else "plain"] + (["single"] if i == 39 else [])
            for i, q in enumerate(ids)}
    c = evalkit.compare(run("b", base, base, ids), run("c", base + diffs, base + diffs, ids),
                        metrics=["ap"], by="tag", tags=tags, n_resamples=999)
    methods = {s.slice: s.method for s in c.slices}
    assert methods["skewed"] == "randomization+bootstrap-t"
    assert methods["plain"] == "randomization"
    headers, cells = slice_cells(c.slices, "holm")
    assert headers[-1] == "test"
    assert [line[-1] for line in cells] == [s.method for s in c.slices]
    # the one-case slice has no test: the family is the other two
    assert slice_family_size(c.slices) == 2 == c.settings.slice_family_size


def test_a_gate_check_on_one_case_is_not_counted_in_holm() -> None:
    # a check scoped to a tag of one case has no test: it is not judged (an error), and
    # the other blocking check's Holm family is itself alone (m = 1: adjusted p = raw p,
    # as multipletests([p], method="holm") gives)
    rng = np.random.default_rng(1)
    b = rng.uniform(0, 1, 40)
    c = np.clip(b - 0.1 + rng.normal(0, 0.05, 40), 0, 1)
    ids = [f"q{i:02d}" for i in range(40)]
    tags = {q: ["one"] if i == 0 else ["rest"] for i, q in enumerate(ids)}
    checks = parse_checks({"checks": [
        {"id": "all", "metric": "ap", "vs_baseline": "no_significant_regression"},
        {"id": "single", "metric": "ap", "vs_baseline": "no_significant_regression",
         "scope": {"tags": ["one"]}}]})
    gate = evaluate_gate(checks, run("c", c, c, ids), run("b", b, b, ids), case_tags=tags)
    by_id = {r.check.id: r for r in gate.results}
    whole, single = by_id["all"].comparison, by_id["single"].comparison
    assert whole is not None and single is not None
    assert whole.p_adjusted == whole.p_value
    assert by_id["all"].verdict == "fail"
    assert single.n_cases == 1 and single.p_adjusted == 1.0
    assert by_id["single"].verdict == "error" and gate.exit_code == 2
    assert any("'single'" in n and "too few" in n for n in gate.notes)
