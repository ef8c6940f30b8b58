"""A plugin that uses evalkit's registry from a second thread while it is imported (a
warm-up pool that resolves metrics, then joins) never hangs discovery: the thread it
started is answered with the registry being filled, as the importing thread is; a thread
that was already running waits for the discovery at most ``DISCOVERY_WAIT_S`` seconds,
then gets a RegistryError naming the plugin being imported.

Commands run in real child processes under a timeout: before, every command hung.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import evalkit.plugins.default as default
from evalkit.core.registry import Registry, RegistryError
from evalkit.plugins.filling import filling, import_plugin
from evalkit.testing.child_runs import EVALKIT_COMMAND

TIMEOUT = 90  # seconds: a child still running then is waiting for itself

PLUGIN = '''
import threading

import evalkit

seen = []
t = threading.Thread(target=lambda: seen.append(len(evalkit.registered())))
t.start()
t.join()


@evalkit.register_metric("p1m", higher_is_better=True)
def p1m(response, case):
    return 1.0
'''


def _project(folder: Path) -> Path:
    (folder / "p1.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    (folder / "pyproject.toml").write_text('[tool.evalkit]\nlocal_plugins = ["p1"]\n',
                                           encoding="utf-8")
    (folder / "r.txt").write_text("q1 Q0 d1 1 3.0 t\n", encoding="utf-8")
    (folder / "q.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    return folder


def _child(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_PLUGINS"}
    return subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)


@pytest.mark.parametrize("args", [
    ("plugins", "list"),
    ("eval", "r.txt", "--qrels", "q.txt", "-m", "ap"),
])
def test_commands_finish(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = _child(_project(tmp_path), *EVALKIT_COMMAND, *args)
    assert done.returncode == 0, done.stderr
    if args[0] == "plugins":
        assert "p1m" in done.stdout or "p1" in done.stdout


def test_python_finishes_and_registers(tmp_path: Path) -> None:
    code = ("import evalkit; names = evalkit.registered(); import p1; "
            "print('p1m' in names, p1.seen[0] > 0)")
    done = _child(_project(tmp_path), sys.executable, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]


def test_a_thread_already_running_waits_with_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread alive before the discovery began is not answered with the partial
    registry: it waits, and past the bound it is told which plugin is being imported."""
    monkeypatch.setattr(default, "DISCOVERY_WAIT_S", 0.2)
    monkeypatch.setattr(default, "_default", None)
    errors: list[BaseException] = []
    started, release = threading.Event(), threading.Event()

    def waiter() -> None:
        started.wait()
        try:
            default.default_registry()
        except RegistryError as exc:
            errors.append(exc)

    worker = threading.Thread(target=waiter)
    worker.start()  # alive before the discovery below begins
    reg = Registry()
    with default._discovery_lock, filling(reg):
        def load() -> None:
            started.set()
            worker.join(timeout=30)
            release.set()

        import_plugin(reg, "slow_plugin", load)
    assert release.is_set() and len(errors) == 1
    assert "'slow_plugin'" in str(errors[0]) and "0.2 s" in str(errors[0])
