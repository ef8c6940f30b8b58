"""evalkit.testing: the throwaway registry, the fixture, and the conformance suite, run
against the kernel built-ins, every in-repo plugin that is installed, and the example."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest

from evalkit import hookimpl
from evalkit.core.registry import RegistryError
from evalkit.core.specs import (
    AggregateSpec,
    CommandSpec,
    ConfigSectionSpec,
    LoaderSpec,
    MetricFamily,
    MetricSpec,
)
from evalkit.plugins.default import default_registry
from evalkit.testing import (
    PluginLoadError,
    check_conformance,
    conformance_checks,
    registered_plugin,
    sample_pairs,
)

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "evalkit-example-plugin"

# The in-repo plugin modules (entry points of plugins/*/pyproject.toml) and the kernel's.
IN_REPO = ["evalkit.builtins", "evalkit_retrieval.plugin", "evalkit_http.plugin",
           "evalkit_judge.plugin"]


def _module_or_skip(name: str) -> types.ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        pytest.skip(f"{name} is not installed here ({exc})")


@pytest.mark.parametrize("module_name", IN_REPO)
def test_in_repo_plugins_conform(module_name: str) -> None:
    module = _module_or_skip(module_name)
    failures = check_conformance(module)
    assert failures == []


def test_the_example_plugin_conforms() -> None:
    sys.path.insert(0, str(EXAMPLE / "src"))
    try:
        module = importlib.import_module("evalkit_example_plugin.plugin")
        ids = [c.id for c in conformance_checks(module)]
        assert check_conformance(module) == []
    finally:
        sys.path.remove(str(EXAMPLE / "src"))
        for name in ("evalkit_example_plugin.plugin", "evalkit_example_plugin"):
            sys.modules.pop(name, None)
    assert ids == [
        "plugin:loads",
        "metric:keyword_recall:polarity", "metric:keyword_recall:finite",
        "metric:keyword_recall:deterministic", "metric:keyword_recall:empty-response",
        "aggregate:answered_share:polarity", "aggregate:answered_share:empty-run-raises",
        "aggregate:answered_share:finite", "aggregate:answered_share:deterministic",
        "reporter:tsv-summary:renders", "command:keywords:loads",
        "config-section:keyword_metrics:model",
    ]


class CommandAndSectionPlugin:
    """A command whose module is missing and a section whose model is not a model."""

    @hookimpl
    def evalkit_register_commands(self) -> list[CommandSpec]:
        return [CommandSpec("greet", "Greet.", "no_such_module_here:greet"),
                CommandSpec("kernel-table", "A module's app or command.",
                            "evalkit.cli.schema_cmd")]

    @hookimpl
    def evalkit_register_config_sections(self) -> list[ConfigSectionSpec]:
        return [ConfigSectionSpec("greeting", "evalkit.core.specs:MetricSpec"),
                ConfigSectionSpec("plain", "evalkit.execute.evalconfig_models:TargetSettings")]


def test_conformance_checks_commands_and_config_sections() -> None:
    assert check_conformance(CommandAndSectionPlugin()) == [
        "command:greet:loads: command 'greet': cannot import 'no_such_module_here:greet' "
        "(No module named 'no_such_module_here')",
        "config-section:greeting:model: config section 'greeting': the section's model "
        "'evalkit.core.specs:MetricSpec' is not a pydantic model",
    ]


def test_the_example_plugins_own_tests_pass() -> None:
    env = dict(os.environ, PYTHONPATH=str(EXAMPLE / "src"))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "tests")],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout and "failed" not in result.stdout


# ------------------------------------------------------------- registered_plugin
def _good(response: Any, case: Any) -> float:
    return 1.0


class GoodPlugin:
    @hookimpl
    def evalkit_register_metrics(self) -> list[MetricSpec]:
        return [MetricSpec("tmp_metric", _good, higher_is_better=True)]


def test_registered_plugin_is_the_default_registry_for_the_block_only() -> None:
    before = default_registry()
    with registered_plugin(GoodPlugin(), name="good") as reg:
        assert default_registry() is reg
        assert reg.polarity("tmp_metric") is True
        [info] = [p for p in reg.plugins if p.name == "good"]
        assert info.status == "loaded" and info.names == ["tmp_metric"]
    assert default_registry() is before
    assert "tmp_metric" not in before.registered()


def test_registered_plugin_restores_the_default_after_an_error() -> None:
    before = default_registry()
    with pytest.raises(ZeroDivisionError), registered_plugin(GoodPlugin()):
        1 / 0  # noqa: B018
    assert default_registry() is before


def test_registered_plugin_fails_loudly() -> None:
    class Typo:
        @hookimpl
        def evalkit_register_metric(self) -> list[MetricSpec]:
            return []

    with pytest.raises(PluginLoadError, match="evalkit_register_metric"), \
            registered_plugin(Typo()):
        pass

    class Twice:
        @hookimpl
        def evalkit_register_metrics(self) -> list[MetricSpec]:
            return [MetricSpec("dup", _good, higher_is_better=True),
                    MetricSpec("dup", lambda r, c: 0.0, higher_is_better=True)]

    with pytest.raises(PluginLoadError, match="'dup' is already provided"), \
            registered_plugin(Twice()):
        pass


def test_the_fixture_gives_a_fresh_default_registry(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "from evalkit.testing import evalkit_registry  # noqa: F401\n", encoding="utf-8")
    (tmp_path / "test_fx.py").write_text(textwrap.dedent("""
        from evalkit.plugins.default import default_registry

        def test_one(evalkit_registry):
            assert default_registry() is evalkit_registry
            evalkit_registry.register_metric("fx", higher_is_better=True)(lambda r, c: 1.0)

        def test_two(evalkit_registry):
            assert default_registry() is evalkit_registry
            assert "fx" not in evalkit_registry.registered()
        """), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout


# --------------------------------------------------------------- conformance
def _bad_fn(response: Any, case: Any) -> Any:
    if not response.ranked_ids and response.text is None:
        raise IndexError("no documents")
    return "0.5"


_calls = {"n": 0}


def _flaky(response: Any, case: Any) -> float:
    _calls["n"] += 1
    return float(_calls["n"])


def _nan_fn(response: Any, case: Any) -> float:
    return float("nan")


def _empty_ok_loader(path: Any) -> list[str]:
    return []


def _zero_aggregate(rows: Any) -> float:
    return 0.0


class BadPlugin:
    @hookimpl
    def evalkit_register_metrics(self) -> list[MetricSpec | MetricFamily]:
        return [
            MetricSpec("text_value", _bad_fn, higher_is_better=True),
            MetricSpec("flaky", _flaky, higher_is_better=True),
            MetricFamily("nanfam", lambda k: MetricSpec(f"nanfam@{k}", _nan_fn, True),
                         higher_is_better=True),
        ]

    @hookimpl
    def evalkit_register_aggregates(self) -> list[AggregateSpec]:
        return [AggregateSpec("zero", _zero_aggregate, higher_is_better=False)]

    @hookimpl
    def evalkit_register_loaders(self) -> list[LoaderSpec]:
        return [LoaderSpec("lenient", "run", _empty_ok_loader, (".run",))]


def test_conformance_finds_each_kind_of_fault() -> None:
    failures = check_conformance(BadPlugin(), ks=(5,))
    failed = sorted(f.split(": ", 1)[0] for f in failures)
    assert failed == [
        "aggregate:zero:empty-run-raises",
        "loader:run:lenient:empty-file.run",
        "metric:flaky:deterministic",
        "metric:nanfam@5:empty-response",
        "metric:nanfam@5:finite",
        "metric:text_value:empty-response",
        "metric:text_value:finite",
    ]
    text = "\n".join(failures)
    assert ("metric 'text_value' on case 'q1': its value must be a number (int or float), "
            "got '0.5' (a str)") in text
    assert "raised IndexError: no documents on an empty response" in text
    assert "returned nan; expected a finite float" in text
    assert "aggregate 'zero' returned 0.0 on an empty run; it must raise" in text
    assert "returned list for an empty .run file; it must raise, naming the file" in text


@pytest.mark.parametrize(("member", "message"), [
    (lambda k: MetricSpec("misnamed", _nan_fn, True),
     "the misnamed@k family's factory(10) returned a metric named 'misnamed'; expected a "
     "MetricSpec named 'misnamed@10'"),
    (lambda k: MetricSpec(f"misnamed@{k}", _nan_fn, False),
     "the misnamed@k family declares higher_is_better=True, but its member 'misnamed@10' "
     "declares False (gates would use the member's)"),
])
def test_conformance_of_a_family_whose_members_are_not_its_own_fails_loading(
        member: Any, message: str) -> None:
    class Misnamed:
        @hookimpl
        def evalkit_register_metrics(self) -> list[MetricFamily]:
            return [MetricFamily("misnamed", member, higher_is_better=True)]

    [failure] = check_conformance(Misnamed(), ks=(5,))
    assert failure.startswith("plugin:loads: ") and message in failure, failure


def test_conformance_exclude_keeps_the_polarity_check() -> None:
    ids = [c.id for c in conformance_checks(BadPlugin(), exclude={"flaky", "nanfam"},
                                             ks=(2,))]
    assert "metric:flaky:polarity" in ids and "metric:flaky:finite" not in ids
    assert "family:nanfam@k:polarity" in ids
    assert not [i for i in ids if i.startswith("metric:nanfam@")]


def test_conformance_of_a_plugin_that_does_not_load_is_one_failing_check() -> None:
    class Broken:
        @hookimpl
        def evalkit_register_metrics(self) -> list[MetricSpec]:
            raise RuntimeError("cannot build")

    checks = conformance_checks(Broken())
    assert [c.id for c in checks] == ["plugin:loads"]
    with pytest.raises(AssertionError, match="RuntimeError: cannot build"):
        checks[0]()


def _entropy(rows: Any) -> float:
    if not rows:
        raise ValueError("entropy: empty run")
    return 0.0


class EntropyPlugin:
    """An aggregate named like one of the kernel's built-ins."""

    @hookimpl
    def evalkit_register_aggregates(self) -> list[AggregateSpec]:
        return [AggregateSpec("entropy", _entropy, higher_is_better=True)]


class NdcgPlugin:
    """A metric named like a member of the retrieval plugin's ndcg@k family."""

    @hookimpl
    def evalkit_register_metrics(self) -> list[MetricSpec]:
        return [MetricSpec("ndcg@10", _good, higher_is_better=True)]


def test_conformance_loads_the_plugin_beside_the_kernel_and_installed_plugins() -> None:
    """``plugin:loads`` fails with the message registered_plugin raises (and ``plugins
    list --check`` prints), naming both providers."""
    with pytest.raises(PluginLoadError) as raised, registered_plugin(EntropyPlugin()):
        pass
    failures = check_conformance(EntropyPlugin())
    assert failures == [f"plugin:loads: {raised.value}"]
    assert "metric name 'entropy' is already provided by paired-evalkit-core" in failures[0]


def test_conformance_finds_a_name_an_installed_family_resolves() -> None:
    pytest.importorskip("evalkit_retrieval")
    [failure] = check_conformance(NdcgPlugin())
    assert failure.startswith("plugin:loads: ")
    assert ("metric 'ndcg@10' already resolves to the ndcg@k family provided by "
            "evalkit-retrieval") in failure


def test_sample_pairs_cover_no_relevant_and_graded_cases() -> None:
    cases = {case.id: case for _, case in sample_pairs()}
    assert cases["q2"].relevant == frozenset()
    assert cases["q1"].relevance["d4"] == -1 and "d4" not in cases["q1"].relevant


def test_no_plugin_leaked_into_the_default_registry() -> None:
    names = default_registry().registered()
    assert not {"tmp_metric", "dup", "fx", "text_value"} & set(names)
    with pytest.raises(RegistryError):
        default_registry().resolve("tmp_metric")
