"""Make ``history_schema1.sqlite``: a run history as the first schema of evalkit-history
wrote it, for the migration test (``test_history_migration.py``).

Run from the repository root::

    .venv/bin/python plugins/evalkit-history/tests/data/make_history_schema1.py

The tables are written here with the first schema's statements as they were released
(not imported from the plugin, whose code now writes the second), and hold three runs
scored by ``evalkit.evaluate_run`` on twelve queries, each with one relevant document
at a known rank (``rr`` = 1 / rank):

* #1 ``sys-a`` (label v1): ranks ``RANKS_A`` against ``QRELS``;
* #2 ``sys-b`` (label v2, commit ``COMMIT_B``): ranks ``RANKS_B`` against ``QRELS``;
* #3 ``sys-c`` (label v3): ranks ``RANKS_B`` against ``QRELS_C`` (another relevant
  document for q01), so another qrels hash: not comparable with #2.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).parent
QIDS = [f"q{i:02d}" for i in range(1, 13)]
QRELS = {q: {"rel": 1} for q in QIDS}
QRELS_C = {**QRELS, "q01": {"rel": 1, "n1": 1}}
RANKS_A = [3, 2, 4, 1, 2, 5, 3, 2, 1, 4, 2, 3]
RANKS_B = [1, 1, 2, 1, 1, 2, 2, 1, 1, 3, 1, 4]
COMMIT_B = "0123456789abcdef0123456789abcdef01234567"

SCHEMA_1 = """
CREATE TABLE schema_migrations (
    version INTEGER PRIMARY KEY,
    applied TEXT NOT NULL
);
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    label TEXT,
    commit_sha TEXT,
    added TEXT NOT NULL,
    header TEXT NOT NULL
);
CREATE TABLE rows (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    sample INTEGER,
    row TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE means (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    metric TEXT NOT NULL,
    kind TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (run_id, metric)
);
"""


def ranked(ranks: list[int]) -> dict[str, dict[str, float]]:
    """The ranking of each of the first ``len(ranks)`` queries: ``rank - 1`` unjudged
    documents, then the relevant one."""
    return {q: {**{f"n{j}": 100.0 - j for j in range(1, r)}, "rel": 100.0 - r}
            for q, r in zip(QIDS, ranks, strict=False)}


def main(out: Path = HERE / "history_schema1.sqlite") -> None:
    import evalkit

    runs = [
        (evalkit.evaluate_run(ranked(RANKS_A), QRELS, ["rr"], name="sys-a"), "v1", None),
        (evalkit.evaluate_run(ranked(RANKS_B), QRELS, ["rr"], name="sys-b"), "v2", COMMIT_B),
        (evalkit.evaluate_run(ranked(RANKS_B), QRELS_C, ["rr"], name="sys-c"), "v3", None),
    ]
    out.unlink(missing_ok=True)
    con = sqlite3.connect(out)
    con.executescript(SCHEMA_1)
    con.execute("INSERT INTO schema_migrations VALUES (1, '2026-11-01T00:00:00+00:00')")
    for i, (run, label, commit) in enumerate(runs, start=1):
        con.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?)",
                    (i, run.name, label, commit, f"2026-11-0{i}T12:00:00+00:00",
                     json.dumps(run.header)))
        con.executemany("INSERT INTO rows VALUES (?, ?, ?, ?, ?)",
                        [(i, j, r.query_id, None, json.dumps(r.to_json()))
                         for j, r in enumerate(run.per_query)])
        con.executemany("INSERT INTO means VALUES (?, ?, 'metric', ?)",
                        [(i, m, v) for m, v in run.means().items()])
    con.commit()
    con.close()
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
