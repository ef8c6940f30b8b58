"""A comparison with one paired query says that no paired test is possible, shows
``n too small`` for its p-values (also ``p_display()`` of the Python results), and a
degenerate comparison says which difference every query has, metric by metric."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from evalkit import paired_bootstrap
from evalkit.data.results import QueryResult, RunResult
from evalkit.stats import paired_test


def invoke(*args: str) -> Any:
    from evalkit.cli.app import app

    return CliRunner().invoke(app, list(args))


def _run(name: str, values: dict[str, dict[str, float]]) -> RunResult:
    return RunResult(name, [QueryResult(q, [], m) for q, m in values.items()])


def test_p_display_says_n_too_small_when_the_reports_do() -> None:
    # five queries, each AP 1 against 0.5: every difference is +0.5 (degenerate), so the
    # bootstrap's p is 1/(B+1) while the rule says "not significant" (n <= 5)
    a = _run("A", {f"q{i}": {"ap": 0.5} for i in range(5)})
    b = _run("B", {f"q{i}": {"ap": 1.0} for i in range(5)})
    v = paired_bootstrap(b, a, "ap")
    assert v.significant is False and v.p_value < 0.05
    assert v.p_display() == "n too small"
    one = paired_test(_run("B", {"q1": {"ap": 1.0}}), _run("A", {"q1": {"ap": 0.5}}), "ap")
    assert one.p_display() == "n too small"
    assert one.warnings == ("only 1 query is paired: no paired test is possible (at least "
                            "2 are needed; 6 for p < 0.05 two-sided)",)
    # a real result keeps its number: 2/2**6 = 0.03125 is the exact two-sided p at n = 6
    six = paired_test(_run("B", {f"q{i}": {"ap": 1.0 - i / 100} for i in range(6)}),
                      _run("A", {f"q{i}": {"ap": 0.5} for i in range(6)}), "ap",
                      method="randomization")
    assert six.p_display() == "p = 0.0312"


def test_one_query_compare_prints_one_true_line(tmp_path: Path) -> None:
    (tmp_path / "one.qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 3 A\nq1 Q0 d2 2 4 A\n")
    (tmp_path / "b.run").write_text("q1 Q0 d1 1 5 B\nq1 Q0 d2 2 4 B\n")
    res = invoke("compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"),
                 "--qrels", str(tmp_path / "one.qrels"), "-m", "ap,ndcg")
    assert res.exit_code == 0, res.output
    out = res.output
    assert "no paired test is possible (at least 2 are needed; 6 for p < 0.05" in out
    assert "power is low" not in out and "every per-query difference is equal" not in out
    assert "Holm's correction" not in out
    rows = [line.split() for line in out.splitlines() if line.startswith(("ap ", "ndcg "))]
    assert len(rows) == 2 and all(" ".join(r).count("n too small") == 2 for r in rows)


def test_equal_differences_are_not_lumped_across_metrics() -> None:
    a = _run("A", {f"q{i}": {"ap": 0.5, "rr": 0.25} for i in range(8)})
    b = _run("B", {f"q{i}": {"ap": 1.0, "rr": 0.5} for i in range(8)})
    notes = {m: paired_test(b, a, m).warnings[0] for m in ("ap", "rr")}
    assert "(+0.5)" in notes["ap"] and "(+0.25)" in notes["rr"]
