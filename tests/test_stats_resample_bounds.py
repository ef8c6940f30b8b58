"""Resample and trial counts are bounded, so a typo'd ``-B 100000000000`` is one line and
exit 2 instead of a 745 GiB allocation ending in a ``MemoryError`` traceback (compare,
gate) or a run of days (power --trials, or -n with the simulation)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.stats import paired_test
from evalkit.stats.bootstrap import MAX_RESAMPLES
from evalkit.stats.power import MAX_SIMULATED_N, MAX_TRIALS, simulate_power

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
A = {"q1": 0.5, "q2": 0.25, "q3": 0.75, "q4": 0.125, "q5": 0.625, "q6": 0.375}
B = {"q1": 0.25, "q2": 0.25, "q3": 0.5, "q4": 0.25, "q5": 0.5, "q6": 0.125}


def test_the_bound_is_a_million_resamples() -> None:
    assert MAX_RESAMPLES == 1_000_000
    with pytest.raises(ValueError, match=r"n_resamples 1,000,001 is more than the 1,000,000"):
        paired_test(A, B, "m", method="bootstrap-t", n_resamples=MAX_RESAMPLES + 1)


def test_simulate_power_bounds() -> None:
    diffs = [0.1, -0.05, 0.2, 0.0, 0.15]
    with pytest.raises(ValueError, match="draws at most 1,000,000 trials"):
        simulate_power(diffs, 0.05, 10, n_trials=MAX_TRIALS + 1)
    with pytest.raises(ValueError, match="of at most 10,000,000 queries"):
        simulate_power(diffs, 0.05, MAX_SIMULATED_N + 1)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pair")
    lines_a, lines_b, qrels = [], [], []
    for i in range(30):  # 30 queries: beyond exact enumeration (n <= 16)
        qrels.append(f"q{i} 0 d{i} 1")
        lines_a.append(f"q{i} Q0 d{i} 1 2.0 a\nq{i} Q0 x{i} 2 1.0 a")
        lines_b.append(f"q{i} Q0 x{i} 1 2.0 b\nq{i} Q0 d{i} 2 1.0 b")
    (folder / "a.txt").write_text("\n".join(lines_a) + "\n")
    (folder / "b.txt").write_text("\n".join(lines_b) + "\n")
    (folder / "qrels").write_text("\n".join(qrels) + "\n")
    return folder


@pytest.mark.parametrize("args", [
    ["compare", "a.txt", "b.txt", "--qrels", "qrels", "-m", "ap", "-B", "100000000000"],
    ["gate", "-c", "checks.yaml", "-r", "a.jsonl", "-B", "100000000000"],
    ["power", "a.txt", "b.txt", "--qrels", "qrels", "-m", "ap", "--trials", "100000000000"],
    ["power", "a.txt", "b.txt", "--qrels", "qrels", "-m", "ap", "-n", "100000000000"],
])
def test_the_commands_refuse_a_huge_count_in_one_line(pair: Path, args: list[str]) -> None:
    (pair / "checks.yaml").write_text(
        "checks:\n  - id: ap\n    metric: ap\n    op: '>='\n    threshold: 0.1\n")
    if not (pair / "a.jsonl").exists():
        subprocess.run([*EVALKIT, "eval", "a.txt", "--qrels", "qrels", "-m", "ap", "--save",
                        "a.jsonl"], cwd=pair, check=True, capture_output=True, timeout=60)
    proc = subprocess.run([*EVALKIT, *args], cwd=pair, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "MemoryError" not in proc.stderr
