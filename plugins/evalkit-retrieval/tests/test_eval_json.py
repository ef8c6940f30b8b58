"""``evalkit eval --json``: the totals of per-query counts are integers, as each query's
counts are (``--help``: counts are "printed as integers and summed")."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from evalkit.cli.app import app


def test_count_totals_are_integers(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq2 0 d2 1\nq2 0 d3 1\n")
    (tmp_path / "run").write_text("q1 Q0 d1 1 2 s\nq1 Q0 x 2 1 s\nq2 Q0 d3 1 1 s\n")
    proc = CliRunner().invoke(app, ["eval", str(tmp_path / "run"), "--qrels",
                                    str(tmp_path / "qrels"), "-m", "ap,num_rel,num_ret,"
                                    "num_rel_ret", "--json", "--per-query"])
    assert proc.exit_code == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["counts"] == {"num_rel": 3, "num_ret": 3, "num_rel_ret": 2}
    assert all(type(v) is int for v in out["counts"].values())
    per_query = [q["counts"] for q in out["per_query"]]
    assert all(type(v) is int for counts in per_query for v in counts.values())
