"""Run topics and judged queries whose ids differ only by leading zeros, white space or
invisible characters: named in a warning by ``evalkit eval`` and ``evalkit compare``
(:func:`evalkit.data.query_ids.near_ids`), values unchanged (trec_eval compares ids as
text), and refused by ``evalkit compare``;
``--missing skip`` with no query left says so in one message for both commands."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from evalkit import evaluate_run
from evalkit.cli.app import app
from evalkit.data.query_ids import near_ids


def test_near_ids_pairs_ids_that_look_alike() -> None:
    assert near_ids(["51", "7"], ["051", "052"]) == [["51", "051"]]
    assert near_ids(["\ufeff3", " 4", "5\u200b"], ["3", "4", "5"]) == [
        ["\ufeff3", "3"], [" 4", "4"], ["5\u200b", "5"]]
    assert near_ids(["0"], ["000"]) == [["0", "000"]]
    assert near_ids(["51"], []) == [] and near_ids([], ["051"]) == []
    assert near_ids(["q1"], ["q2"]) == []
    assert len(near_ids([f"{i}" for i in range(20)], [f"0{i}" for i in range(20)])) == 5


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("051 0 a 1\n052 0 b 1\n")
    partial = tmp_path / "partial.txt"
    partial.write_text("51 Q0 a 1 1.0 t\n052 Q0 b 1 1.0 t\n")
    off = tmp_path / "off.txt"
    off.write_text("51 Q0 a 1 1.0 u\n52 Q0 b 1 1.0 u\n")
    return qrels, partial, off


def test_eval_and_compare_name_ids_that_differ_by_leading_zeros(tmp_path: Path) -> None:
    qrels, partial, off = _files(tmp_path)
    result = evaluate_run(partial, qrels, ["ap"])
    assert result.header["notes"]["near_ids"] == [["51", "051"]]
    assert [r.metrics["ap"] for r in result.per_query] == [0.0, 1.0]  # values unchanged
    runner = CliRunner()
    res = runner.invoke(app, ["eval", "--qrels", str(qrels), str(partial), "-m", "ap"])
    assert res.exit_code == 0
    assert "differing only by leading zeros" in res.output and "run '51' ~ qrels '051'" \
        in res.output
    # `off` matches none of the judged queries: compare refuses it, naming the pairs
    res = runner.invoke(app, ["compare", "--qrels", str(qrels), str(off), str(partial),
                              "-m", "ap"])
    assert res.exit_code == 2
    assert "its query ids match none of the 2 judged queries" in " ".join(res.stderr.split())
    assert "run '52' ~ qrels '052'" in res.output
    # `partial` matches one of the two, and '51' looks like 051 it lacks: refused too
    res = runner.invoke(app, ["compare", "--qrels", str(qrels), str(partial), str(partial),
                              "-m", "ap"])
    assert res.exit_code == 2 and "run '51' ~ qrels '051'" in res.output
    assert "1 of the 2 judged queries are missing" in " ".join(res.stderr.split())


def test_mid_file_bom_is_named_and_escaped_in_the_table(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(b"1 0 a 1\n\xef\xbb\xbf3 0 c 1\n")  # two files joined by cat
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 1.0 t\n3 Q0 c 1 1.0 t\n")
    res = CliRunner().invoke(app, ["eval", "--qrels", str(qrels), str(run), "-m", "ap", "-q"])
    assert res.exit_code == 0
    assert "run '3' ~ qrels '\\ufeff3'" in res.output
    assert "\\ufeff3" in res.output and "\ufeff" not in res.output


def test_no_query_left_under_missing_skip_one_message(tmp_path: Path) -> None:
    qrels, _, off = _files(tmp_path)
    runner = CliRunner()
    out = []
    for args in (["eval", "--qrels", str(qrels), "--missing", "skip", str(off)],
                 ["compare", "--qrels", str(qrels), "--missing", "skip", str(off), str(off)]):
        res = runner.invoke(app, args)
        assert res.exit_code != 0 and "Traceback" not in res.output
        out.append(res.output.strip().splitlines()[-1])
    assert out[0] == out[1]
    assert f"{off}: no query was evaluated (none of the run's topics is judged" in out[0]
    assert "run '51' ~ qrels '051'" in out[0]
