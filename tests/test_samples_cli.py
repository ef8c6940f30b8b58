"""`evalkit run --epochs K` and the config's ``epochs``/``reduce`` keys, and their bounds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.data.results import RunResult
from evalkit.data.samples import SampleError, check_epochs, missing_samples
from evalkit.io.limits import MAX_EPOCHS

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


# ------------------------------------------------------------------ hostile settings
# (every bad setting is one line naming the file, line and fix,
# exit 2; hostile artifacts are bounded)
def run_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **extra: str) -> Any:
    """``evalkit run`` in ``tmp_path`` with the config keys ``extra``."""
    (tmp_path / "evalkit.yaml").write_text(yaml_config(project(tmp_path), **extra))
    monkeypatch.chdir(tmp_path)
    return runner.invoke(app, ["run", "--no-progress"])


@pytest.mark.parametrize(("value", "shown"), [
    ("0", "0"), ("-1", "-1"), ("1000000000", "1000000000"), ("abc", "'abc'"),
    ("2.5", "2.5"), ("true", "True"),
])
def test_a_bad_epochs_key_says_what_epochs_must_be(tmp_path: Path, value: str, shown: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    res = run_with(tmp_path, monkeypatch, epochs=value)
    assert res.exit_code == 2, res.output
    assert res.output.strip().splitlines() == [
        f"error: {tmp_path / 'evalkit.yaml'}:5: key 'epochs': must be an integer from 1 to "
        f"10000 (samples per case), got {shown}"]
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("value", ["median", "'all:--'", "'all:nan'", "'all:'", "3"])
def test_a_bad_reduce_key_names_the_line_and_the_choices(
        tmp_path: Path, value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    res = run_with(tmp_path, monkeypatch, reduce=value)
    assert res.exit_code == 2, res.output
    (line,) = res.output.strip().splitlines()
    assert line.startswith(f"error: {tmp_path / 'evalkit.yaml'}:5: key 'reduce': must be "
                           "mean, max, min, all or all:T"), line


@pytest.mark.parametrize("command", [["run", "--no-progress"], ["power", "a", "b"]])
def test_epochs_on_the_command_line_is_bounded(tmp_path: Path, command: list[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    module = project(tmp_path)
    (tmp_path / "evalkit.yaml").write_text(yaml_config(module))
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, [*command, "-k", "1000000000"])
    assert res.exit_code == 2
    assert "expected an integer from 1 to 10,000" in res.output
    assert "Traceback" not in res.output


def test_evaluate_refuses_epochs_past_the_bound_before_planning_items() -> None:
    assert MAX_EPOCHS == 10_000
    assert check_epochs(10_000) == 10_000
    with pytest.raises(SampleError, match=r"from 1 to 10000 .*got 1000000000"):
        check_epochs(10**9)


@pytest.mark.parametrize(("executor", "says"), [
    ("{name: local, address: 'tcp://127.0.0.1:1'}",
     "executor 'local': the local executor takes no options, got address"),
    ("{name: local, options: {foo: 1}}",
     "executor 'local': the local executor takes no options, got foo"),
    ("{name: dask, options: {bogus: 1}}", "executor 'dask': "),
])
def test_options_an_executor_does_not_take_are_a_one_line_error(
        tmp_path: Path, executor: str, says: str, monkeypatch: pytest.MonkeyPatch) -> None:
    res = run_with(tmp_path, monkeypatch, executor=executor)
    assert res.exit_code == 2, res.output
    (line,) = res.output.strip().splitlines()
    assert line.startswith(f"error: {says}") and "docs/scaling.md" in line, line


class Row:
    def __init__(self, cid: str, sample: int) -> None:
        self.query_id, self.sample = cid, sample


def test_missing_samples_of_a_header_claiming_a_billion_samples_are_counted_not_listed() -> None:
    header = {"samples": {"epochs": 10**9, "reduce": "mean"}}
    rows = [Row("q1", 0), Row("q1", 1), Row("q2", 0)]
    pairs, count, shown = missing_samples(header, rows, shown=3)
    # by hand: 2 cases x 1e9 samples; q1 has 2 of them, q2 has 1
    assert pairs == 2 * 10**9
    assert count == 2 * 10**9 - 3
    assert shown == ["case 'q1' sample 2", "case 'q1' sample 3", "case 'q1' sample 4"]
    pairs, count, shown = missing_samples({"samples": {"epochs": 3}},
                                          [Row("q1", 0), Row("q1", 2), Row("q2", 1)])
    assert (pairs, count) == (6, 3)
    assert shown == ["case 'q1' sample 1", "case 'q2' sample 0", "case 'q2' sample 2"]


def test_gate_on_an_artifact_whose_header_claims_a_billion_samples_exits_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_with(tmp_path, monkeypatch, epochs="2").exit_code == 0
    art = tmp_path / "runs" / "mine.jsonl"
    lines = art.read_text().splitlines()
    header = json.loads(lines[0])
    header["samples"]["epochs"] = 10**9
    art.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    (tmp_path / "checks.yaml").write_text(
        "checks:\n  - {id: r, metric: recall@1, op: '>=', threshold: 0.5}\n")
    res = runner.invoke(app, ["gate", "--checks", "checks.yaml", "--run", str(art)])
    assert res.exit_code == 2, res.output
    assert "2999999994 of 3000000000 (case, sample) pairs have no row" in res.output, \
        res.output
    assert "Traceback" not in res.output and "MemoryError" not in res.output


def test_an_empty_executor_name_on_the_command_line_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "evalkit.yaml").write_text(yaml_config(project(tmp_path)))
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["run", "--no-progress", "--executor", ""])
    assert res.exit_code == 2, res.output  # before: ran on the local executor, silently
    assert res.output.strip() == ("error: --executor needs a name: local (threads, the "
                                  "default) or dask (the evalkit-dask plugin)")
    assert not (tmp_path / "runs").exists()
