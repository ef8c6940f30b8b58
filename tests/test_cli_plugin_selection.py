"""A ``[tool.evalkit] plugins`` list the installed plugins cannot meet (a plugin that is
not installed, a version pin the installed one refuses): every command that needs the
plugins, the ``--help`` of a plugin's command and an unknown command print one
``error:`` line naming the pyproject.toml and the fix and exit 2, without a traceback;
``evalkit --help`` still works. Each case runs ``evalkit`` as a child process in a
project folder of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.testing.child_runs import EVALKIT_COMMAND

SCRIPT = Path(sys.executable).with_name("evalkit")
COMMAND = (str(SCRIPT),) if SCRIPT.exists() else EVALKIT_COMMAND

SELECTIONS = {
    "missing": ('["evalkit-retrieval", "evalkit-nothere"]',
                "lists 'evalkit-nothere', but evalkit-nothere is not installed",
                "install it (`pip install 'evalkit-nothere'`) or take it out of that list"),
    "pinned": ('["evalkit-retrieval>=99"]',
               "lists 'evalkit-retrieval>=99', but evalkit-retrieval ",
               "install a version it accepts (`pip install 'evalkit-retrieval>=99'`) or "
               "change that requirement"),
}


def evalkit(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("EVALKIT_PLUGINS",
                                                             "EVALKIT_DEBUG")}
    env["EVALKIT_CACHE_DIR"] = str(folder / "cache")
    return subprocess.run([*COMMAND, *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("selection", sorted(SELECTIONS))
def test_an_unmet_plugin_list_is_one_error_line(tmp_path: Path, selection: str) -> None:
    pytest.importorskip("evalkit_retrieval")
    listed, problem, fix = SELECTIONS[selection]
    (tmp_path / "pyproject.toml").write_text(f"[tool.evalkit]\nplugins = {listed}\n",
                                             encoding="utf-8")
    (tmp_path / "q.txt").write_text("1 0 d1 1\n", encoding="utf-8")
    pyproject = tmp_path / "pyproject.toml"
    for args in (["eval", "--help"], ["eval", "run", "--qrels", "q.txt", "-m", "ndcg@10"],
                 ["nosuch"], ["fuse", "--help"]):
        done = evalkit(tmp_path, *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and "Traceback" not in done.stderr, (args, done.stderr)
        assert lines[0].startswith(f"error: {pyproject} [tool.evalkit] plugins {problem}")
        assert lines[0].endswith(fix), lines[0]
    helped = evalkit(tmp_path, "--help")
    assert helped.returncode == 0 and "Traceback" not in helped.stderr
    assert "Commands:" in helped.stdout
