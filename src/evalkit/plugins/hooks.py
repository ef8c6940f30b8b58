"""A plugin's hooks called and checked: what each hook may return, and the records it did.

:func:`collect_records` registers a plugin object with this module's :mod:`pluggy`
manager for the time of the call (the hookspecs are parsed once per process), refuses a
hook name evalkit does not define (``check_pending``) or an undecorated
``evalkit_register_*`` function, calls every hook and checks each record
(:func:`evalkit.core.record_checks.record_problem`). Nothing is registered here.
"""

from __future__ import annotations

import re
import threading
import traceback
from collections.abc import Iterable, Mapping
from typing import cast

import pluggy

from evalkit.core import hookspecs
from evalkit.core.record_checks import record_problem
from evalkit.core.specs import (
    SPEC_TYPES,
    AggregateSpec,
    AnySpec,
    CommandSpec,
    ConfigSectionSpec,
    ExecutorSpec,
    LoaderSpec,
    MeasureSyntaxSpec,
    MetricFamily,
    MetricSpec,
    ReporterSpec,
    RunEvaluatorSpec,
    RunFormatSpec,
    TargetSpec,
)
from evalkit.io.error_messages import close_matches
from evalkit.plugins.failures import PLUGIN_FAILURES

HOOKS: dict[str, tuple[type, ...]] = {
    "evalkit_register_metrics": (MetricSpec, MetricFamily),
    "evalkit_register_aggregates": (AggregateSpec,),
    "evalkit_register_loaders": (LoaderSpec,),
    "evalkit_register_targets": (TargetSpec,),
    "evalkit_register_reporters": (ReporterSpec,),
    "evalkit_register_executors": (ExecutorSpec,),
    "evalkit_register_measure_syntaxes": (MeasureSyntaxSpec,),
    "evalkit_register_run_formats": (RunFormatSpec,),
    "evalkit_register_run_evaluators": (RunEvaluatorSpec,),
    "evalkit_register_commands": (CommandSpec,),
    "evalkit_register_config_sections": (ConfigSectionSpec,),
}




class PluginError(Exception):
    """A plugin object cannot be registered (raised by :func:`collect_records`)."""




def new_plugin_manager() -> pluggy.PluginManager:
    """A :mod:`pluggy` manager of evalkit's hookspecs (:mod:`evalkit.core.hookspecs`)."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


#: the manager :func:`collect_records` checks plugins with, one at a time (each is
#: unregistered before the call returns), made on first use; a hook that loads plugins
#: itself re-enters the lock
_CHECKING: list[pluggy.PluginManager] = []
_CHECKING_LOCK = threading.RLock()


def _checking_manager() -> pluggy.PluginManager:
    if not _CHECKING:
        _CHECKING.append(new_plugin_manager())
    return _CHECKING[0]


def short_error(exc: BaseException) -> str:
    """One line for ``exc``: ``ValueError: ...``; a syntax error names its file and line
    (``/proj/myplug.py:3: invalid syntax``), which its last line alone would lose."""
    if isinstance(exc, SystemExit):  # its message would be its code alone
        return f"SystemExit({exc.code!r}) (a sys.exit() call)"
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f"{exc.filename}:{exc.lineno}" if exc.lineno else exc.filename
        return f"{where}: {exc.msg}"
    if isinstance(exc, pluggy.PluginValidationError):
        text = str(exc)
        hook = re.search(r"unknown hook '(\w+)'", text)
        if hook:  # a misspelt hook: name the plugin's function and the likely hook
            maybe = close_matches(hook.group(1), HOOKS)
            hint = f"; did you mean {maybe[0]}?" if maybe else f"; known hooks: {', '.join(HOOKS)}"
            return f"{hook.group(1)} is not an evalkit hook{hint}"
    else:
        text = traceback.format_exception_only(type(exc), exc)[-1].strip()
    # one line, whatever the message holds (the listing and the warnings are one line each)
    text = text.replace(".__init__()", "()")  # MetricSpec.__init__() missing ... -> MetricSpec()
    return " ".join(text.split())


def collect_records(plugin: object, name: str = "plugin") -> dict[str, list[AnySpec]]:
    """Call every hook ``plugin`` implements and return ``{hook name: records}``.

    Nothing is registered. Raises :class:`PluginError` when the plugin implements a hook
    evalkit does not define (``check_pending``), defines an ``evalkit_register_*``
    function without ``@hookimpl``, or a hook raises or returns something other than a
    list of the hook's records.
    """
    with _CHECKING_LOCK:
        pm = _checking_manager()
        try:
            registered = pm.register(plugin, name=name)
        except Exception as exc:
            raise PluginError(short_error(exc)) from exc
        try:
            return _called_hooks(pm, plugin)
        finally:
            if registered is not None:
                pm.unregister(plugin)


def _called_hooks(pm: pluggy.PluginManager, plugin: object) -> dict[str, list[AnySpec]]:
    """:func:`collect_records` once ``plugin`` is registered with ``pm``."""
    try:
        pm.check_pending()
    except Exception as exc:
        raise PluginError(short_error(exc)) from exc
    for attr in dir(plugin):
        if not attr.startswith("evalkit_register"):
            continue
        if callable(getattr(plugin, attr, None)) and pm.parse_hookimpl_opts(plugin, attr) is None:
            if attr in HOOKS:
                raise PluginError(f"{attr} is not decorated with @evalkit.hookimpl")
            raise PluginError(
                f"{attr} is not an evalkit hook; known hooks: {', '.join(HOOKS)}"
            )
    out: dict[str, list[AnySpec]] = {}
    for hook_name, allowed in HOOKS.items():
        impls = [impl for impl in getattr(pm.hook, hook_name).get_hookimpls()
                 if impl.plugin is plugin]
        if not impls:
            continue
        records: list[AnySpec] = []
        for impl in impls:
            try:
                result = impl.function()
            except PLUGIN_FAILURES as exc:
                raise PluginError(f"{hook_name}: {short_error(exc)}") from exc
            if result is None:
                raise PluginError(
                    f"{hook_name} returned None; return a list of records ([] to register "
                    "nothing)")
            if (isinstance(result, (str, bytes, Mapping, *SPEC_TYPES))
                    or not isinstance(result, Iterable)):
                raise PluginError(
                    f"{hook_name} returned {type(result).__name__}; expected a list of "
                    + " or ".join(t.__name__ for t in allowed)
                )
            try:  # a generator runs the plugin's code while it is read
                items = list(result)
            except PLUGIN_FAILURES as exc:
                raise PluginError(f"{hook_name}: {short_error(exc)}") from exc
            for number, rec in enumerate(items, 1):
                if not isinstance(rec, allowed):
                    kind = type(rec).__name__
                    what = "None" if rec is None else \
                        f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"
                    raise PluginError(
                        f"{hook_name}: item {number} of what it returned is {what}; "
                        "expected " + " or ".join(t.__name__ for t in allowed)
                    )
                problem = record_problem(rec)
                if problem is not None:
                    raise PluginError(f"{hook_name}: {problem}")
                if (
                    isinstance(rec, MetricSpec | MetricFamily | AggregateSpec)
                    and getattr(rec, "kind", "metric") == "metric"
                    and not isinstance(rec.higher_is_better, bool)
                ):
                    raise PluginError(
                        f"{hook_name}: {rec.name!r} declares no polarity "
                        f"(higher_is_better={rec.higher_is_better!r}); set True or False"
                    )
                if isinstance(rec, MetricFamily):
                    member = _member_problem(rec)
                    if member is not None:
                        raise PluginError(f"{hook_name}: {member}")
                records.append(cast(AnySpec, rec))
        out[hook_name] = records
    return out


#: the cut-off a family's factory is tried with when it is registered
_PROBE = {"int": 10, "float": 0.5}


def _member_problem(family: MetricFamily) -> str | None:
    """Why the member ``family`` makes for one cut-off (:data:`_PROBE`) is no member of it
    (:func:`evalkit.core.metric_lookup.member_problem`: misnamed, or another polarity);
    ``None`` when it is, or when the factory refuses that cut-off (``ValueError``,
    ``TypeError``: it is asked for others)."""
    from evalkit.core.metric_lookup import member_problem

    k = _PROBE.get(family.cutoff, 10)
    try:
        spec = family.factory(k)
    except (ValueError, TypeError):
        return None
    except PLUGIN_FAILURES as exc:
        return f"the {family.name}@k family's factory({k}) raised {short_error(exc)}"
    return member_problem(family, k, spec)
