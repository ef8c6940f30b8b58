"""What a plugin's records are checked for when it is registered: a metric family whose
members are not its own (another name, another polarity), and what a lookup says when a
member made later is not; a record named like one of the kernel's built-ins, of every
kind the kernel registers (the kernel keeps the name); loaders of one kind that claim one
file suffix (a conflict; the kernel's loader keeps its suffixes). Each plugin is registered into
its own ``Registry`` with the kernel's built-ins."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit import hookimpl
from evalkit.core.registry import Provider, Registry, RegistryError
from evalkit.core.specs import LoaderSpec, MetricFamily, MetricSpec
from evalkit.data.goldens import load_goldens
from evalkit.execute.run_header import goldens_record
from evalkit.plugins.default import use_registry
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


# ------------------------------------------------- loaders claiming one suffix
def _read(path: Any, **options: Any) -> list[dict[str, str]]:
    return [{"id": "only", "query": "q"}]


def loader_plugin(*loaders: LoaderSpec) -> object:
    class Plugin:
        @hookimpl
        def evalkit_register_loaders(self) -> list[LoaderSpec]:
            return list(loaders)

    return Plugin()


def test_a_plugin_loader_claiming_a_kernel_suffix_is_a_conflict_the_kernel_wins(
        tmp_path: Path) -> None:
    registry, info = registered(loader_plugin(
        LoaderSpec("otherjsonl", "goldens", _read, (".jsonl", ".ojl"))))
    assert info.status == "loaded"
    [conflict] = [c for c in registry.conflicts() if c.suffix]
    assert (conflict.namespace, conflict.name, conflict.kernel_keeps) == (
        "loader:goldens", ".jsonl", True)
    assert conflict.message() == (
        "the goldens loaders 'jsonl' of paired-evalkit-core "
        f"{evalkit.__version__} (evalkit.builtins) and 'otherjsonl' of fake-plugin 0.2 "
        "(fake_plugin.plugin) both claim the suffix '.jsonl', and no accepts(path) tells "
        "their files apart; the kernel's built-in 'jsonl' keeps reading them, and "
        "'otherjsonl' reads such a file only when named (goldens_loader: NAME in the eval "
        "config, loader=NAME in Python), until the plugin drops that suffix or gives its "
        "loader an accepts (see `evalkit plugins list`)")
    assert registry.loader("goldens", path="g.JSONL").name == "jsonl"
    assert registry.loader("goldens", path="g.ojl").name == "otherjsonl"  # its own suffix
    assert registry.loader("goldens", name="otherjsonl").name == "otherjsonl"
    # the golden set records which loader read it, and the run header with it
    (tmp_path / "g.jsonl").write_text('{"id": "a", "query": "x"}\n{"id": "b", "query": "y"}\n')
    with use_registry(registry):
        gset = load_goldens(tmp_path / "g.jsonl")
        assert (len(gset), gset.loader) == (2, "jsonl")
        assert goldens_record(gset)["loader"] == "jsonl"
        assert load_goldens(tmp_path / "g.jsonl", "otherjsonl").loader == "otherjsonl"


def test_two_plugin_loaders_claiming_one_suffix_read_it_only_when_named() -> None:
    registry, _ = registered(loader_plugin(LoaderSpec("one", "run", _read, (".fmt",)),
                                           LoaderSpec("two", "run", _read, (".fmt",))))
    [conflict] = [c for c in registry.conflicts() if c.suffix]
    assert not conflict.kernel_keeps
    with pytest.raises(RegistryError) as caught:
        registry.loader("run", path="r.fmt")
    assert str(caught.value).startswith("no run loader for the suffix of r.fmt; known run "
                                        "loaders: ")
    assert "; the run loaders 'one' of fake-plugin 0.2 (fake_plugin.plugin) and 'two' of " \
        "fake-plugin 0.2 (fake_plugin.plugin) both claim the suffix '.fmt'" in str(caught.value)
    assert "neither reads such a file unless named ('one' and 'two')" in str(caught.value)
    assert registry.loader("run", name="two").name == "two"


def test_a_loader_with_accepts_shares_a_suffix_without_conflict() -> None:
    registry, _ = registered(loader_plugin(
        LoaderSpec("dialect", "goldens", _read, (".jsonl",), accepts=lambda path: False)))
    assert not [c for c in registry.conflicts() if c.suffix]
    assert registry.loader("goldens", path="g.jsonl").name == "jsonl"


def test_a_plugin_loader_named_like_the_kernel_s_leaves_the_kernel_s_reading(
        tmp_path: Path) -> None:
    registry, _ = registered(loader_plugin(LoaderSpec("jsonl", "goldens", _read, (".jsonl",))))
    assert registry.loader("goldens", path="g.jsonl").fn is not _read
    [conflict] = [c for c in registry.conflicts() if c.name == "jsonl"]
    assert conflict.kernel_keeps


# ------------------------------------------------------------- names and lists
def metrics_plugin(*records: Any) -> object:
    class Plugin:
        @hookimpl
        def evalkit_register_metrics(self) -> list[Any]:
            return list(records)

    return Plugin()


@pytest.mark.parametrize(("record", "message"), [
    (MetricSpec("a,b", hit, higher_is_better=True),
     "MetricSpec 'a,b': name 'a,b' holds a comma outside brackets, at which lists of "
     "names (-m a,b) are "
     "split, so it could never be asked for; write 'a_b'"),
    (MetricSpec("a b", hit, higher_is_better=True),
     "MetricSpec 'a b': name 'a b' holds whitespace; a name is one word (write 'a_b')"),
    (MetricSpec("a\nb", hit, higher_is_better=True),
     "MetricSpec 'a\\nb': name 'a\\nb' holds whitespace"),
    (MetricSpec("a\x1bb", hit, higher_is_better=True),
     "MetricSpec 'a\\x1bb': name 'a\\x1bb' holds a control character; remove it"),
    (MetricSpec("x@k", hit, higher_is_better=True),
     "MetricSpec 'x@k': name 'x@k' holds '@' where the syntax allows none: a metric's name "
     "may end in @CUTOFF, a number (as max_item_share@10); a family (name@k) is registered "
     "as a MetricFamily"),
    (MetricSpec("good", hit, higher_is_better=True, aliases=("g@o@d",)),
     "MetricSpec 'good': alias 'g@o@d' holds '@'"),
    (MetricFamily("fam@x", lambda k: MetricSpec(f"fam@x@{k}", hit, True),
                  higher_is_better=True),
     "MetricFamily 'fam@x': name 'fam@x' holds '@' where the syntax allows none: '@' "
     "separates a metric family's name from its cut-off, and this name is not a metric's"),
    (MetricSpec("fine", hit, higher_is_better=True), None),
    (MetricSpec("fine@10", hit, higher_is_better=True), None),
    (MetricSpec("fine@0.5", hit, higher_is_better=True), None),
    # -m splits only at commas outside brackets: this is one name
    (MetricSpec("contains(text=a,ignore_case=True)", hit, higher_is_better=True), None),
])
def test_a_name_that_cannot_be_asked_for_fails_the_plugin(record: Any,
                                                         message: str | None) -> None:
    registry, info = registered(metrics_plugin(record))
    if message is None:
        assert info.status == "loaded" and record.name in registry.registered()
        return
    assert info.status == "failed"
    assert info.error is not None and info.error.startswith(
        f"evalkit_register_metrics: {message}"), info.error
    with pytest.raises(RegistryError, match="holds"):  # client code: the same rule
        Registry().register_metric(record.name, higher_is_better=True)(hit) \
            if isinstance(record, MetricSpec) and not record.aliases else \
            Registry().add(record, Provider("client"))


def test_a_reporter_name_is_checked_as_well() -> None:
    from evalkit.core.specs import ReporterSpec

    class Plugin:
        @hookimpl
        def evalkit_register_reporters(self) -> list[ReporterSpec]:
            return [ReporterSpec("my rep", lambda report: "")]

    _, info = registered(Plugin())
    assert info.error == ("evalkit_register_reporters: ReporterSpec 'my rep': name 'my rep' "
                          "holds whitespace; a name is one word (write 'my_rep')")


def test_a_list_with_a_none_says_which_item() -> None:
    _, info = registered(metrics_plugin(MetricSpec("fine", hit, higher_is_better=True), None))
    assert info.error == ("evalkit_register_metrics: item 2 of what it returned is None; "
                          "expected MetricSpec or MetricFamily")
    _, info = registered(metrics_plugin(3))
    assert info.error == ("evalkit_register_metrics: item 1 of what it returned is an "
                          "int; expected MetricSpec or MetricFamily")
