"""gm_map and gm_bpref hold ln values per query: their per-query columns say so
(``gm_map (ln)`` in the table, CSV and Parquet; ``per_query_ln`` in the JSON), the means
stay trec_eval's geometric means, and ``--format trec`` prints trec_eval's lines unchanged."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from typer.testing import CliRunner

from evalkit.cli.app import app

VASWANI = Path(__file__).resolve().parents[3] / "examples" / "vaswani" / "data"
ARGS = ["eval", "--qrels", str(VASWANI / "qrels"), str(VASWANI / "runs" / "run.vaswani.bm25.txt"),
        "-m", "gm_map,ap"]
EXPECTED = VASWANI / "expected" / "trec_eval-10.0.all_trec.q.bm25.txt"


def _run(*extra: str) -> str:
    res = CliRunner().invoke(app, [*ARGS, *extra])
    assert res.exit_code == 0, res.output
    return res.stdout


def test_table_csv_and_json_label_ln_columns(tmp_path: Path) -> None:
    table = _run("-q")
    assert "gm_map (ln)" in table.splitlines()[2]
    assert "the mean line is exp of their mean" in table
    assert "(ln)" not in _run()  # the means alone are geometric means
    out = tmp_path / "q.csv"
    _run("--csv", str(out))
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0])[:3] == ["qid", "gm_map (ln)", "ap"]
    first = rows[0]
    assert math.isclose(float(first["gm_map (ln)"]), math.log(float(first["ap"])))
    doc = json.loads(_run("-q", "--json"))
    assert doc["per_query_ln"] == ["gm_map"]
    assert "per_query_ln" not in json.loads(_run("--json"))


def test_format_trec_keeps_trec_eval_lines() -> None:
    theirs = [line for line in EXPECTED.read_text().splitlines()
              if line.startswith("gm_map ")]
    mine = [line for line in _run("--format", "trec", "-q").splitlines()
            if line.startswith("gm_map")]
    assert mine == theirs and len(mine) == 1  # only the `all` line, as trec_eval prints it
