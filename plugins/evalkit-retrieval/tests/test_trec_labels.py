"""Qrels labels as trec_eval 10.0 reads them: ``atol`` (get_qrels.c) reads the sign and
digits before anything else, so a label is taken when the number it writes is an integer
that ``atol`` reads as that integer (``1.0``, ``1e0``), and refused when it is not an
integer (``1.5``, ``1.5e0``: "is not an integer") or when ``atol`` would read another
integer (``1e3`` is 1000, read as 1).

The expected labels are worked out by hand (digits times a power of ten). The trec_eval
outputs in ``data/exponent_labels/`` were made with a build of trec_eval 10.0
(``trec_eval -m all_trec -q QRELS run``, data/README.md): on ``qrels.exp`` (labels in
exponent form that atol reads as their value) evalkit prints what trec_eval prints; on
``qrels.cut`` (``3e1``) trec_eval prints what the label 3 gives, not 30, which is why
evalkit refuses it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from evalkit_retrieval.trec import TrecFormatError, load_qrels
from evalkit_retrieval.trec_text import label_of_text
from typer.testing import CliRunner

from evalkit.cli.app import app

DATA = Path(__file__).parent / "data" / "exponent_labels"
NOT_INTEGER = "is not an integer"


@pytest.mark.parametrize(("text", "label"), [
    ("1", 1), ("1.0", 1), ("1.00000", 1), ("-1.00", -1), ("+2.", 2), ("01", 1), ("-0", 0),
    ("1e0", 1), ("1E0", 1), ("1e+0", 1), ("1e-0", 1), ("1.0E+0", 1), ("-1e0", -1),
    ("0e5", 0), ("0.0e0", 0), ("0e99999999", 0), ("3e0", 3), ("1.000e0", 1),
])
def test_a_label_atol_reads_as_its_value_is_that_integer(text: str, label: int) -> None:
    assert label_of_text(text.encode()) == label


@pytest.mark.parametrize(("text", "says"), [
    ("1.5", NOT_INTEGER), ("1.5e0", NOT_INTEGER), ("2.5", NOT_INTEGER), (".5", NOT_INTEGER),
    ("1e-3", NOT_INTEGER), ("15e-1", NOT_INTEGER), ("1e", NOT_INTEGER), ("e3", NOT_INTEGER),
    ("0x1", NOT_INTEGER),
    # integers atol cuts: 1e3 = 1 x 10^3 = 1000 (atol: 1), 2.0e1 = 20 (atol: 2),
    # 1.5e1 = 15 (atol: 1), 10e-1 = 1 (atol: 10), 1.00e1 = 10 (atol: 1)
    ("1e3", "is 1000 written with an exponent, which trec_eval reads as 1 (it reads the "
            "digits before the 'e'): write 1000"),
    ("2.0e1", "is 20 written with an exponent, which trec_eval reads as 2 (it reads the "
              "digits before the '.'): write 20"),
    ("1.5e1", "is 15 written with an exponent, which trec_eval reads as 1"),
    ("10e-1", "is 1 written with an exponent, which trec_eval reads as 10"),
    ("1.00e1", "is 10 written with an exponent, which trec_eval reads as 1"),
    ("1e30", "outside the range of a 64-bit integer"),
    ("1e99999999", "outside the range of a 64-bit integer"),
])
def test_a_label_atol_would_misread_is_refused(text: str, says: str) -> None:
    problem = label_of_text(text.encode())
    assert isinstance(problem, str)
    assert problem.startswith(f"the relevance label {text!r} ") and says in problem


def test_a_qrels_file_names_the_label_and_the_fix(tmp_path: Path) -> None:
    for label, says in (("1.5e0", "the relevance label '1.5e0' is not an integer"),
                        ("1.5", "the relevance label '1.5' is not an integer"),
                        ("1e3", "write 1000")):
        path = tmp_path / "q.txt"
        path.write_text(f"q1 0 a 1\nq1 0 b {label}\n")
        with pytest.raises(TrecFormatError) as err:
            load_qrels(path)
        assert f"{path}:2: " in str(err.value) and says in str(err.value)


def _lines(text: str) -> list[str]:
    return sorted(" ".join(line.split()) for line in text.splitlines() if line.strip())


def _eval(qrels: Path) -> str:
    res = CliRunner().invoke(app, ["eval", str(DATA / "run"), "--qrels", str(qrels),
                                   "-m", "all_trec", "-q", "-f", "trec"])
    assert res.exit_code == 0, res.output
    return res.stdout


def test_exponent_labels_are_read_as_trec_eval_reads_them() -> None:
    assert {q: dict(d) for q, d in load_qrels(DATA / "qrels.exp").items()} == {
        "q1": {"a": 1, "b": 0, "c": 2, "d": -1, "e": 1}, "q2": {"a": 3, "c": 1, "f": 0}}
    assert _lines(_eval(DATA / "qrels.exp")) == _lines((DATA / "te.exp.txt").read_text())


def test_trec_eval_reads_3e1_as_3_which_is_why_it_is_refused(tmp_path: Path) -> None:
    cut = DATA / "qrels.cut"
    with pytest.raises(TrecFormatError, match="'3e1' is 30 written with an exponent, which "
                       "trec_eval reads as 3"):
        load_qrels(cut)
    as_three = tmp_path / "qrels.three"
    as_three.write_text(cut.read_text().replace("3e1", "3"))
    assert _lines(_eval(as_three)) == _lines((DATA / "te.cut.txt").read_text())
