"""ir_measures' and trec_eval's names resolve to stable canonical names, which round-trip
through artifacts; rel= overrides the run's level; run() refuses rel= above 1."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from evalkit import RunResult, evaluate_run
from evalkit.core.registry import RegistryError
from evalkit.execute.run_retriever import run
from evalkit.plugins.default import resolve

DATA = Path(__file__).parent / "data"
NAMES = {
    "AP": "ap", "P@5": "precision@5", "P(rel=2)@5": "precision(rel=2)@5",
    "AP(rel=2)": "ap(rel=2)", "R@1000": "recall@1000", "nDCG@10": "ndcg@10",
    "nDCG(dcg=exp-log2)@10": "ndcg(dcg=exp-log2)@10",
    "nDCG(dcg='exp-log2')@10": "ndcg(dcg=exp-log2)@10", "RR": "rr", "RR(rel=2)": "rr(rel=2)",
    "Judged@10": "judged@10", "ERR@20": "err@20", "RBP(p=0.8)": "rbp(p=0.8)",
    "RBP": "rbp(p=0.8)", "rbp": "rbp", "Bpref": "bpref", "infAP": "infap",
    "IPrec@0.5": "iprec@0.5", "SetP": "set_p", "SetR": "set_recall", "SetF": "set_f",
    "Rprec": "r_precision", "NumRet": "num_ret", "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret", "NumRet(rel=2)": "num_rel_ret(rel=2)",
    "SetP(relative=True)": "set_relative_p",
    "P_10": "precision@10", "P.10": "precision@10", "ndcg_cut_10": "ndcg@10",
    "ndcg_cut.10": "ndcg@10", "recip_rank": "rr", "map_cut_100": "ap@100",
    "iprec_at_recall_0.50": "iprec@0.5", "recall_1000": "recall@1000",
    "Rprec_mult_0.20": "rprec_mult@0.2", "unj_5": "unj@5", "gm_map": "gm_map",
    "nDCG(gains={1:3,2:9})": "ndcg(gains={1:3,2:9})",
}


@pytest.mark.parametrize(("given", "canonical"), sorted(NAMES.items()))
def test_names_resolve_to_canonical_names(given: str, canonical: str) -> None:
    spec = resolve(given)
    assert spec.name == canonical
    assert resolve(canonical).name == canonical  # canonical names resolve to themselves


def test_counts_stay_counts() -> None:
    for name in ("NumRet", "NumRel", "NumRelRet", "rbp_resid", "num_nonrel_judged_ret"):
        assert getattr(resolve(name), "kind", None) == "count"


@pytest.mark.parametrize("bad", ["P(rel=0)@5", "P(foo=1)@5", "AP(rel=x)", "P", "RBP(p=2)",
                                 "ap(", "nDCG(dcg=cube)@10"])
def test_bad_names_are_refused_with_a_reason(bad: str) -> None:
    with pytest.raises(RegistryError):
        resolve(bad)


def test_rel_overrides_the_run_level_and_round_trips(tmp_path: Path) -> None:
    result = evaluate_run(DATA / "results.test", DATA / "qrels.rel_level",
                          ["P(rel=2)@10", "P@10"], relevance_level=1)
    level2 = evaluate_run(DATA / "results.test", DATA / "qrels.rel_level", ["P@10"],
                          relevance_level=2)
    assert result.scores("P(rel=2)@10") == level2.scores("P@10")
    assert result.scores("precision@10") != level2.scores("P@10")
    saved = result.save(tmp_path / "run.jsonl")
    back = RunResult.load(saved)
    assert back.metric_names() == ["precision(rel=2)@10", "precision@10"]
    assert back.scores("P(rel=2)@10") == result.scores("precision(rel=2)@10")


class _Q:
    def __init__(self, qid: str) -> None:
        self.id = qid


def test_seed_run_refuses_rel_above_one() -> None:
    with pytest.raises(ValueError, match="rel=2 would count nothing as relevant"):
        run("x", lambda q: ["a"], [_Q("1")], {"1": {"a"}}, ["P(rel=2)@5"])
    assert run("x", lambda q: ["a"], [_Q("1")], {"1": {"a"}}, ["P(rel=1)@1"]).mean(
        "P(rel=1)@1") == 1.0


def test_missing_refuse_stops_like_trec_eval_10() -> None:
    with pytest.raises(ValueError, match="'302'"):
        evaluate_run(DATA / "results.trunc", DATA / "qrels.test", ["ap"], missing="refuse")


@pytest.mark.parametrize("asked", ["mrr,num_q,num_rel", "runid,map", "map,relstring.5"])
def test_a_layout_line_beside_measures_is_shown_or_refused(asked: str) -> None:
    """trec_eval's runid, num_q and relstring are lines of the trec format's layout: the
    table and JSON refuse them by name (they used to drop them without a word, as they
    refuse them named alone); --format trec prints them; compare refuses them."""
    from typer.testing import CliRunner

    from evalkit.cli.app import app

    run_file, qrels = str(DATA / "results.test"), str(DATA / "qrels.test")
    line = next(p for p in asked.split(",") if p in ("runid", "num_q")
                or p.startswith("relstring"))
    cli = CliRunner()
    for fmt in ("table", "json"):
        out = cli.invoke(app, ["eval", run_file, "--qrels", qrels, "-m", asked, "-f", fmt])
        assert out.exit_code == 2, out.stdout
        assert f"-m {line}: a line of the trec format's layout" in out.stderr
        assert "--format trec" in out.stderr
    both = cli.invoke(app, ["eval", run_file, run_file, "--qrels", qrels, "-m", asked])
    assert both.exit_code == 2 and f"-m {line}: a line" in both.stderr
    shown = cli.invoke(app, ["eval", run_file, "--qrels", qrels, "-m", asked, "-f", "trec",
                             "-q"])  # relstring is a per-query line (trec_eval -q)
    assert shown.exit_code == 0, shown.stderr
    printed = {ln.split()[0] for ln in shown.stdout.splitlines()}
    assert line.replace(".", "_") in printed, printed
    compared = cli.invoke(app, ["compare", run_file, run_file, "--qrels", qrels, "-m", asked])
    assert compared.exit_code == 2
    assert f"-m {line}: a line of the trec format's layout" in compared.stderr
    nickname = cli.invoke(app, ["eval", run_file, "--qrels", qrels, "-m", "official"])
    assert nickname.exit_code == 0, nickname.stderr  # a nickname names no line itself


# ranx 0.3.21's spellings. The values below are by hand (and equal ranx 0.3.21's
# evaluate() on the same qrels and run): qrels q: a=2, b=1, c=0, d=3; the run ranks
# b, c, a, d.
RANX_QRELS = {"q": {"a": 2, "b": 1, "c": 0, "d": 3}}
RANX_RUN = {"q": {"b": 4.0, "c": 3.0, "a": 2.0, "d": 1.0}}
_L2 = math.log2
RANX_VALUES = {
    "precision@2-l2": ("precision(rel=2)@2", 0.0),  # b, c: none labelled >= 2
    "precision@4-l2": ("precision(rel=2)@4", 0.5),  # a, d
    "mrr@10-l2": ("rr(rel=2)@10", 1 / 3),  # a, at rank 3
    "map-l2": ("ap(rel=2)", (1 / 3 + 2 / 4) / 2),
    # labels below 2 gain nothing: DCG = 2/log2(4) + 3/log2(5); ideal d, a
    "ndcg@4-l2": ("ndcg(gains={1:0})@4", (2 / _L2(4) + 3 / _L2(5)) / (3 + 2 / _L2(3))),
    "ndcg@4-l1": ("ndcg@4", (1 + 2 / _L2(4) + 3 / _L2(5))
                  / (3 + 2 / _L2(3) + 1 / _L2(4))),
    # gain 2**label - 1: b 1, a 3, d 7; ideal d, a, b
    "ndcg_burges@4": ("ndcg(dcg=exp-log2)@4", (1 + 3 / 2 + 7 / _L2(5))
                      / (7 + 3 / _L2(3) + 1 / 2)),
    "ndcg_burges": ("ndcg(dcg=exp-log2)", (1 + 3 / 2 + 7 / _L2(5))
                    / (7 + 3 / _L2(3) + 1 / 2)),
    "r-precision": ("r_precision", 2 / 3),  # R = 3 (a, b, d); b, c, a: 2 relevant
}


@pytest.mark.parametrize("spelling", sorted(RANX_VALUES))
def test_ranx_spellings_name_our_measures_with_ranx_values(spelling: str) -> None:
    canonical, value = RANX_VALUES[spelling]
    assert resolve(spelling).name == canonical
    got = evaluate_run(RANX_RUN, RANX_QRELS, [spelling]).means()
    assert got[canonical] == pytest.approx(value, abs=1e-12)


def test_ranx_level_suffix_on_exponential_gains_is_refused_saying_why() -> None:
    with pytest.raises(RegistryError, match=r"-l2 counts labels below 2 as not relevant"):
        resolve("ndcg_burges@10-l2")


def test_a_spelling_matched_only_ignoring_case_is_noted_when_its_twins_differ() -> None:
    from evalkit.execute.measure_args import case_notes

    notes = case_notes(["rbp", "RBP", "Rbp"])
    assert len(notes) == 1
    assert notes[0].startswith("note: 'Rbp' is no spelling of its own; matched ignoring "
                               "case it is rbp, while 'RBP' is rbp(p=0.8), 'rbp' is rbp")
    assert case_notes(["rbp", "RBP", "map", "MAP", "mAp", "ndcg@10"]) == []
