"""Cross-check with pytrec_eval (trec_eval 9.0.8 in C) on seeded synthetic graded data.

The data comes from the benchmark's generator (benchmarks/bench_trec_eval.py), small. Its
scores are chosen to stay distinct in float32, where pytrec_eval ranks (see
docs/metrics.md), so the two must agree to rounding error on every shared measure.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from evalkit import evaluate_run
from evalkit.plugins.default import resolve

pytrec_eval = pytest.importorskip("pytrec_eval")

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_trec_eval.py"
MEASURES = {
    "ap": "map", "ndcg": "ndcg", "ndcg@5": "ndcg_cut_5", "ndcg@10": "ndcg_cut_10",
    "P@5": "P_5", "P@10": "P_10", "recall@10": "recall_10", "recall@100": "recall_100",
    "rr": "recip_rank", "r_precision": "Rprec", "success@1": "success_1",
    "success@5": "success_5", "ap@10": "map_cut_10",
}
COUNTS = {"num_ret": "num_ret", "num_rel": "num_rel", "num_rel_ret": "num_rel_ret"}
PYTREC = {"map", "ndcg", "ndcg_cut.5,10", "P.5,10", "recall.10,100", "recip_rank", "Rprec",
          "success.1,5", "map_cut.10", "num_ret", "num_rel", "num_rel_ret"}


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_trec_eval", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_trec_eval", module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not BENCH.is_file(), reason="benchmarks/ is not present")
@pytest.mark.parametrize(("shuffle", "level"), [(False, 1), (True, 1), (False, 2)])
def test_agrees_with_pytrec_eval(tmp_path: Path, shuffle: bool, level: int) -> None:
    run_path, qrels_path = _bench().generate(tmp_path, 25, 300, shuffle=shuffle)
    result = evaluate_run(run_path, qrels_path, list(MEASURES), relevance_level=level)
    with qrels_path.open() as fh:
        qrels = pytrec_eval.parse_qrel(fh)
    with run_path.open() as fh:
        run = pytrec_eval.parse_run(fh)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, PYTREC, relevance_level=level).evaluate(run)
    assert set(theirs) == set(result.ids())
    compared = 0
    for row in result.per_query:
        for name, trec in MEASURES.items():
            assert row.metrics[resolve(name).name] == pytest.approx(
                theirs[row.query_id][trec], abs=1e-9), (row.query_id, name)
            compared += 1
        for name, trec in COUNTS.items():
            assert row.counts[name] == theirs[row.query_id][trec]
    assert compared == 25 * len(MEASURES)
