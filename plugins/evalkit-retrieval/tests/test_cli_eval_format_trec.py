"""``evalkit eval --format trec`` as trec_eval prints the same ``-m``: the ``runid``,
``num_q`` and ``relstring`` lines asked for alone, trec_eval's ``-c`` rule for ``num_rel``
on the ``all`` line, and parameter lists that trec_eval's ``atof`` would misread.

Expected lines are taken from the files trec_eval 10.0 printed (``data/``, made by the
real binary; the commands are in ``data/README.md``): ``out.test`` is
``trec_eval qrels.test results.test`` (its first two lines are ``runid`` and ``num_q``),
``out.test.aq`` the same with ``-m all_trec -q`` (its ``relstring`` lines), and
``out.test.aql`` is ``-m all_trec -mrelstring.20 -q -l2`` without ``-c``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app

DATA = Path(__file__).parent / "data"
RUN, QRELS = DATA / "results.test", DATA / "qrels.test"


def evalkit(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["eval", *args])
    return result.exit_code, result.stdout, result.stderr


def lines_of(name: str, measure: str) -> list[str]:
    return [line for line in (DATA / name).read_text().splitlines()
            if line.split("\t")[0].strip() == measure]


@pytest.mark.parametrize(("values", "expected"), [
    (["runid"], ["runid"]),
    (["num_q"], ["num_q"]),
    (["runid", "num_q"], ["runid", "num_q"]),
    (["num_q,runid"], ["runid", "num_q"]),
])
def test_runid_and_num_q_alone_print_only_themselves(values: list[str],
                                                    expected: list[str]) -> None:
    args = [str(RUN), "--qrels", str(QRELS), "--format", "trec", "-q"]
    for v in values:
        args += ["-m", v]
    code, out, _ = evalkit(*args)
    assert code == 0
    assert out.splitlines() == [line for m in expected for line in lines_of("out.test", m)]


def test_relstring_alone_prints_only_the_relstring_lines() -> None:
    code, out, _ = evalkit(str(RUN), "--qrels", str(QRELS), "--format", "trec", "-q",
                           "-m", "relstring")
    assert code == 0
    assert out.splitlines() == lines_of("out.test.aq", "relstring")
    assert out.splitlines()[0] == "relstring             \t301\t'0000011000'"


def test_relstring_alone_without_q_prints_nothing() -> None:
    """relstring is a per-query line only: ``trec_eval -c -m relstring.20`` without ``-q``
    prints 0 bytes (trec_eval 10.0 on this run), so evalkit prints no line, not a blank
    one."""
    code, out, _ = evalkit(str(RUN), "--qrels", str(QRELS), "--format", "trec", "-c",
                           "-m", "relstring.20")
    assert code == 0 and out == ""


def test_help_says_only_c_makes_the_recount() -> None:
    """``-c`` and the default score missing queries alike, but only ``-c`` recounts the
    ``all`` line's num_rel (test_num_rel_is_recounted_only_as_under_c): the help says so
    and does not call ``-c`` the default."""
    result = CliRunner().invoke(app, ["eval", "--help"], env={"COLUMNS": "400"})
    text = " ".join(result.stdout.split())
    assert "Same as --missing zero (trec_eval -c), the default" not in text
    assert "only with -c" in text and "recount" in text


def test_a_measure_and_runid_print_no_counts() -> None:
    code, out, _ = evalkit(str(RUN), "--qrels", str(QRELS), "--format", "trec",
                           "-m", "P.5", "-m", "runid")
    assert code == 0
    assert out.splitlines() == lines_of("out.test", "runid") + lines_of("out.test", "P_5")


def test_header_lines_without_trec_format_are_refused() -> None:
    code, _, err = evalkit(str(RUN), "--qrels", str(QRELS), "-m", "runid")
    assert code == 2 and "--format trec" in err and "Traceback" not in err


def test_relstring_of_an_artifact_needs_the_qrels(tmp_path: Path) -> None:
    art = tmp_path / "run.jsonl"
    assert evalkit(str(RUN), "--qrels", str(QRELS), "-m", "ap", "--save", str(art))[0] == 0
    code, out, err = evalkit(str(art), "--format", "trec", "-q", "-m", "relstring")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "pass --qrels" in err  # never a row of '-' characters
    code, out, _ = evalkit(str(art), "--qrels", str(QRELS), "--format", "trec", "-q",
                           "-m", "relstring")
    assert code == 0 and out.splitlines() == lines_of("out.test.aq", "relstring")


def test_num_rel_is_recounted_only_as_under_c() -> None:
    """trec_eval recounts num_rel on the ``all`` line from every label above 0 only under
    ``-c`` (m_num_rel.c: ``average_complete_flag``): with ``-l 2`` and no ``-c`` the line
    adds the queries' own num_rel (97, out.test.aql); evalkit's default scoring is ``-c``'s,
    but no query is missing, so nothing asks for the recount."""
    args = [str(RUN), "--qrels", str(DATA / "qrels.rel_level"), "--format", "trec", "-q",
            "-l", "2", "-m", "all_trec", "-m", "relstring.20"]
    code, out, _ = evalkit(*args)
    assert code == 0 and out == (DATA / "out.test.aql").read_text()
    assert lines_of("out.test.aql", "num_rel")[-1] == "num_rel               \tall\t97"
    code, out, _ = evalkit(*args, "-c")
    all_num_rel = [ln for ln in out.splitlines() if ln.startswith("num_rel ")][-1]
    relevant = sum(1 for ln in (DATA / "qrels.rel_level").read_text().splitlines()
                   if int(ln.split()[3]) > 0)
    assert code == 0 and all_num_rel == f"num_rel               \tall\t{relevant}"
    assert relevant == 559


@pytest.mark.parametrize(("value", "says"), [
    ("ndcg_cut.abc", "'abc' is not a finite number"),
    ("set_F.nan", "'nan' is not a finite number"),
    ("ndcg.1=inf", "'inf' is not a finite number"),
    ("ndcg.1=abc", "'abc' is not a finite number"),
    ("rbp.p=abc", "'abc' is not a finite number"),
    ("relstring.0", "positive number of documents"),
    ("relstring.-3", "positive number of documents"),
    ("relstring.abc", "'abc' is not a finite number"),
    ("iprec_at_recall.2", "between 0 and 1"),
    ("11pt_avg.1.5", "between 0 and 1"),
    ("Rprec_mult.-1", ">= 0"),
    ("set_F.-1", ">= 0"),
    ("P@0", "positive integer"),
    ("P@-1", "positive integer"),
    ("P.0", "positive"),
])
def test_bad_parameters_are_one_line_errors(value: str, says: str) -> None:
    code, out, err = evalkit(str(RUN), "--qrels", str(QRELS), "--format", "trec",
                             "-m", value)
    assert code == 2 and out == ""
    assert says in err and err.count("\n") == 1 and "Traceback" not in err


def test_trec_eval_truncation_of_integer_cut_offs_is_kept() -> None:
    """``ndcg_cut.10,20,23.4`` is trec_eval's own test (out.test.meas_params): atol reads
    23.4 as 23, and that stays as trec_eval has it."""
    code, out, _ = evalkit(str(RUN), "--qrels", str(QRELS), "--format", "trec",
                           "-m", "ndcg_cut.10,20,23.4")
    expected = [ln for ln in (DATA / "out.test.meas_params").read_text().splitlines()
                if ln.startswith("ndcg_cut_") and "\tall\t" in ln]
    assert code == 0 and out.splitlines() == expected and len(expected) == 3


def test_relstring_of_a_baseline_without_rankings_is_refused() -> None:
    """examples/gate/baseline.jsonl was promoted with --drop-rankings: printing ''
    for every query would claim the rankings were empty."""
    root = Path(__file__).resolve().parents[3]
    code, out, err = evalkit(str(root / "examples" / "gate" / "baseline.jsonl"), "--qrels",
                             str(root / "examples" / "vaswani" / "data" / "qrels"),
                             "--format", "trec", "-q", "-m", "relstring")
    assert code == 2 and out == "" and "--drop-rankings" in err


# trec_eval 10.0's bytes for `trec_eval -q -m runid -m map -m P.1 ansi.qrels ansi.run`
# (written below; the query id holds ESC [2J, the run tag a title escape and a colour)
ANSI_QID, ANSI_TAG = "q\x1b[2J", "\x1b]0;pwned\x07\x1b[31mRED"
TREC_EVAL_ANSI = (
    f"map                   \t{ANSI_QID}\t1.0000\n"
    f"P_1                   \t{ANSI_QID}\t1.0000\n"
    f"runid                 \tall\t{ANSI_TAG}\n"
    "map                   \tall\t1.0000\n"
    "P_1                   \tall\t1.0000\n")


def _ansi_files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "ansi.qrels", tmp_path / "ansi.run"
    qrels.write_text(f"{ANSI_QID} 0 a 1\n{ANSI_QID} 0 b 0\n")
    run.write_text(f"{ANSI_QID} Q0 a 1 1 {ANSI_TAG}\n{ANSI_QID} Q0 b 2 0.5 {ANSI_TAG}\n")
    return qrels, run


def test_control_characters_reach_a_pipe_as_trec_eval_writes_them(tmp_path: Path) -> None:
    qrels, run = _ansi_files(tmp_path)
    code, out, _ = evalkit("-f", "trec", "-q", "--qrels", str(qrels), str(run),
                           "-m", "runid", "-m", "map", "-m", "P.1")
    assert code == 0
    assert out == TREC_EVAL_ANSI


def test_control_characters_are_escaped_on_a_terminal(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from evalkit.cli.output import stdout_document

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    monkeypatch.setattr(sys, "stdout", screen)
    stdout_document(TREC_EVAL_ANSI)
    shown = screen.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown
    assert "runid                 \tall\t\\x1b]0;pwned\\x07\\x1b[31mRED\n" in shown
    assert "map                   \tq\\x1b[2J\t1.0000\n" in shown
    assert shown.count("\n") == TREC_EVAL_ANSI.count("\n")


def test_infinite_scores_and_integral_decimal_labels_as_trec_eval(tmp_path: Path) -> None:
    """trec_eval 10.0 reads scores with atof (inf, -inf; 1e400 is inf) and labels with
    atol (1.0 is 1): its output for these files, `trec_eval -c -m map -m recip_rank -m
    P.1,2 -m ndcg_cut.3 -m num_rel`, byte for byte. By hand: the ranking is c, b, d, e, a
    (equal infinities by document id descending), relevant a, c, e: AP = (1/1 + 2/4 +
    3/5) / 3 = 0.7."""
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("q 0 a 1\nq 0 b 0\nq 0 c 1\nq 0 d 0\nq 0 e 1.0\n")
    run.write_text("q Q0 a 1 -inf r\nq Q0 b 1 inf r\nq Q0 c 1 1e400 r\nq Q0 d 1 0.5 r\n"
                   "q Q0 e 1 -1e400 r\n")
    code, out, _ = evalkit("-f", "trec", "-c", "--qrels", str(qrels), str(run), "-m", "map",
                           "-m", "recip_rank", "-m", "P.1,2", "-m", "ndcg_cut.3",
                           "-m", "num_rel")
    assert code == 0
    assert out == ("num_rel               \tall\t3\n"
                   "map                   \tall\t0.7000\n"
                   "recip_rank            \tall\t1.0000\n"
                   "P_1                   \tall\t1.0000\n"
                   "P_2                   \tall\t0.5000\n"
                   "ndcg_cut_3            \tall\t0.4693\n")


def test_a_non_integral_label_is_refused_saying_why(tmp_path: Path) -> None:
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("q 0 a 2.5\nq 0 b -1.00\n")
    run.write_text("q Q0 a 1 1 r\n")
    code, _, err = evalkit("--qrels", str(qrels), str(run), "-m", "ap")
    assert code != 0
    assert "q.txt:1: the relevance label '2.5' is not an integer" in err


def test_per_query_lines_are_escaped_when_the_command_writes_to_a_terminal(
        tmp_path: Path) -> None:
    import os
    import pty
    import subprocess
    import sys

    qrels, run = _ansi_files(tmp_path)
    screen, terminal = pty.openpty()
    args = [sys.executable, "-c", "from evalkit.cli import main; main()", "eval", "-f", "trec",
            "-q", "--qrels", str(qrels), str(run), "-m", "runid", "-m", "map"]
    done = subprocess.run(args, stdout=terminal, stderr=subprocess.PIPE, check=False)
    os.close(terminal)
    shown = b""
    while True:
        try:
            piece = os.read(screen, 65536)
        except OSError:  # the terminal's other end is closed: all was read
            break
        if not piece:
            break
        shown += piece
    os.close(screen)
    assert done.returncode == 0
    text = shown.decode()
    assert "\x1b" not in text and "\x07" not in text
    assert "map                   \tq\\x1b[2J\t1.0000" in text
