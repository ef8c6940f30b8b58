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
print(json.dumps(os.environ.get("NUMPY_MADVISE_HUGEPAGE")), file=sys.stderr)
"""


def test_numpy_huge_pages_are_off_unless_the_user_chose(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    prepare_process()
    assert os.environ["NUMPY_MADVISE_HUGEPAGE"] == "0"
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    prepare_process()
    assert os.environ["NUMPY_MADVISE_HUGEPAGE"] == "1"


def test_the_command_sets_it_before_running() -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            timeout=60, env=env)
    assert json.loads(result.stderr.strip().splitlines()[-1]) == "0"
