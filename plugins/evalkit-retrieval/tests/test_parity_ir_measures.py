"""The ir_measures names evalkit accepts give ir_measures' own values where ir_measures
computes them offline (its pytrec_eval, judged and gdeval providers; dev extra). pytrec_eval
is trec_eval 9.0.8, whose IPrec rounds differently from 10.0 (docs/metrics.md), so IPrec is
compared at recall levels where both agree on this run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalkit import evaluate_run
from evalkit.plugins.default import resolve

ir_measures = pytest.importorskip("ir_measures")

VASWANI = Path(__file__).resolve().parents[3] / "examples" / "vaswani" / "data"
NAMES = ["AP", "P@5", "P(rel=1)@10", "AP(rel=1)", "R@1000", "nDCG@10", "RR", "RR(rel=1)",
         "Bpref", "infAP", "SetP", "SetR", "SetF", "Rprec", "NumRet", "NumRel", "NumRelRet",
         "Success@10", "Judged@10", "IPrec@0.0", "IPrec@1.0"]
GDEVAL = ["ERR@20", "nDCG(dcg='exp-log2')@20"]


def _runs() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    from evalkit_retrieval.trec import load_qrels, load_run

    qrels = load_qrels(VASWANI / "qrels")
    ranked = load_run(VASWANI / "runs" / "run.vaswani.bm25.txt").rankings
    # distinct scores in trec_eval's order: ir_measures' providers break ties their own way
    run = {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in ranked.items()}
    return qrels, run


@pytest.mark.parametrize("name", NAMES + GDEVAL)
def test_values_agree_with_ir_measures(name: str) -> None:
    if name in GDEVAL and shutil.which("perl") is None:
        pytest.skip("gdeval needs perl")
    qrels, run = _runs()
    measure = ir_measures.parse_measure(name)
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    ours = evaluate_run(run, qrels, [name], missing="skip")
    canonical = resolve(name).name
    values = {r.query_id: float({**r.metrics, **r.counts}[canonical]) for r in ours.per_query}
    assert theirs
    for qid, value in theirs.items():
        assert values[qid] == pytest.approx(value, abs=1e-4 if name in GDEVAL else 1e-9), qid
