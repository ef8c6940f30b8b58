"""The settings the ``evalkit`` command makes before numpy is imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys

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
