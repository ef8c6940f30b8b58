"""A comparison reads a metric's direction from the definition that scored the runs.

The run header records each metric's and aggregate's polarity next to its provider and
version; a ``vs_baseline`` gate and ``evalkit compare`` refuse (exit 2) when the
definition registered now has the opposite polarity (another plugin providing the name,
or a release that flipped it without a new definition version) or when the two runs
recorded opposite ones, naming both definitions; a provider that differs with the same
polarity is a warning. A run written before headers recorded the polarity is compared by
the current definition's, as before. Each command runs through the real ``evalkit``
script, in projects whose local plugins are written here.

The numbers: the baseline answers 3 words on each of 40 cases; the candidate 5 on cases
1-30 and 3 on the rest, so ``words`` rises by 30 * 2 / 40 = +1.5 on average, with 30
cases moved (all up) and 10 tied.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(sys.executable).with_name("evalkit")

WORDS = '''
import os

from evalkit import hookimpl
from evalkit.core.specs import AggregateSpec, MetricSpec

HIGHER = os.environ.get("{env}", "{default}") == "higher"


def words(response, case):
    return float(len((response.text or "").split()))


def total(rows):
    return float(sum(len((r.response.text or "").split()) for r in rows))


@hookimpl
def evalkit_register_metrics():
    return [MetricSpec("words", words, higher_is_better=HIGHER)]


@hookimpl
def evalkit_register_aggregates():
    return [AggregateSpec("words_total", total, higher_is_better=HIGHER)]
'''

TARGETS = '''
from evalkit.data.targets import CallableTarget


def base():
    return CallableTarget(lambda case: "one two three", name="base")


def cand():
    return CallableTarget(
        lambda case: "one two three four five" if int(case.id) <= 30 else "one two three",
        name="cand")
'''

CHECKS = ("checks:\n"
          "  - {id: words_kept, metric: words, vs_baseline: no_significant_regression}\n")
AGG_CHECKS = ("checks:\n"
              "  - {id: total_kept, metric: words_total, vs_baseline: no_significant_regression}\n")


def evalkit(folder: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(folder)}
    for key in ("EVALKIT_DEBUG", "WORDS_POL", "FORK_POL"):
        env.pop(key, None)
    env.update(extra)
    return subprocess.run([str(SCRIPT), *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def write_project(folder: Path, plugin: str, source: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{plugin}.py").write_text(textwrap.dedent(source))
    (folder / "pyproject.toml").write_text(
        f'[tool.evalkit]\nplugins = []\nlocal_plugins = ["{plugin}"]\n')
    (folder / "checks.yaml").write_text(CHECKS)
    (folder / "agg_checks.yaml").write_text(AGG_CHECKS)


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(scored, fork)``: ``scored`` made the runs with ``words`` lower-is-better
    (module ``words_mine``); ``fork`` holds copies of them and a module ``words_fork``
    that registers ``words`` higher-is-better (``FORK_POL=lower``: lower)."""
    root = tmp_path_factory.mktemp("polarity")
    scored, fork = root / "scored", root / "fork"
    write_project(scored, "words_mine", WORDS.format(env="WORDS_POL", default="lower"))
    write_project(fork, "words_fork", WORDS.format(env="FORK_POL", default="higher"))
    (scored / "targets.py").write_text(textwrap.dedent(TARGETS))
    (scored / "goldens.jsonl").write_text("".join(
        json.dumps({"id": str(i), "query": f"q{i}", "expected": "x"}) + "\n"
        for i in range(1, 41)))
    for name in ("base", "cand"):
        (scored / f"{name}.yaml").write_text(
            f"goldens: goldens.jsonl\ntarget: {{factory: 'targets:{name}'}}\n"
            f"metrics: [words]\naggregates: [words_total]\noutput: out/{name}.jsonl\n")
        made = evalkit(scored, "run", f"{name}.yaml", "--no-progress")
        assert made.returncode == 0, (made.stdout, made.stderr)
    (fork / "out").mkdir()
    for name in ("base", "cand"):
        shutil.copy(scored / "out" / f"{name}.jsonl", fork / "out" / f"{name}.jsonl")
    return scored, fork


def header(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text().splitlines()[0]))


def gate(folder: Path, checks: str = "checks.yaml", base: str = "out/base.jsonl",
         **env: str) -> subprocess.CompletedProcess[str]:
    return evalkit(folder, "gate", "-c", checks, "-r", "out/cand.jsonl", "-b", base, **env)


def test_the_header_records_each_metric_s_and_aggregate_s_polarity(
        projects: tuple[Path, Path]) -> None:
    h = header(projects[0] / "out" / "base.jsonl")
    assert h["metrics"]["words"]["higher_is_better"] is False
    assert h["aggregate_definitions"]["words_total"]["higher_is_better"] is False
    assert h["metrics"]["words"]["provider"] == "words_mine"


def test_the_gate_of_the_scoring_definition_finds_the_regression(
        projects: tuple[Path, Path]) -> None:
    res = gate(projects[0])
    assert res.returncode == 1, (res.stdout, res.stderr)
    assert "+1.5000" in res.stdout and "lower is better): regressed" in res.stdout


@pytest.mark.parametrize("checks", ["checks.yaml", "agg_checks.yaml"])
def test_a_gate_under_a_definition_of_the_opposite_polarity_is_an_error(
        projects: tuple[Path, Path], checks: str) -> None:
    res = gate(projects[1], checks)
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert "improved" not in res.stdout and "gate passed" not in res.stdout
    name = "words" if checks == "checks.yaml" else "words_total"
    assert (f"{name}: run 'cand' was scored by words_mine definition v1, lower is "
            f"better, but the definition registered now is words_fork definition "
            f"v1, higher is better") in res.stdout
    assert "Load the plugin that scored the runs (words_mine)" in res.stdout


def test_a_release_that_flips_the_polarity_without_a_new_version_is_an_error(
        projects: tuple[Path, Path]) -> None:
    res = gate(projects[0], WORDS_POL="higher")
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert ("words: run 'cand' was scored by words_mine definition v1, lower is "
            "better, but the definition registered now is words_mine definition v1, "
            "higher is better") in res.stdout


def test_compare_refuses_a_definition_of_the_opposite_polarity(
        projects: tuple[Path, Path]) -> None:
    scored, fork = projects
    good = evalkit(scored, "compare", "out/base.jsonl", "out/cand.jsonl", "--json")
    assert good.returncode == 0, good.stderr
    row = json.loads(good.stdout)["comparisons"][0]
    # lower is better: the 30 cases that rose are losses
    assert (row["wins"], row["ties"], row["losses"]) == (0, 10, 30)
    assert row["higher_is_better"] is False
    res = evalkit(fork, "compare", "out/base.jsonl", "out/cand.jsonl")
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert res.stderr.startswith(
        "error: words: out/base.jsonl was scored by words_mine definition v1, lower "
        "is better, but the definition registered now is words_fork definition v1, "
        "higher is better")
    assert "Traceback" not in res.stderr


def test_a_provider_that_differs_with_the_same_polarity_is_a_warning(
        projects: tuple[Path, Path]) -> None:
    fork = projects[1]
    res = gate(fork, FORK_POL="lower")
    assert res.returncode == 1, (res.stdout, res.stderr)  # the regression still found
    assert ("note: words: run 'cand' was scored by words_mine definition v1, lower "
            "is better, but the definition registered now is words_fork definition "
            "v1, lower is better") in res.stdout
    compared = evalkit(fork, "compare", "out/base.jsonl", "out/cand.jsonl", "--json",
                       FORK_POL="lower")
    assert compared.returncode == 0, compared.stderr
    data = json.loads(compared.stdout)
    assert any("registered now is words_fork" in w for w in data["warnings"])
    row = data["comparisons"][0]
    assert (row["wins"], row["ties"], row["losses"]) == (0, 10, 30)


def test_runs_that_recorded_opposite_polarities_are_not_compared(
        projects: tuple[Path, Path], tmp_path: Path) -> None:
    scored = projects[0]
    flipped = evalkit(scored, "run", "cand.yaml", "--no-progress", "-o", "out/flip.jsonl",
                      "--overwrite", WORDS_POL="higher")
    assert flipped.returncode == 0, flipped.stderr
    assert header(scored / "out" / "flip.jsonl")["metrics"]["words"]["higher_is_better"]
    res = evalkit(scored, "compare", "out/base.jsonl", "out/flip.jsonl")
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert ("metric words defined differently (words_mine definition v1, lower is "
            "better vs words_mine definition v1, higher is better)") in res.stderr
    res = evalkit(scored, "gate", "-c", "checks.yaml", "-r", "out/flip.jsonl",
                  "-b", "out/base.jsonl")
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert ("words was scored with opposite polarities: run 'cand' by words_mine "
            "definition v1, higher is better, baseline 'base' by words_mine "
            "definition v1, lower is better") in res.stdout


def test_runs_written_before_the_header_recorded_polarity_use_the_current_one(
        projects: tuple[Path, Path]) -> None:
    from evalkit.data.results import RunResult

    fork = projects[1]
    for name in ("base", "cand"):
        run = RunResult.load(fork / "out" / f"{name}.jsonl")
        for key in ("metrics", "aggregate_definitions"):
            for entry in run.header[key].values():
                entry.pop("higher_is_better")
        run.save(fork / "out" / f"old_{name}.jsonl")
    res = evalkit(fork, "gate", "-c", "checks.yaml", "-r", "out/old_cand.jsonl",
                  "-b", "out/old_base.jsonl", FORK_POL="lower")
    assert res.returncode == 1, (res.stdout, res.stderr)
    assert "lower is better): regressed" in res.stdout
    assert "the run records no polarity" in res.stdout  # and the provider differs
    # an old run and a new one are compared alike (no polarity recorded: no difference)
    mixed = evalkit(projects[0], "compare", "out/base.jsonl",
                    str(fork / "out" / "old_cand.jsonl"), "--json")
    assert mixed.returncode == 0, mixed.stderr
    row = json.loads(mixed.stdout)["comparisons"][0]
    assert (row["wins"], row["ties"], row["losses"]) == (0, 10, 30)
