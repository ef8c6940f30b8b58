"""A tags or clusters file given beside runs made from a golden set never silently
replaces the golden set's own tags or clusters: ``evalkit gate --tags``, ``evalkit
compare --by tag --tags`` and ``--clusters`` refuse a file that disagrees with the
recorded golden set (docs/gate.md, "Scopes"), and use one that agrees."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.case_clusters import ClustersError, agreed_clusters
from evalkit.data.case_tags import TagsError, agreed_tags
from evalkit.data.goldens import load_goldens
from evalkit.data.results import QueryResult, RunResult

runner = CliRunner()
IDS = [f"q{i:02d}" for i in range(20)]
HARD = [q for i, q in enumerate(IDS) if i % 2 == 1]  # 10 cases
#: the scores: every hard case 3, every easy one 5 (the hard slice's mean is 3.0)
SCORES = {q: 3.0 if q in HARD else 5.0 for q in IDS}
CHECKS = ('checks:\n  - id: hard_floor\n    metric: correctness\n    op: ">="\n'
          "    threshold: 4\n    scope: {tags: [hard]}\n")


def project(tmp_path: Path, clusters: bool = False) -> tuple[Path, dict[str, Any]]:
    goldens = tmp_path / "goldens.jsonl"
    goldens.write_text("".join(json.dumps(
        {"id": q, "query": f"question {q}", "tags": ["hard" if q in HARD else "easy"],
         **({"cluster": f"doc{i // 4}"} if clusters else {})}) + "\n"
        for i, q in enumerate(IDS)))
    header = {"goldens": {"path": str(goldens), "sha256": load_goldens(goldens).digest()}}
    return goldens, header


def saved(tmp_path: Path, name: str, header: dict[str, Any], shift: float = 0.0) -> Path:
    run = RunResult(name=name, per_query=[
        QueryResult(query_id=q, retrieved=[], metrics={"correctness": SCORES[q] + shift})
        for q in IDS])
    run.header.update(header)
    return run.save(tmp_path / f"{name}.jsonl")


def test_gate_refuses_a_tags_file_that_disagrees_with_the_golden_set(tmp_path: Path) -> None:
    _, header = project(tmp_path)
    run = saved(tmp_path, "v2", header)
    (tmp_path / "checks.yaml").write_text(CHECKS)
    plain = runner.invoke(app, ["gate", "-c", str(tmp_path / "checks.yaml"), "-r", str(run)])
    assert plain.exit_code == 1, plain.output  # mean 3.0 over the 10 hard cases
    assert "hard_floor: fail" in plain.output
    # a stale file: 6 easy cases called hard, the hard ones untagged
    stale = [q for q in IDS if q not in HARD][:6]
    (tmp_path / "stale.tsv").write_text("".join(f"{q}\thard\n" for q in stale))
    out = runner.invoke(app, ["gate", "-c", str(tmp_path / "checks.yaml"), "-r", str(run),
                              "--tags", str(tmp_path / "stale.tsv")])
    assert out.exit_code == 2, out.output
    # every case disagrees: the 6 easy ones tagged hard, the other 4 easy ones and the
    # 10 hard ones untagged in the file
    assert "the tags file disagrees with the golden set the runs were made from on 20 " \
        "of its 20 cases" in out.output, out.output
    assert "hard_floor: pass" not in out.output
    # a file that agrees (lines in another order) is used: the same verdict as without
    (tmp_path / "same.tsv").write_text("".join(
        f"{q}\t{'hard' if q in HARD else 'easy'}\n" for q in reversed(IDS)))
    same = runner.invoke(app, ["gate", "-c", str(tmp_path / "checks.yaml"), "-r", str(run),
                               "--tags", str(tmp_path / "same.tsv")])
    assert same.exit_code == 1 and "hard_floor: fail" in same.output, same.output


def test_compare_by_tag_refuses_a_tags_file_that_disagrees(tmp_path: Path) -> None:
    _, header = project(tmp_path)
    a, b = saved(tmp_path, "v1", header), saved(tmp_path, "v2", header, shift=0.5)
    one_off = {q: ("hard" if q in HARD else "easy") for q in IDS}
    one_off["q00"] = "hard"  # one case moved
    (tmp_path / "tags.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in one_off.items()))
    out = runner.invoke(app, ["compare", str(a), str(b), "--by", "tag",
                              "--tags", str(tmp_path / "tags.tsv")])
    assert out.exit_code == 2, out.output
    assert "on 1 of its 20 cases (case 'q00': [hard] in the file, [easy] in the golden " \
        "set)" in out.output, out.output


def test_tags_agree_or_are_refused(tmp_path: Path) -> None:
    goldens, header = project(tmp_path)
    golden = {q: ("hard" if q in HARD else "easy",) for q in IDS}
    assert agreed_tags(golden, [header]) == golden
    with pytest.raises(TagsError, match="on 10 of its 20 cases"):
        agreed_tags({q: t for q, t in golden.items() if q not in HARD}, [header])
    # a golden set without tags: the file is all there is
    goldens.write_text("".join(json.dumps({"id": q, "query": "x"}) + "\n" for q in IDS))
    bare = {"goldens": {"path": str(goldens), "sha256": load_goldens(goldens).digest()}}
    assert agreed_tags({"q00": ("x",)}, [bare]) == {"q00": ("x",)}
    assert agreed_tags({"q00": ("x",)}, [{}]) == {"q00": ("x",)}  # no golden set


def test_clusters_must_group_the_cases_as_the_golden_set_does(tmp_path: Path) -> None:
    _, header = project(tmp_path, clusters=True)
    golden = {q: f"doc{i // 4}" for i, q in enumerate(IDS)}
    renamed = {q: f"c-{i // 4}" for i, q in enumerate(IDS)}  # same grouping, other names
    assert agreed_clusters(renamed, [header]) == renamed
    assert agreed_clusters(golden, [header]) == golden
    moved = dict(golden, q00="doc1")  # q00 leaves q01..q03 and joins q04..q07
    # the cases whose cluster mates change: q00, its 3 old mates and its 4 new ones
    with pytest.raises(ClustersError, match=r"--clusters: the clusters file disagrees .* "
                       r"on 8 of its 20 cases \(case 'q00': cluster 'doc1' in the file, "
                       r"cluster 'doc0' in the golden set"):
        agreed_clusters(moved, [header])
    merged = {q: "one" for q in IDS}  # five clusters made one: every case's mates change
    with pytest.raises(ClustersError, match="on 20 of its 20 cases"):
        agreed_clusters(merged, [header])


def test_gate_refuses_a_clusters_file_that_disagrees(tmp_path: Path) -> None:
    _, header = project(tmp_path, clusters=True)
    run, base = saved(tmp_path, "v2", header, shift=0.5), saved(tmp_path, "v1", header)
    (tmp_path / "checks.yaml").write_text(
        "checks:\n  - id: no_drop\n    metric: correctness\n"
        "    vs_baseline: no_significant_regression\n")
    (tmp_path / "clusters.tsv").write_text("".join(f"{q}\tall\n" for q in IDS))
    out = runner.invoke(app, ["gate", "-c", str(tmp_path / "checks.yaml"), "-r", str(run),
                              "-b", str(base), "--clusters", str(tmp_path / "clusters.tsv")])
    assert out.exit_code == 2, out.output
    assert "the clusters file disagrees with the golden set" in out.output, out.output


# ---------------------------------------------------------------- what the run recorded
def _target_runs(tmp_path: Path, tags: bool = True) -> tuple[Path, Path]:
    """A golden set (q00..q09 ``hard``, the rest ``easy``) and a run answering every
    hard case wrong (exact_match 0 on the hard slice)."""
    from evalkit import CallableTarget
    from evalkit.execute.target_runner import evaluate

    goldens = tmp_path / "goldens.jsonl"
    goldens.write_text("".join(json.dumps(
        {"id": f"q{i:02d}", "query": f"question {i}", "expected": f"ans{i}",
         **({"tags": ["hard" if i < 10 else "easy"], "cluster": f"doc{i // 4}"}
            if tags else {})}) + "\n" for i in range(20)))

    def v2(case: Any) -> str:
        i = int(case.id[1:])
        return "wrong" if i < 10 else f"ans{i}"

    run = tmp_path / "v2.jsonl"
    evaluate(CallableTarget(v2, name="v2"), load_goldens(goldens), metrics=["exact_match"],
             artifact=str(run))
    return goldens, run


def _gate(tmp_path: Path, run: Path, tags: Path) -> Any:
    (tmp_path / "checks.yaml").write_text(
        "checks:\n  - id: hard_ok\n    metric: exact_match\n    op: \">=\"\n"
        "    threshold: 0.9\n    scope: {tags: [hard]}\n")
    return runner.invoke(app, ["gate", "-c", str(tmp_path / "checks.yaml"), "-r", str(run),
                               "--tags", str(tags)])


def test_a_stale_tags_file_is_refused_after_the_golden_set_is_edited_or_moved(
        tmp_path: Path) -> None:
    goldens, run = _target_runs(tmp_path)
    recorded = json.loads(run.read_text().splitlines()[0])["goldens"]
    assert recorded["case_tags"]["q00"] == ["hard"] and recorded["case_tags"]["q19"] == ["easy"]
    assert recorded["case_clusters"]["q05"] == "doc1"
    stale = tmp_path / "stale.tsv"  # q15..q19 called hard, the 10 hard cases untagged
    stale.write_text("".join(f"q{i}\thard\n" for i in range(15, 20)))
    good = tmp_path / "good.tsv"
    good.write_text("".join(f"q{i:02d}\t{'hard' if i < 10 else 'easy'}\n" for i in range(20)))
    # one case's query edited after the run, then the file moved away
    goldens.write_text(goldens.read_text().replace('"question 0"', '"question zero"'))
    for _ in ("edited", "moved"):
        out = _gate(tmp_path, run, stale)
        assert out.exit_code == 2, out.output
        assert "the tags file disagrees with the golden set the runs were made from on 20 " \
            "of its 20 cases" in out.output, out.output
        assert "hard_ok: pass" not in out.output
        agreeing = _gate(tmp_path, run, good)  # a file that agrees is used as before
        assert agreeing.exit_code == 1 and "hard_ok: fail (10/10 cases)" in agreeing.output, \
            agreeing.output
        if goldens.exists():
            goldens.rename(tmp_path / "elsewhere.jsonl")
    header = json.loads(run.read_text().splitlines()[0])
    with pytest.raises(ClustersError, match="on 20 of its 20 cases"):
        agreed_clusters({f"q{i:02d}": "one" for i in range(20)}, [header])
    mates = {f"q{i:02d}": f"c{i // 4}" for i in range(20)}
    assert agreed_clusters(mates, [header]) == mates


def test_a_run_without_tags_records_none(tmp_path: Path) -> None:
    _, run = _target_runs(tmp_path, tags=False)
    recorded = json.loads(run.read_text().splitlines()[0])["goldens"]
    assert sorted(recorded) == ["case_digests", "loader", "n_cases", "path", "sha256"]


def test_runs_that_record_no_tags_refuse_a_file_once_the_golden_set_changed(
        tmp_path: Path) -> None:
    goldens, header = project(tmp_path, clusters=True)  # a header as older runs wrote it
    golden = {q: ("hard" if q in HARD else "easy",) for q in IDS}
    mates = {q: f"doc{i // 4}" for i, q in enumerate(IDS)}
    assert agreed_tags(golden, [header]) == golden  # the file is still there: checked
    goldens.write_text(goldens.read_text().replace('"question q00"', '"question zero"'))
    for _ in ("changed", "gone"):
        with pytest.raises(TagsError, match=r"--tags: the golden set .* (changed since|is "
                           r"not there).*run the target again .* these runs record no tags"):
            agreed_tags(golden, [header])
        with pytest.raises(ClustersError, match=r"--clusters: the golden set .*these runs "
                           r"record no clusters"):
            agreed_clusters(mates, [header])
        goldens.unlink(missing_ok=True)
