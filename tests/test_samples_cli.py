"""`evalkit run --epochs K` and the config's ``epochs``/``reduce`` keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.results import RunResult

runner = CliRunner()


def project(tmp_path: Path) -> str:
    """Goldens, a target module and nothing else; returns the module name."""
    module = f"evalkit_samples_target_{abs(hash(tmp_path))}"
    (tmp_path / "goldens.jsonl").write_text("".join(
        json.dumps({"id": q, "query": q, "expected": [f"d{q[1:]}"]}) + "\n"
        for q in ("q1", "q2", "q3")))
    (tmp_path / f"{module}.py").write_text(
        "from evalkit.data.targets import CallableTarget\n"
        "def make():\n"
        "    return CallableTarget(lambda case: ['d' + case.id[1:]], name='mine')\n")
    return module


def yaml_config(module: str, **extra: str) -> str:
    keys = {"goldens": "goldens.jsonl", "target": f"{{factory: '{module}:make'}}",
            "metrics": "[recall@1]", "output": "runs/mine.jsonl", **extra}
    return "".join(f"{k}: {v}\n" for k, v in keys.items())


def test_epochs_from_the_command_line_and_the_config(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    module = project(tmp_path)
    (tmp_path / "evalkit.yaml").write_text(yaml_config(module, epochs="2", reduce="max"))
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "complete: 3 cases x 2 samples (reduced by max)" in res.output
    run = RunResult.load(tmp_path / "runs" / "mine.jsonl")
    assert run.epochs == 2 and len(run.samples) == 6 and len(run.per_query) == 3
    assert run.header["samples"] == {"epochs": 2, "reduce": "max"}
    res = runner.invoke(app, ["run", "--no-progress", "--epochs", "3", "-o", "k3.jsonl"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["run", "--no-progress", "--epochs", "3", "-o", "k3.jsonl",
                              "--overwrite", "--json"])
    assert json.loads(res.stdout)["epochs"] == 3
    rows = [json.loads(x) for x in (tmp_path / "k3.jsonl").read_text().splitlines()]
    assert sorted((r["id"], r["sample"]) for r in rows if r["type"] == "row") == [
        (q, s) for q in ("q1", "q2", "q3") for s in range(3)]


def test_a_bad_reduce_key_names_the_file_and_key(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    module = project(tmp_path)
    (tmp_path / "evalkit.yaml").write_text(yaml_config(module, reduce="median"))
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert "evalkit.yaml" in res.output and "reduce" in res.output
