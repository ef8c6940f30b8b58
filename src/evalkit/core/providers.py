"""Who provides a registered name, and what happens when two providers claim one.

A :class:`Provider` is where a record came from (a distribution and its version, or a
client module); an :class:`Entry` is a record with its provider; a :class:`Conflict` is a
name two or more providers claim, blocked until one of them renames, is disabled or is
uninstalled, with the message that says so. :func:`same_definition` decides when a second
registration is the first one again (a no-op).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any, NamedTuple

from evalkit.core.specs import (
    AggregateSpec,
    AnySpec,
    CommandSpec,
    ConfigSectionSpec,
    ExecutorSpec,
    LoaderSpec,
    MetricFamily,
    MetricSpec,
    ReporterSpec,
    TargetSpec,
)


class RegistryError(LookupError):
    """A registration or lookup the registry refuses (unknown, blocked or duplicate name)."""


class Provider(NamedTuple):
    """Where a registered record came from.

    ``distribution`` and ``version`` are set for plugins found through entry points (and
    for the kernel's built-ins); client code is identified by its ``module``.
    """

    module: str
    distribution: str | None = None
    version: str | None = None
    plugin: str | None = None

    @property
    def is_client(self) -> bool:
        return self.distribution is None

    def __str__(self) -> str:
        if self.distribution:
            return f"{self.distribution} {self.version or '?'} ({self.module})"
        return f"module {self.module}"


class Entry(NamedTuple):
    """A registered record and its provider."""

    spec: AnySpec
    provider: Provider


class Conflict(NamedTuple):
    """Two or more providers of one name; the name is blocked, or (``kernel_keeps``) the
    kernel's built-in keeps it and the others' records are refused."""

    namespace: str
    name: str
    entries: list[Entry]
    kernel_keeps: bool = False
    #: ``name`` is a file suffix that loaders of one kind (``namespace``) claim, none with
    #: an ``accepts`` that tells its files apart
    suffix: bool = False

    def losers(self) -> list[Entry]:
        """The records that do not get the name (or suffix): all of them, or those other
        than the kernel's built-in when it keeps it."""
        return [e for e in self.entries if not (self.kernel_keeps and is_kernel(e.provider))]

    def message(self) -> str:
        if self.suffix:
            return self._suffix_message()
        kinds = [_role(e.spec, self.name) for e in self.entries]
        if len({e.provider for e in self.entries}) == 1:
            return (f"{self.entries[0].provider} registers {kinds[0]} name {self.name!r} "
                    "more than once; give each record its own name (the name is blocked "
                    "until then; see `evalkit plugins list`)")
        if len(set(kinds)) == 1:
            what = f"{kinds[0]} name {self.name!r} is provided by " + " and ".join(
                str(e.provider) for e in self.entries)
        else:  # say what each one provides (a metric here, an aggregate there)
            what = f"name {self.name!r} is provided by " + " and ".join(
                f"{e.provider} (as {'an' if kind[0] in 'aeiou' else 'a'} {kind})"
                for e, kind in zip(self.entries, kinds, strict=True))
        others = [e for e in self.entries if e.provider.module != _KERNEL_BUILTINS]
        if len(others) == len(self.entries):
            if any(e.provider.is_client for e in self.entries):  # a project's own module
                record = kinds[0] if len(set(kinds)) == 1 else "record"
                fix = f"renames its {record}, or is disabled or uninstalled"
            else:
                fix = "is disabled or uninstalled"
            return (f"{what}; it is blocked until one of them {fix} "
                    "(see `evalkit plugins list`)")
        # the kernel's built-ins cannot be disabled: the other provider must rename its record
        if self.kernel_keeps:
            refused = " and ".join(f"the {_kind_of(e.spec)} of {e.provider}" for e in others)
            return (f"{what}; the kernel's built-in keeps the name, and {refused} is not "
                    f"used until its plugin renames it (see `evalkit plugins list`)")
        who = " and ".join(f"{e.provider} must rename its {_kind_of(e.spec)}" for e in others)
        return (f"{what}; the kernel's built-ins cannot be disabled, so {who} (the name is "
                "blocked until then; see `evalkit plugins list`)")


    def _suffix_message(self) -> str:
        kind = self.namespace.partition(":")[2] or self.namespace
        who = " and ".join(f"{e.spec.name!r} of {e.provider}" for e in self.entries)
        losers = " and ".join(repr(e.spec.name) for e in self.losers())
        if self.kernel_keeps:
            kept = next(e.spec.name for e in self.entries if is_kernel(e.provider))
            outcome = (f"the kernel's built-in {kept!r} keeps reading them, and {losers} "
                       "reads such a file only when named")
        else:
            outcome = f"neither reads such a file unless named ({losers})"
        named = "goldens_loader: NAME in the eval config, " if kind == "goldens" else ""
        return (f"the {kind} loaders {who} both claim the suffix {self.name!r}, and no "
                f"accepts(path) tells their files apart; {outcome} ({named}loader=NAME in "
                "Python), until the plugin drops that suffix or gives its loader an "
                "accepts (see `evalkit plugins list`)")


#: The module of the kernel's built-in plugin, which cannot be disabled.
_KERNEL_BUILTINS = "evalkit.builtins"


def is_kernel(provider: Provider) -> bool:
    """Whether ``provider`` is the kernel's built-in plugin (:mod:`evalkit.builtins`)."""
    return provider.module == _KERNEL_BUILTINS


def _role(spec: AnySpec, name: str) -> str:
    """What ``name`` is of ``spec``, in words: its kind (``metric``), ``member of the
    ndcg@k family``, or ``alias of metric 'myndcg'`` (an alias that another record's
    family resolves is blocked like a name)."""
    if isinstance(spec, MetricFamily) and name != f"{spec.name}@k":
        return f"member of the {spec.name}@k family"
    if name != spec.name and name in getattr(spec, "aliases", ()):
        return f"alias of {_kind_of(spec)} {spec.name!r}"
    return _kind_of(spec)


def _kind_of(spec: AnySpec) -> str:
    """What a record is, in words: ``aggregate``, ``metric``, ``metric family``..."""
    if isinstance(spec, AggregateSpec):
        return "aggregate"
    if isinstance(spec, MetricFamily):
        return "metric family"
    if isinstance(spec, MetricSpec):
        return "count" if spec.kind == "count" else "metric"
    if isinstance(spec, LoaderSpec):
        return f"{spec.kind} loader"
    if isinstance(spec, ExecutorSpec):
        return "executor"
    if isinstance(spec, CommandSpec):
        return "command"
    if isinstance(spec, ConfigSectionSpec):
        return "config section"
    return "target" if isinstance(spec, TargetSpec) else "reporter"


def client_provider(obj: object) -> Provider:
    module = getattr(obj, "__module__", None)
    if not module:
        frame = inspect.currentframe()
        module = "<unknown>"
        if frame is not None and frame.f_back is not None and frame.f_back.f_back is not None:
            module = str(frame.f_back.f_back.f_globals.get("__name__", "<unknown>"))
    return Provider(module=str(module))


def plugin_provider(provider: Provider, plugins: Iterable[Any] = ()) -> Provider:
    """``provider``; for a record registered by a module (a config section's ``apply``
    calling ``evalkit.register_metric``, client code), the provider with the distribution,
    version and entry point of the plugin of ``plugins`` (the registry's
    :class:`~evalkit.plugins.info.PluginInfo` list) whose package holds that module
    (``evalkit_wordy.plugin`` is ``evalkit-wordy``'s), when there is one."""
    if provider.distribution:
        return provider
    package = provider.module.partition(".")[0]
    for info in plugins:
        distribution = getattr(info, "distribution", None)
        module = str(getattr(info, "module", "") or "")
        if distribution and module.partition(".")[0] == package:
            return Provider(provider.module, str(distribution), getattr(info, "version", None),
                            getattr(info, "name", None))
    return provider


def recorded_provider(provider: Provider, plugins: Iterable[Any] = ()) -> str:
    """Who provides a record, as a run header records it: the distribution of
    :func:`plugin_provider`, else the module."""
    owner = plugin_provider(provider, plugins)
    return owner.distribution or owner.module


def same_definition(a: AnySpec, b: AnySpec) -> bool:
    """Whether two records describe the same definition (a re-registration no-op)."""
    if type(a) is not type(b) or a.name != b.name:
        return False
    if isinstance(a, MetricSpec) and isinstance(b, MetricSpec):
        return a.fn is b.fn and a.higher_is_better == b.higher_is_better and a.kind == b.kind
    if isinstance(a, MetricFamily) and isinstance(b, MetricFamily):
        same_fn = a.factory is b.factory or (a.core is not None and a.core is b.core)
        return same_fn and a.higher_is_better == b.higher_is_better
    if isinstance(a, AggregateSpec) and isinstance(b, AggregateSpec):
        return a.fn is b.fn and a.higher_is_better == b.higher_is_better
    if isinstance(a, LoaderSpec) and isinstance(b, LoaderSpec):
        return a.fn is b.fn and a.kind == b.kind
    if isinstance(a, TargetSpec | ExecutorSpec) and isinstance(b, TargetSpec | ExecutorSpec):
        return a.factory is b.factory
    if isinstance(a, ReporterSpec) and isinstance(b, ReporterSpec):
        return a.render is b.render
    if isinstance(a, CommandSpec | ConfigSectionSpec):
        return a == b
    return False
