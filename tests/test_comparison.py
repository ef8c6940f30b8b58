"""``evalkit.compare``: the comparison as a library object.

The runs are the two Vaswani systems of the main job (examples/vaswani/main.py, written
into a temporary directory). Expected values come from the README's published
``evalkit compare`` table, from the artifacts' per-query rows read here as JSON, and from
Holm's rule, the sign-flip null and the bootstrap-t written out by hand, never from
evalkit.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner, Result

import evalkit
from evalkit.cli.app import app
from evalkit.comparison import Comparison, ComparisonError, compare
from evalkit.data.results import QueryResult, RunResult
from evalkit.io.setting_names import SettingError

REPO = Path(__file__).resolve().parents[1]
VASWANI = REPO / "examples" / "vaswani"
QRELS = VASWANI / "data" / "qrels"
README = REPO / "README.md"

runner = CliRunner()


def invoke(*args: str | Path) -> Result:
    return runner.invoke(app, [str(a) for a in args])


@dataclass(frozen=True)
class Runs:
    tfidf: Path  # the baseline's run artifact
    bm25: Path  # the candidate's run artifact
    trec_tfidf: Path  # the baseline's TREC run file
    trec_bm25: Path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    out = tmp_path_factory.mktemp("vaswani")
    proc = subprocess.run(
        [sys.executable, str(VASWANI / "main.py"), "--out", str(out), "--resamples", "200"],
        capture_output=True, text=True, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    return Runs(out / "tfidf.jsonl", out / "bm25.jsonl", out / "run.tfidf.txt",
                out / "run.bm25.txt")


def first_queries(artifact: Path, to: Path, n: int) -> Path:
    """A complete artifact of ``artifact``'s first ``n`` queries (its header's count and
    trailer say ``n``): a run over fewer queries, not a file cut short."""
    run = RunResult.load(artifact)
    run.per_query = run.per_query[:n]
    run.header["notes"] = {**run.header.get("notes", {}), "num_queries": n}
    return run.save(to)


def rows_of(artifact: Path, metric: str) -> dict[str, float]:
    """``{query id: value}`` straight from the artifact's JSON Lines rows."""
    out: dict[str, float] = {}
    for line in artifact.read_text().splitlines():
        doc = json.loads(line)
        if doc.get("type") == "row":
            out[str(doc["id"])] = float(doc["metrics"][metric])
    return out


def published() -> dict[str, list[str]]:
    """The rows of the README's ``evalkit compare ... -m ap,ndcg@10`` table, by metric."""
    text = README.read_text(encoding="utf-8")
    start = text.index("$ evalkit compare examples/vaswani/out/tfidf.jsonl "
                       "examples/vaswani/out/bm25.jsonl -m ap,ndcg@10")
    block = text[start:text.index("```", start)]
    out = {}
    for line in block.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells and cells[0] in ("ap", "ndcg@10"):
            out[cells[0]] = cells
    return out


# ----------------------------------------------------------------- the published values
def test_compare_reproduces_the_readme_table(
        runs: Runs, reference_bootstrap_t: Callable[..., tuple[float, float, float]]) -> None:
    table = published()
    # metric, baseline, candidate, diff, CI, p, p (Holm), significant, W/T/L
    assert table["ap"][3:] == ["+0.0590", "[+0.0434, +0.0774]", "0.0002", "0.0002", "yes",
                               "80/1/12"]
    # AP's differences are skewed (G1 = 1.59 >= 1), so the default runs the sign-flip
    # test and the bootstrap-t together: p is the larger p, 2/(B+1) (no resampled t* is
    # as extreme as the observed t = 7.4), and the interval spans both tests' intervals:
    # the sign-flip inversion interval [+0.0434, +0.0747] (the default's figures when
    # it ran alone) and the bootstrap-t interval computed here
    ap_d = np.array([v - rows_of(runs.tfidf, "ap")[q]
                     for q, v in sorted(rows_of(runs.bm25, "ap").items())])
    assert stats.skew(ap_d, bias=False) >= 1.0
    # the bootstrap-t runs on the 92 differences that are not ties (a tie has no sign,
    # as in the sign-flip test) and its interval is scaled by 92/93
    live = ap_d[ap_d != 0.0]
    assert live.size == 92
    p_t, lo_t, hi_t = reference_bootstrap_t(live)
    share = live.size / ap_d.size
    assert p_t == 2 / 10_001 and f"{p_t:.4f}" == table["ap"][5]
    assert f"[{min(0.0434, share * lo_t):+.4f}, {max(0.0747, share * hi_t):+.4f}]" \
        == table["ap"][4]
    c = compare(runs.tfidf, runs.bm25, metrics=["ap", "ndcg@10"])
    assert isinstance(c, Comparison) and [r.metric for r in c] == ["ap", "ndcg@10"]
    raw = {}
    for r in c:
        cells = table[r.metric]
        base, cand = rows_of(runs.tfidf, r.metric), rows_of(runs.bm25, r.metric)
        diffs = {q: cand[q] - base[q] for q in base}
        # the means and the difference from the rows themselves
        assert r.baseline_mean == pytest.approx(math.fsum(base.values()) / 93, abs=1e-12)
        assert r.candidate_mean == pytest.approx(math.fsum(cand.values()) / 93, abs=1e-12)
        assert r.diff == pytest.approx(math.fsum(diffs.values()) / 93, abs=1e-12)
        wins = sum(d > 1e-12 for d in diffs.values())
        losses = sum(d < -1e-12 for d in diffs.values())
        assert (r.wins, r.ties, r.losses) == (wins, 93 - wins - losses, losses)
        # and the README's figures
        assert [f"{r.baseline_mean:.4f}", f"{r.candidate_mean:.4f}", f"{r.diff:+.4f}"] == \
            cells[1:4]
        assert r.ci_low is not None and r.ci_high is not None
        assert f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]" == cells[4]
        assert f"{r.wins}/{r.ties}/{r.losses}" == cells[8]
        assert r.significant and cells[7] == "yes"
        raw[r.metric] = r.p_value
        assert r.p_resamples == 10_000
        skewed = abs(stats.skew(list(diffs.values()), bias=False)) >= 1.0
        assert r.method == ("randomization+bootstrap-t" if skewed else "randomization")
        assert skewed == (r.metric == "ap")
    # Holm over the two tests, by hand: the smaller p times 2, then the running maximum
    order = sorted(raw, key=raw.__getitem__)
    running = 0.0
    for i, m in enumerate(order):
        running = max(running, min(1.0, (len(order) - i) * raw[m]))
        assert c.get(m).p_adjusted == pytest.approx(running, rel=1e-12)
        assert f"{running:.4f}" == table[m][6]


def test_the_command_line_json_is_the_library_json(runs: Runs) -> None:
    args = ["-m", "ap,ndcg@10,rr", "--top", "3", "-B", "500", "--correction", "bh"]
    res = invoke("compare", runs.tfidf, runs.bm25, runs.trec_bm25, "--qrels", QRELS, *args,
                 "--json")
    assert res.exit_code == 0, res.output
    doc = compare(runs.tfidf, runs.bm25, runs.trec_bm25, qrels=QRELS,
                  metrics=["ap", "ndcg@10", "rr"], top=3, n_resamples=500,
                  correction="bh").to_json()
    assert json.loads(res.stdout) == json.loads(json.dumps(doc))
    assert (doc["type"], doc["schema_version"]) == ("comparison", 1)
    assert [r["name"] for r in doc["candidates"]] == ["bm25", "run.bm25"]


def test_evalkit_compare_is_the_function_and_the_object_is_exported() -> None:
    assert evalkit.compare is compare and callable(evalkit.compare)
    assert evalkit.Comparison is Comparison
    import evalkit.comparison as package

    assert package.compare is compare  # no submodule shadows the function
    assert not (REPO / "src" / "evalkit" / "comparison" / "compare.py").exists()
    assert not (REPO / "src" / "evalkit" / "compare.py").exists()
    proc = subprocess.run([sys.executable, "-c", "import sys, evalkit.comparison; "
                           "print('numpy' in sys.modules)"], capture_output=True, text=True)
    assert proc.stdout.strip() == "False", proc.stderr


def test_the_statistics_family_has_one_name() -> None:
    """``compare_runs`` answers a ``PairedTestFamily``; ``Comparison`` is only
    ``evalkit.compare``'s object, and ``evalkit.stats`` has no name ``Comparison``."""
    from evalkit import stats

    assert "Comparison" not in dir(stats)
    with pytest.raises(AttributeError, match="Comparison"):
        stats.Comparison  # noqa: B018


# ------------------------------------------------------------------- the refusals
def _cli_message(res: Result) -> str:
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and "Traceback" not in res.output
    return res.stderr.removeprefix("error: ").rstrip("\n")


def test_every_refusal_of_the_command_line_is_the_librarys(runs: Runs, tmp_path: Path
                                                          ) -> None:
    deep = tmp_path / "deep.jsonl"
    assert invoke("eval", runs.trec_bm25, "--qrels", QRELS, "-m", "ap", "-M", "100",
                  "--save", deep).exit_code == 0
    other_qrels = tmp_path / "qrels"
    other_qrels.write_text("".join(ln + "\n" for ln in QRELS.read_text().splitlines()[1:]))
    few = first_queries(runs.bm25, tmp_path / "few.jsonl", 50)  # a complete run of 50
    lines = runs.bm25.read_text().splitlines()
    cut = tmp_path / "cut.jsonl"  # the header and 50 rows of a 93-row file
    cut.write_text("\n".join(lines[:51]) + "\n")
    header_only = tmp_path / "header.jsonl"
    header_only.write_text(lines[0] + "\n")
    a, b = runs.tfidf, runs.bm25
    # (the runs, the command line's options, compare's options, a part of the message)
    cases: list[tuple[list[Path], list[str], dict[str, object], str]] = [
        ([a], [], {}, "compare needs a baseline and at least one candidate run"),
        ([a, b], ["--alpha", "1.5"], {"alpha": 1.5}, "--alpha 1.5: expected a number"),
        ([a, b], ["--test", "t-test", "--ci", "inversion"],
         {"method": "t-test", "ci": "inversion"}, "--ci inversion inverts the randomization"),
        ([a, b], ["-m", "num_rel"], {"metrics": ["num_rel"]}, "a per-query count is reported"),
        ([a, b], ["-m", "bogus"], {"metrics": ["bogus"]}, "has no bogus"),
        ([a, deep], [], {}, "were not evaluated alike: depth differs"),
        ([a, b], ["-l", "2"], {"relevance_level": 2}, "it was scored with relevance_level=1"),
        ([a, b], ["--qrels", str(other_qrels)], {"qrels": other_qrels},
         "it was scored against other qrels"),
        ([a, few], [], {}, "the runs cover different queries: 43 only in"),
        ([a, cut], [], {}, "it holds 50 of the 93 queries its header records"),
        ([a, header_only], [], {}, "the run artifact has no rows"),
        ([a, runs.trec_bm25], [], {}, "is a TREC run file; pass --qrels QRELS"),
        ([a, QRELS], [], {}, "looks like a TREC qrels file"),
    ]
    compare_options = {"relevance_level": ("--relevance-level", None),
                       "allow_incomplete": ("--allow-incomplete", None)}
    for paths, argv, options, needle in cases:
        with pytest.raises(ValueError) as caught:
            compare(*paths, **options)  # type: ignore[arg-type]
        message = str(caught.value)
        assert needle in message, (argv, message)
        # the command line prints the library's message, and nothing else: the settings
        # it names spelled as compare's options
        if isinstance(caught.value, SettingError):
            message = caught.value.spelled(compare_options)
        assert _cli_message(invoke("compare", *paths, *argv)) == message, argv
    with pytest.raises(ComparisonError):
        compare(a, b, top=-1)


def test_allow_incomplete_pairs_the_queries_both_runs_have(runs: Runs, tmp_path: Path
                                                            ) -> None:
    few = first_queries(runs.bm25, tmp_path / "few.jsonl", 50)  # a complete run of 50
    kept = set(rows_of(few, "ap"))
    assert len(kept) == 50
    with pytest.raises(ComparisonError, match="cover different queries"):
        compare(runs.tfidf, few, metrics=["ap"])
    c = compare(runs.tfidf, few, metrics=["ap"], allow_incomplete=True, n_resamples=500)
    (r,) = c.results
    base = {q: v for q, v in rows_of(runs.tfidf, "ap").items() if q in kept}
    cand = rows_of(few, "ap")
    assert r.n_queries == 50 and set(c.query_ids) == kept
    assert r.baseline_mean == pytest.approx(math.fsum(base.values()) / 50, abs=1e-12)
    assert r.diff == pytest.approx(math.fsum(cand[q] - base[q] for q in kept) / 50, abs=1e-12)
    assert any("43 queries that another run lacks" in w and "incomplete runs allowed" in w
               for w in c.warnings)
    assert c.settings.allow_incomplete and c.to_json()["allow_incomplete"] is True
    res = invoke("compare", runs.tfidf, few, "-m", "ap", "-B", "500", "--allow-incomplete",
                 "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == json.loads(json.dumps(c.to_json()))
    assert "left out (incomplete runs allowed)" in res.stderr


# ------------------------------------------------------------- what the object carries
def test_per_query_differences_movers_and_query_text(runs: Runs) -> None:
    base, cand = rows_of(runs.tfidf, "ap"), rows_of(runs.bm25, "ap")
    diffs = {q: cand[q] - base[q] for q in base}
    up = sorted(diffs, key=lambda q: (-diffs[q], q))[:2]
    down = sorted(diffs, key=lambda q: (diffs[q], q))[:2]
    topics = {q: f"topic {q}" for q in base}
    c = compare(runs.tfidf, runs.bm25, metrics="ap", top=2, topics=topics, n_resamples=200)
    r = c.get("ap", "bm25")
    assert c.query_ids == tuple(sorted(base)) == r.query_ids
    assert set(r.per_query()) == set(base)
    for q, d in r.per_query().items():
        assert d == pytest.approx(diffs[q], abs=1e-12)
    assert [m.id for m in r.top_gains] == up and [m.id for m in r.top_losses] == down
    for m in (*r.top_gains, *r.top_losses):
        assert (m.baseline, m.candidate) == (base[m.id], cand[m.id])
        assert m.text == f"topic {m.id}"
    assert c.queries == topics
    assert r.effect is not None and r.standardized_effect == pytest.approx(
        np.mean(list(diffs.values())) / np.std(list(diffs.values()), ddof=1), rel=1e-9)


def test_topics_that_name_none_of_the_queries_are_a_warning(runs: Runs) -> None:
    other = {"1037798": "who is robert gray", "104861": "cost of interior concrete"}
    c = compare(runs.tfidf, runs.bm25, metrics="ap", topics=other, n_resamples=200)
    n = len(rows_of(runs.tfidf, "ap"))
    assert (f"query text: the topics name none of the {n} compared queries (they start "
            "with '1037798'); is it the topic file of this collection?") in c.warnings
    some = {next(iter(rows_of(runs.tfidf, "ap"))): "text", **other}
    assert not any("topics name none" in w for w in compare(
        runs.tfidf, runs.bm25, metrics="ap", topics=some, n_resamples=200).warnings)


def test_a_metric_that_failed_on_one_case_is_named_as_such(runs: Runs,
                                                          tmp_path: Path) -> None:
    damaged = RunResult.load(runs.bm25)
    first = damaged.per_query[0]
    first.metrics["ap"] = math.nan
    path = tmp_path / "nan.jsonl"
    damaged.save(path)
    n = len(damaged.per_query)
    with pytest.raises(ComparisonError) as info:
        compare(runs.tfidf, path, metrics="ap", n_resamples=200)
    message = str(info.value)
    assert f"has ap on {n - 1} of {n} cases; it failed on 1 (first {first.query_id!r}" \
        in message and "--allow-incomplete" in message and "(it has:" not in message
    kept = compare(runs.tfidf, path, metrics="ap", n_resamples=200, allow_incomplete=True)
    assert len(kept.get("ap", damaged.name).query_ids) == n - 1


def _judged_run(name: str, grades: dict[str, float]) -> RunResult:
    from evalkit.data.rows import CaseResult

    rows = [CaseResult(q, None, {"helpful": g}, details={"helpful": {
        "score": g, "reason": f"{name} on {q}: {'good' if g > 0.5 else 'weak'}"}})
        for q, g in grades.items()]
    return RunResult(name, rows, {"kind": "target"})


def test_per_case_details_ride_along_to_the_reports() -> None:
    base = _judged_run("old", {f"c{i}": 0.2 for i in range(25)})
    cand = _judged_run("new", {f"c{i}": 0.2 + (0.6 if i < 3 else 0.0) for i in range(25)})
    c = compare(base, cand, metrics=["helpful"], top=1, n_resamples=200)
    (r,) = c.results
    (m,) = r.top_gains
    assert m.id == "c0" and m.reason("candidate") == "new on c0: good"
    assert m.reason("baseline") == "old on c0: weak"
    assert r.details["c24"]["candidate"] == {"score": 0.2, "reason": "new on c24: weak"}
    assert (base.name, cand.name) == ("old", "new")  # the caller's runs are not renamed
    from evalkit.report.markdown import render_markdown

    md = render_markdown(c.to_report())
    assert "| up | c0 | 0.2000 | 0.8000 | +0.6000 | old on c0: weak | new on c0: good |" in md


def test_the_null_distribution_is_the_sign_flip_enumeration() -> None:
    # 10 queries: the randomization test enumerates all 2^10 sign patterns
    d = [0.31, -0.05, 0.12, 0.0, 0.44, 0.07, -0.21, 0.18, 0.09, 0.26]
    base = RunResult("b", [QueryResult(f"q{i}", [], {"m": 0.5}) for i in range(10)])
    cand = RunResult("c", [QueryResult(f"q{i}", [], {"m": 0.5 + x}) for i, x in enumerate(d)])
    c = compare(base, cand, metrics=["m"], method="randomization", correction="none")
    dist = c.results[0].distribution
    assert dist is not None and (dist.kind, dist.exact) == ("null", True)
    # every sign pattern's mean, enumerated by hand (the differences as the test saw them)
    diffs = [cand.per_query[i].metrics["m"] - 0.5 for i in range(10)]
    null = [sum(s * x for s, x in zip(signs, diffs, strict=True)) / 10
            for signs in itertools.product((1, -1), repeat=10)]
    counts, edges = np.histogram(null, bins=200, range=(min(null), max(null)))
    assert dist.counts == tuple(int(x) for x in counts) and len(dist.counts) == 200
    assert dist.edges == pytest.approx([float(e) for e in edges], abs=1e-12)
    assert sum(dist.counts) == 1024 == dist.n_resamples
    assert dist.observed == pytest.approx(sum(diffs) / 10)
    # the exact two-sided p is the share of patterns at least as extreme as the data
    extreme = sum(abs(v) >= abs(dist.observed) - 1e-12 for v in null)
    assert c.results[0].p_value == pytest.approx(extreme / 1024)


def test_bootstrap_and_t_test_distributions(runs: Runs) -> None:
    c = compare(runs.tfidf, runs.bm25, metrics=["ap"], method="bootstrap", n_resamples=1000,
                correction="none")
    dist = c.results[0].distribution
    assert dist is not None and dist.kind == "bootstrap" and sum(dist.counts) == 1000
    centres = [(lo + hi) / 2 for lo, hi in itertools.pairwise(dist.edges)]
    mean = sum(n * x for n, x in zip(dist.counts, centres, strict=True)) / 1000
    assert mean == pytest.approx(c.results[0].diff, abs=0.002)  # the resampled means
    r = c.results[0]
    assert r.ci_low is not None and r.ci_high is not None
    assert dist.edges[0] <= r.ci_low < r.ci_high <= dist.edges[-1]
    t = compare(runs.tfidf, runs.bm25, metrics=["ap"], method="t-test", n_resamples=200)
    assert t.results[0].distribution is None


def test_json_reads_back(runs: Runs) -> None:
    c = compare(runs.tfidf, runs.bm25, metrics=["ap", "rr"], top=2, n_resamples=300,
                alternative="greater")
    doc = json.loads(json.dumps(c.to_json(), allow_nan=False))
    assert doc["comparisons"][0]["ci_high"] is None  # one-sided: the open end is null
    back = Comparison.from_json(json.dumps(doc))
    assert back.to_json() == doc
    assert back.get("rr").top_gains == c.get("rr").top_gains
    assert back.get("ap").distribution == c.get("ap").distribution
    # the 0.3 document (no type, no schema_version, no new keys) still reads
    old = {k: v for k, v in doc.items() if k not in ("type", "schema_version", "description",
                                                      "query_ids", "queries", "provenance")}
    old["comparisons"] = [{k: v for k, v in row.items() if k not in (
        "ci_method", "effect", "differences", "distribution", "details")}
        for row in doc["comparisons"]]
    legacy = Comparison.from_json(old)
    assert legacy.get("ap").diff == c.get("ap").diff and legacy.description == c.description
    with pytest.raises(ValueError, match="schema_version"):
        Comparison.from_json({**doc, "schema_version": 99})


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000,
                                  '{"comparisons": ' + "[" * 150 + "]" * 150 + "}"])
def test_json_text_nested_too_deeply_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="nested"):
        Comparison.from_json(text)


def test_the_report_carries_every_field(runs: Runs) -> None:
    c = compare(runs.tfidf, runs.bm25, metrics=["ap"], top=1, n_resamples=300)
    report = c.to_report()
    (row,) = report.rows
    r = c.results[0]
    assert (row.wins, row.ties, row.losses) == (r.wins, r.ties, r.losses)
    assert row.significant is r.significant and row.effect_size == r.standardized_effect
    assert row.top_gains == r.top_gains and row.distribution == r.distribution
    assert row.differences == r.differences and row.query_ids == c.query_ids
    assert report.description == c.description and report.settings["top"] == 1
    assert [(x.name, x.role) for x in report.runs] == [("tfidf", "baseline"),
                                                       ("bm25", "candidate")]
    assert report.data == c.to_json()
    assert report.provenance["runs"]["bm25"]["kind"] == "artifact"
    assert report.provenance["runs"]["bm25"]["qrels"]["sha256"]


def test_power_planning_is_the_librarys_too(runs: Runs) -> None:
    from evalkit.comparison import plan_power

    cases: list[tuple[list[str | Path], dict[str, object]]] = [
        (["--sd", "0.15"], {"sd": 0.15}),
        (["--sd", "0.15", "-e", "0"], {"sd": 0.15, "effects": [0.0]}),
        ([runs.tfidf, "--sd", "0.1"], {"sd": 0.1}),
        ([runs.tfidf], {}),
        (["--sd", "0.1", "-e", "-0.02", "--alternative", "greater"],
         {"sd": 0.1, "effects": [-0.02], "alternative": "greater"}),
    ]
    for argv, options in cases:
        pilot = [x for x in argv if isinstance(x, Path)]
        with pytest.raises(ValueError) as caught:
            plan_power(*pilot, **options)  # type: ignore[arg-type]
        assert _cli_message(invoke("power", *argv)) == str(caught.value), argv
    base, cand = rows_of(runs.tfidf, "ap"), rows_of(runs.bm25, "ap")
    d = [cand[q] - base[q] for q in base]
    plan = plan_power(runs.tfidf, runs.bm25, metrics=["ap"], n=[50], effects=[0.02],
                      simulate=False)
    (p,) = plan.plans
    assert p.sd_diff == pytest.approx(float(np.std(d, ddof=1)), rel=1e-12)
    assert p.mean_diff == pytest.approx(float(np.mean(d)), abs=1e-12) and p.n_pilot == 93
    res = invoke("power", runs.tfidf, runs.bm25, "-m", "ap", "-n", "50", "-e", "0.02",
                 "--no-simulate", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == json.loads(json.dumps(plan.to_json()))


def _block_after(text: str, code: str) -> str:
    """The fenced block that follows the block holding ``code``."""
    rest = text[text.index(code) + len(code) + len("```"):]  # after the closing fence
    match = re.search(r"```\n(.*?)```", rest, re.S)
    assert match is not None
    return match.group(1)


def test_the_python_examples_of_the_docs_run_and_print_what_they_show(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = runs.tfidf.parent
    readme = README.read_text(encoding="utf-8")
    docs = (REPO / "docs" / "comparison.md").read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for text, name in ((readme, "README"), (docs, "docs/comparison.md")):
        code = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S)
                    if "evalkit.compare(" in b)
        capsys.readouterr()
        exec(compile(code.replace("examples/vaswani/out/", f"{out}/"), name, "exec"), {})
        printed = capsys.readouterr().out
        if name == "README":
            assert printed == _block_after(text, code), printed
        else:  # the comments show what it prints
            shown = [ln.removeprefix("# ") for ln in code.splitlines() if ln.startswith("# ")]
            assert printed.splitlines()[0] == shown[0]
            assert (tmp_path / "compare.md").is_file() and (tmp_path / "compare.xml").is_file()


def test_each_runs_scores_are_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The statistics and the rows share one read of each run's values of a metric."""
    base = _judged_run("old", {f"c{i}": 0.1 * (i % 7) for i in range(25)})
    cands = [_judged_run(f"new{k}", {f"c{i}": 0.1 * ((i + k) % 7) for i in range(25)})
             for k in (1, 2)]
    reads: list[tuple[str, str]] = []
    scores = RunResult.scores

    def counted(self: RunResult, metric: str) -> dict[str, float]:
        reads.append((self.name, metric))
        return scores(self, metric)

    monkeypatch.setattr(RunResult, "scores", counted)
    c = compare(base, *cands, metrics=["helpful"], n_resamples=200)
    assert sorted(reads) == [("new1", "helpful"), ("new2", "helpful"), ("old", "helpful")]
    assert [r.baseline_mean for r in c.results] == [base.mean("helpful")] * 2
