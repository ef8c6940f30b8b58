"""The message of a plugin's code that failed while evalkit called it: the record, who
provides it (its plugin's distribution and version) and what went wrong
(:class:`~evalkit.plugins.failures.PluginCallError`)."""

from __future__ import annotations

from typing import Any

from evalkit.plugins.failures import PluginCallError


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


__all__ = ["plugin_call_error", "provider_text"]
