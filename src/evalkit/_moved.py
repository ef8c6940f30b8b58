"""The module paths evalkit had before its kernel was grouped by stage, and where each went.

Code written against the flat layout (``from evalkit.results import RunResult``,
``import evalkit.registry``) keeps working: :data:`MOVED` maps every old path to its new
home, and :func:`install` puts a finder on :data:`sys.meta_path` (``import evalkit`` does)
that answers each old path with a thin re-export:

* a module that moved whole is the new module itself (``evalkit.results is
  evalkit.data.results``), so setting an attribute through either name sets it once;
* a module whose code was split (``evalkit.registry``: the :class:`Registry` in
  :mod:`evalkit.core.registry`, the default registry in :mod:`evalkit.plugins.default`) is
  a small module that looks each name up in the new modules, in the order listed;
* :data:`MOVED_PACKAGES` renames a package with its submodules (``evalkit.reporters.junit``
  is ``evalkit.report.junit``).

Type checkers read files, not finders: code that ``mypy --strict`` checks imports the new
paths (or the names of :mod:`evalkit` itself). A test imports every old path and checks
that the names it had are still there (tests/test_moved_modules.py).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

#: old module path -> the new module(s) holding its names, first match wins
MOVED: dict[str, tuple[str, ...]] = {
    "evalkit.hookspecs": ("evalkit.core.hookspecs",),
    "evalkit.metric_lookup": ("evalkit.core.metric_lookup",),
    "evalkit.metric_names": ("evalkit.core.metric_names",),
    "evalkit.pyproject_config": ("evalkit.core.pyproject_config",),
    "evalkit.registry": ("evalkit.core.registry", "evalkit.plugins.default"),
    "evalkit.specs": ("evalkit.core.specs",),
    "evalkit.artifact": ("evalkit.data.artifact",),
    "evalkit.beir": ("evalkit.data.beir",),
    "evalkit.cases": ("evalkit.data.cases",),
    "evalkit.coverage": ("evalkit.data.coverage",),
    "evalkit.goldens": ("evalkit.data.goldens", "evalkit.data.goldens_yaml",
                        "evalkit.data.goldens_models"),
    "evalkit.metric_info": ("evalkit.data.metric_info",),
    "evalkit.provenance": ("evalkit.data.provenance",),
    "evalkit.results": ("evalkit.data.results",),
    "evalkit.rows": ("evalkit.data.rows",),
    "evalkit.summaries": ("evalkit.data.summaries",),
    "evalkit.targets": ("evalkit.data.targets",),
    "evalkit.topics": ("evalkit.data.topics",),
    "evalkit.aggregates": ("evalkit.execute.aggregates",),
    "evalkit.artifact_writer": ("evalkit.execute.artifact_writer",),
    "evalkit.evalconfig": ("evalkit.execute.evalconfig", "evalkit.execute.evalconfig_models"),
    "evalkit.execution": ("evalkit.execute.executor",),
    "evalkit.measure_args": ("evalkit.execute.measure_args",),
    "evalkit.precomputed": ("evalkit.execute.precomputed",),
    "evalkit.progress": ("evalkit.execute.progress",),
    "evalkit.ranking": ("evalkit.execute.ranking",),
    "evalkit.run_files": ("evalkit.execute.run_files",),
    "evalkit.run_header": ("evalkit.execute.run_header", "evalkit.report.target_run"),
    "evalkit.runner": ("evalkit.execute.run_retriever",),
    "evalkit.scoring": ("evalkit.execute.scoring",),
    "evalkit.evaluation": ("evalkit.execute.target_runner", "evalkit.execute.rescore",
                           "evalkit.report.target_run"),
    "evalkit.baseline": ("evalkit.gate.baseline", "evalkit.gate.fingerprint"),
    "evalkit.checks": ("evalkit.gate.checks", "evalkit.gate.checks_models"),
    "evalkit.gate_report": ("evalkit.gate.verdicts",),
    "evalkit.bounded_yaml": ("evalkit.io.bounded_yaml",),
    "evalkit.error_messages": ("evalkit.io.error_messages",),
    "evalkit.headers": ("evalkit.io.headers",),
    "evalkit.input_files": ("evalkit.io.input_files",),
    "evalkit.limits": ("evalkit.io.limits",),
    "evalkit.outputs": ("evalkit.io.outputs",),
    "evalkit.redaction": ("evalkit.io.redaction",),
    "evalkit.runlock": ("evalkit.io.runlock",),
    "evalkit.formatting": ("evalkit.report.formatting",),
    "evalkit.numeric": ("evalkit.stats.numeric",),
    # modules main gained at the top level while the kernel was being regrouped
    "evalkit.check_ops": ("evalkit.gate.check_ops",),
    "evalkit.checks_models": ("evalkit.gate.checks_models",),
    "evalkit.evalconfig_models": ("evalkit.execute.evalconfig_models",),
    "evalkit.goldens_models": ("evalkit.data.goldens_models",),
    "evalkit.goldens_yaml": ("evalkit.data.goldens_yaml",),
    "evalkit.model_errors": ("evalkit.io.model_errors",),
    "evalkit.frame_inputs": ("evalkit.execute.frame_inputs",),
    "evalkit.frames": ("evalkit.report.frames",),
    "evalkit.tables": ("evalkit.report.tables",),
    "evalkit.run_views": ("evalkit.data.run_views",),
    "evalkit.judged_queries": ("evalkit.data.judged_queries",),
    "evalkit.ranked_ids": ("evalkit.data.ranked_ids",),
    "evalkit.cli.table_outputs": ("evalkit.report.table_outputs",),
}

#: old package -> new package; every submodule follows (``old.x`` is ``new.x``)
MOVED_PACKAGES: dict[str, str] = {
    "evalkit.reporters": "evalkit.report",
}


def new_homes(name: str) -> tuple[str, ...] | None:
    """The new module(s) of the old path ``name``, or None when it did not move."""
    if name in MOVED:
        return MOVED[name]
    for old, new in MOVED_PACKAGES.items():
        if name == old or name.startswith(old + "."):
            return (new + name[len(old):],)
    return None


class _Forward(ModuleType):
    """An old module whose names now live in several modules."""

    def __init__(self, name: str, homes: Sequence[str]) -> None:
        super().__init__(name, f"Moved: its names live in {', '.join(homes)}.")
        self.__homes = tuple(homes)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        for home in self.__homes:
            module = importlib.import_module(home)
            if hasattr(module, attr):
                return getattr(module, attr)
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")

    def __dir__(self) -> list[str]:
        names: set[str] = set()
        for home in self.__homes:
            names.update(dir(importlib.import_module(home)))
        return sorted(names)


class _Loader:
    def __init__(self, homes: tuple[str, ...]) -> None:
        self.homes = homes
        self.spec: Any = None

    def create_module(self, spec: Any) -> ModuleType:
        if len(self.homes) > 1:
            return _Forward(spec.name, self.homes)
        module = importlib.import_module(self.homes[0])
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        if self.spec is not None:  # the import system set the old name's spec on it
            module.__spec__ = self.spec


class _Finder:
    """Answers the old paths of :data:`MOVED` and :data:`MOVED_PACKAGES`, nothing else."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> Any:
        if not name.startswith("evalkit."):
            return None
        homes = new_homes(name)
        if homes is None:
            return None
        from importlib.machinery import ModuleSpec

        spec = ModuleSpec(name, _Loader(homes))  # type: ignore[arg-type]
        if name in MOVED_PACKAGES:
            spec.submodule_search_locations = []
        return spec


_FINDER = _Finder()


def install() -> None:
    """Answer the old module paths (once per process)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
