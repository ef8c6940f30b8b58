"""A run whose query ids match none of the judged queries (leading zeros stripped, ids
read as numbers by ``pd.read_csv``) scores 0 on every judged query: ``evalkit compare``
(and :func:`evalkit.compare`) refuse it, naming the fix, instead of calling the other
run a significant win; ``evalkit gate`` errors its checks and ``baseline promote``
refuses it; ``evalkit eval`` still scores it 0 with warnings. So is one that matches some
judged queries and has look-alike ids for others; a run that merely lacks some judged
queries is compared, with the warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import evalkit
from evalkit.comparison.records import ComparisonError
from evalkit.gate.baseline import BaselineError, promote

# 4 judged queries 000..003, each with one relevant document d<i>
QRELS = "".join(f"{i:03d} 0 d{i} 1\n" for i in range(4))


def _run(name: str, ids: list[str], first: dict[str, str]) -> str:
    """A TREC run ranking ``first[qid]`` then ``x`` for every id of ``ids``."""
    return "".join(f"{q} Q0 {first[q]} 1 2.0 {name}\n{q} Q0 x 2 1.0 {name}\n" for q in ids)


# B finds the relevant document first on every query: AP 1 each
B = _run("B", [f"{i:03d}" for i in range(4)], {f"{i:03d}": f"d{i}" for i in range(4)})
# A finds it first too, but its ids lost their leading zeros: no id matches the qrels
A_NOZERO = _run("A", [str(i) for i in range(4)], {str(i): f"d{i}" for i in range(4)})


def invoke(*args: str | Path) -> Any:
    from evalkit.cli.app import app

    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    (tmp_path / "q.qrels").write_text(QRELS)
    (tmp_path / "B.run").write_text(B)
    (tmp_path / "A.run").write_text(A_NOZERO)
    return tmp_path


def test_cli_compare_refuses_a_run_matching_no_judged_query(files: Path) -> None:
    res = invoke("compare", files / "A.run", files / "B.run", "--qrels", files / "q.qrels",
                 "-m", "ap")
    assert res.exit_code == 2, res.output
    text = " ".join(res.stderr.split())
    assert text.startswith(f"error: {files / 'A.run'}: run 'A': its query ids match none "
                           "of the 4 judged queries of the qrels ('000', '001', '002', ...)")
    assert "run '0' ~ qrels '000'" in text and "dtype=str" in text
    assert "keep its leading zeros" in text
    assert "significant" not in res.stdout and "Traceback" not in res.output
    # as the candidate too
    res = invoke("compare", files / "B.run", files / "A.run", "--qrels", files / "q.qrels",
                 "-m", "ap")
    assert res.exit_code == 2 and "run 'A': its query ids match none" in res.stderr


def test_python_compare_refuses_int_ids_from_read_csv(files: Path) -> None:
    pd = pytest.importorskip("pandas")
    qrels = pd.DataFrame({"qid": [f"{i:03d}" for i in range(4)],
                          "docno": [f"d{i}" for i in range(4)], "label": [1] * 4})
    b = pd.DataFrame({"qid": [f"{i:03d}" for i in range(4)],
                      "docno": [f"d{i}" for i in range(4)], "score": [2.0] * 4, "name": "B"})
    a = b.assign(name="A")
    a["qid"] = a.qid.astype(int)  # what pd.read_csv without dtype=str gives
    refused = (r"^run 'A': its query ids match none of the 4 judged queries "
               r".*pd\.read_csv\(\.\.\., dtype=str\)")
    with pytest.warns(UserWarning, match="none of the run's topics appears"), \
            pytest.raises(ComparisonError, match=refused):
        evalkit.compare(a, b, metrics=["ap"], qrels=qrels)
    # read as text, the same run compares: AP 1 on every query in both runs
    same = evalkit.compare(b.assign(name="A"), b, metrics=["ap"], qrels=qrels)
    (row,) = same.results
    assert (row.baseline_mean, row.candidate_mean, row.diff) == (1.0, 1.0, 0.0)
    assert not row.significant


def test_a_run_with_look_alike_ids_for_some_judged_queries_is_refused(files: Path
                                                                      ) -> None:
    # 000 and 001 match; "2" and "3" lost their zeros: 002 and 003 would score 0
    ids = ["000", "001", "2", "3"]
    (files / "P.run").write_text(_run("P", ids, dict(zip(ids, ["d0", "d1", "d2", "d3"],
                                                         strict=True))))
    with pytest.raises(ComparisonError, match=r"run 'P': 2 of the 4 judged queries are "
                       r"missing from the run and would score 0 .*run '2' ~ qrels '002'"):
        evalkit.compare(files / "P.run", files / "B.run", qrels=files / "q.qrels",
                        metrics=["ap"])


def test_a_run_lacking_some_judged_queries_is_compared_with_the_warning(files: Path
                                                                        ) -> None:
    # 000 and 001 match; 002 and 003 are absent, and no topic looks like them
    ids = ["000", "001", "q9"]
    (files / "P.run").write_text(_run("P", ids, dict(zip(ids, ["d0", "d1", "d9"],
                                                         strict=True))))
    comp = evalkit.compare(files / "P.run", files / "B.run", qrels=files / "q.qrels",
                           metrics=["ap"])
    (row,) = comp.results
    # P: AP 1, 1, 0, 0 over the 4 judged queries (002, 003 scored 0); B: 1 on each
    assert (row.baseline_mean, row.candidate_mean, row.diff) == (0.5, 1.0, 0.5)
    text = " ".join(comp.warnings)
    assert "lacks 2 of the 4 judged queries (002, 003)" in text
    assert "1 topic(s) of run 'P' have no judgments in the qrels (q9)" in text


def test_eval_scores_it_0_and_the_gate_and_promote_refuse_it(files: Path) -> None:
    out = files / "A.jsonl"
    res = invoke("eval", files / "A.run", "--qrels", files / "q.qrels", "-m", "ap",
                 "--save", out)
    assert res.exit_code == 0, res.output  # eval: scored 0, with the warnings
    assert "4 judged queries missing from the run (scored 0)" in " ".join(res.output.split())
    checks = files / "c.yaml"
    checks.write_text("checks:\n  - id: ap\n    metric: ap\n    op: \"<=\"\n"
                      "    threshold: 1.0\n")
    gate = invoke("gate", "-c", checks, "-r", out)  # mean 0 <= 1 would pass
    assert gate.exit_code == 2, gate.output
    assert "its query ids match none of the 4 judged queries" in " ".join(gate.output.split())
    base = files / "B.jsonl"
    assert invoke("eval", files / "B.run", "--qrels", files / "q.qrels", "-m", "ap",
                  "--save", base).exit_code == 0
    checks.write_text("checks:\n  - id: no_drop\n    metric: ap\n    vs_baseline: "
                      "no_significant_regression\n")
    as_base = invoke("gate", "-c", checks, "-r", base, "-b", out)  # 1 vs 0: "improved"
    assert as_base.exit_code == 2, as_base.output
    with pytest.raises(BaselineError, match="its query ids match none"):
        promote(out, files / "promoted.jsonl")
    assert not (files / "promoted.jsonl").exists()
