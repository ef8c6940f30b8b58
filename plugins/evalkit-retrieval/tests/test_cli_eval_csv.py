"""``evalkit eval --csv`` and ``--csv-raw``: the formula guard of the CSV writer.

Query ids that a spreadsheet would run as a formula (``=HYPERLINK("x")``, ``@3``, ``+a``)
get a leading ``'`` in ``--csv``; ``--csv-raw`` writes them as the qrels spell them, as
``--json`` always does. The AP values are worked by hand: each query has one relevant
document, ranked first (AP 1) or second (AP 1/2).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from evalkit.cli.app import app

runner = CliRunner()
#: query id -> the rank of its one relevant document
QUERIES = {'=HYPERLINK("x")': 1, "@3": 2, "+a": 1, "-1": 2, "+2": 1, "plain": 2}


def write(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "q.qrels", tmp_path / "r.run"
    qrels.write_text("".join(f"{q} 0 rel 1\n{q} 0 other 0\n" for q in QUERIES),
                     encoding="utf-8")
    lines = []
    for q, rank in QUERIES.items():
        first, second = ("rel", "other") if rank == 1 else ("other", "rel")
        lines += [f"{q} Q0 {first} 1 2.0 sys\n", f"{q} Q0 {second} 2 1.0 sys\n"]
    run.write_text("".join(lines), encoding="utf-8")
    return qrels, run


def read(path: Path) -> dict[str, float]:
    with path.open(newline="", encoding="utf-8") as fh:
        return {row["qid"]: float(row["ap"]) for row in csv.DictReader(fh)}


def test_csv_guards_formulas_and_csv_raw_keeps_the_ids(tmp_path: Path) -> None:
    qrels, run = write(tmp_path)
    expected = {q: 1.0 / rank for q, rank in QUERIES.items()}
    for extra, name in (([], "guarded.csv"), (["--csv-raw"], "raw.csv")):
        res = runner.invoke(app, ["eval", str(run), "--qrels", str(qrels), "-m", "ap",
                                  "--csv", str(tmp_path / name), *extra])
        assert res.exit_code == 0, res.output
    guarded = read(tmp_path / "guarded.csv")
    assert guarded == {("'" + q if q[0] in "=@" or q == "+a" else q): v
                       for q, v in expected.items()}
    assert read(tmp_path / "raw.csv") == expected  # joins with the qrels on qid
    res = runner.invoke(app, ["eval", str(run), "--qrels", str(qrels), "-m", "ap",
                              "--per-query", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["per_query"]
    assert {r["id"]: r["metrics"]["ap"] for r in rows} == expected


def test_csv_raw_needs_csv(tmp_path: Path) -> None:
    qrels, run = write(tmp_path)
    res = runner.invoke(app, ["eval", str(run), "--qrels", str(qrels), "--csv-raw"])
    assert res.exit_code == 2
    assert "--csv-raw goes with --csv PATH" in res.stderr and "Traceback" not in res.output
