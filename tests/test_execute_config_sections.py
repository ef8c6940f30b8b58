"""Sections of the eval config a plugin declares (``evalkit_register_config_sections``):
validated with the plugin's model (errors with file and line), handed to the plugin
before the run, refused when unknown (with a did-you-mean), part of `evalkit schema
config`; in evalkit.yaml and in [tool.evalkit] alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import jsonschema
import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field

from evalkit import hookimpl
from evalkit.core.pyproject_config import ConfigError as TomlConfigError
from evalkit.core.pyproject_config import plugin_selection
from evalkit.core.registry import Registry
from evalkit.core.specs import ConfigSectionSpec
from evalkit.execute.evalconfig import ConfigError, load_eval_config
from evalkit.execute.run_checks import apply_config_sections
from evalkit.file_schemas import json_schema
from evalkit.plugins.hooks import PluginError, collect_records
from evalkit.plugins.loading import load_plugins
from evalkit.testing import registered_plugin
from evalkit.testing.child_runs import written_rows

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_SRC = REPO / "examples" / "evalkit-example-plugin" / "src"
SCRIPT = Path(sys.executable).with_name("evalkit")


class Greeting(BaseModel):
    """The ``greeting`` section of the test plugin."""

    model_config = ConfigDict(extra="forbid", strict=True)

    word: str
    times: Annotated[int, Field(ge=1)] = 1


applied: list[tuple[Any, Any]] = []


def remember(section: Any, config: Any) -> None:
    if section.word == "refuse":
        raise ValueError("the word 'refuse' is refused; pick another")
    applied.append((section, config))


class GreetingPlugin:
    @hookimpl
    def evalkit_register_config_sections(self) -> list[ConfigSectionSpec]:
        return [ConfigSectionSpec("greeting", Greeting, apply=remember,
                                  description="How to greet.")]


CONFIG = """\
goldens: goldens.jsonl
target: {factory: "target:make"}
metrics: [m]
output: runs/run.jsonl
"""


def write(folder: Path, text: str) -> Path:
    path = folder / "evalkit.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def greeting_plugin() -> Iterator[Registry]:
    applied.clear()
    with registered_plugin(GreetingPlugin(), name="greetings") as registry:
        yield registry


def test_a_section_is_validated_with_the_plugins_model(tmp_path: Path,
                                                       greeting_plugin: Registry) -> None:
    path = write(tmp_path, CONFIG + "greeting:\n  word: hello\n  times: 2\n")
    cfg = load_eval_config(path)
    assert cfg.sections == {"greeting": Greeting(word="hello", times=2)}
    assert cfg.metrics == ("m",)  # evalkit's own keys, read as ever


def test_a_bad_value_names_the_file_line_and_key(tmp_path: Path,
                                                 greeting_plugin: Registry) -> None:
    path = write(tmp_path, CONFIG + "greeting:\n  word: hello\n  times: 0\n")
    with pytest.raises(ConfigError) as caught:
        load_eval_config(path)
    assert str(caught.value) == (f"{path.resolve()}:7: key 'greeting.times': Input should be "
                                 "greater than or equal to 1, got 0")
    path = write(tmp_path, CONFIG + "greeting:\n  wrod: hello\n")
    with pytest.raises(ConfigError) as caught:
        load_eval_config(path)
    assert str(caught.value) == (f"{path.resolve()}:6: key 'greeting.wrod': unknown key (did "
                                 "you mean 'word'?); the keys of 'greeting' are word, times")
    path = write(tmp_path, CONFIG + "greeting: hello\n")
    with pytest.raises(ConfigError) as caught:
        load_eval_config(path)
    assert str(caught.value).startswith(f"{path.resolve()}:5: key 'greeting': Input should be")


def test_an_unknown_section_is_still_refused_with_a_did_you_mean(
        tmp_path: Path, greeting_plugin: Registry) -> None:
    path = write(tmp_path, CONFIG + "greetng:\n  word: hello\n")
    with pytest.raises(ConfigError) as caught:
        load_eval_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path.resolve()}:5: key 'greetng': unknown key (did you mean "
                              "'greeting'?); the keys are aggregates,")
    assert message.endswith("and the sections of the loaded plugins: greeting; a plugin's "
                            "section is a key only while the plugin is loaded, and no loaded "
                            "plugin declares 'greetng': install the plugin that declares it "
                            "(`pip install ...`) or enable it, or remove the table; no plugin "
                            "is installed but not loaded (see `evalkit plugins list`)")


def test_a_section_without_its_plugin_is_an_unknown_key(tmp_path: Path) -> None:
    path = write(tmp_path, CONFIG + "greeting:\n  word: hello\n")
    with registered_plugin(object()), pytest.raises(ConfigError) as caught:
        load_eval_config(path)
    assert str(caught.value).startswith(f"{path.resolve()}:5: key 'greeting': unknown key;")
    assert "a plugin's section is a key only while the plugin is loaded" in str(caught.value)


def test_the_plugin_gets_its_section_before_the_run(tmp_path: Path,
                                                    greeting_plugin: Registry) -> None:
    path = write(tmp_path, CONFIG + "greeting:\n  word: hello\n")
    cfg = load_eval_config(path)
    assert applied == []  # reading the config hands nothing over
    apply_config_sections(cfg)
    assert applied == [(Greeting(word="hello"), cfg)]
    path = write(tmp_path, CONFIG + "\ngreeting:\n  word: refuse\n")
    with pytest.raises(ConfigError) as caught:
        apply_config_sections(load_eval_config(path))
    assert str(caught.value) == (f"{path.resolve()}:6: key 'greeting': the word 'refuse' is "
                                 "refused; pick another")


def test_schema_config_includes_a_plugins_section(greeting_plugin: Registry) -> None:
    schema = json_schema("config")
    assert schema["properties"]["greeting"]["$ref"] == "#/$defs/Greeting"
    assert schema["properties"]["greeting"]["description"] == "How to greet."
    assert schema["$defs"]["Greeting"]["required"] == ["word"]
    assert schema["additionalProperties"] is False
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    good = yaml.safe_load(CONFIG + "greeting: {word: hello, times: 2}\n")
    assert list(validator.iter_errors(good)) == []
    for bad in ("greeting: {word: hello, times: 0}\n", "greeting: {wrod: hello}\n",
                "greetng: {word: hello}\n"):
        assert list(validator.iter_errors(yaml.safe_load(CONFIG + bad))) != [], bad


def test_schema_config_without_sections_is_evalkits_own() -> None:
    from evalkit.execute.evalconfig_models import EvalSettings

    with registered_plugin(object()):
        schema = json_schema("config")
    own = EvalSettings.model_json_schema()
    assert {k: v for k, v in schema.items() if k != "$schema"} == {
        **own, "description": schema["description"]}


class OtherGreetingPlugin:
    @hookimpl
    def evalkit_register_config_sections(self) -> list[ConfigSectionSpec]:
        return [ConfigSectionSpec("greeting", Greeting)]


def test_one_section_from_two_plugins_is_refused_naming_both(tmp_path: Path) -> None:
    from evalkit.core.registry import Provider
    from evalkit.plugins.loading import register_plugin_object

    path = write(tmp_path, CONFIG + "greeting:\n  word: hello\n")
    with registered_plugin(GreetingPlugin(), name="greetings", distribution="greet-a",
                           version="1.0") as registry:
        register_plugin_object(registry, OtherGreetingPlugin(),
                               Provider("other_greetings", "greet-b", "2.0"))
        with pytest.raises(ConfigError) as caught:
            load_eval_config(path)
    assert str(caught.value) == (
        f"{path.resolve()}:5: key 'greeting': config section name 'greeting' is provided by "
        f"greet-a 1.0 ({__name__}) and greet-b 2.0 (other_greetings); it is blocked until one "
        "of them is disabled or uninstalled (see `evalkit plugins list`)")


@pytest.mark.parametrize(("record", "problem"), [
    (ConfigSectionSpec("metrics", Greeting),
     "'metrics' is a key of the eval config itself; give the section another name"),
    (ConfigSectionSpec("local_plugins", Greeting), "is a key of the eval config itself"),
    (ConfigSectionSpec("greeting", dict), "model must be a pydantic model class"),
    (ConfigSectionSpec("greeting", "no_colon"), "model must be a pydantic model or "
                                                "'package.module:Model', got 'no_colon'"),
    (ConfigSectionSpec("greeting", Greeting, apply="x"),  # type: ignore[arg-type]
     "apply must be callable or None, got 'x'"),
    (ConfigSectionSpec("1st", Greeting), "a section's name is letters, digits"),
])
def test_a_malformed_section_record_fails_its_plugin(record: ConfigSectionSpec,
                                                     problem: str) -> None:
    class Plugin:
        @hookimpl
        def evalkit_register_config_sections(self) -> list[ConfigSectionSpec]:
            return [record]

    with pytest.raises(PluginError, match="evalkit_register_config_sections") as caught:
        collect_records(Plugin())
    assert problem in str(caught.value)


def test_a_model_named_by_import_string_is_imported_when_a_config_is_read(
        tmp_path: Path) -> None:
    class LazyPlugin:
        @hookimpl
        def evalkit_register_config_sections(self) -> list[ConfigSectionSpec]:
            return [ConfigSectionSpec("greeting", f"{__name__}:Greeting"),
                    ConfigSectionSpec("broken", "no_such_module_here:Model")]

    path = write(tmp_path, CONFIG + "greeting:\n  word: hi\n")
    with registered_plugin(LazyPlugin()):
        assert load_eval_config(path).sections == {"greeting": Greeting(word="hi")}
        path = write(tmp_path, CONFIG + "broken: {}\n")
        with pytest.raises(ConfigError) as caught:
            load_eval_config(path)
    assert str(caught.value) == (
        f"{path.resolve()}:5: key 'broken': the section's model 'no_such_module_here:Model' "
        "cannot be imported (No module named 'no_such_module_here'). This is a bug of "
        f"module {__name__}, which declares the section, not of your files or options: "
        "report it to the plugin's authors")


# ------------------------------------------------------------ [tool.evalkit] tables
LOCAL_PLUGIN = f'''
from evalkit import hookimpl
from evalkit.core.specs import ConfigSectionSpec


@hookimpl
def evalkit_register_config_sections():
    return [ConfigSectionSpec("greeting", "{__name__}:Greeting")]
'''


def pyproject(folder: Path, extra: str) -> Path:
    (folder / "greeting_plugin.py").write_text(LOCAL_PLUGIN, encoding="utf-8")
    path = folder / "pyproject.toml"
    path.write_text('[tool.evalkit]\nlocal_plugins = ["greeting_plugin"]\n'
                    'goldens = "goldens.jsonl"\ntarget = {factory = "target:make"}\n'
                    'metrics = ["m"]\noutput = "runs/run.jsonl"\n' + extra, encoding="utf-8")
    return path


def test_a_section_in_pyproject_is_a_table_of_tool_evalkit(tmp_path: Path) -> None:
    path = pyproject(tmp_path, '\n[tool.evalkit.greeting]\nword = "hi"\ntimes = 3\n')
    registry = Registry()
    load_plugins(registry, selection=plugin_selection(path))
    from evalkit.plugins.default import use_registry

    with use_registry(registry):
        assert load_eval_config(path).sections == {"greeting": Greeting(word="hi", times=3)}


def test_an_unknown_table_of_tool_evalkit_is_a_warning_once_plugins_are_loaded(
        tmp_path: Path) -> None:
    """A table no loaded plugin declares (its plugin uninstalled or disabled) warns when
    the plugins load, so that a command reading no eval config still works; the commands
    that read it refuse it (test_a_section_without_its_plugin_is_an_unknown_key)."""
    from evalkit.plugins.loading import PluginLoadWarning

    path = pyproject(tmp_path, '\n[tool.evalkit.greetng]\nword = "hi"\n')
    selection = plugin_selection(path)  # a table may be a plugin's section: not refused yet
    registry = Registry()
    with pytest.warns(PluginLoadWarning) as caught:
        load_plugins(registry, selection=selection)
    [message] = [str(w.message) for w in caught if "greetng" in str(w.message)]
    assert message.startswith(  # the line of its table header
        f"{path.resolve()}:8: [tool.evalkit]: unknown key 'greetng'; did you mean 'greeting'? ")
    # the in-repo judge plugin declares `judges`
    assert "and the sections of the loaded plugins: greeting, judges)" in message
    assert registry.config_problems == [message]
    # a key that is not a table cannot be a section: refused before any plugin loads
    path = pyproject(tmp_path, 'greetng = "hi"\n')
    with pytest.raises(TomlConfigError, match="unknown key 'greetng'"):
        plugin_selection(path)


# ------------------------------------------------------- the example, end to end
def _example_project(tmp_path: Path) -> tuple[list[str], dict[str, str]]:
    """A project using the example plugin's ``keyword_metrics`` section (as a local
    plugin): ``(the evalkit command, its environment)``."""
    (tmp_path / "pyproject.toml").write_text(
        '[tool.evalkit]\nlocal_plugins = ["evalkit_example_plugin.plugin"]\n', encoding="utf-8")
    (tmp_path / "goldens.jsonl").write_text(
        "".join(json.dumps({"id": f"q{i}", "query": "capital?"}) + "\n" for i in (1, 2, 3)),
        encoding="utf-8")
    (tmp_path / "target.py").write_text(textwrap.dedent('''
        ANSWERS = {"q1": "Paris, then Rome.", "q2": "Berlin", "q3": "no idea"}

        def make():
            return lambda case: ANSWERS[case.id]
    '''), encoding="utf-8")
    (tmp_path / "evalkit.yaml").write_text(textwrap.dedent('''\
        goldens: goldens.jsonl
        target: {factory: "target:make"}
        keyword_metrics:
          mentions_a_capital: [paris, rome, berlin, madrid]
        metrics: [mentions_a_capital]
        output: runs/run.jsonl
    '''), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_PLUGINS"}
    env.update(PYTHONPATH=str(EXAMPLE_SRC), EVALKIT_CACHE_DIR="")
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-c",
                                                     "from evalkit.cli import main; main()"]
    return command, env


def test_the_example_plugins_section_registers_metrics_for_the_run(tmp_path: Path) -> None:
    """`evalkit run` with the example plugin's ``keyword_metrics`` section: the metric it
    declares is registered before the names are checked, and scores the run."""
    command, env = _example_project(tmp_path)
    done = subprocess.run([*command, "run"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = written_rows(tmp_path / "runs" / "run.jsonl")
    # the share of the four capitals each answer names, by hand
    assert {r["id"]: r["metrics"]["mentions_a_capital"] for r in rows} == {
        "q1": 2 / 4, "q2": 1 / 4, "q3": 0.0}
    (tmp_path / "evalkit.yaml").write_text(
        (tmp_path / "evalkit.yaml").read_text().replace("[paris, rome, berlin, madrid]", "[]"),
        encoding="utf-8")
    refused = subprocess.run([*command, "run", "--overwrite"], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2
    assert refused.stderr == (
        f"error: {tmp_path.resolve() / 'evalkit.yaml'}:4: key 'keyword_metrics."
        "mentions_a_capital': List should have at least 1 item after validation, not 0, "
        "got []\n")


def test_the_gate_applies_the_configs_sections(tmp_path: Path) -> None:
    """`evalkit gate` reading the config applies its sections, so a baseline check can
    name the metric the section registers (and reach its test: on 3 cases no test can
    fail, so it is not judged); without the config it says why the metric is
    unknown, and suggests no metric of the very name."""
    command, env = _example_project(tmp_path)
    done = subprocess.run([*command, "run"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    again = subprocess.run([*command, "run", "-o", "runs/base.jsonl"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    (tmp_path / "c.yaml").write_text("checks:\n  - id: capitals\n    metric: "
                                     "mentions_a_capital\n    vs_baseline: "
                                     "no_significant_regression\n", encoding="utf-8")
    gate = [*command, "gate", "--checks", "c.yaml", "--run", "runs/run.jsonl",
            "--baseline", "runs/base.jsonl"]
    judged = subprocess.run([*gate, "--config", "evalkit.yaml"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert judged.returncode == 2, judged.stdout + judged.stderr
    assert judged.stdout.startswith("capitals: error (3/3 cases)")
    assert "vs baseline" in judged.stdout and "cannot fail whatever the data" in judged.stdout
    refused = subprocess.run(gate, cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=120)
    assert refused.returncode == 2
    assert "capitals: error" in refused.stdout
    assert ("metric 'mentions_a_capital' was scored by evalkit_example_plugin.plugin (the "
            "run's header records it), which is loaded but registers no metric "
            "'mentions_a_capital' now") in " ".join(refused.stdout.split())
    assert "--config" in refused.stdout
    assert "did you mean 'mentions_a_capital'" not in refused.stdout
