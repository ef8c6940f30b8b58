"""The vocabulary every other part speaks: the records plugins return, the hookspecs, the
registry that holds the records, how measures are named, and the ``[tool.evalkit]`` table.

Holds the records (:mod:`.specs`) and hook specifications (:mod:`.hookspecs`), the
:class:`~evalkit.core.registry.Registry` with its provenance and conflict rules
(:mod:`.registry`: its keys, rules of adding, ``register_*`` decorators and lookups;
:mod:`.providers`), measure names and how a name finds its metric (:mod:`.metric_names`,
:mod:`.metric_lookup`), and the project's ``[tool.evalkit]`` table
with the plugin selection it makes (:mod:`.pyproject_config`).

May import: io. Nothing here finds or imports a plugin: discovery, and the default registry
it fills, are one floor up in :mod:`evalkit.plugins`.
"""
