"""The commands plugins add (``CommandSpec`` records of ``evalkit_register_commands``) as
``evalkit --help`` lists them: kept between runs, so that listing them imports no plugin.

Only discovery knows the commands, and discovery imports every enabled plugin: about as
long as ``evalkit plugins list`` takes, beyond the start-up budget of ``evalkit --help``
(docs/performance.md). So :func:`listed_commands` writes what one discovery found to a
small JSON file, with what that discovery read, and uses the file while all of these are
unchanged, each compared by path, modification time and size (``os.stat``; no file is
read):

* the interpreter, evalkit's version, ``EVALKIT_PLUGINS`` and ``sys.path``;
* every folder of ``sys.path`` (installing, upgrading or removing a distribution changes
  its folder);
* the nearest ``pyproject.toml`` (its ``[tool.evalkit]`` selects the plugins);
* the files of each plugin's package that discovery imported (an editable plugin's
  source, a local plugin's module).

Anything else is discovered again and the file rewritten. The folder is
``EVALKIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/evalkit``, else ``~/.cache/evalkit``; one
file per interpreter, project and ``sys.path``; ``EVALKIT_CACHE_DIR=`` (empty) keeps
nothing. Running a command never reads the file: it discovers the plugins and takes the
command's record. The kernel's own commands are listed from the command line's table.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from evalkit._version import __version__
from evalkit.core.pyproject_config import ENV_PLUGINS, find_pyproject

#: the folder of the file (empty: keep no file)
ENV_CACHE_DIR = "EVALKIT_CACHE_DIR"
#: the layout of the file; another is ignored
FORMAT = 1
#: a larger file is not read (it was not written by evalkit)
MAX_BYTES = 1 << 20


def cache_dir() -> Path | None:
    """Where the file is kept, or ``None`` (``EVALKIT_CACHE_DIR`` set empty)."""
    chosen = os.environ.get(ENV_CACHE_DIR)
    if chosen is not None:
        return Path(chosen) if chosen.strip() else None
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "evalkit" if xdg else Path.home() / ".cache" / "evalkit"


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def snapshot() -> dict[str, Any]:
    """What discovery is about to read, taken before it runs (it puts a local plugin's
    folder on ``sys.path``): the interpreter, the settings, ``sys.path``, and the files to
    watch, ``sys.path``'s folders and the config file."""
    config = find_pyproject()
    paths = list(sys.path)
    watched = [os.path.abspath(p or os.curdir) for p in paths]
    if config is not None:
        watched.append(str(config))
    return {"format": FORMAT, "kernel": __version__, "python": sys.executable,
            "env": os.environ.get(ENV_PLUGINS), "sys_path": paths,
            "config": None if config is None else str(config), "watched": watched}


def _file(state: dict[str, Any]) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    # one file per interpreter, config and path (`python -c` puts the working folder on it)
    key = zlib.crc32("\0".join([state["python"], str(state["config"]), *state["watched"]])
                     .encode())
    return folder / f"commands-{key:08x}.json"


def read() -> list[dict[str, str]] | None:
    """The commands of the last discovery (``[{"name", "help", "provider"}]``), or
    ``None`` when there is no file or anything it records has changed."""
    now = snapshot()
    path = _file(now)
    try:
        if path is None or path.stat().st_size > MAX_BYTES:
            return None
        kept = json.loads(path.read_bytes())
        same = all(kept.get(k) == now[k] for k in ("format", "kernel", "python", "env",
                                                   "sys_path", "config", "watched"))
        if not same or any(_stat(p) != s for p, s in kept["stats"].items()):
            return None
        commands = kept["commands"]
        if all(isinstance(c, dict) and all(isinstance(c.get(k), str)
                                           for k in ("name", "help", "provider"))
               for c in commands):
            return list(commands)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # unreadable or not ours: discover again
    return None


def write(state: dict[str, Any], commands: list[dict[str, str]], files: Iterable[str]) -> None:
    """Keep ``commands``, found by the discovery that ``state`` (:func:`snapshot`, taken
    before it) and ``files`` (the plugins' files it imported) describe. A folder that
    cannot be written keeps nothing, silently: the next ``--help`` discovers again."""
    path = _file(state)
    if path is None:
        return
    # stated now, after discovery: importing a local plugin may have written its folder
    stats = {f: _stat(f) for f in [*state["watched"], *files]}
    kept = {**state, "stats": stats, "commands": commands}
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(kept), encoding="utf-8")
        os.replace(tmp, path)  # whole or not at all, for a reader at the same time
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def plugin_files(modules: Iterable[str]) -> list[str]:
    """The files discovery imported from the packages of ``modules`` (the plugins'
    modules, dotted), and the file of each module it could not import (a plugin that
    failed: fixing it must refresh the list)."""
    names = {m.partition(":")[0] for m in modules if m}
    tops = {m.split(".")[0] for m in names}
    files: set[str] = set()
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if name.split(".")[0] in tops and isinstance(file, str):
            files.add(file)
    missing = names - set(sys.modules)
    if missing:
        import importlib.util

        for name in missing:
            with contextlib.suppress(Exception):  # find_spec imports the parent package
                spec = importlib.util.find_spec(name)
                if spec is not None and spec.origin:
                    files.add(spec.origin)
    return sorted(files)


class ListedCommand(NamedTuple):
    """A plugin's command as ``evalkit --help`` lists it: its name, its one-line help and
    its provider."""

    name: str
    help: str
    provider: str


def _printable(text: str) -> str:
    return "".join(ch for ch in text if ch.isprintable())


def listed_commands() -> tuple[list[ListedCommand], str | None]:
    """``(the plugins' commands sorted by name, why none could be listed)``: from the
    kept file while it is current, else from a discovery (which imports the enabled
    plugins, none of their commands' ``load``) that rewrites it. A discovery that fails
    (a malformed ``[tool.evalkit]``) lists none, returns the error's message, and keeps
    nothing."""
    kept = read()
    if kept is None:
        from evalkit.core.pyproject_config import ConfigError
        from evalkit.plugins.discovery import PluginSelectionError

        try:
            kept = _discovered()
        except (ConfigError, PluginSelectionError) as exc:
            return [], str(exc)
    found = {c["name"]: ListedCommand(_printable(c["name"]), _printable(c["help"]),
                                      c["provider"]) for c in kept}
    return [found[name] for name in sorted(found)], None


def _discovered() -> list[dict[str, str]]:
    from evalkit.core.registry import Registry
    from evalkit.core.specs import CommandSpec
    from evalkit.plugins.loading import KERNEL_PLUGIN, load_plugins

    state = snapshot()
    registry = Registry()
    load_plugins(registry, strict=False, warn=False)
    commands = [{"name": key, "help": entry.spec.help, "provider": str(entry.provider)}
                for _, key, entry in registry.entries("command")
                if isinstance(entry.spec, CommandSpec) and entry.provider.module != KERNEL_PLUGIN]
    modules = [p.module for p in registry.plugins if p.origin != "kernel" and p.enabled]
    write(state, commands, plugin_files(modules))
    return commands


__all__ = ["ENV_CACHE_DIR", "ListedCommand", "cache_dir", "listed_commands", "plugin_files",
           "read", "snapshot", "write"]
