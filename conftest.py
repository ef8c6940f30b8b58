"""What every test of the repository shares, in ``tests/`` and in each plugin's ``tests/``:
the number of workers ``-n auto`` starts, and compiled bytecode for the child processes
the tests start.

``-n auto`` (pyproject.toml's addopts) starts one worker more than the cores this process
may use: about a third of the suite's wall time is tests waiting, not computing (on a
local server, a pacing or retry delay, a child process starting), and the extra worker
computes meanwhile. On the 2-core machine, 3 workers take 225 s where 2 take 242 s.
``PYTEST_XDIST_AUTO_NUM_WORKERS`` or an explicit ``-n N`` still decide when given.

Where ``PYTHONDONTWRITEBYTECODE`` is set, every test process would compile again from
source each test module (pytest rewrites their asserts: about 10 s a worker for the
suite) and every evalkit module it imports, and so would each of the child processes
many tests start to run ``evalkit`` as a user does. Instead, the test processes and their
children keep their bytecode in one folder of the system's temporary directory
(:func:`bytecode_folder`, as ``PYTHONPYCACHEPREFIX`` would), so nothing is written to
the source tree and each module is compiled once. Whoever runs the tests with
``PYTHONPYCACHEPREFIX`` already set keeps their choice.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def bytecode_folder() -> Path:
    """Where the tests keep bytecode when ``PYTHONDONTWRITEBYTECODE`` is set (one folder a
    user, outside the source tree; Python checks each file against its source)."""
    user = getattr(os, "getuid", lambda: "user")()
    return Path(tempfile.gettempdir()) / f"evalkit-tests-pycache-{user}"


_KEEP_BYTECODE = bool(os.environ.get("PYTHONDONTWRITEBYTECODE")) \
    and "PYTHONPYCACHEPREFIX" not in os.environ and sys.pycache_prefix is None
if _KEEP_BYTECODE:  # before pytest imports (and rewrites) the test modules
    sys.pycache_prefix = str(bytecode_folder())
    sys.dont_write_bytecode = False


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


@pytest.fixture(autouse=True, scope="session")
def _children_keep_their_bytecode() -> Iterator[None]:
    if not _KEEP_BYTECODE:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTHONDONTWRITEBYTECODE")
        patch.setenv("PYTHONPYCACHEPREFIX", str(bytecode_folder()))
        yield
