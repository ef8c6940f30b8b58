"""The console's per-query table lists queries in the order of the same command's CSV
(natural order for a TREC run: q1, q2, q3, q10), and an interval end the test cannot
bound is printed ``unbounded``, not ``+inf`` (a difference of recall@1 lies in [-1, 1])."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from evalkit.report.formatting import interval


def invoke(*args: str) -> Any:
    from evalkit.cli.app import app

    return CliRunner().invoke(app, list(args))


def test_console_per_query_order_is_the_csv_order(tmp_path: Path) -> None:
    (tmp_path / "nat.qrels").write_text("".join(f"{q} 0 d1 1\n" for q in
                                                ("q1", "q2", "q10", "q3")))
    (tmp_path / "nat.run").write_text("".join(f"{q} Q0 d1 1 1 s\n" for q in
                                              ("q10", "q2", "q1", "q3")))
    out = tmp_path / "n.csv"
    res = invoke("eval", str(tmp_path / "nat.run"), "--qrels", str(tmp_path / "nat.qrels"),
                 "-m", "ap", "-q", "--csv", str(out))
    assert res.exit_code == 0, res.output
    console = [line.split()[0] for line in res.output.splitlines()
               if line.startswith("q") and not line.startswith("query")]
    with out.open() as fh:
        in_csv = [row["qid"] for row in csv.DictReader(fh)]
    assert console == in_csv == ["q1", "q2", "q3", "q10"]


def test_unbounded_ends() -> None:
    assert interval(-0.0309, math.inf) == "[-0.0309, unbounded]"
    assert interval(-math.inf, 0.25) == "[unbounded, +0.2500]"
    assert interval(-math.inf, math.inf) == interval(None, None) == "unbounded"
    assert interval(0.0434, 0.0747) == "[+0.0434, +0.0747]"
