"""Helpers for testing evalkit plugins: a throwaway registry and a conformance suite.

Register a plugin for the duration of one test (the process-wide registry is restored
afterwards, so nothing leaks into other tests)::

    from evalkit.testing import registered_plugin

    def test_my_metric():
        with registered_plugin(my_package.plugin) as registry:
            assert registry.polarity("my_metric") is True

Run the conformance suite from a plugin's own tests, one pytest test per check::

    import pytest
    from evalkit.testing import conformance_checks

    @pytest.mark.parametrize("check", conformance_checks(my_package.plugin), ids=str)
    def test_conformance(check):
        check()

pytest users may also import the :func:`evalkit_registry` fixture into a ``conftest.py``
(``from evalkit.testing import evalkit_registry``): a fresh registry holding the kernel
built-ins, made the default for one test. pytest is imported only when that fixture is.

Holds the throwaway registry and the fixture (:mod:`.registry`), sample inputs
(:mod:`.samples`), the conformance suite (:mod:`.conformance`), the executors' check
(:mod:`.executors`: a small run whose rows must equal the local pool's), the checks of a
command's ``load``, a config section's model and a reporter's rendering
(:mod:`.extension_checks`), and ``evalkit
run`` as a child process to interrupt and resume, with the waits guarded against a hang
(:mod:`.child_runs`).

May import: io, stats, core, plugins, data, execute, report.
"""

from __future__ import annotations

from typing import Any

from evalkit.testing.child_runs import (
    EVALKIT_COMMAND,
    returns_within,
    spawn_run,
    started_ids,
    wait_until,
    write_project,
    written_rows,
)
from evalkit.testing.conformance import (
    ConformanceCheck,
    assert_conforms,
    check_conformance,
    conformance_checks,
)
from evalkit.testing.executors import executor_runs, without_timing
from evalkit.testing.registry import PluginLoadError, registered_plugin
from evalkit.testing.samples import Pair as Pair
from evalkit.testing.samples import sample_pairs, sample_rows

__all__ = [
    "EVALKIT_COMMAND",
    "ConformanceCheck",
    "PluginLoadError",
    "assert_conforms",
    "check_conformance",
    "conformance_checks",
    "executor_runs",
    "registered_plugin",
    "returns_within",
    "sample_pairs",
    "sample_rows",
    "spawn_run",
    "started_ids",
    "wait_until",
    "without_timing",
    "write_project",
    "written_rows",
]


def __getattr__(name: str) -> Any:
    if name == "evalkit_registry":  # the fixture imports pytest, so only when asked for
        from evalkit.testing.registry import _make_fixture

        fixture = _make_fixture()
        globals()[name] = fixture
        return fixture
    raise AttributeError(f"module 'evalkit.testing' has no attribute {name!r}")
