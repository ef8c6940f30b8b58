"""Every mean a comparison shows is over the queries it pairs, not over every case a run
holds: a candidate a sequential rule stopped after 26 of 200 cases is compared with the
full baseline on those 26, and the baseline's mean, the candidate's and the difference
agree (``candidate_mean - baseline_mean == diff``) in the rows, ``to_pandas``, the JSON,
Markdown and HTML reports, the command line, each tag's slice, a clustered test and each
collection of a meta-analysis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import evalkit
from evalkit.data.cases import GoldenCase
from evalkit.data.goldens import GoldenSet
from evalkit.data.results import RunResult
from evalkit.data.targets import CallableTarget
from evalkit.execute.sequential_run import UntilDecided

N = 200


def _goldens() -> GoldenSet:
    return GoldenSet(GoldenCase(f"c{i:03d}", "q", relevant=frozenset({f"c{i:03d}"}),
                                tags=("even",) if i % 2 == 0 else ("odd",))
                     for i in range(N))


def _finds(every: int) -> CallableTarget:
    """Finds the relevant id of case i (recall@1 = 1) when i % every == 0, else 0."""
    return CallableTarget(lambda c: [c.id] if int(c.id[1:]) % every == 0 else ["x"],
                          name=f"every{every}")


@pytest.fixture(scope="module")
def stopped(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(baseline, candidate)`` artifacts: the baseline finds every third case (67 of 200,
    mean 0.335); the candidate finds every case and was stopped by the rule (seed 3)."""
    folder = tmp_path_factory.mktemp("stopped")
    base = evalkit.evaluate(_finds(3), _goldens(), ["recall@1"], progress=False).save(
        folder / "base.jsonl")
    cand = folder / "cand.jsonl"
    run = evalkit.evaluate(_finds(1), _goldens(), ["recall@1"], progress=False,
                           max_concurrency=1, artifact=cand,
                           until_decided=UntilDecided(base, "recall@1", seed=3))
    assert run.header["sequential"]["stopped_early"] is True
    return base, cand


def _held(cand: Path) -> list[int]:
    return sorted(int(q[1:]) for q in RunResult.load(cand).ids())


def test_the_baseline_mean_is_over_the_paired_cases(stopped: tuple[Path, Path]) -> None:
    base, cand = stopped
    held = _held(cand)
    assert len(held) == 26
    found = [i for i in held if i % 3 == 0]
    assert len(found) == 10  # baseline: 10 of the 26 held cases (67 of all 200)
    assert RunResult.load(base).mean("recall@1") == 67 / 200  # not what compare shows
    comp = evalkit.compare(base, cand, metrics=["recall@1"])
    (row,) = comp.results
    assert row.n_queries == 26
    assert row.baseline_mean == pytest.approx(10 / 26, abs=1e-15)
    assert row.candidate_mean == 1.0
    assert row.diff == pytest.approx(16 / 26, abs=1e-15)
    assert row.candidate_mean - row.baseline_mean == pytest.approx(row.diff, abs=1e-15)
    frame = comp.to_pandas()
    assert frame["baseline_mean"].tolist() == pytest.approx([10 / 26], abs=1e-15)
    doc = comp.to_json()
    assert doc["comparisons"][0]["baseline_mean"] == pytest.approx(10 / 26, abs=1e-15)
    from evalkit.report.markdown import render_markdown

    assert "0.3846" in render_markdown(comp.to_report())
    assert "0.3846" in comp.to_html() and "0.3350" not in comp.to_html()
    # the stopped run as the baseline: its own mean is over the cases it holds
    (swapped,) = evalkit.compare(cand, base, metrics=["recall@1"]).results
    assert (swapped.baseline_mean, swapped.candidate_mean) == pytest.approx((1.0, 10 / 26))


def test_the_command_line_table_adds_up(stopped: tuple[Path, Path]) -> None:
    from evalkit.cli.app import app

    base, cand = stopped
    res = CliRunner().invoke(app, ["compare", str(base), str(cand), "--json"])
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)["comparisons"]
    assert row["baseline_mean"] == pytest.approx(10 / 26, abs=1e-15)
    res = CliRunner().invoke(app, ["compare", str(base), str(cand)])
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("recall@1"))
    assert line.split()[1:4] == ["0.3846", "1.0000", "+0.6154"]


def test_each_slice_and_a_clustered_test_show_paired_means(stopped: tuple[Path, Path]
                                                           ) -> None:
    base, cand = stopped
    held = _held(cand)
    tags = {f"c{i:03d}": ["even" if i % 2 == 0 else "odd"] for i in range(N)}
    comp = evalkit.compare(base, cand, metrics=["recall@1"], by="tag", tags=tags)
    assert {e.slice for e in comp.slices} == {"even", "odd"}
    for effect in comp.slices:
        parity = 0 if effect.slice == "even" else 1
        ids = [i for i in held if i % 2 == parity]
        assert effect.n_queries == len(ids)
        expected = sum(i % 3 == 0 for i in ids) / len(ids)
        assert effect.baseline_mean == pytest.approx(expected, abs=1e-15)
        assert effect.candidate_mean - effect.baseline_mean == pytest.approx(effect.diff)
    clusters = {f"c{i:03d}": str(i % 5) for i in range(N)}
    (row,) = evalkit.compare(base, cand, metrics=["recall@1"], clusters=clusters).results
    assert row.baseline_mean == pytest.approx(10 / 26, abs=1e-15)


def test_each_collection_of_a_meta_analysis_shows_paired_means(
        stopped: tuple[Path, Path]) -> None:
    from evalkit.comparison.meta_compute import meta_compare

    base, cand = stopped
    full = evalkit.evaluate(_finds(2), _goldens(), ["recall@1"], progress=False)
    # collection "stopped": 10 of the 26 held cases found by the baseline, all by the
    # candidate; collection "full": every third against every second case of all 200
    meta = meta_compare({"stopped": (base, cand),
                         "full": (RunResult.load(base), full)}, metrics=["recall@1"])
    (pooled,) = meta.results
    by_name = {c.collection: c for c in pooled.collections}
    assert by_name["stopped"].n_queries == 26
    assert by_name["stopped"].baseline_mean == pytest.approx(10 / 26, abs=1e-15)
    assert by_name["stopped"].candidate_mean == 1.0
    assert by_name["full"].baseline_mean == pytest.approx(67 / 200, abs=1e-15)
    assert by_name["full"].candidate_mean == pytest.approx(100 / 200, abs=1e-15)
