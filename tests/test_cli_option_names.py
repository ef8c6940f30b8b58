"""Errors reached from the command line name its options with one number format
(``--resamples/-B 1000000000000: expected an integer from 100 to 1,000,000``), never a
Python argument (``n_resamples``, ``allow_incomplete=True``, ``simulate_power``); and a
fix an error names is an option the command has (``evalkit power --allow-incomplete``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.comparison import ComparisonError, plan_power
from evalkit.data.results import QueryResult, RunResult


def invoke(*args: str) -> Any:
    from evalkit.cli.app import app

    return CliRunner().invoke(app, list(args))


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    a = RunResult("a", [QueryResult(f"q{i}", [], {"ap": (i % 7) / 7}) for i in range(30)])
    b = RunResult("b", [QueryResult(f"q{i}", [], {"ap": (i % 5) / 5}) for i in range(30)])
    return a.save(tmp_path / "a.jsonl"), b.save(tmp_path / "b.jsonl")


def _one_line(res: Any) -> str:
    lines = res.output.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1, res.output
    return str(lines[0])


@pytest.mark.parametrize(("cmd", "opt", "value", "low", "high"), [
    ("compare", "-B", "1000000000000", "100", "1,000,000"),
    ("compare", "-B", "0", "100", "1,000,000"),
    ("gate", "-B", "10000000", "100", "1,000,000"),
    ("power", "--trials", "100000000000", "100", "1,000,000"),
])
def test_range_errors_name_the_option(tmp_path: Path, cmd: str, opt: str, value: str,
                                      low: str, high: str) -> None:
    a, b = _runs(tmp_path)
    args = {"compare": ["compare", str(a), str(b)], "power": ["power", str(a), str(b)],
            "gate": ["gate", "-c", str(tmp_path / "c.yaml"), "-r", str(a)]}[cmd]
    (tmp_path / "c.yaml").write_text("checks:\n  - {id: x, metric: ap, op: '>=', "
                                     "threshold: 0.1}\n")
    line = _one_line(invoke(*args, opt, value))
    names = "--resamples/-B" if opt == "-B" else opt
    assert line == f"error: {names} {value}: expected an integer from {low} to {high}"


def test_power_has_allow_incomplete(tmp_path: Path) -> None:
    a, b = _runs(tmp_path)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(b.read_text().splitlines(keepends=True)[:12]))
    line = _one_line(invoke("power", str(a), str(cut), "-n", "50"))
    assert "--allow-incomplete" in line and "allow_incomplete" not in line
    res = invoke("power", str(a), str(cut), "-n", "50", "--allow-incomplete")
    assert res.exit_code == 0, res.output


def test_simulated_n_bound_names_the_fix(tmp_path: Path) -> None:
    a, b = _runs(tmp_path)
    line = _one_line(invoke("power", str(a), str(b), "-n", "20000000"))
    assert "--no-simulate" in line and "simulate_power" not in line and "t_power" not in line
    with pytest.raises(ComparisonError, match="simulate=False"):
        plan_power(a, b, n=[20_000_000])
    with pytest.raises(ComparisonError, match=r"trials=10: expected an integer from 100"):
        plan_power(a, b, trials=10)
    res = invoke("power", str(a), str(b), "-n", "20000000", "--no-simulate")
    assert res.exit_code == 0, res.output
