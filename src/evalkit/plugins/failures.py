"""A plugin's code that failed while evalkit called it: one error naming the record, its
plugin and what went wrong.

The kernel calls a plugin's code through its records (a reporter's ``render`` and
``record``, a config section's ``apply``...). When that code raises an exception its
record's contract does not allow, or returns what the contract does not allow (a
``render`` that returns ``None``), the caller raises :class:`PluginCallError`
(:func:`evalkit.plugins.call_errors.plugin_call_error` words it): the command
line prints its message as one ``error:`` line and exits 2 (the traceback with
``EVALKIT_DEBUG=1``), never 1, which means a "no" verdict (a failed gate).
"""

from __future__ import annotations

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


__all__ = ["PLUGIN_FAILURES", "PluginCallError"]
