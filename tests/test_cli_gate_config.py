"""`evalkit gate` with its options left out: the eval config's gate settings (checks,
output, baseline, reporters), on the custom-client example copied to a temporary folder."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "custom_client"
    shutil.copytree(ROOT / "examples" / "custom_client", folder,
                    ignore=shutil.ignore_patterns("out", "__pycache__"))
    monkeypatch.chdir(folder)
    monkeypatch.setattr("sys.path", list(__import__("sys").path))  # restored after
    return folder


def test_run_then_gate_with_no_option(example: Path) -> None:
    res = runner.invoke(app, ["run", "--no-progress"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["gate"])
    assert res.exit_code == 0, res.output
    # v2 finds 19 of the 20 expected books in its first five results (goldens.yaml)
    assert "recall_floor: pass (10/10 cases)" in res.stdout
    assert "mean recall@5 0.9500 (required >= 0.9)" in res.stdout
    suite = ET.parse(example / "out" / "gate.xml").getroot()
    assert sorted(c.get("name") or "" for c in suite.iter("testcase")) == [
        "concentration", "recall_floor"]
    # the candidate that fails the floor: v1 finds 10 of the 20
    config = example / "evalkit.yaml"
    config.write_text(config.read_text().replace("version: v2", "version: v1"))
    assert runner.invoke(app, ["run", "--no-progress", "--overwrite"]).exit_code == 0
    res = runner.invoke(app, ["gate"])
    assert res.exit_code == 1 and "recall_floor: fail (10/10 cases)" in res.stdout


def test_options_given_win_over_the_config(example: Path) -> None:
    assert runner.invoke(app, ["run", "--no-progress"]).exit_code == 0
    strict = example / "strict.yaml"
    strict.write_text("checks:\n  - id: perfect\n    metric: recall@1\n    op: '>='\n"
                      "    threshold: 1.0\n")
    res = runner.invoke(app, ["gate", "-c", str(strict), "--report", "json:-"])
    assert res.exit_code == 1 and '"perfect"' in res.stdout
    assert not (example / "out" / "gate.xml").exists()  # --report replaced the config's


def test_a_missing_option_without_a_config_or_a_checks_key(
    example: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = example / "evalkit.yaml"
    config.write_text(config.read_text().replace("checks: checks.yaml\n", ""))
    res = runner.invoke(app, ["gate"])
    assert res.exit_code == 2
    assert res.stderr == (f"error: evalkit gate: missing option --checks/-c, and "
                          f"{config} sets no 'checks' (see `evalkit gate --help`)\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    monkeypatch.chdir(empty)
    res = runner.invoke(app, ["gate", "-c", str(example / "checks.yaml")])
    assert res.stderr == ("error: evalkit gate: missing option --run/-r (see `evalkit gate "
                          "--help`)\n")
    res = runner.invoke(app, ["gate", "--config", str(config)])
    assert res.exit_code == 2 and "sets no 'checks'" in res.stderr


def test_gate_keys_alone_are_an_incomplete_eval_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.evalkit]\nchecks = "checks.yaml"\n')
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["gate", "-r", "run.jsonl"])
    assert res.exit_code == 2
    assert res.stderr == (f"error: {tmp_path / 'pyproject.toml'} [tool.evalkit]: key "
                          "'goldens': missing (required)\n")
