"""What every test of the repository shares, in ``tests/`` and in each plugin's ``tests/``:
the number of workers ``-n auto`` starts, and compiled bytecode for the child processes
the tests start.

``-n auto`` (pyproject.toml's addopts) starts one worker more than the cores this process
may use: about a third of the suite's wall time is tests waiting, not computing (on a
local server, a pacing or retry delay, a child process starting), and the extra worker
computes meanwhile. On the 2-core machine, 3 workers take 225 s where 2 take 242 s.
``PYTEST_XDIST_AUTO_NUM_WORKERS`` or an explicit ``-n N`` still decide when given.

Many tests run ``evalkit`` as a user does, in a child process. Where
``PYTHONDONTWRITEBYTECODE`` is set, each of those children would compile every evalkit
module again from source; for the session the children instead keep their bytecode under
the session's temporary folder (``PYTHONPYCACHEPREFIX``), so nothing is written to the
source tree and each module is compiled once. Whoever runs the tests with
``PYTHONPYCACHEPREFIX`` already set keeps their choice; the test processes themselves are
left as they are.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


@pytest.fixture(autouse=True, scope="session")
def _children_keep_their_bytecode(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or "PYTHONPYCACHEPREFIX" in os.environ:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTHONDONTWRITEBYTECODE")
        patch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path_factory.getbasetemp() / "pycache"))
        yield
