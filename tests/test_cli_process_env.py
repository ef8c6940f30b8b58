"""The settings the ``evalkit`` command makes before numpy is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit.cli.process_env import prepare_process

PROBE = """
import json, os, sys
sys.argv = ["evalkit", "eval", "--help"]
try:
    from evalkit.cli import main
    main()
except SystemExit:
    pass
print(json.dumps([os.environ.get("NUMPY_MADVISE_HUGEPAGE"),
                  os.environ.get("OPENBLAS_NUM_THREADS")]), file=sys.stderr)
"""


def test_huge_pages_and_blas_threads_are_off_unless_the_user_chose(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    prepare_process()
    assert os.environ["NUMPY_MADVISE_HUGEPAGE"] == "0"
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    prepare_process()
    assert os.environ["NUMPY_MADVISE_HUGEPAGE"] == "1"
    assert os.environ["OPENBLAS_NUM_THREADS"] == "4"


def test_the_command_sets_it_before_running() -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMPY_MADVISE_HUGEPAGE", "OPENBLAS_NUM_THREADS")}
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            timeout=60, env=env)
    assert json.loads(result.stderr.strip().splitlines()[-1]) == ["0", "1"]


def test_the_collector_is_held_for_the_command_and_started_again_unless_the_process_ends(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    from evalkit.cli import process_env

    assert gc.isenabled()
    with process_env.collector_held():
        assert not gc.isenabled()
    assert gc.isenabled()  # a command run in this process: the collector runs again
    monkeypatch.setattr(process_env, "_ends_with_command", True)
    try:
        with process_env.collector_held():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the console script: held to the exit
    finally:
        gc.enable()


PROBE_COMPARE = """
import gc, sys
import evalkit.cli.compare_cmd as cmd
from evalkit.cli import main
seen = []
real = cmd._compare_and_show
def spy(*a, **k):
    seen.append(gc.isenabled())
    return real(*a, **k)
cmd._compare_and_show = spy
sys.argv = ["evalkit", "compare", *sys.argv[1:]]
try:
    main()
finally:
    print(seen, gc.isenabled(), file=sys.stderr)
"""


def test_evalkit_compare_runs_without_the_collector(tmp_path: Path) -> None:
    from evalkit.data.results import QueryResult, RunResult

    paths = [RunResult(name, [QueryResult(f"q{i}", [], {"ap": (i * k % 7) / 7})
                              for i in range(30)]).save(tmp_path / f"{name}.jsonl")
             for k, name in ((1, "a"), (3, "b"))]
    result = subprocess.run([sys.executable, "-c", PROBE_COMPARE, *map(str, paths)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1] == "[False] False"
