"""Where the eval config is: ``evalkit.yaml`` or the ``[tool.evalkit]`` table of
``pyproject.toml``, found from the working folder (:func:`find_config`).

The one place that decides it, for ``evalkit run``, the gate and ``evalkit plugins
list``; kept apart from the reading and validating (:mod:`evalkit.execute.evalconfig`),
so that locating the file imports neither pydantic nor the runner.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalkit.core.pyproject_config import RUN_KEYS, YAML_NAMES

#: the keys that make a [tool.evalkit] table an eval config (the gate's settings are part
#: of it: a table with only those is an incomplete config, and is reported as one)
CONFIG_KEYS = RUN_KEYS | {"checks", "baseline", "reporters"}


class ConfigError(ValueError):
    """An eval config that cannot be used; the message names the file and the key."""


def find_config(start: str | Path | None = None) -> tuple[Path, str, str]:
    """``(file, kind, notice)`` of the eval config for ``start`` (default: the working
    folder). ``kind`` is ``"yaml"`` or ``"pyproject"``.

    The search walks up from ``start`` and stops at the first folder holding
    ``evalkit.yaml`` or ``pyproject.toml`` (the folder whose ``pyproject.toml`` also
    selects the plugins). There ``evalkit.yaml`` wins; the notice says so when the
    ``pyproject.toml`` next to it also has run settings.

    Raises:
        ConfigError: that folder has neither ``evalkit.yaml`` nor run settings in
            ``pyproject.toml`` (or no such folder exists).
    """
    from evalkit.io.symlink_loops import refuse_symlink_loop

    here = (Path(start) if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        for name in (*YAML_NAMES, "pyproject.toml"):
            refuse_symlink_loop(folder / name, "config", label="", error=ConfigError)
        yaml_file = next((folder / n for n in YAML_NAMES if (folder / n).is_file()), None)
        pyproject = folder / "pyproject.toml"
        if yaml_file is None and not pyproject.is_file():
            continue
        py_table = _pyproject_table(pyproject) if pyproject.is_file() else None
        py_has_run = py_table is not None and bool(CONFIG_KEYS & set(py_table))
        if yaml_file is not None:
            notice = ""
            if py_has_run:
                notice = (
                    f"using {yaml_file}; the run settings in {pyproject} [tool.evalkit] "
                    f"are ignored ({yaml_file.name} is evalkit's own file, so it wins)"
                )
            return yaml_file, "yaml", notice
        if py_has_run:
            return pyproject, "pyproject", ""
        raise ConfigError(
            f"{pyproject}: no eval config: its [tool.evalkit] has no run settings "
            "(goldens, target, metrics, output); add them, write evalkit.yaml next to it, "
            "or pass the config file"
        )
    raise ConfigError(
        f"{here}: no eval config: write evalkit.yaml, or goldens/target/metrics/output "
        "under [tool.evalkit] in pyproject.toml, or pass the config file"
    )


def _pyproject_table(path: Path) -> Mapping[str, Any] | None:
    from evalkit.core.pyproject_config import ConfigError as TomlError
    from evalkit.core.pyproject_config import read_tool_config

    try:
        return read_tool_config(path).table
    except TomlError as exc:
        raise ConfigError(str(exc)) from None


__all__ = ["CONFIG_KEYS", "ConfigError", "find_config"]
