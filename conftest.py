"""What every test of the repository shares, in ``tests/`` and in each plugin's ``tests/``:
compiled bytecode for the child processes the tests start.

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


@pytest.fixture(autouse=True, scope="session")
def _children_keep_their_bytecode(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or "PYTHONPYCACHEPREFIX" in os.environ:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PYTHONDONTWRITEBYTECODE")
        patch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path_factory.getbasetemp() / "pycache"))
        yield
