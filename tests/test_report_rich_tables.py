"""Console tables never cut a header or a value with an ellipsis
(:mod:`evalkit.report.rich_tables`): two measures whose names share a long prefix stay
distinguishable in ``evalkit eval ART --per-query`` at 80 columns, and the comparison
and power tables fold long text the same way."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.results import QueryResult, RunResult
from evalkit.report.rich_tables import new_table

NAMES = ["exact_match", "contains(ignore_case=True,text=alpha_one)",
         "contains(ignore_case=True,text=alpha_two)", "regex(pattern=^[^\\n]{1,80}$)"]


def _artifact(tmp_path: Path) -> Path:
    rows = [QueryResult(f"c{i}", [], {n: float((i + j) % 2) for j, n in enumerate(NAMES)})
            for i in range(3)]
    return RunResult("sys", rows).save(tmp_path / "run.jsonl")


def _header_columns(text: str) -> list[str]:
    """Each value column's header, its folded pieces joined: the columns are right
    justified, so a column ends where each value of the first row ends, and starts two
    spaces (rich's padding) after the previous one's end."""
    import itertools
    import re

    lines = text.splitlines()
    first = next(i for i, ln in enumerate(lines) if ln.startswith("c0"))
    ends = [m.end() for m in re.finditer(r"\S+", lines[first])]
    summary = next(i for i, ln in enumerate(lines) if ln.startswith("3 queries"))
    head = lines[summary + 1:first]
    ends[0] = len("query")  # the left-justified first column: its header is the widest
    out = []
    for start, stop in itertools.pairwise(ends):
        out.append("".join(ln[start:stop].strip() for ln in head))
    return out


def test_per_query_headers_stay_whole_at_80_columns(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["eval", str(_artifact(tmp_path)), "--per-query"],
                             terminal_width=80)
    assert res.exit_code == 0, res.output
    assert "…" not in res.output
    assert _header_columns(res.output) == NAMES


def test_new_table_folds_instead_of_cutting() -> None:
    table = new_table("contains(text=aaaaaaaaaaaaaaaaaaaa)", "contains(text=bbbbbbbbbbbbbbb)")
    table.add_row("x" * 40, "1.0000")
    buf = io.StringIO()
    Console(file=buf, width=30).print(table)
    out = buf.getvalue()
    assert "…" not in out
    squeezed = "".join(out.split())
    assert squeezed.count("a") == 20 + 2 and squeezed.count("b") == 15  # + "contains"
    assert squeezed.count("x") == 40 + 2  # + "text=" twice
