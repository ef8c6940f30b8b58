"""evalkit.yaml errors about the target factory's module: a metric its module registers
is unknown when names are resolved (before the factory is imported), and the message
says how to load the module first (``local_plugins``); a factory that cannot be imported
is named with the config's line, as every other config error."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from evalkit.testing.child_runs import EVALKIT_COMMAND

MODULE = '''from evalkit import register_metric


def make():
    return lambda case: ["d1"]


@register_metric("mine", higher_is_better=True)
def mine(response, case):
    return 1.0
'''


def _run(folder: Path, config: str) -> subprocess.CompletedProcess[str]:
    (folder / "goldens.jsonl").write_text(
        json.dumps({"id": "q1", "query": "a", "answers": ["a"]}) + "\n")
    (folder / "mytargets.py").write_text(MODULE)
    (folder / "evalkit.yaml").write_text(config)
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_PLUGINS"}
    return subprocess.run([*EVALKIT_COMMAND, "run"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=120)


def test_unknown_metric_of_the_factory_module_names_local_plugins(tmp_path: Path) -> None:
    done = _run(tmp_path, 'goldens: goldens.jsonl\ntarget: {factory: "mytargets:make"}\n'
                "metrics: [mine]\noutput: runs/r.jsonl\n")
    assert done.returncode == 2, done.stderr
    err = " ".join(done.stderr.split())
    assert "unknown metric 'mine'" in err
    assert 'local_plugins = ["mytargets"] under [tool.evalkit] in pyproject.toml' in err
    assert ".. " not in err


def test_factory_import_error_names_the_line(tmp_path: Path) -> None:
    done = _run(tmp_path, "goldens: goldens.jsonl\nmetrics: [exact_match]\ntarget:\n"
                '  factory: "mytargets:nope"\noutput: runs/r.jsonl\n')
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(
        f"error: {tmp_path / 'evalkit.yaml'}:4: target.factory: cannot import "
        "'mytargets:nope'"), done.stderr
