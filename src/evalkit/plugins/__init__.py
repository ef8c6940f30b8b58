"""Plugins: found through entry points, loaded each on its own, listed; the default registry.

Holds what discovery learns about a plugin (:mod:`.info`), the calling and checking of its
hooks (:mod:`.hooks`), discovery from distribution metadata alone (:mod:`.discovery`), the
loading of the kernel's built-ins, the enabled entry points and the project's
``local_plugins`` (:mod:`.loading`), the registry being filled and what a plugin registers
while it is imported (:mod:`.filling`), the process-wide default registry that discovery
fills on first use, with ``register_metric`` / ``polarity`` / ``registered`` working on it
(:mod:`.default`), the ``evalkit plugins list`` report (:mod:`.listing`), the plugins'
commands as ``evalkit --help`` lists them, kept between runs (:mod:`.command_list`), what
counts as a plugin's failure and the error that names it (:mod:`.failures`,
:mod:`.call_errors`), what can be wrong with a config section's model
(:mod:`.section_models`), and the hook reference of docs/plugins.md (:mod:`.hookdocs`;
``python -m evalkit.plugins`` writes it).

May import: io, core. The kernel's built-in plugin (:mod:`evalkit.builtins`) sits above
every floor whose records it registers, so it is loaded by name, as an entry point is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit._lazy import lazy_exports

_LAZY: dict[str, str] = {
    "KERNEL_DISTRIBUTION": "evalkit.plugins.info",
    "PluginInfo": "evalkit.plugins.info",
    "HOOKS": "evalkit.plugins.hooks",
    "PluginError": "evalkit.plugins.hooks",
    "new_plugin_manager": "evalkit.plugins.hooks",
    "collect_records": "evalkit.plugins.hooks",
    "ENTRY_POINT_GROUP": "evalkit.plugins.discovery",
    "PluginSelectionError": "evalkit.plugins.discovery",
    "Candidate": "evalkit.plugins.discovery",
    "discover": "evalkit.plugins.discovery",
    "selection_problems": "evalkit.plugins.discovery",
    "PluginLoadWarning": "evalkit.plugins.loading",
    "register_plugin_object": "evalkit.plugins.loading",
    "KERNEL_PLUGIN": "evalkit.plugins.loading",
    "load_builtins": "evalkit.plugins.loading",
    "load_plugins": "evalkit.plugins.loading",
    "failure_message": "evalkit.plugins.loading",
    "import_optional": "evalkit.plugins.loading",
    "set_config": "evalkit.plugins.default",
    "default_registry": "evalkit.plugins.default",
    "set_default_registry": "evalkit.plugins.default",
    "use_registry": "evalkit.plugins.default",
    "register_metric": "evalkit.plugins.default",
    "register_aggregate": "evalkit.plugins.default",
    "register_loader": "evalkit.plugins.default",
    "polarity": "evalkit.plugins.default",
    "registered": "evalkit.plugins.default",
    "resolve": "evalkit.plugins.default",
    "NameInfo": "evalkit.plugins.listing",
    "describe_entry": "evalkit.plugins.listing",
    "PluginReport": "evalkit.plugins.listing",
    "plugin_report": "evalkit.plugins.listing",
    "REFERENCE_START": "evalkit.plugins.hookdocs",
    "REFERENCE_END": "evalkit.plugins.hookdocs",
    "hookspec_functions": "evalkit.plugins.hookdocs",
    "hookspec_doc_problems": "evalkit.plugins.hookdocs",
    "render_hook_reference": "evalkit.plugins.hookdocs",
    "sync_hook_reference": "evalkit.plugins.hookdocs",
}
__all__ = sorted(_LAZY)
# `evalkit --help` reads no plugin; pluggy and the registry load when something needs them
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

if TYPE_CHECKING:
    from evalkit.plugins.default import default_registry as default_registry
    from evalkit.plugins.default import polarity as polarity
    from evalkit.plugins.default import register_aggregate as register_aggregate
    from evalkit.plugins.default import register_loader as register_loader
    from evalkit.plugins.default import register_metric as register_metric
    from evalkit.plugins.default import registered as registered
    from evalkit.plugins.default import resolve as resolve
    from evalkit.plugins.default import set_config as set_config
    from evalkit.plugins.default import set_default_registry as set_default_registry
    from evalkit.plugins.default import use_registry as use_registry
    from evalkit.plugins.discovery import ENTRY_POINT_GROUP as ENTRY_POINT_GROUP
    from evalkit.plugins.discovery import Candidate as Candidate
    from evalkit.plugins.discovery import PluginSelectionError as PluginSelectionError
    from evalkit.plugins.discovery import discover as discover
    from evalkit.plugins.discovery import selection_problems as selection_problems
    from evalkit.plugins.hookdocs import REFERENCE_END as REFERENCE_END
    from evalkit.plugins.hookdocs import REFERENCE_START as REFERENCE_START
    from evalkit.plugins.hookdocs import hookspec_doc_problems as hookspec_doc_problems
    from evalkit.plugins.hookdocs import hookspec_functions as hookspec_functions
    from evalkit.plugins.hookdocs import render_hook_reference as render_hook_reference
    from evalkit.plugins.hookdocs import sync_hook_reference as sync_hook_reference
    from evalkit.plugins.hooks import HOOKS as HOOKS
    from evalkit.plugins.hooks import PluginError as PluginError
    from evalkit.plugins.hooks import collect_records as collect_records
    from evalkit.plugins.hooks import new_plugin_manager as new_plugin_manager
    from evalkit.plugins.info import KERNEL_DISTRIBUTION as KERNEL_DISTRIBUTION
    from evalkit.plugins.info import PluginInfo as PluginInfo
    from evalkit.plugins.listing import NameInfo as NameInfo
    from evalkit.plugins.listing import PluginReport as PluginReport
    from evalkit.plugins.listing import describe_entry as describe_entry
    from evalkit.plugins.listing import plugin_report as plugin_report
    from evalkit.plugins.loading import KERNEL_PLUGIN as KERNEL_PLUGIN
    from evalkit.plugins.loading import PluginLoadWarning as PluginLoadWarning
    from evalkit.plugins.loading import failure_message as failure_message
    from evalkit.plugins.loading import import_optional as import_optional
    from evalkit.plugins.loading import load_builtins as load_builtins
    from evalkit.plugins.loading import load_plugins as load_plugins
    from evalkit.plugins.loading import register_plugin_object as register_plugin_object
