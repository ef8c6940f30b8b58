"""The sixth hook, ``evalkit_register_executors``: the registry's rules for executors, the
built-in ``local``, the eval config's ``executor:`` key and the command line's refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evalkit.cli.app import app
from evalkit.core.hookspecs import hookimpl
from evalkit.core.registry import Provider, Registry, RegistryError
from evalkit.core.specs import ExecutorSpec
from evalkit.execute.evalconfig import ConfigError, load_eval_config
from evalkit.execute.local_executor import LocalExecutor
from evalkit.plugins.listing import plugin_report
from evalkit.testing import check_conformance, registered_plugin

PLUGIN = Provider(module="ray_plugin", distribution="evalkit-ray", version="1.0")
OTHER = Provider(module="other_plugin", distribution="evalkit-other", version="2.0")


def factory_a(**options: Any) -> Any:
    return None


def factory_b(**options: Any) -> Any:
    return None


def test_local_is_the_kernels_executor_and_dask_the_plugins_in_the_listing() -> None:
    names = {(n.name, n.kind): n for n in plugin_report().names}
    assert names[("local", "executor")].distribution == "paired-evalkit-core"
    assert names[("dask", "executor")].distribution == "evalkit-dask"


def test_two_plugins_providing_one_executor_name_block_it_naming_both() -> None:
    registry = Registry()
    registry.add(ExecutorSpec("ray", factory_a), PLUGIN, from_plugin=True)
    registry.add(ExecutorSpec("ray", factory_b), OTHER, from_plugin=True)
    with pytest.raises(RegistryError, match=r"evalkit-ray 1\.0.*evalkit-other 2\.0"):
        registry.get("executor", "ray")
    # the same record again is a no-op, another name stays usable
    registry.add(ExecutorSpec("spark", factory_a), PLUGIN, from_plugin=True)
    registry.add(ExecutorSpec("spark", factory_a), PLUGIN, from_plugin=True)
    assert registry.get("executor", "spark").name == "spark"
    # a client registration of a taken name is refused at once
    with pytest.raises(RegistryError, match="already provided by evalkit-ray"):
        registry.add(ExecutorSpec("spark", factory_b), Provider(module="mine"))


def test_a_plugin_cannot_take_the_name_local_from_the_kernel() -> None:
    class Shadow:
        @staticmethod
        @hookimpl
        def evalkit_register_executors() -> list[ExecutorSpec]:
            return [ExecutorSpec("local", LocalExecutor)]

    (failure,) = check_conformance(Shadow())  # loaded beside the kernel's built-ins
    assert failure.startswith("plugin:loads:")
    assert "executor name 'local' is already provided by paired-evalkit-core" in failure
    with pytest.raises(AssertionError, match="already provided by paired-evalkit-core"), \
            registered_plugin(Shadow()):
        pass


def test_an_executor_record_is_checked_like_the_others() -> None:
    class Broken:
        @staticmethod
        @hookimpl
        def evalkit_register_executors() -> list[ExecutorSpec]:
            return [ExecutorSpec("x", "not callable")]  # type: ignore[arg-type]

    (failure,) = check_conformance(Broken())
    assert "factory must be callable" in failure


def write_config(folder: Path, executor: str) -> Path:
    (folder / "g.jsonl").write_text('{"id": "a", "query": "q", "expected": ["a"]}\n')
    path = folder / "evalkit.yaml"
    path.write_text("goldens: g.jsonl\n"
                    "target: {factory: http, kwargs: {url: 'http://127.0.0.1:9/'}}\n"
                    f"metrics: [recall@1]\noutput: run.jsonl\n{executor}")
    return path


def test_the_eval_config_names_the_executor_and_its_options(tmp_path: Path) -> None:
    cfg = load_eval_config(write_config(
        tmp_path, "executor: {name: dask, address: 'tcp://10.0.0.5:8786', "
        "options: {batch_size: 4}}\n"))
    assert (cfg.executor, cfg.executor_options) == (
        "dask", {"batch_size": 4, "address": "tcp://10.0.0.5:8786"})
    assert cfg.target_recipe().factory == "http"
    assert load_eval_config(write_config(tmp_path, "")).executor == "local"
    with pytest.raises(ConfigError, match=r"evalkit.yaml:5: key 'executor': unknown key; "
                                          "executor takes 'name', 'address' and 'options'"):
        load_eval_config(write_config(tmp_path, "executor: {name: dask, adress: x}\n"))


def test_the_cli_refuses_a_scheduler_for_the_local_executor_and_an_unknown_executor(
        tmp_path: Path) -> None:
    config = write_config(tmp_path, "")
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(config), "--scheduler", "tcp://127.0.0.1:1"])
    assert result.exit_code == 2 and "--scheduler needs a distributed executor" in result.output
    result = runner.invoke(app, ["run", str(config), "--executor", "spark"])
    assert result.exit_code == 2
    assert "unknown executor 'spark'; known: dask, local" in result.output
    assert not (tmp_path / "run.jsonl").exists()  # refused before anything was written
