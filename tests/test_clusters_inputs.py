"""Where clusters come from (a golden case's ``cluster``, a ``qid<TAB>cluster`` file, the
golden set a run records) and the commands that take them: compare, gate, power. The
clustered t-test is checked against the CR1 formula computed here by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.case_clusters import (
    ClustersError,
    clusters_from_runs,
    load_case_clusters,
    load_clusters,
)
from evalkit.data.goldens import GoldenError, load_goldens
from evalkit.data.results import RunResult

REPO = Path(__file__).resolve().parents[1]
QRELS = REPO / "examples" / "vaswani" / "data" / "qrels"
BM25 = REPO / "examples" / "vaswani" / "data" / "runs" / "run.vaswani.bm25.txt"
runner = CliRunner()


def test_every_golden_format_reads_the_cluster(tmp_path: Path) -> None:
    (tmp_path / "g.jsonl").write_text(
        '{"id": "a", "query": "x", "cluster": "p1"}\n'
        '{"id": "b", "query": "y", "cluster": 7}\n')
    (tmp_path / "g.yaml").write_text(
        "- {id: a, query: x, cluster: p1}\n- {id: b, query: y, cluster: 007}\n")
    (tmp_path / "g.csv").write_text("id,query,cluster\na,x,p1\nb,y,007\nc,z,\n")
    assert [c.cluster for c in load_goldens(tmp_path / "g.jsonl")] == ["p1", "7"]
    assert [c.cluster for c in load_goldens(tmp_path / "g.yaml")] == ["p1", "007"]
    assert [c.cluster for c in load_goldens(tmp_path / "g.csv")] == ["p1", "007", None]
    assert "cluster" not in next(iter(load_goldens(tmp_path / "g.jsonl"))).context


@pytest.mark.parametrize("cluster", ["true", "[1, 2]", '""', '" "'])
def test_a_bad_cluster_names_the_line(tmp_path: Path, cluster: str) -> None:
    p = tmp_path / "g.jsonl"
    p.write_text('{"id": "a", "query": "x"}\n'
                 f'{{"id": "b", "query": "y", "cluster": {cluster}}}\n')
    with pytest.raises(GoldenError, match=r"g\.jsonl:2: case 'b': 'cluster'"):
        load_goldens(p)


def test_clusters_file_rules(tmp_path: Path) -> None:
    p = tmp_path / "c.tsv"
    p.write_text("# comment\n1\tA\n\n2\tB\n")
    assert load_clusters(p) == {"1": "A", "2": "B"}
    for text, message in (("1 A\n", r"c\.tsv:1: expected 'query id<TAB>cluster'"),
                          ("1\tA\n1\tA\n", r"c\.tsv:2: query '1' is given a cluster again "
                                           r"\(first on line 1\)"),
                          ("1\t\n", r"c\.tsv:1: .*cluster"),
                          ("# nothing\n", "no cluster")):
        p.write_text(text)
        with pytest.raises(ClustersError, match=message):
            load_clusters(p)
    with pytest.raises(ClustersError, match="no such"):
        load_clusters(tmp_path / "missing.tsv")


def test_a_golden_set_as_clusters_file_needs_every_case_clustered(tmp_path: Path) -> None:
    p = tmp_path / "g.jsonl"
    p.write_text('{"id": "a", "query": "x", "cluster": "p1"}\n{"id": "b", "query": "y"}\n')
    with pytest.raises(ClustersError, match=r"1 case\(s\) of .*g\.jsonl name no cluster "
                                            r"\('b'\)"):
        load_case_clusters(p)


def test_clusters_of_the_golden_set_a_run_records(tmp_path: Path) -> None:
    p = tmp_path / "g.yaml"
    p.write_text("- {id: a, query: x, cluster: p1}\n- {id: b, query: y, cluster: p2}\n")
    header = {"goldens": {"path": str(p), "loader": "yaml",
                          "sha256": load_goldens(p).digest()}}
    assert clusters_from_runs([header, header]) == {"a": "p1", "b": "p2"}
    with pytest.raises(ClustersError, match="not made from a golden set"):
        clusters_from_runs([{}])
    p.write_text("- {id: a, query: x, cluster: p9}\n- {id: b, query: y, cluster: p2}\n")
    with pytest.raises(ClustersError, match="changed since the runs were made"):
        clusters_from_runs([header])


@pytest.fixture(scope="module")
def pilot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A candidate (BM25 without its top two documents on every third query) and a
    clusters file of 31 clusters of 3 consecutive query ids."""
    d = tmp_path_factory.mktemp("clusters")
    lines = [ln for ln in BM25.read_text().splitlines()
             if not (int(ln.split()[0]) % 3 == 0 and int(ln.split()[3]) <= 2)]
    (d / "cand.txt").write_text("\n".join(lines) + "\n")
    qids = sorted({int(ln.split()[0]) for ln in QRELS.read_text().splitlines()})
    (d / "clusters.tsv").write_text("".join(f"{q}\tc{(q - 1) // 3}\n" for q in qids))
    return d / "cand.txt", d / "clusters.tsv"


def _cr1_by_hand(d: dict[str, float], clusters: dict[str, str]) -> tuple[float, float, int]:
    """(mean, CR1 standard error, G): Cameron and Miller (2015), with K = 1."""
    n = len(d)
    mean = sum(d.values()) / n
    resid: dict[str, float] = {}
    for q, x in d.items():
        resid[clusters[q]] = resid.get(clusters[q], 0.0) + (x - mean)
    g = len(resid)
    se = math.sqrt(g / (g - 1) * sum(r * r for r in resid.values())) / n
    return mean, se, g


def test_compare_with_a_clusters_file(pilot: tuple[Path, Path]) -> None:
    cand, cl_file = pilot
    res = runner.invoke(app, ["compare", str(BM25), str(cand), "--qrels", str(QRELS),
                              "-m", "ap", "--test", "t-test", "--clusters", str(cl_file),
                              "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    row = doc["comparisons"][0]
    assert row["n_clusters"] == 31 and doc["clusters"] == 31
    d = dict(zip(doc["query_ids"], row["differences"], strict=True))
    clusters = dict(line.split("\t") for line in cl_file.read_text().splitlines())
    mean, se, g = _cr1_by_hand(d, clusters)
    assert row["diff"] == pytest.approx(mean, rel=1e-12)
    assert row["p_value"] == pytest.approx(2 * stats.t.sf(abs(mean / se), g - 1), rel=1e-9)
    half = stats.t.ppf(0.975, g - 1) * se
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((mean - half, mean + half),
                                                            rel=1e-9)
    table = runner.invoke(app, ["compare", str(BM25), str(cand), "--qrels", str(QRELS),
                                "-m", "ap", "--clusters", str(cl_file)])
    assert "clustered: the unit is the cluster (31 clusters" in table.output


def test_compare_refuses_clusters_that_do_not_fit(pilot: tuple[Path, Path],
                                                  tmp_path: Path) -> None:
    cand, cl_file = pilot
    short = tmp_path / "short.tsv"
    short.write_text("".join(cl_file.read_text().splitlines(keepends=True)[:90]))
    extra = tmp_path / "extra.tsv"
    extra.write_text(cl_file.read_text() + "999\tc1\n")
    for f, message in ((short, "3 compared case(s) have no cluster ('91', '92', '93')"),
                       (extra, "1 id(s) are not cases of the compared runs ('999')")):
        res = runner.invoke(app, ["compare", str(BM25), str(cand), "--qrels", str(QRELS),
                                  "-m", "ap", "--clusters", str(f)])
        assert res.exit_code == 2 and "Traceback" not in res.output
        assert message in res.output


def test_power_plans_in_clusters(pilot: tuple[Path, Path]) -> None:
    cand, cl_file = pilot
    res = runner.invoke(app, ["power", str(BM25), str(cand), "--qrels", str(QRELS),
                              "-m", "ap", "--clusters", str(cl_file), "--no-simulate",
                              "--json"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)["plans"][0]
    assert plan["n_clusters"] == 31 and plan["n_pilot"] == 31
    # the sd of one cluster-level difference: sqrt(G) times the CR1 standard error
    table = runner.invoke(app, ["compare", str(BM25), str(cand), "--qrels", str(QRELS),
                                "-m", "ap", "--json"])
    row = json.loads(table.stdout)["comparisons"][0]
    d = dict(zip(row["query_ids"] if "query_ids" in row else
                 json.loads(table.stdout)["query_ids"], row["differences"], strict=True))
    clusters = dict(line.split("\t") for line in cl_file.read_text().splitlines())
    _, se, g = _cr1_by_hand(d, clusters)
    assert plan["sd_diff"] == pytest.approx(se * math.sqrt(g), rel=1e-9)


def test_gate_takes_clusters(pilot: tuple[Path, Path], tmp_path: Path) -> None:
    _, cl_file = pilot
    gate_dir = REPO / "examples" / "gate"
    out = tmp_path / "gate.json"
    cand = RunResult.load(gate_dir / "baseline.jsonl")  # the same values, another run
    cand.name = "cand"
    res = runner.invoke(app, ["gate", "--checks", str(gate_dir / "checks.yaml"),
                              "--run", str(cand.save(tmp_path / "cand.jsonl")),
                              "--baseline", str(gate_dir / "baseline.jsonl"),
                              "--clusters", str(cl_file), "--report", f"json:{out}"])
    assert res.exit_code == 0, res.output
    assert "clustered: the baseline checks' tests take the cluster as their unit (31 " \
        "clusters over the run's 93 cases, effective number G* = 31.0)" in res.output
    text = out.read_text()
    assert '"n_clusters": 31' in text


def test_few_clusters_warn_in_every_report(tmp_path: Path) -> None:
    from evalkit import compare
    from evalkit.data.results import RunResult

    rng = np.random.default_rng(1)
    ids = [f"q{i:02d}" for i in range(24)]
    base = {q: float(x) for q, x in zip(ids, rng.uniform(0, 1, 24), strict=True)}
    cand = {q: v + float(rng.normal(0.05, 0.1)) for q, v in base.items()}

    def run(name: str, scores: dict[str, float]) -> RunResult:
        from evalkit.data.rows import QueryResult

        return RunResult(name, [QueryResult(q, [], {"ap": v}) for q, v in scores.items()])

    c = compare(run("base", base), run("cand", cand), metrics=["ap"],
                clusters={q: f"c{i // 4}" for i, q in enumerate(ids)})
    assert c.results[0].n_clusters == 6
    assert any("rests on 6 clusters" in w for w in c.results[0].warnings)
    from evalkit.comparison.report import to_report

    assert any("rests on 6 clusters" in n for n in to_report(c).notes)


def test_unequal_clusters_report_g_star_and_warn(pilot: tuple[Path, Path],
                                                 tmp_path: Path) -> None:
    cand, cl_file = pilot
    qids = [line.split("\t")[0] for line in cl_file.read_text().splitlines()]
    # 25 cases alone, then clusters of 10, 14, 20 and 24 cases: G = 29
    names = [f"s{i}" for i in range(25)]
    for k, size in enumerate((10, 14, 20, 24)):
        names += [f"big{k}"] * size
    assert len(names) == len(qids) == 93
    unequal = tmp_path / "unequal.tsv"
    unequal.write_text("".join(f"{q}\t{c}\n" for q, c in zip(qids, names, strict=True)))
    # G* by hand (rho = 1): (sum n^2)^2 / sum n^4
    sq = 25 + 10**2 + 14**2 + 20**2 + 24**2
    g_star = sq**2 / (25 + 10**4 + 14**4 + 20**4 + 24**4)
    res = runner.invoke(app, ["compare", str(BM25), str(cand), "--qrels", str(QRELS),
                              "-m", "ap", "--clusters", str(unequal), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["clusters"] == 29
    assert doc["effective_clusters"] == pytest.approx(g_star, rel=1e-12)
    assert doc["comparisons"][0]["method"] in ("randomization", "randomization+bootstrap-t")
    table = runner.invoke(app, ["compare", str(BM25), str(cand), "--qrels", str(QRELS),
                                "-m", "ap", "--clusters", str(unequal)])
    assert f"(29 clusters, effective number G* = {g_star:.1f};" in table.output
    assert f"29 clusters of unequal sizes, whose effective number G* = {g_star:.1f} is " \
        "below 20" in " ".join(table.output.split())
    plan = runner.invoke(app, ["power", str(BM25), str(cand), "--qrels", str(QRELS),
                               "-m", "ap", "--clusters", str(unequal), "--no-simulate"])
    assert plan.exit_code == 0, plan.output
    flat = " ".join(plan.output.split())
    assert f"effective number G* = {g_star:.1f}" in flat
    assert f"whose effective number G* = {g_star:.1f} is below 20" in flat
