"""`evaluate(..., ppi=True)` and `evalkit run --ppi`: each labelled metric's human mean
with its PPI++ interval, recorded in the run's header and printed; checked against ppi_py
on the grades and labels written here."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from evalkit import CallableTarget, evaluate
from evalkit.core.registry import Registry
from evalkit.data.labels import LabelError
from evalkit.data.results import RunResult
from evalkit.plugins.default import use_registry

EVALKIT = [sys.executable, "-c", "from evalkit.cli import main; main()"]
N = 30
LABELLED = [3, 5, 8, 11, 14, 17, 20, 23, 26, 29]

PLUGIN = """\
import json
from pathlib import Path

import evalkit
from evalkit.core.specs import MetricSpec
from evalkit.data.targets import CallableTarget

GRADES = json.loads((Path(__file__).parent / "grades.json").read_text())


def correctness(response, case):
    return GRADES[case.id]


@evalkit.hookimpl
def evalkit_register_metrics():
    return [MetricSpec("correctness", correctness, True)]


def make():
    return CallableTarget(lambda case: "answer", name="echo")
"""


def _grades() -> tuple[dict[str, float], dict[str, float]]:
    rng = np.random.default_rng(21)
    human = rng.integers(1, 6, size=N).astype(float)
    judge = np.clip(human + 0.6 + rng.normal(0, 0.6, N), 1, 5)
    ids = [f"c{i:02d}" for i in range(N)]
    return (dict(zip(ids, map(float, judge), strict=True)),
            {ids[i]: float(human[i]) for i in LABELLED})


def _write_goldens(path: Path, human: dict[str, float], selection: str) -> None:
    lines = [selection, "cases:"] if selection else ["cases:"]
    for i in range(N):
        cid = f"c{i:02d}"
        label = f", labels: {{correctness: {human[cid]}}}" if cid in human else ""
        lines.append(f"  - {{id: {cid}, query: q{i}{label}}}")
    path.write_text("\n".join(lines) + "\n")


def _reference(judge: dict[str, float], human: dict[str, float]
               ) -> tuple[float, float, float]:
    ppi_py = pytest.importorskip("ppi_py")
    y = np.array(list(human.values()))
    f = np.array([judge[c] for c in human])
    u = np.array([v for c, v in judge.items() if c not in human])
    point = ppi_py.ppi_mean_pointestimate(y, f, u)
    low, high = ppi_py.ppi_mean_ci(y, f, u, alpha=0.05)
    return tuple(float(np.ravel(x)[0]) for x in (point, low, high))  # type: ignore[return-value]


@pytest.fixture
def reg() -> Iterator[Registry]:
    judge, _ = _grades()
    with use_registry() as r:  # the built-in loaders, and the judge as a metric
        r.register_metric("correctness", higher_is_better=True)(
            lambda response, case: judge[case.id])
        yield r


def test_evaluate_records_the_ppi_mean(reg: Registry, tmp_path: Path) -> None:
    judge, human = _grades()
    goldens = tmp_path / "goldens.yaml"
    _write_goldens(goldens, human, "labels_selection: {selection: random, seed: 21}")
    target = CallableTarget(lambda case: "answer", name="echo")
    run = evaluate(target, goldens, ["correctness"], artifact=tmp_path / "run.jsonl",
                   ppi=True, progress=False)
    found = run.header["ppi"]["metrics"]["correctness"]
    estimate, low, high = _reference(judge, human)
    assert (found["estimate"], found["ci_low"], found["ci_high"]) == pytest.approx(
        (estimate, low, high), abs=1e-9)
    assert found["n_labels"] == len(LABELLED) and found["n_unlabelled"] == N - len(LABELLED)
    assert run.header["ppi"]["selection"] == "random" and run.header["ppi"]["warning"] is None
    stored = RunResult.load(tmp_path / "run.jsonl").header["ppi"]
    assert stored["metrics"]["correctness"]["ci_low"] == pytest.approx(low, abs=1e-9)
    plain = evaluate(target, goldens, ["correctness"], progress=False)
    assert "ppi" not in plain.header


def test_evaluate_ppi_refusals(reg: Registry, tmp_path: Path) -> None:
    goldens = tmp_path / "goldens.yaml"
    _write_goldens(goldens, {}, "")
    target = CallableTarget(lambda case: "answer", name="echo")
    with pytest.raises(LabelError, match="no case has labels"):
        evaluate(target, goldens, ["correctness"], ppi=True, progress=False)
    (tmp_path / "labels.jsonl").write_text('{"id": "zz", "labels": {"correctness": 3}}\n')
    with pytest.raises(LabelError, match=re.escape("labels.jsonl:1: case 'zz' is not a case")):
        evaluate(target, goldens, ["correctness"], ppi=True,
                 labels=tmp_path / "labels.jsonl", progress=False)
    with pytest.raises(LabelError, match="add ppi=True"):
        evaluate(target, goldens, ["correctness"], labels=tmp_path / "labels.jsonl",
                 progress=False)


def test_cli_run_ppi(tmp_path: Path) -> None:
    judge, human = _grades()
    (tmp_path / "grades.json").write_text(json.dumps(judge))
    (tmp_path / "judged.py").write_text(PLUGIN)
    (tmp_path / "pyproject.toml").write_text('[tool.evalkit]\nlocal_plugins = ["judged"]\n')
    _write_goldens(tmp_path / "goldens.yaml", human, "")
    (tmp_path / "evalkit.yaml").write_text(
        "goldens: goldens.yaml\ntarget: {factory: 'judged:make'}\n"
        "metrics: [correctness]\noutput: run.jsonl\nmax_concurrency: 1\n")
    proc = subprocess.run([*EVALKIT, "run", "--ppi"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    estimate, low, high = _reference(judge, human)
    assert (f"correctness: human mean (PPI++) {estimate:.4f} [{low:.4f}, {high:.4f}] (95%) "
            f"on {len(LABELLED)} human labels and {N - len(LABELLED)} judge-only cases"
            ) in proc.stdout
    assert "not declared a random sample" in proc.stdout
