"""Run fusion (:mod:`evalkit_retrieval.fusion`, ``evalkit fuse``) against ranx's ``fuse``.

The expected values are what ranx 0.3.21 produced on three small Vaswani runs (the bundled
Terrier BM25 run and the example's BM25 and TF-IDF, cut to 20 documents on 10 queries
without equal scores): ``data/fusion/ranx_fuse.json``, made by
``data/fusion/make_ranx_fuse.py`` (the runs by ``data/fusion/make_runs.py``). Every
fused document's score agrees to 1e-9 and the ranking is ranx's, documents ranx scores
within 1e-9 of each other counting as tied (evalkit orders those by id descending, ranx by
an unstable sort). The small cases below are checked by hand.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest
from evalkit_retrieval import fuse
from evalkit_retrieval.fusion import FUSION_METHODS, FUSION_NORMS, FusionError
from evalkit_retrieval.trec import load_run_scores
from typer.testing import CliRunner

from evalkit.cli.app import app

DATA = Path(__file__).parent / "data" / "fusion"
REFERENCE: dict[str, Any] = json.loads((DATA / "ranx_fuse.json").read_text())
RUNS = [DATA / name for name in REFERENCE["runs"]]


def _options(case: str) -> dict[str, Any]:
    method, param = case.split("/")
    if method == "rrf":
        return {"method": "rrf", "rrf_k": float(param.removeprefix("k="))}
    weights = REFERENCE["weights"] if method == "wsum" else None
    return {"method": method, "norm": param, "weights": weights}


def _assert_same_fusion(ours: dict[str, list[tuple[str, float]]],
                        theirs: dict[str, list[list[Any]]]) -> None:
    assert list(ours) == sorted(theirs, key=int)
    for qid, ranked in ours.items():
        expected = {d: s for d, s in theirs[qid]}
        assert {d for d, _ in ranked} == set(expected), qid
        for d, s in ranked:
            assert s == pytest.approx(expected[d], abs=1e-9, rel=0), (qid, d)
        # the same ranking: each document scored (by ranx) no lower than the next, bar ties
        for (a, _), (b, _) in itertools.pairwise(ranked):
            assert expected[a] >= expected[b] - 1e-9, (qid, a, b)


def test_every_method_and_normalisation_is_checked() -> None:
    cases = {c.split("/")[0] for c in REFERENCE["cases"]}
    assert cases == set(FUSION_METHODS)
    norms = {c.split("/")[1] for c in REFERENCE["cases"] if not c.startswith("rrf")}
    assert norms == set(FUSION_NORMS)


@pytest.mark.parametrize("case", sorted(REFERENCE["cases"]))
def test_fuse_agrees_with_ranx(case: str) -> None:
    fused = fuse(RUNS, **_options(case))
    _assert_same_fusion(fused.rankings, REFERENCE["cases"][case])


def test_cli_writes_the_fused_run(tmp_path: Path) -> None:
    out = tmp_path / "fused.run.gz"
    result = CliRunner().invoke(app, [
        "fuse", *map(str, RUNS), "--method", "wsum", "--norm", "zmuv",
        "--weights", ",".join(map(str, REFERENCE["weights"])), "-o", str(out),
        "--tag", "mix"])
    assert result.exit_code == 0, result.output
    assert "10 queries" in result.stderr
    lines = gzip.decompress(out.read_bytes()).decode().splitlines()
    first = lines[0].split()
    assert (first[0], first[3], first[5]) == ("3", "1", "mix")
    read = load_run_scores(out)
    assert read.name == "mix"
    ours = {q: list(zip(*docs, strict=True)) for q, docs in read.queries.items()}
    _assert_same_fusion(ours, REFERENCE["cases"]["wsum/zmuv"])


def test_cli_refuses_an_input_or_existing_output_and_creates_folders(tmp_path: Path) -> None:
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_bytes(RUNS[0].read_bytes())
    second.write_bytes(RUNS[1].read_bytes())
    before = first.read_bytes()
    runs = [str(first), str(second), "--method", "rrf"]
    over_input = CliRunner().invoke(app, ["fuse", *runs, "-o", str(first), "--overwrite"])
    assert over_input.exit_code == 2, over_input.output
    assert "is also an input of this command" in over_input.stderr
    assert first.read_bytes() == before
    out = tmp_path / "new" / "folder" / "fused.txt"
    made = CliRunner().invoke(app, ["fuse", *runs, "-o", str(out)])
    assert made.exit_code == 0, made.output
    written = out.read_bytes()
    out.write_text("kept\n")
    again = CliRunner().invoke(app, ["fuse", *runs, "-o", str(out)])
    assert again.exit_code == 2, again.output
    assert f"-o {out}: already exists; pass --overwrite" in again.stderr
    assert out.read_text() == "kept\n"
    replaced = CliRunner().invoke(app, ["fuse", *runs, "-o", str(out), "--overwrite"])
    assert replaced.exit_code == 0, replaced.output
    assert out.read_bytes() == written


A = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0}}
B = {"q1": {"b": 10.0, "d": 5.0}, "q2": {"x": 2.0, "y": 1.0}}


def test_small_case_by_hand() -> None:
    # min-max: A q1 a=1, b=.5, c=0; B q1 b=1, d=0. combmnz: b = (0.5 + 1) * 2 = 3
    fused = fuse([A, B], method="combmnz")
    assert fused.rankings["q1"] == [("b", 3.0), ("a", 1.0), ("d", 0.0), ("c", 0.0)]
    # combmin over the runs that retrieved it; ties (d, c at 0) by id descending
    assert fuse([A, B], method="combmin").rankings["q1"][0] == ("a", 1.0)
    # rrf, k = 1: b = 1/3 + 1/2, a = 1/2, d = 1/3, c = 1/4
    rrf = fuse([A, B], method="rrf", rrf_k=1).rankings["q1"]
    assert [d for d, _ in rrf] == ["b", "a", "d", "c"]
    assert rrf[0][1] == pytest.approx(1 / 3 + 1 / 2)
    # borda over 4 candidates: A: a=1, b=.75, c=.5, d=0.5-(3-1)/8=.25; B: b=1, d=.75,
    # a=c=0.5-(2-1)/8=.375. combsum: b=1.75, a=1.375, d=1.0, c=.875
    borda = fuse([A, B], method="combsum", norm="borda").scores()["q1"]
    assert borda == pytest.approx({"b": 1.75, "a": 1.375, "d": 1.0, "c": 0.875})
    # zmuv of a single score: 0 (ranx's 1e-9 guard on the standard deviation)
    z = fuse([A, B], method="combsum", norm="zmuv").scores()["q2"]
    assert z == pytest.approx({"x": 0.0 + 1.0, "y": -1.0})
    assert fuse([A, B], method="combsum", depth=1).rankings["q1"] == [("b", 1.5)]


def test_fused_text_reads_back_exactly(tmp_path: Path) -> None:
    fused = fuse([A, B], method="wsum", norm="none", weights=[1 / 3, 0.7])
    path = fused.save(tmp_path / "f.run")
    assert path.read_text().splitlines()[0] == f"q1 Q0 b 1 {2 / 3 + 7.0!r} wsum"
    read = load_run_scores(path)
    assert {q: dict(zip(*r, strict=True)) for q, r in read.queries.items()} == fused.scores()


def test_missing_query_refused_as_ranx_or_fused_as_empty() -> None:
    lacking = {"q1": {"a": 1.0}}
    with pytest.raises(FusionError, match=r"run 2 has no ranking for 1 query .*\(q2\)"):
        fuse([A, lacking], method="combsum")
    fused = fuse([A, lacking], method="combmnz", norm="none", missing="empty")
    assert fused.scores()["q2"] == {"x": 1.0}
    assert fused.scores()["q1"]["a"] == 8.0
    # borda, one candidate: A gives x 1 - 0/1, the empty run 0.5 - (0 - 1) / 2
    assert math.isclose(fuse([A, lacking], method="combsum", norm="borda",
                             missing="empty").scores()["q2"]["x"], 1.0 + 1.0)


@pytest.mark.parametrize(("options", "message"), [
    ({"method": "comb"}, "unknown fusion method 'comb'"),
    ({"method": "combsum", "norm": "z"}, "unknown normalisation 'z'"),
    ({"method": "rrf", "norm": "min-max"}, "rrf fuses ranks"),
    ({"method": "wsum"}, "wsum needs one weight per run"),
    ({"method": "wsum", "weights": [1.0]}, "1 weights for 2 runs"),
    ({"method": "combsum", "weights": [1.0, 2.0]}, "weights apply to wsum only"),
    ({"method": "rrf", "rrf_k": 0}, "positive"),
    ({"method": "combsum", "rrf_k": 5}, "rrf's k applies to rrf only"),
    ({"method": "wsum", "weights": [1.0, -0.5]}, "weights must be finite numbers >= 0"),
    ({"method": "wsum", "weights": [0.0, 0.0]}, "not all 0"),
    ({"method": "wsum", "weights": [1.0, math.nan]}, "weights must be finite"),
])
def test_bad_options_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(FusionError, match=message):
        fuse([A, B], **options)


def test_cli_errors_name_the_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 a 1 x t\n")
    result = CliRunner().invoke(app, ["fuse", str(RUNS[0]), str(bad), "--method", "rrf",
                                      "-o", str(tmp_path / "o.run")])
    assert result.exit_code == 2
    assert f"{bad}:1" in result.stderr and "Traceback" not in result.output
    result = CliRunner().invoke(app, ["fuse", *map(str, RUNS[:2]), "--method", "wsum",
                                      "--weights", "1,a", "-o", str(tmp_path / "o.run")])
    assert result.exit_code == 2 and "--weights '1,a'" in result.stderr
    artifact = tmp_path / "run.jsonl"
    artifact.write_text('{"kind": "header", "schema": 2}\n')
    result = CliRunner().invoke(app, ["fuse", str(RUNS[0]), str(artifact), "--method", "rrf",
                                      "-o", str(tmp_path / "o.run")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{artifact}:1: the file is JSON, not whitespace-separated TREC fields" \
        in result.stderr


def test_plugins_list_names_the_provider_of_fuse_and_ranx_measures() -> None:
    result = CliRunner().invoke(app, ["plugins", "list", "--json"])
    assert result.exit_code == 0, result.output
    names = {(n["name"], n["kind"]): n for n in json.loads(result.stdout)["names"]}
    for key in [("fuse", "command"), ("f1@k", "metric"), ("dcg@k", "metric"),
                ("hits@k", "metric")]:
        assert names[key]["distribution"] == "evalkit-retrieval", key
    assert "dcg_burges@k" in names[("dcg@k", "metric")]["aliases"]


def test_the_docs_snippets_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    """docs/fusion.md's commands and Python, on two runs where the README's main job
    writes them (examples/vaswani/out/ stands for ``tmp_path``)."""
    import re
    import shlex

    from typer.testing import CliRunner

    from evalkit.cli.app import app

    repo = Path(__file__).resolve().parents[3]
    doc = (repo / "docs" / "fusion.md").read_text(encoding="utf-8")
    out = tmp_path / "examples" / "vaswani" / "out"
    out.mkdir(parents=True)
    bm25 = (repo / "examples" / "vaswani" / "data" / "runs" / "run.vaswani.bm25.txt")
    lines = bm25.read_text().splitlines()
    (out / "run.bm25.txt").write_text("\n".join(lines) + "\n")
    other = [f"{q} Q0 {d} {r} {1 / float(r):.6f} tfidf" for q, _, d, r, *_ in
             (ln.split() for ln in lines)]  # another order of the same documents
    (out / "run.tfidf.txt").write_text("\n".join(other) + "\n")
    bash = re.findall(r"```bash\n(.*?)```", doc, re.S)[0].splitlines()
    monkeypatch.chdir(tmp_path)
    assert bash[0] == "cd examples/vaswani/out"
    monkeypatch.chdir(out)
    for command in bash[1:]:
        res = CliRunner().invoke(app, shlex.split(command)[1:])
        assert res.exit_code == 0, (command, res.output)
        assert (out / shlex.split(command)[-1]).stat().st_size > 0
    monkeypatch.chdir(tmp_path)
    code = next(b for b in re.findall(r"```python\n(.*?)```", doc, re.S) if "fuse(" in b)
    exec(compile(code, "docs/fusion.md", "exec"), {})
    assert (out / "run.combsum.txt").stat().st_size > 0


def test_an_infinite_score_is_refused_where_scores_are_combined_and_ranked_otherwise() -> None:
    """An infinite score ranks (``evalkit eval`` takes it, as trec_eval does) but has no
    min-max value; rrf and the rank norm read only its rank. By hand, rrf with k = 60:
    run 1 ranks b (inf), a; run 2 ranks a, b: each document 1/61 + 1/62, tied, so ids
    descending: b, a."""
    one = {"q": {"a": 1.0, "b": float("inf")}}
    two = {"q": {"a": 2.0, "b": 1.0}}
    with pytest.raises(FusionError, match=r"run 1: query 'q', document 'b' has the score "
                                          r"inf, which ranks .* no value under combsum"):
        fuse([one, two], method="combsum")
    fused = fuse([one, two], method="rrf").rankings["q"]
    assert [d for d, _ in fused] == ["b", "a"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert [d for d, _ in fuse([one, two], method="combsum", norm="rank").rankings["q"]] \
        == ["b", "a"]
