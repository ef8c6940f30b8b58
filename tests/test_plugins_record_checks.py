"""What a plugin's records are checked for when it is registered: a metric family whose
members are not its own (another name, another polarity), and what a lookup says when a
member made later is not; a record named like one of the kernel's built-ins, of every
kind the kernel registers (the kernel keeps the name). Each plugin is registered into
its own ``Registry`` with the kernel's built-ins."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from evalkit import hookimpl
from evalkit.core.registry import Provider, Registry, RegistryError
from evalkit.core.specs import MetricFamily, MetricSpec
from evalkit.plugins.hooks import HOOKS
from evalkit.plugins.info import PluginInfo
from evalkit.plugins.loading import load_builtins, register_plugin_object

PROVIDER = Provider("fake_plugin.plugin", "fake-plugin", "0.2", "fake")


def hit(response: Any, case: Any) -> float:
    return 1.0


def registered(plugin: object) -> tuple[Registry, PluginInfo]:
    registry = Registry()
    load_builtins(registry)
    return registry, register_plugin_object(registry, plugin, PROVIDER)


def family_plugin(factory: Any, higher_is_better: bool = True) -> object:
    class Plugin:
        @hookimpl
        def evalkit_register_metrics(self) -> list[MetricFamily]:
            return [MetricFamily("fake_hit", factory, higher_is_better=higher_is_better)]

    return Plugin()


@pytest.mark.parametrize(("factory", "higher", "message"), [
    (lambda k: MetricSpec(f"fake_hit_{k}", hit, higher_is_better=True), True,
     "evalkit_register_metrics: the fake_hit@k family's factory(10) returned a metric named "
     "'fake_hit_10'; expected a MetricSpec named 'fake_hit@10' (a member is named by its "
     "family's name and its cut-off)"),
    (lambda k: MetricSpec(f"fake_hit@{k}", hit, higher_is_better=False), True,
     "evalkit_register_metrics: the fake_hit@k family declares higher_is_better=True, but "
     "its member 'fake_hit@10' declares False (gates would use the member's); declare one "
     "polarity for the family and its members"),
    (lambda k: 3, False,
     "the fake_hit@k family's factory(10) returned int; expected a MetricSpec named "
     "'fake_hit@10'"),
])
def test_a_family_whose_member_is_not_its_own_fails_the_plugin(
        factory: Any, higher: bool, message: str) -> None:
    registry, info = registered(family_plugin(factory, higher))
    assert info.status == "failed"
    assert info.error is not None and message in info.error
    assert "fake_hit@k" not in registry.registered()


def test_a_member_made_later_that_is_not_the_family_s_is_refused_naming_the_plugin() -> None:
    # right at the cut-off tried at registration, wrong at another
    def factory(k: int) -> MetricSpec:
        return MetricSpec(f"fake_hit@{k}" if k == 10 else f"hit{k}", hit,
                          higher_is_better=k == 10 or k != 3)

    registry, info = registered(family_plugin(factory))
    assert info.status == "loaded"
    assert registry.resolve("fake_hit@10").name == "fake_hit@10"
    with pytest.raises(RegistryError) as caught:
        registry.resolve("fake_hit@5")
    assert str(caught.value) == (
        "'fake_hit@5': the fake_hit@k family's factory(5) returned a metric named 'hit5'; "
        "expected a MetricSpec named 'fake_hit@5' (a member is named by its family's name "
        "and its cut-off). This is a bug of fake-plugin 0.2 (fake_plugin.plugin), which "
        "provides the family, not of your files or options: report it to its authors")


def test_a_family_that_refuses_the_tried_cut_off_still_loads() -> None:
    def factory(k: int) -> MetricSpec:
        if k > 5:
            raise ValueError("k must be at most 5")
        return MetricSpec(f"fake_hit@{k}", hit, higher_is_better=True)

    registry, info = registered(family_plugin(factory))
    assert info.status == "loaded"
    assert registry.polarity("fake_hit@5") is True


# ------------------------------------------- a kernel's name claimed by a plugin
def _kernel_records() -> list[tuple[str, str, Any]]:
    """One record of each kind the kernel's built-ins register (namespace, key, record)."""
    registry = Registry()
    load_builtins(registry)
    first: dict[str, tuple[str, str, Any]] = {}
    for ns, key, entry in registry.entries():
        first.setdefault(ns, (ns, key, entry.spec))
    return list(first.values())


def _other_definition(spec: Any) -> Any:
    """``spec`` with another function (or import string): not the same definition."""
    for field in ("fn", "factory", "render", "evaluate", "expand"):
        if hasattr(spec, field):
            return dataclasses.replace(spec, **{field: lambda *a, **k: None})
    return dataclasses.replace(spec, load="fake_plugin.commands:main")


KERNEL_RECORDS = _kernel_records()


def test_every_kind_the_kernel_registers_is_checked() -> None:
    namespaces = {ns.partition(":")[0] for ns, _, _ in KERNEL_RECORDS}
    assert namespaces == {"metric", "loader", "reporter", "executor", "command"}


@pytest.mark.parametrize(("namespace", "key", "kernel"), KERNEL_RECORDS,
                         ids=[f"{ns}:{key}" for ns, key, _ in KERNEL_RECORDS])
def test_a_plugin_record_named_like_a_kernel_built_in_is_refused_and_the_kernel_kept(
        namespace: str, key: str, kernel: Any) -> None:
    hook = next(h for h, kinds in HOOKS.items() if isinstance(kernel, kinds))
    mine = _other_definition(kernel)
    plugin = type("Plugin", (), {hook: staticmethod(hookimpl(lambda: [mine]))})()
    registry, info = registered(plugin)
    assert info.status == "loaded"
    kept = registry.resolve(key) if namespace == "metric" else registry.get(namespace, key)
    assert kept is not mine and type(kept) is type(kernel)
    [entry] = [e for _, k, e in registry.entries(namespace) if k == key]
    assert entry.provider.module == "evalkit.builtins"
    [conflict] = [c for c in registry.conflicts() if c.name == key]
    assert conflict.kernel_keeps and conflict.namespace == namespace
    assert "the kernel's built-in keeps the name, and the" in conflict.message()
    assert "of fake-plugin 0.2 (fake_plugin.plugin) is not used until its plugin renames " \
        "it" in conflict.message()


def test_a_plugin_alias_that_is_a_kernel_name_refuses_the_plugin_s_metric() -> None:
    aggregate = next(key for ns, key, _ in KERNEL_RECORDS if ns == "metric")

    class Plugin:
        @hookimpl
        def evalkit_register_metrics(self) -> list[MetricSpec]:
            return [MetricSpec("fake_metric", hit, higher_is_better=True,
                               aliases=(aggregate,))]

    registry, _ = registered(Plugin())
    assert registry.provider_of(aggregate).module == "evalkit.builtins"
    assert "fake_metric" not in registry.registered()
    [conflict] = [c for c in registry.conflicts() if c.name == "fake_metric"]
    assert conflict.kernel_keeps
