"""How the suite is spread over processes (pytest-xdist: ``-n auto --dist loadfile
--no-loadscope-reorder`` in pyproject.toml's ``addopts``; ``-n 0`` runs in one process).

Each test module runs whole in one worker, so a fixture of module scope (built wheels, a
browser, one run of an example) is made once. (``--dist loadgroup`` would let the other
tests spread one by one, but with pytest 9.2 it no longer groups anything:
pytest-dev/pytest-xdist#1386.) Modules are handed out in collection order, except that
the tests marked ``schedule_first`` (the wheel tests, minutes long) come first, so that
they do not start last and finish alone.

Nothing here changes what a test does; under ``-n 0`` only the order changes.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("schedule_first") is None)
