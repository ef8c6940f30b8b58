"""An option the command would ignore is refused as its siblings are, "does not apply",
exit 2, one line; left at its default (not given), it is not refused:

* ``evalkit compare --test t-test`` with its own interval and Holm/BH/no correction draws
  no resample: ``-B``/``--seed`` are refused (a bootstrap ``--ci`` or Westfall-Young
  takes them);
* ``evalkit power BASE CAND --no-simulate``: ``--trials``/``--seed`` are refused;
* ``evalkit eval --overwrite`` without ``--save`` or ``--save-dir``: nothing to replace;
* ``evalkit fuse --method combsum --rrf-k 5``: rrf's k is refused as ``--norm`` with rrf
  and ``--weights`` without wsum are.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app

runner = CliRunner()


@pytest.fixture()
def runs(tmp_path: Path) -> tuple[Path, Path, Path]:
    rng = random.Random(5)
    qrels, a, b = tmp_path / "qrels", tmp_path / "a.txt", tmp_path / "b.txt"
    qrels.write_text("".join(f"{q} 0 d{q}-{d} {int(d < 3)}\n"
                             for q in range(1, 31) for d in range(10)))
    for path, tag in ((a, "a"), (b, "b")):
        lines = []
        for q in range(1, 31):
            docs = [f"d{q}-{d}" for d in range(10)]
            rng.shuffle(docs)
            lines += [f"{q} Q0 {d} {i + 1} {10 - i} {tag}\n" for i, d in enumerate(docs)]
        path.write_text("".join(lines))
    return qrels, a, b


def error_line(args: list[str]) -> str:
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in res.output, res.output
    return lines[0]


@pytest.mark.parametrize(("extra", "named"), [
    (["-B", "500"], "--resamples does not apply"),
    (["--seed", "9"], "--seed does not apply"),
    (["-B", "500", "--seed", "9"], "--resamples and --seed do not apply"),
])
def test_compare_t_test_refuses_resampling_options(runs: tuple[Path, Path, Path],
                                                   extra: list[str], named: str) -> None:
    qrels, a, b = runs
    base = ["compare", str(a), str(b), "--qrels", str(qrels), "-m", "ap"]
    assert error_line([*base, "--test", "t-test", *extra]).startswith(f"error: {named}")
    for uses in (["--ci", "bca"], ["--correction", "westfall-young"], ["--test", "bootstrap"]):
        test = [] if "--test" in uses else ["--test", "t-test"]
        res = runner.invoke(app, [*base, *test, *uses, *extra])
        assert res.exit_code == 0, (uses, res.output)
    assert runner.invoke(app, [*base, "--test", "t-test"]).exit_code == 0


def test_power_without_simulation_refuses_trials_and_seed(
        runs: tuple[Path, Path, Path]) -> None:
    qrels, a, b = runs
    base = ["power", str(a), str(b), "--qrels", str(qrels), "-m", "ap", "-n", "30",
            "--no-simulate"]
    assert error_line([*base, "--trials", "500", "--seed", "3"]).startswith(
        "error: --trials and --seed do not apply: with --no-simulate nothing is simulated")
    assert runner.invoke(app, base).exit_code == 0


def test_fuse_refuses_rrf_k_with_another_method(runs: tuple[Path, Path, Path],
                                                tmp_path: Path) -> None:
    _, a, b = runs
    base = ["fuse", str(a), str(b), "--method", "combsum", "-o", str(tmp_path / "f.txt")]
    assert "rrf's k applies to rrf only" in error_line([*base, "--rrf-k", "5"])
    assert runner.invoke(app, [*base, "--rrf-k", "60"]).exit_code == 0  # the default


def test_fuse_json_says_what_was_fused(runs: tuple[Path, Path, Path],
                                       tmp_path: Path) -> None:
    import json

    _, a, b = runs
    out = tmp_path / "f.txt"
    res = runner.invoke(app, ["fuse", str(a), str(b), "--method", "rrf", "-o", str(out),
                              "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["method"] == "rrf" and doc["rrf_k"] == 60.0 and doc["queries"] == 30
    assert doc["lines"] == len(out.read_text().splitlines()) == 300
    assert doc["runs"] == [str(a), str(b)] and doc["output"] == str(out)


def test_eval_refuses_overwrite_without_an_artifact_to_write(
        runs: tuple[Path, Path, Path]) -> None:
    qrels, a, _ = runs
    line = error_line(["eval", str(a), "--qrels", str(qrels), "-m", "ap", "--overwrite"])
    assert line.startswith("error: --overwrite does not apply")
