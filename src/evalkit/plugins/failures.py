"""A plugin's code that failed while evalkit called it: one error naming the record, its
plugin and what went wrong.

The kernel calls a plugin's code through its records (a reporter's ``render`` and
``record``, a config section's ``apply``...). When that code raises an exception its
record's contract does not allow, or returns what the contract does not allow (a
``render`` that returns ``None``), the caller raises :class:`PluginCallError`: the command
line prints its message as one ``error:`` line and exits 2 (the traceback with
``EVALKIT_DEBUG=1``), never 1, which means a "no" verdict (a failed gate).
"""

from __future__ import annotations

from typing import Any

#: What the kernel catches around a call of plugin or target code (a reporter's ``render``,
#: a config section's ``apply``, a target's ``invoke``, a metric or an aggregate): every
#: ``Exception`` and ``SystemExit``, so that a ``sys.exit()`` in that code (or in a library
#: it calls) is that code's failure like any other and never chooses the command's exit
#: status. ``KeyboardInterrupt`` (Ctrl-C), ``GeneratorExit`` and the kernel's own stop
#: signals (``RunAborted``, ``SpendingLimitReached``, also ``BaseException``) pass through.
PLUGIN_FAILURES: tuple[type[BaseException], ...] = (Exception, SystemExit)


class PluginCallError(Exception):
    """A plugin's code raised, or broke its record's contract, while evalkit called it (a
    bug of the plugin). The message names the record, the plugin and what happened."""


def provider_text(spec: Any, namespace: str, registry: Any = None) -> str:
    """Who registered ``spec`` in ``namespace`` of ``registry`` (default: the process-wide
    one): ``plugin evalkit-mine 0.1.0 (evalkit_mine.plugin)``, ``module my_tests``, or
    ``an unknown provider`` when ``spec`` is not registered there."""
    if registry is None:
        from evalkit.plugins.default import default_registry

        registry = default_registry()
    for _, _, entry in registry.entries(namespace):
        if entry.spec is spec:
            provider = entry.provider
            return f"plugin {provider}" if provider.distribution else str(provider)
    return "an unknown provider"


def plugin_call_error(spec: Any, namespace: str, call: str, what: BaseException | str,
                      registry: Any = None) -> PluginCallError:
    """The error for the ``call`` (``render``, ``apply``...) of the record ``spec``
    (registered in ``namespace``) that raised ``what`` (an exception, shown as
    ``Type: message`` with registered secrets masked) or did ``what`` (a text such as
    ``"returned None, not text"``)."""
    from evalkit.io.redaction import error_text  # logging and traceback: on failures only

    did = f"raised {error_text(what)}" if isinstance(what, BaseException) else what
    name = getattr(spec, "name", "?")
    return PluginCallError(
        f"the {namespace} {name!r} of {provider_text(spec, namespace, registry)}: its "
        f"{call} {did}. This is a bug of the plugin, not of your files or options: "
        "report it to the plugin's authors (EVALKIT_DEBUG=1 shows the traceback)")


__all__ = ["PLUGIN_FAILURES", "PluginCallError", "plugin_call_error", "provider_text"]
