"""``Comparison.write_json``: the JSON document of ``evalkit compare --json`` written one
comparison's row at a time. Its text is checked equal, character for character, to
``json.dumps(c.to_json(), indent=2, allow_nan=False)`` and a line break (what the command
printed when it built the document whole), on comparisons holding every kind of member:
several candidates and metrics, movers with query text beyond ASCII, a constant column
(an infinite standardized effect, written ``null``), slices, and no rows at all."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import evalkit
from evalkit.cli.app import app
from evalkit.comparison import Comparison
from evalkit.data.results import QueryResult, RunResult

N = 40
IDS = [f"q{i:02d}" for i in range(N)]
TAGS = {q: ["even"] if i % 2 == 0 else ["odd"] for i, q in enumerate(IDS)}
TEXTS = {q: f"Frage {i}: Größe «{i}» ✓" for i, q in enumerate(IDS)}


def run(name: str, seed: int, shift: float) -> RunResult:
    rng = np.random.default_rng(seed)
    ap = np.clip(rng.uniform(0, 1, N) + shift, 0, 1)
    ndcg = rng.uniform(0, 1, N)
    return RunResult(name=name, per_query=[
        QueryResult(q, [], {"ap": float(a), "ndcg@10": float(d), "rr": 0.5 + shift})
        for q, a, d in zip(IDS, ap, ndcg, strict=True)])


def text_of(c: Comparison) -> str:
    out = io.StringIO()
    c.write_json(out)
    return out.getvalue()


def whole(c: Comparison) -> str:
    return json.dumps(c.to_json(), indent=2, allow_nan=False) + "\n"


@pytest.fixture(scope="module")
def runs() -> list[RunResult]:
    return [run("base", 1, 0.0), run("cand", 2, 0.05), run("other", 3, -0.02)]


def test_the_text_is_the_whole_documents(runs: list[RunResult]) -> None:
    c = evalkit.compare(*runs, metrics=["ap", "ndcg@10", "rr"], n_resamples=200, top=3,
                        topics=TEXTS)
    text = text_of(c)
    assert any(r.standardized_effect is None for r in c.results)  # rr: constant
    assert '"standardized_effect": null' in text
    assert text == whole(c)
    assert json.loads(text)["comparisons"][0]["top_gains"]  # movers with their text


def test_all_pairs_and_slices_too(runs: list[RunResult]) -> None:
    c = evalkit.compare(*runs, metrics=["ap"], n_resamples=200, all_pairs=True,
                        by="tag", tags=TAGS)
    assert c.slices and len(c.results) == 3
    assert text_of(c) == whole(c)


def test_a_comparison_without_rows(runs: list[RunResult]) -> None:
    c = evalkit.compare(*runs[:2], metrics=["ap"], n_resamples=200)
    empty = dataclasses.replace(c, results=())
    assert text_of(empty) == whole(empty)
    assert json.loads(text_of(empty))["comparisons"] == []


def test_compare_format_json_prints_it(tmp_path: Path, runs: list[RunResult]) -> None:
    paths = [r.save(tmp_path / f"{r.name}.jsonl") for r in runs]
    got = CliRunner().invoke(app, ["compare", *map(str, paths), "--format", "json",
                                   "--resamples", "200"])
    assert got.exit_code == 0, got.output
    c = evalkit.compare(*paths, n_resamples=200)
    doc = json.loads(got.stdout)
    assert doc == json.loads(whole(c))
