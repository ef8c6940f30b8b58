"""A plugin registered in a throwaway registry for one test, and the pytest fixture that
gives each test a fresh default registry."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from typing import Any

from evalkit.core.pyproject_config import PluginSelection, plugin_selection
from evalkit.core.registry import Provider, Registry
from evalkit.plugins.default import use_registry
from evalkit.plugins.discovery import ENTRY_POINT_GROUP
from evalkit.plugins.loading import load_builtins, load_plugins, register_plugin_object


class PluginLoadError(AssertionError):
    """The plugin under test could not be registered (the message says why)."""


def module_of(plugin: object) -> str:
    name = getattr(plugin, "__name__", None)
    if isinstance(name, str) and hasattr(plugin, "__file__"):
        return name
    return type(plugin).__module__


@contextmanager
def registered_plugin(
    plugin: object,
    *,
    name: str | None = None,
    distribution: str | None = None,
    version: str | None = None,
    installed: bool = False,
) -> Iterator[Registry]:
    """Register ``plugin`` in a fresh registry that is the default one inside the block.

    Args:
        plugin: a module or object with ``@hookimpl`` functions.
        name, distribution, version: the provenance to record (default: the module).
        installed: also load every installed plugin first (default: only the kernel
            built-ins), to test how the plugin coexists with them.

    Yields:
        The registry; on exit the previous default registry is restored.

    Raises:
        PluginLoadError: the plugin fails to load, or one of its names or aliases is
            already provided or resolved by another record (the message names both
            providers).
    """
    registry = Registry()
    module = module_of(plugin)
    if installed:  # every installed plugin but this one's own entry point
        others = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)
                  if ep.value.partition(":")[0].strip() != module]
        load_plugins(registry, selection=PluginSelection.everything(), entry_points=others)
    else:
        load_builtins(registry)
    provider = Provider(module=module, distribution=distribution, version=version,
                        plugin=name)
    try:
        info = register_plugin_object(registry, plugin, provider, name=name, from_plugin=False)
    except Exception as exc:
        raise PluginLoadError(f"{provider}: {exc}") from exc
    if info.status != "loaded":
        raise PluginLoadError(f"{provider}: {info.error}")
    # a clash that the registry records rather than raises (a kernel's name kept by it)
    mine = [c for c in registry.conflicts()
            if any(e.provider.module == module for e in c.entries)]
    if mine:
        raise PluginLoadError(f"{provider}: " + "; ".join(c.message() for c in mine))
    with use_registry(registry):
        yield registry


def load_beside_installed(registry: Registry, plugin: object) -> None:
    """Fill ``registry`` as ``evalkit plugins list --check`` does, but for ``plugin``:
    the kernel's built-ins, the installed plugins that the project's selection enables
    (``[tool.evalkit]`` of the nearest ``pyproject.toml``, or ``EVALKIT_PLUGINS``) and
    its local plugins, leaving out ``plugin``'s own entry point or local module, so that
    registering ``plugin`` next meets every name it would meet there.

    Raises:
        evalkit.core.pyproject_config.ConfigError: the project's ``[tool.evalkit]`` table
            is malformed. A plugin that fails to load is recorded, never raised.
    """
    module = module_of(plugin)
    selection = plugin_selection()
    selection = selection._replace(
        local_plugins=tuple(m for m in selection.local_plugins if m != module))
    others = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)
              if ep.value.partition(":")[0].strip() != module]
    load_plugins(registry, selection=selection, entry_points=others, strict=False,
                 warn=False)


def _make_fixture() -> Any:
    import pytest

    @pytest.fixture
    def evalkit_registry() -> Iterator[Registry]:
        """A fresh registry with the kernel built-ins, the default one for this test."""
        registry = Registry()
        load_builtins(registry)
        with use_registry(registry):
            yield registry

    return evalkit_registry
