"""The test session's evalkit keeps its list of plugin commands
(:mod:`evalkit.plugins.command_list`) in a folder of the session's own: the tests' child
processes inherit it, and nothing is written to the user's cache folder."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def _command_cache_of_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if "EVALKIT_CACHE_DIR" in os.environ:  # chosen by whoever runs the tests
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EVALKIT_CACHE_DIR", str(tmp_path_factory.mktemp("evalkit-cache")))
        yield
