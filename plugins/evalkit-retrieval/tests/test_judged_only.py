"""Judged-only evaluation: trec_eval's ``-J`` (``evalkit eval -J``) and ir_measures'
``judged_only=True`` measure parameter, over condensed lists (Sakai, SIGIR 2007).

The expected outputs in ``data/judged_only/`` were printed by trec_eval 10.0
(``trec_eval -J -m all_trec -q ...``) and are made, with the small DL19 and SciFact runs
they score, by ``data/judged_only/make.py`` (the commands are in it). The comparison is
byte for byte, except where trec_eval prints ``-nan``: a query left with no judged
document divides 0 by 0 in iprec_at_recall and 11pt_avg (m_iprec_at_recall.c); evalkit
gives such a query 0 there, as trec_eval does for the same query without ``-J``
(docs/metrics.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit import evaluate_run
from evalkit.cli.app import app

DATA = Path(__file__).parent / "data"
J = DATA / "judged_only"

CASES = {
    # expected file: (qrels, run, extra evalkit eval options)
    "te.dl.txt": (J / "dl.qrels", J / "dl.run", []),
    "te.dl.l2.M20.txt": (J / "dl.qrels", J / "dl.run", ["-l", "2", "-M", "20"]),
    "te.sf.txt": (J / "sf.qrels", J / "sf.run", []),
    "te.test.txt": (DATA / "qrels.test", DATA / "results.test", []),
    "te.rel_level.l2.txt": (DATA / "qrels.rel_level", DATA / "results.test", ["-l", "2"]),
    "te.trunc.c.M100.txt": (DATA / "qrels.test", DATA / "results.trunc", ["-c", "-M", "100"]),
}


def evalkit_eval(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["eval", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("expected_file", sorted(CASES))
def test_J_prints_what_trec_eval_J_prints(expected_file: str) -> None:
    qrels, run, options = CASES[expected_file]
    code, out, err = evalkit_eval(str(run), "--qrels", str(qrels), "-J", "-f", "trec",
                                  "-m", "all_trec", "-q", *options)
    assert code == 0, err
    expected = (J / expected_file).read_text().splitlines()
    ours = out.splitlines()
    assert len(ours) == len(expected)
    nan_measures = set()
    for mine, theirs in zip(ours, expected, strict=True):
        if theirs.endswith("-nan"):
            measure, qid, _ = theirs.split("\t")
            nan_measures.add(measure)
            assert mine.startswith(f"{measure}\t{qid}\t")
            if qid != "all":
                assert mine.endswith("\t0.0000")
        else:
            assert mine == theirs
    assert nan_measures <= {"iprec_at_recall_0.00  ", "11pt_avg              "}


def test_nan_lines_are_only_where_no_judged_document_is_ranked() -> None:
    # results.trunc has no topic 302; under -c it is scored with an empty ranking
    nan = [ln for ln in (J / "te.trunc.c.M100.txt").read_text().splitlines()
           if ln.endswith("-nan")]
    assert {ln.split("\t")[1] for ln in nan} == {"302", "all"}
    assert sum(1 for ln in (J / "te.dl.txt").read_text().splitlines()
               if ln.endswith("-nan")) == 0


def test_J_changes_what_unjudged_documents_change() -> None:
    # the same run without -J: num_ret counts every document, P@k counts unjudged ones
    code, full, _ = evalkit_eval(str(J / "dl.run"), "--qrels", str(J / "dl.qrels"), "-f",
                                 "trec", "-m", "num_ret", "-m", "P.10")
    code_j, judged, _ = evalkit_eval(str(J / "dl.run"), "--qrels", str(J / "dl.qrels"),
                                     "-J", "-f", "trec", "-m", "num_ret", "-m", "P.10")
    assert code == code_j == 0 and full != judged
    assert judged.splitlines() == [
        ln for ln in (J / "te.dl.txt").read_text().splitlines()
        if ln.split("\t")[0].strip() in ("num_ret", "P_10") and ln.split("\t")[1] == "all"]


def test_artifact_scored_without_J_is_refused_with_J(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    assert evalkit_eval(str(J / "dl.run"), "--qrels", str(J / "dl.qrels"), "-m", "ap",
                        "--save", str(art))[0] == 0
    code, _, err = evalkit_eval(str(art), "-J", "-m", "ap")
    assert code != 0 and "-J" in err and "Traceback" not in err
    judged = tmp_path / "judged.jsonl"
    assert evalkit_eval(str(J / "dl.run"), "--qrels", str(J / "dl.qrels"), "-J", "-m",
                        "ap", "--save", str(judged))[0] == 0
    assert evalkit_eval(str(judged), "-J", "-m", "ap")[0] == 0


# ---------------------------------------------------------------- judged_only=True
# By hand: qrels a=1, b=0, c=2, d=1 (R = 3 at level 1); run x, a, y, b, c (x, y unjudged).
# The condensed ranking is a, b, c:
#   AP = (1/1 + 2/3) / 3 = 5/9; P@2 = 1/2; RR = 1; Rprec = P@3 = 2/3; R@2 = 1/3;
#   Success@1 = 1; SetP = 2/3; SetRelP = 2 / min(3, 3) = 2/3; SetAP = 2^2 / (3 * 3) = 4/9;
#   SetF = 2 (2/3)(2/3) / (4/3) = 2/3;
#   nDCG@3 = (1 + 0 + 2/log2(4)) / (2 + 1/log2(3) + 1/log2(4)) = 2 / (2.5 + 1/log2(3));
#   IPrec@0.5: the best precision at recall >= 1/2 (rank 3: 2/3) = 2/3.
# Without judged_only: AP = (1/2 + 2/5) / 3 = 0.3; P@2 = 1/2 (a); RR = 1/2.
QRELS = {"q1": {"a": 1, "b": 0, "c": 2, "d": 1}}
RUN = {"q1": {"x": 5.0, "a": 4.0, "y": 3.0, "b": 2.0, "c": 1.0}}
LOG2_3 = 1.584962500721156

HAND = {
    "AP(judged_only=True)": 5 / 9,
    "P(judged_only=True)@2": 1 / 2,
    "RR(judged_only=True)": 1.0,
    "Rprec(judged_only=True)": 2 / 3,
    "R(judged_only=True)@2": 1 / 3,
    "Success(judged_only=True)@1": 1.0,
    "SetP(judged_only=True)": 2 / 3,
    "SetP(relative=True,judged_only=True)": 2 / 3,
    "SetAP(judged_only=True)": 4 / 9,
    "SetF(judged_only=True)": 2 / 3,
    "nDCG(judged_only=True)@3": 2 / (2.5 + 1 / LOG2_3),
    "IPrec(judged_only=True)@0.5": 2 / 3,
    "AP": 0.3,
    "RR": 0.5,
}


def test_judged_only_parameter_by_hand() -> None:
    result = evaluate_run(RUN, QRELS, list(HAND))
    row = result.per_query[0].metrics
    from evalkit.plugins.default import resolve

    for spec, value in HAND.items():
        assert row[resolve(spec).name] == pytest.approx(value, abs=1e-12), spec


def test_judged_only_parameter_equals_J() -> None:
    # the parameter on one measure gives what -J gives every measure
    names = ["ap", "ndcg@10", "precision@5", "rr", "r_precision", "recall@20"]
    with_j = evaluate_run(J / "dl.run", J / "dl.qrels", names, judged_only=True)
    param = evaluate_run(J / "dl.run", J / "dl.qrels",
                         [n.replace("@", "(judged_only=True)@") if "@" in n
                          else f"{n}(judged_only=True)" for n in names])
    for a, b in zip(with_j.per_query, param.per_query, strict=True):
        assert list(a.metrics.values()) == list(b.metrics.values())
    assert with_j.header["judged_only"] is True and "judged_only" not in param.header


def test_judged_only_in_the_cli_measure_name() -> None:
    code, out, err = evalkit_eval(str(J / "dl.run"), "--qrels", str(J / "dl.qrels"), "-m",
                                  "nDCG(judged_only=True)@10", "-f", "trec")
    assert code == 0, err
    expected = [ln for ln in (J / "te.dl.txt").read_text().splitlines()
                if ln.startswith("ndcg_cut_10 ") and ln.split("\t")[1] == "all"]
    assert out.split("\t")[-1].strip() == expected[0].split("\t")[-1]


@pytest.mark.parametrize("spec", ["bpref(judged_only=True)", "SetR(judged_only=True)",
                                  "AP(judged_only=1)"])
def test_judged_only_where_ir_measures_has_none_is_refused(spec: str) -> None:
    code, _, err = evalkit_eval(str(J / "dl.run"), "--qrels", str(J / "dl.qrels"),
                                  "-m", spec)
    assert code == 2 and "judged_only" in err and "Traceback" not in err
