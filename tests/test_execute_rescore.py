"""``evalkit rescore`` says what it did, in counts: rows scored again from their stored
responses, rows without a response kept as errored, cases without a row, cases whose
golden changed, and metric values that failed (one line for people, ``rescored`` in
``--json``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit import CallableTarget, evaluate
from evalkit.execute.rescore import rescore
from evalkit.plugins.default import use_registry
from evalkit.report.target_run import rescore_counts, rescore_line

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]


def failing_on_q2(query: object) -> list[str]:
    if "q2" in str(getattr(query, "query", query)):
        raise RuntimeError("service down")
    return ["a", "b"]


def write_goldens(path: Path, c3_expected: str) -> None:
    path.write_text(
        '{"id": "c1", "query": "q1", "expected": ["a"]}\n'
        '{"id": "c2", "query": "q2", "expected": ["a"]}\n'
        f'{{"id": "c3", "query": "q3", "expected": ["{c3_expected}"]}}\n')


@pytest.fixture()
def artifact(tmp_path: Path) -> Path:
    write_goldens(tmp_path / "cases.jsonl", "b")
    evaluate(CallableTarget(failing_on_q2, name="t"), tmp_path / "cases.jsonl",
             metrics=["recall@1"], artifact=tmp_path / "run.jsonl")
    return tmp_path / "run.jsonl"


def test_the_counts_of_a_rescore(artifact: Path) -> None:
    write_goldens(artifact.parent / "cases.jsonl", "a")  # c3's golden changed
    with use_registry() as reg:
        @reg.register_metric("first_is_a", higher_is_better=True)
        def first_is_a(response, case) -> float:  # type: ignore[no-untyped-def]
            if case.id == "c3":
                raise ValueError("judge said no")
            return float(response.ranked_ids[0] == "a")

        out = rescore(artifact, ["recall@1", "first_is_a"], output=artifact.parent / "r.jsonl")
    # c1 and c3 have responses, c2's call failed; c3's golden changed; first_is_a failed
    # on c3 only
    assert rescore_counts(out) == {"rescored": 2, "kept_errored": 1, "missing": 0,
                                   "goldens_changed": 1, "metric_failures": 1}
    assert rescore_line(out) == (
        "rescored 2 case(s) from their stored responses; 1 without a response kept as "
        "errored; 0 without a row; 1 whose golden changed since the run; 1 metric "
        "value(s) failed")


def test_the_command_prints_the_counts(artifact: Path) -> None:
    proc = subprocess.run([*EVALKIT, "rescore", str(artifact), "-m", "recall@1", "-o",
                           "r.jsonl"], cwd=artifact.parent, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1  # c2 still has no response: the run stays incomplete
    assert proc.stdout.splitlines()[0].startswith(
        "rescored 2 case(s) from their stored responses; 1 without a response kept as "
        "errored")
    proc = subprocess.run([*EVALKIT, "rescore", str(artifact), "-m", "recall@1", "-o",
                           "r.jsonl", "--json", "--overwrite"],
                          cwd=artifact.parent, capture_output=True,
                          text=True, timeout=60)
    assert json.loads(proc.stdout)["rescored"]["kept_errored"] == 1
