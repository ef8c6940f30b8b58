"""`evalkit gate` and the plugins' sections of the eval config: a metric a section
registers in its ``apply`` can be gated by a baseline check when the gate reads the
config (it applies the sections, as `evalkit run` does); without the config the message
says why the metric is unknown, and a did-you-mean never suggests the name refused.
A metric registered at run time by a plugin's module is recorded under the plugin's
distribution."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from evalkit.core.metric_lookup import unknown_message
from evalkit.core.providers import Provider, recorded_provider
from evalkit.core.registry import Registry
from evalkit.io.error_messages import close_matches
from evalkit.io.model_errors import did_you_mean
from evalkit.plugins.info import PluginInfo

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_SRC = REPO / "examples" / "evalkit-example-plugin" / "src"
SCRIPT = Path(sys.executable).with_name("evalkit")
COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [
    sys.executable, "-c", "from evalkit.cli import main; main()"]

CHECKS = """\
checks:
  - id: capitals
    metric: mentions_a_capital
    vs_baseline: no_significant_regression
"""


def _project(folder: Path) -> dict[str, str]:
    (folder / "pyproject.toml").write_text(
        '[tool.evalkit]\nlocal_plugins = ["evalkit_example_plugin.plugin"]\n',
        encoding="utf-8")
    (folder / "goldens.jsonl").write_text(
        "".join(json.dumps({"id": f"q{i}", "query": "capital?"}) + "\n" for i in (1, 2, 3)),
        encoding="utf-8")
    (folder / "target.py").write_text(textwrap.dedent('''
        ANSWERS = {"q1": "Paris, then Rome.", "q2": "Berlin", "q3": "no idea"}

        def make():
            return lambda case: ANSWERS[case.id]
    '''), encoding="utf-8")
    (folder / "evalkit.yaml").write_text(textwrap.dedent('''\
        goldens: goldens.jsonl
        target: {factory: "target:make"}
        keyword_metrics:
          mentions_a_capital: [paris, rome, berlin, madrid]
        metrics: [mentions_a_capital]
        output: runs/run.jsonl
    '''), encoding="utf-8")
    (folder / "c.yaml").write_text(CHECKS, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_PLUGINS"}
    env.update(PYTHONPATH=str(EXAMPLE_SRC), EVALKIT_CACHE_DIR="")
    return env


def _evalkit(folder: Path, env: dict[str, str], *args: str
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*COMMAND, *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_gate_applies_the_configs_sections(tmp_path: Path) -> None:
    env = _project(tmp_path)
    done = _evalkit(tmp_path, env, "run")
    assert done.returncode == 0, done.stderr
    gate = ["gate", "--checks", "c.yaml", "--run", "runs/run.jsonl",
            "--baseline", "runs/run.jsonl"]
    judged = _evalkit(tmp_path, env, *gate, "--config", "evalkit.yaml")
    assert judged.returncode == 0, judged.stdout + judged.stderr
    assert judged.stdout.startswith("capitals: pass (3/3 cases)")
    # without the config the gate cannot know the metric's polarity, and says why
    refused = _evalkit(tmp_path, env, *gate)
    assert refused.returncode == 2
    assert "capitals: error" in refused.stdout
    assert ("metric 'mentions_a_capital' is on the run's rows but not registered in this "
            "process") in refused.stdout
    assert "--config" in refused.stdout
    assert "did you mean 'mentions_a_capital'" not in refused.stdout


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
    assert reg.provider_of("at_least_4_words") == Provider(module="evalkit_wordy.plugin")
    assert recorded_provider(reg.provider_of("at_least_4_words"), reg.plugins) == "evalkit-wordy"
    # a project's own module: no distribution known, the module is recorded
    reg.register_metric("longer", higher_is_better=True)(_metric("localmetrics"))
    assert recorded_provider(reg.provider_of("longer"), reg.plugins) == "localmetrics"
