"""Suite-wide set-up: nothing a test run makes is left in the user's home folder.

The html reporter keeps its JavaScript bundle in a cache folder (``$EVALKIT_CACHE_DIR``,
else ``~/.cache/evalkit``); the suite points it at a temporary folder, removed at the end,
which subprocesses inherit through the environment.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_MADE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    if "EVALKIT_CACHE_DIR" not in os.environ:
        path = tempfile.mkdtemp(prefix="evalkit-test-cache-")
        _MADE.append(path)
        os.environ["EVALKIT_CACHE_DIR"] = path


def pytest_unconfigure(config: pytest.Config) -> None:
    for path in _MADE:
        shutil.rmtree(path, ignore_errors=True)
        os.environ.pop("EVALKIT_CACHE_DIR", None)
