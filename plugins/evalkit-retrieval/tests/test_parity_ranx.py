"""The measures ranx computes and trec_eval lacks (f1@k, dcg@k, dcg_burges@k, hits@k) give
ranx's own values, query by query, to 1e-12.

ranx 0.3.21 produced the values (``data/ranx_measures/ranx_measures.json``, made by
``data/ranx_measures/make_ranx_measures.py``; ranx is not a test dependency) on the Vaswani
BM25 run (binary qrels) and on the TREC 2019 Deep Learning passage qrels (grades 0-3) with a
synthetic run; both runs have distinct scores, as ranx orders equal scores its own way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit import evaluate_run
from evalkit.plugins.default import resolve

DATA = Path(__file__).parent / "data" / "ranx_measures"
VASWANI = Path(__file__).resolve().parents[3] / "examples" / "vaswani" / "data"
REFERENCE = json.loads((DATA / "ranx_measures.json").read_text())


def _ours(name: str) -> str:
    """evalkit's spelling of a ranx metric (``f1@10-l2`` is ``f1(rel=2)@10``)."""
    base, _, level = name.partition("-l")
    if not level:
        return base
    measure, k = base.split("@")
    return f"{measure}(rel={level})@{k}"


@pytest.fixture(scope="module")
def distinct_vaswani_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from evalkit_retrieval.trec import load_run

    ranked = load_run(VASWANI / "runs" / "run.vaswani.bm25.txt").rankings
    path = tmp_path_factory.mktemp("vaswani") / "bm25.distinct.run"
    path.write_text("".join(f"{q} Q0 {d} {i} {len(docs) - i + 1} bm25\n"
                            for q, docs in ranked.items()
                            for i, d in enumerate(docs, start=1)))
    return path


@pytest.mark.parametrize("collection", ["vaswani", "dl19"])
def test_per_query_values_agree_with_ranx(collection: str, distinct_vaswani_run: Path) -> None:
    expected: dict[str, dict[str, float]] = REFERENCE[collection]
    if collection == "vaswani":
        run, qrels = distinct_vaswani_run, VASWANI / "qrels"
    else:
        run, qrels = DATA / "run.dl19-synthetic.txt", DATA / "qrels.dl19-passage.txt.gz"
    result = evaluate_run(run, qrels, [_ours(m) for m in expected], missing="zero")
    for name, values in expected.items():
        ours = result.scores(resolve(_ours(name)).name)
        assert set(ours) == set(values), name
        for qid, value in values.items():
            assert ours[qid] == pytest.approx(value, rel=1e-12, abs=1e-12), (name, qid)


def test_graded_collection_tells_the_gains_apart() -> None:
    """On DL19 the two DCGs differ (grades 2 and 3), on Vaswani's binary qrels they agree."""
    dl19 = REFERENCE["dl19"]
    assert any(dl19["dcg@10"][q] != dl19["dcg_burges@10"][q] for q in dl19["dcg@10"])
    vaswani = REFERENCE["vaswani"]
    assert vaswani["dcg@10"] == vaswani["dcg_burges@10"]
