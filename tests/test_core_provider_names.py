"""Names in messages and headers: a did-you-mean never suggests the name it refuses
(:func:`evalkit.io.error_messages.close_matches`, used by every did-you-mean), and a
metric a plugin's module registers at run time (a config section's ``apply``) is
recorded under the plugin's distribution
(:func:`evalkit.core.providers.recorded_provider`)."""

from __future__ import annotations

from typing import Any

from evalkit.core.metric_lookup import unknown_message
from evalkit.core.providers import Provider, recorded_provider
from evalkit.core.registry import Registry
from evalkit.io.error_messages import close_matches
from evalkit.io.model_errors import did_you_mean
from evalkit.plugins.info import PluginInfo


def test_a_did_you_mean_never_suggests_the_name_typed() -> None:
    assert close_matches("ndcg@10", ["ndcg@10", "ndcg@20"]) == ["ndcg@20"]
    assert close_matches("abc", ["abc"]) == []
    assert unknown_message({"at_least_4_words"}, "at_least_4_words") == (
        "unknown metric 'at_least_4_words'.")
    assert "did you mean 'ndcg@k'" not in unknown_message({"ndcg@k"}, "ndcg@10")
    assert did_you_mean("word", ["word"]) == ""
    assert did_you_mean("wrod", ["word"]) == " (did you mean 'word'?)"


def _metric(module: str) -> Any:
    def fn(response: Any, case: Any) -> float:
        return 1.0

    fn.__module__ = module  # where the registering code lives
    return fn


def test_a_metric_a_plugins_module_registers_is_recorded_under_its_distribution() -> None:
    reg = Registry()
    reg.plugins.append(PluginInfo(name="wordy", distribution="evalkit-wordy",
                                  version="0.1.0", module="evalkit_wordy.plugin"))
    # registered at run time from the plugin's config section's apply
    reg.register_metric("at_least_4_words", higher_is_better=True)(
        _metric("evalkit_wordy.plugin"))
    # ... for that plugin, whose distribution it is listed with
    assert reg.provider_of("at_least_4_words") == Provider(
        module="evalkit_wordy.plugin", distribution="evalkit-wordy", version="0.1.0",
        plugin="wordy")
    assert recorded_provider(reg.provider_of("at_least_4_words"), reg.plugins) == "evalkit-wordy"
    # a project's own module: no distribution known, the module is recorded
    reg.register_metric("longer", higher_is_better=True)(_metric("localmetrics"))
    assert recorded_provider(reg.provider_of("longer"), reg.plugins) == "localmetrics"
