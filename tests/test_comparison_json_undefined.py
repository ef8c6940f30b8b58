"""``evalkit compare --json`` carries the same outcome as the table: a row where no test
was possible (one query paired, ``p_note`` "n too small") has ``p_value`` and
``p_adjusted`` null, not 1; ``ci_unbounded`` lists the interval ends that are open, so an
unbounded end (null, listed) differs from one not computed (null, not listed); the
document reads back into the same record."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.comparison import Comparison

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*EVALKIT, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def _files(folder: Path, n: int, *, constant: bool) -> None:
    """Qrels judging one relevant document per query; the baseline ranks it second, the
    candidate first (rr 0.5 -> 1: a difference of +0.5) on every query when
    ``constant``, else on every other one."""
    qrels, base, cand = [], [], []
    for i in range(n):
        q = f"q{i}"
        qrels.append(f"{q} 0 rel 1")
        base += [f"{q} Q0 other 1 2.0 b", f"{q} Q0 rel 2 1.0 b"]
        first = constant or i % 2 == 0
        cand += [f"{q} Q0 rel 1 2.0 c", f"{q} Q0 other 2 1.0 c"] if first else [
            f"{q} Q0 other 1 2.0 c", f"{q} Q0 rel 2 1.0 c"]
    (folder / "qrels").write_text("\n".join(qrels) + "\n")
    (folder / "base").write_text("\n".join(base) + "\n")
    (folder / "cand").write_text("\n".join(cand) + "\n")


def _row(folder: Path, *extra: str) -> tuple[dict[str, object], str]:
    proc = cli("compare", "base", "cand", "--qrels", "qrels", "-m", "rr", "--json", *extra,
               cwd=folder)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    back = Comparison.from_json(proc.stdout)
    assert back.to_json() == doc  # the document reads back into the same record
    return doc["comparisons"][0], proc.stdout


def test_json_of_one_query_has_no_p(tmp_path: Path) -> None:
    _files(tmp_path, 1, constant=True)
    row, text = _row(tmp_path)
    assert row["n_queries"] == 1 and row["p_note"] == "n too small"
    assert row["p_value"] is None and row["p_adjusted"] is None
    assert row["significant"] is False
    # not computed: null ends, neither listed as unbounded
    assert (row["ci_low"], row["ci_high"], row["ci_unbounded"]) == (None, None, [])
    record = Comparison.from_json(text).results[0]
    assert record.p_value == 1.0 and record.p_adjusted == 1.0  # the record as compare made it
    row, _ = _row(tmp_path, "--correction", "none")
    assert row["p_adjusted"] is None and row["p_value"] is None


def test_json_says_which_interval_ends_are_unbounded(tmp_path: Path) -> None:
    _files(tmp_path, 5, constant=True)  # five equal differences: an unbounded interval
    row, _ = _row(tmp_path)
    assert row["p_value"] == pytest.approx(0.0625)  # a test ran: 2/2**5
    assert (row["ci_low"], row["ci_high"]) == (None, None)
    assert row["ci_unbounded"] == ["low", "high"]
    row, _ = _row(tmp_path, "--alternative", "greater")
    assert row["ci_low"] == pytest.approx(0.5) and row["ci_high"] is None
    assert row["ci_unbounded"] == ["high"]
    _files(tmp_path, 30, constant=False)
    row, _ = _row(tmp_path)
    assert row["ci_low"] is not None and row["ci_high"] is not None
    assert row["ci_unbounded"] == []


def test_slice_rows_carry_the_same(tmp_path: Path) -> None:
    _files(tmp_path, 8, constant=False)
    (tmp_path / "tags").write_text("q0\tone\n" + "".join(f"q{i}\tmany\n" for i in range(8)))
    proc = cli("compare", "base", "cand", "--qrels", "qrels", "-m", "rr", "--json",
               "--by", "tag", "--tags", "tags", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert Comparison.from_json(proc.stdout).to_json() == doc
    slices = {s["slice"]: s for s in doc["slices"]}
    one, many = slices["one"], slices["many"]
    assert one["n_queries"] == 1 and one["p_value"] is None and one["p_adjusted"] is None
    assert one["ci_unbounded"] == []
    assert many["n_queries"] == 8 and isinstance(many["p_value"], float)


def test_a_bootstrap_on_three_queries_prints_no_p_a_script_could_read_as_significant(
        tmp_path: Path) -> None:
    # rr differences +2/3, +1/2, +1/2: every bootstrap mean is positive, so the bootstrap's
    # own p is 1/(B+1); with 3 queries no exact paired test can reach 0.05 (2/2**3 = 0.25)
    (tmp_path / "qrels").write_text("".join(f"q{i} 0 rel 1\n" for i in range(3)))
    (tmp_path / "base").write_text("".join(
        "".join(f"q{i} Q0 o{r} {r} {9 - r}.0 b\n" for r in range(1, depth))
        + f"q{i} Q0 rel {depth} 1.0 b\n" for i, depth in enumerate((3, 2, 2))))
    (tmp_path / "cand").write_text("".join(f"q{i} Q0 rel 1 2.0 c\n" for i in range(3)))
    row, _ = _row(tmp_path, "--test", "bootstrap", "--correction", "none")
    assert row["n_queries"] == 3 and row["diff"] == pytest.approx((2 / 3 + 0.5 + 0.5) / 3)
    assert row["p_note"] == "n too small" and row["significant"] is False
    assert row["p_value"] is None and row["p_adjusted"] is None
